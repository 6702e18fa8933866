"""Unannotated twin of ``benchmarks/natural/knapsack_bb.py``: no type annotations; the
parameters take the root call's types, narrowed by revec's value-range analysis.

knapsack_bb as people write it: the best packing returned as the larger of the two
choices.  (The branch-and-bound pruning is left out: in a value-returning task a pruned
branch would return a value, and a bound only prunes a branch that ends without one.)"""


from revec import task


@task
def knapsack_bb(values, weights, c=0,
                i=0, v=0):
    if c < 0:
        return -1
    if c == 0 or i == len(values):
        return v
    return max(knapsack_bb(values, weights, c, i + 1, v),
               knapsack_bb(values, weights, c - weights[i], i + 1, v + values[i]))
