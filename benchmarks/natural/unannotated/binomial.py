"""Unannotated twin of ``benchmarks/natural/binomial.py``: no type annotations; the
parameters take the root call's types, narrowed by revec's value-range analysis.

binomial as people write it: C(n, k) = C(n - 1, k - 1) + C(n - 1, k), the twin of
``benchmarks/binomial.py``."""


from revec import task


@task
def binomial(n=22, k=9):
    if k == 0 or k == n:
        return 1
    return binomial(n - 1, k - 1) + binomial(n - 1, k)
