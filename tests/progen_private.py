"""Generated task programs with task-private arrays (issue 33 item 2): boards copied from
the parent and changed, in Python and in Cilk C, from one seed each.

Python: a list or tuple parameter the spawns pass new lists for (``board + [c]``,
``[*board, c]``, ``board[:len(board)] + (c,)``, a local ``child = list(board)`` then
appended), bounded by the is-base test (``len(board) == n`` or ``>=``, n passed on
unchanged, or a constant), read by index (negative from the end), by ``len()`` and by a
helper given the board.  C: the Cilk-5 form (``char *b = alloca((j + 1) *
sizeof(char)); memcpy(b, a, j); b[j] = c;``) or a fixed local array, checked by a helper,
results summed through ``total += cilk_spawn``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

PY_ELEM = {"int8": "np.int8", "int16": "np.int16", "int32": "np.int32"}
C_ELEM = {"int8": "char", "int16": "short", "int32": "int"}


@dataclass
class PrivateProgram:
    seed: int
    python: str
    c: str
    c_main: str
    py_args: tuple[Any, ...]
    c_args: tuple[Any, ...]
    op: str


def private_program(seed: int) -> PrivateProgram:
    rng = random.Random(seed)
    el = rng.choice(list(PY_ELEM))
    n = rng.randint(1, 5)
    k = rng.randint(2, 3)
    op = rng.choice(["sum", "max"])
    m = rng.randint(2, 5)
    w = rng.randint(1, 4)
    tuple_form = rng.random() < 0.4
    const_bound = rng.random() < 0.25
    bound = str(n) if const_bound else "n"
    test = rng.choice([f"len(board) == {bound}", f"len(board) >= {bound}",
                       f"{bound} == len(board)"])
    if tuple_form:
        ann = f"tuple[{PY_ELEM[el]}, ...]"
        build = rng.choice(["board + (c,)", "(*board, c)", "board[:len(board)] + (c,)"])
        build_stmt = f"child = {build}"
    else:
        ann = f"list[{PY_ELEM[el]}]"
        build = rng.choice(["board + [c]", "[*board, c]", "LOCAL"])
        build_stmt = ("child = list(board)\n            child = child + [c]" if build == "LOCAL"
                      else f"child = {build}")
    gate = rng.choice(["score(child, len(child)) % {m} != 0",
                       "len(child) < 2 or child[-1] != child[-2]",
                       "True"]).format(m=m)
    leaf = rng.choice(["score(board, len(board))", "board[-1] * {w} + len(board)",
                       "board[0] - board[-1] if len(board) > 0 else 7"]).format(w=w)
    if n == 0 or "board[-1]" in leaf:
        leaf = f"score(board, len(board)) + {w}" if "board[-1] * " in leaf else leaf
    python = f'''import numpy as np
from revec import task, spawn, reduce, Reducer

acc = Reducer(np.int64, "{op}")


def score(b, k):
    s = 0
    for i in range(k):
        s += b[i] * (i + {w})
    return s


@task
def f(n: np.int8, board: {ann}):
    if {test}:
        reduce(acc, np.int64({leaf}))
    else:
        for c in range({k}):
            {build_stmt}
            if {gate}:
                spawn(f, n, child)
'''
    c_gate = {f"score(child, len(child)) % {m} != 0": f"score(j + 1, b) % {m} != 0",
              "len(child) < 2 or child[-1] != child[-2]": "j + 1 < 2 || b[j] != b[j - 1]",
              "True": "1"}[gate]
    fixed = rng.random() < 0.4
    ce = C_ELEM[el]
    alloc = (f"{ce} b[8];" if fixed else
             f"{ce} *b = ({ce} *) alloca((j + 1) * sizeof({ce}));")
    c_leaf = rng.choice([f"score(n, a) + {w}", f"a[n - 1] * {w} + n"])
    # (C: a sum of the children's results, the form the return-value pass folds; a max
    # over a loop of calls is not one of its forms)
    comb = "total += x;"
    start = "0"
    c = f'''#include <string.h>
#include <alloca.h>
#include <cilk/cilk.h>

long score(int k, const {ce} *p) {{
    long s = 0;
    for (int i = 0; i < k; i++)
        s += p[i] * (i + {w});
    return s;
}}

long f(int n, int j, {ce} *a) {{
    if (j == n)
        return {c_leaf};
    long total = {start};
    for (int c = 0; c < {k}; c++) {{
        {alloc}
        memcpy(b, a, j * sizeof({ce}));
        b[j] = ({ce}) c;
        if ({c_gate}) {{
            long x = f(n, j + 1, b);
            {comb}
        }}
    }}
    return total;
}}
'''
    c = c.replace(f"            long x = f(n, j + 1, b);\n            {comb}",
                  "            total += cilk_spawn f(n, j + 1, b);")
    c = c.replace("    return total;\n}", "    cilk_sync;\n    return total;\n}")
    c_main = f'''#include <stdio.h>
long f(int n, int j, {ce} *a);
int main(void) {{
    {ce} a[8] = {{0}};
    printf("%ld\\n", f({n if n > 0 else 1}, 0, a));
    return 0;
}}
'''
    nn = n if n > 0 else 1
    return PrivateProgram(seed, python, c, c_main, (n, []), (nn, 0, [0] * nn), op)
