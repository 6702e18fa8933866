"""Unannotated twin of ``benchmarks/natural/parentheses.py``: no type annotations; the
parameters take the root call's types, narrowed by revec's value-range analysis.

parentheses as people write it: the number of well-formed strings completing a prefix
with ``opened`` and ``closed`` parentheses (twin of ``benchmarks/parentheses.py``)."""


from revec import task


@task
def parentheses(n=12, opened=0, closed=0):
    if closed == n:
        return 1
    total = 0
    if opened < n:
        total += parentheses(n, opened + 1, closed)
    if closed < opened:
        total += parentheses(n, opened, closed + 1)
    return total
