"""Generated task programs over read-only array inputs (issue 33 item 1), in Python and
in Cilk C, from one seed each (``random.Random``: a fixed, reproducible set).

Shapes: divide and conquer over an index range (``f(a, lo, hi, d)``), over a view that
shrinks (Python ``a[:h]`` / ``a[h:]``, C ``a`` / ``a + h`` / ``&a[h]``, negative indices
from the view's end in Python), and path walks over a 2-D grid (Python ``g[r][c]`` on a
list of lists or ``g[r, c]`` on an NDArray, C ``g[r * C + c]``).  Leaves fold an
expression of elements, the depth and the index into a sum or a max; some tasks read an
element to decide whether to spawn (a data-dependent tree).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

PY_TYPES = {"int16": "np.int16", "int32": "np.int32", "int64": "np.int64"}
C_TYPES = {"int16": "short", "int32": "int", "int64": "long"}


@dataclass
class ArrayProgram:
    seed: int
    shape: str  # range / view / grid
    python: str
    c: str
    c_main: str
    args: tuple[Any, ...]  # the root call's arguments (arrays as NumPy arrays)
    op: str  # the fold: sum / max
    notes: list[str] = field(default_factory=list)


def _leaf(rng: random.Random, el: str, first: str) -> str:
    k = rng.randint(-3, 5)
    return rng.choice([
        f"{el} * {k} + d",
        f"{el} - {first}",
        f"({el} + i) * ({el} - d)",
        f"{el} * {el} - {k} * i",
    ])


def array_program(seed: int) -> ArrayProgram:
    rng = random.Random(seed)
    shape = rng.choice(["range", "view", "grid"] if seed % 5 else ["grid"])
    dt = rng.choice(list(PY_TYPES))
    op = rng.choice(["sum", "max"])
    if shape == "grid":
        return _grid(seed, rng, dt, op)
    n = rng.randint(1, 40)
    data = np.array([rng.randint(-300, 300) for _ in range(n)], dtype=dt)
    t = rng.randint(1, 3)
    ct = C_TYPES[dt]
    gate = rng.random() < 0.4  # spawn the left half only when an element says so
    gk = rng.randint(2, 4)
    if shape == "range":
        leaf = _leaf(rng, "a[i]", "a[lo]")
        py_split = "m = lo + (hi - lo) // 2" if rng.random() < 0.7 else "m = lo + 1"
        c_split = py_split.replace("m = ", "int m = ").replace("//", "/") + ";"
        py_gate = f"if a[lo] % {gk} != 0:" if gate else "if True:"
        c_gate = f"a[lo] % {gk} != 0" if gate else "1"
        sig_py = "a: list[int], lo: np.int32, hi: np.int32, d: np.int32"
        base_py, base_c = "hi - lo <= " + str(t), "hi - lo <= " + str(t)
        loop_py, loop_c = "range(lo, hi)", "int i = lo; i < hi; i++"
        left_py, right_py = "a, lo, m, d + 1", "a, m, hi, d + 1"
        left_c, right_c = "a, lo, m, d + 1", "a, m, hi, d + 1"
        sig_c = f"const {ct} *a, int lo, int hi, int d"
        args = (data, 0, n, 0)
        c_args = f"a, 0, {n}, 0"
    else:
        leaf_py = _leaf(rng, "a[i]", "a[-1]")
        leaf = leaf_py
        py_split = "h = n // 2"
        c_split = "int h = n / 2;"
        py_gate = f"if a[0] % {gk} != 0:" if gate else "if True:"
        c_gate = f"a[0] % {gk} != 0" if gate else "1"
        sig_py = "a: list[int], n: np.int32, d: np.int32"
        base_py, base_c = f"n <= {t}", f"n <= {t}"
        loop_py, loop_c = "range(n)", "int i = 0; i < n; i++"
        left_py = rng.choice(["a[:h], h, d + 1", "a, h, d + 1"])
        right_py = rng.choice(["a[h:], n - h, d + 1", "a[h:n], n - h, d + 1"])
        left_c = "a, h, d + 1"
        right_c = rng.choice(["a + h, n - h, d + 1", "&a[h], n - h, d + 1"])
        sig_c = f"{ct} a[], int n, int d"
        args = (data, n, 0)
        c_args = f"a, {n}, 0"
    c_leaf = leaf.replace("a[-1]", "a[n - 1]")
    if shape == "range":
        c_leaf = leaf
    python = f'''import numpy as np
from revec import task, spawn, reduce, Reducer

acc = Reducer(np.int64, "{op}")


@task
def f({sig_py}):
    if {base_py}:
        for i in {loop_py}:
            reduce(acc, np.int64({leaf}))
    else:
        {py_split}
        {py_gate}
            spawn(f, {left_py})
        spawn(f, {right_py})
'''
    comb = "x + y" if op == "sum" else "x > y ? x : y"
    fold = "s += v;" if op == "sum" else "if (v > s) s = v;"
    start = "0" if op == "sum" else "-9223372036854775807L - 1"
    c = f'''#include <cilk/cilk.h>

long f({sig_c}) {{
    if ({base_c}) {{
        long s = {start};
        for ({loop_c}) {{
            long v = (long)({c_leaf});
            {fold}
        }}
        return s;
    }}
    {c_split}
    if ({c_gate}) {{
        long x = cilk_spawn f({left_c});
        long y = f({right_c});
        cilk_sync;
        return {comb};
    }}
    return f({right_c});
}}
'''
    values = ", ".join(str(int(v)) for v in data)
    c_main = f'''#include <stdio.h>
long f({sig_c});
int main(void) {{
    {C_TYPES[dt]} a[{max(n, 1)}] = {{{values}}};
    printf("%ld\\n", f({c_args}));
    return 0;
}}
'''
    return ArrayProgram(seed, shape, python, c, c_main, args, op)


def _grid(seed: int, rng: random.Random, dt: str, op: str) -> ArrayProgram:
    rows, cols = rng.randint(1, 4), rng.randint(1, 5)
    data = np.array([[rng.randint(-50, 50) for _ in range(cols)] for _ in range(rows)], dt)
    nd = rng.random() < 0.5
    ann = f"NDArray[{PY_TYPES[dt]}]" if nd else "list[list[int]]"
    el_py = "g[r, c]" if nd else "g[r][c]"
    k = rng.randint(1, 3)
    python = f'''import numpy as np
from numpy.typing import NDArray
from revec import task, spawn, reduce, Reducer

acc = Reducer(np.int64, "{op}")


@task
def f(g: {ann}, r: np.int32, c: np.int32, s: np.int64):
    if r == {rows - 1} and c == {cols - 1}:
        reduce(acc, s + {el_py} * {k})
    else:
        if r < {rows - 1}:
            spawn(f, g, r + 1, c, s + {el_py})
        if c < {cols - 1}:
            spawn(f, g, r, c + 1, s + {el_py} - c)
'''
    if op == "sum":
        comb_c = "x + y"
    else:
        comb_c = "x > y ? x : y"
    el_c = f"g[r * {cols} + c]"
    c = f'''#include <cilk/cilk.h>

long f(const {C_TYPES[dt]} *g, int r, int c, long s) {{
    if (r == {rows - 1} && c == {cols - 1}) {{
        return s + {el_c} * {k};
    }}
    if (r < {rows - 1} && c < {cols - 1}) {{
        long x = cilk_spawn f(g, r + 1, c, s + {el_c});
        long y = cilk_spawn f(g, r, c + 1, s + {el_c} - c);
        cilk_sync;
        return {comb_c};
    }}
    if (r < {rows - 1}) {{
        return f(g, r + 1, c, s + {el_c});
    }}
    return f(g, r, c + 1, s + {el_c} - c);
}}
'''
    values = ", ".join(str(int(v)) for v in data.reshape(-1))
    c_main = f'''#include <stdio.h>
long f(const {C_TYPES[dt]} *g, int r, int c, long s);
int main(void) {{
    {C_TYPES[dt]} g[{rows * cols}] = {{{values}}};
    printf("%ld\\n", f(g, 0, 0, 0));
    return 0;
}}
'''
    return ArrayProgram(seed, "grid", python, c, c_main, (data, 0, 0, 0), op,
                        notes=[f"c args: flat {rows}x{cols}"])


def c_args(p: ArrayProgram) -> tuple[Any, ...]:
    """The C task's root arguments (a grid is passed flat)."""
    if p.shape == "grid":
        return (p.args[0].reshape(-1), *p.args[1:])
    return p.args
