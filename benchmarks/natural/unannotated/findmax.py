"""Unannotated twin of ``benchmarks/natural/findmax.py``: no type annotations; the
parameters take the root call's types, narrowed by revec's value-range analysis.

findmax as people write it: the larger of the two halves' largest elements."""


from revec import task


@task
def findmax(a, lo=0, hi=1):
    if hi - lo == 1:
        return a[lo]
    mid = lo + (hi - lo) // 2
    return max(findmax(a, lo, mid), findmax(a, mid, hi))
