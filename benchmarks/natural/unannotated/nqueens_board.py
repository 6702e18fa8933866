"""Unannotated twin of ``benchmarks/natural/nqueens_board.py``: no type annotations; the
parameters take the root call's types, narrowed by revec's value-range analysis.

nqueens_board as people write it: the board recursion returning its count."""


from revec import task


def ok(n, a):
    for i in range(n):
        p = a[i]
        for j in range(i + 1, n):
            q = a[j]
            if q == p or q == p - (j - i) or q == p + (j - i):
                return False
    return True


@task
def nqueens_board(n=8, board=()):
    if len(board) == n:
        return 1
    total = 0
    for col in range(n):
        child = board + (col,)
        if ok(len(child), child):
            total += nqueens_board(n, child)
    return total
