"""Unannotated twin of ``benchmarks/natural/fib.py``: no type annotations; the
parameters take the root call's types, narrowed by revec's value-range analysis.

fib as people write it: the twin of ``benchmarks/fib.py`` with a return value.

revec derives the spawn/reduce form (a sum reducer receiving each leaf's n), the
same tree and work as the original.
"""


from revec import task


@task
def fib(n=25):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)
