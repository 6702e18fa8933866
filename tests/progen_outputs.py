"""Generated task programs writing output arrays (issue 33 item 5), in Python and in
Cilk C, from one seed each (``random.Random``: a fixed, reproducible set).

Each program is a divide and conquer over an input array ``a`` that writes an output
``out`` at elements no two tasks share: over an index range with absolute indices
(``out[i + s] = ...``), or over shrinking views (Python ``a[:h]`` / ``out[h:]``, C
``a + h`` / ``out + h`` / ``&out[h]``) with relative ones.  The leaves write their
elements; in some programs the inductive case writes the split element itself and the
children get the rest; in some the left child is spawned only when an element says so
(elements nobody writes keep the caller's values).  The C version's ``main`` prints
the output array (gcc's serial elision is its oracle).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np

IN_TYPES = {"int16": ("np.int16", "short"), "int32": ("np.int32", "int"),
            "int64": ("np.int64", "long")}
OUT_TYPES = {"int32": ("np.int32", "int", "%d"), "int64": ("np.int64", "long", "%ld")}


@dataclass
class OutputProgram:
    seed: int
    shape: str  # range / view
    python: str
    c: str
    args: tuple[Any, ...]  # the root call's arguments (arrays as NumPy arrays)
    out_index: int  # the output's position among them


def _leaf(rng: random.Random, el: str) -> str:
    k = rng.randint(-3, 5)
    return rng.choice([f"{el} * {k} + d", f"{el} - i * d", f"({el} + d) * ({el} - {k})",
                       f"{el} * {el} - {k} * i"])


def output_program(seed: int) -> OutputProgram:
    rng = random.Random(seed)
    shape = rng.choice(["range", "view"])
    dt = rng.choice(list(IN_TYPES))
    ot = rng.choice(list(OUT_TYPES))
    py_in, c_in = IN_TYPES[dt]
    py_out, c_out, fmt = OUT_TYPES[ot]
    n = rng.randint(1, 40)
    data = np.array([rng.randint(-300, 300) for _ in range(n)], dtype=dt)
    t = rng.randint(1, 3)
    node = rng.random() < 0.4  # the inductive case writes the split element
    gate = rng.random() < 0.3  # the left child only when an element says so
    gk = rng.randint(2, 4)
    leaf = _leaf(rng, "a[i]")
    node_leaf = _leaf(rng, "a[m]").replace(" i", " m").replace("(i", "(m")
    pad = rng.randint(0, 2) if shape == "range" else 0
    size = n + pad + rng.randint(0, 2)
    init = np.full(size, -1, dtype=ot)
    if shape == "range":
        s = pad
        sig_py = (f"a: NDArray[{py_in}], out: Output[{py_out}], lo: np.int32, hi: np.int32, "
                  "d: np.int32")
        sig_c = f"const {c_in} *a, {c_out} *out, int lo, int hi, int d"
        base, loop_py, loop_c = f"hi - lo <= {t}", "range(lo, hi)", "int i = lo; i < hi; i++"
        split_py, split_c = "m = lo + (hi - lo) // 2", "int m = lo + (hi - lo) / 2;"
        right_lo = "m + 1" if node else "m"
        left_py = left_c = "a, out, lo, m, d + 1"
        right_py = right_c = f"a, out, {right_lo}, hi, d + 1"
        g_py, g_c = f"a[lo] % {gk} != 0", f"a[lo] % {gk} != 0"
        store_py = store_c = f"out[i + {s}]"
        node_py = node_c = f"out[m + {s}]"
        args: tuple[Any, ...] = (data, init, 0, n, 0)
        c_args = f"a, out, 0, {n}, 0"
    else:
        sig_py = f"a: NDArray[{py_in}], out: Output[{py_out}], n: np.int32, d: np.int32"
        sig_c = f"const {c_in} *a, {c_out} *out, int n, int d"
        base, loop_py, loop_c = f"n <= {t}", "range(n)", "int i = 0; i < n; i++"
        split_py, split_c = "m = n // 2", "int m = n / 2;"
        rest = "m + 1" if node else "m"
        left_py = left_c = "a, out, m, d + 1"
        right_py = f"a[{rest}:], out[{rest}:], n - ({rest}), d + 1"
        right_c = rng.choice([f"a + {rest}, out + {rest}, n - ({rest}), d + 1",
                              f"a + {rest}, &out[{rest}], n - ({rest}), d + 1"])
        left_py = "a[:m], out[:m], m, d + 1" if rng.random() < 0.5 else left_py
        g_py, g_c = f"a[0] % {gk} != 0", f"a[0] % {gk} != 0"
        store_py = store_c = "out[i]"
        node_py, node_c = "out[m]", rng.choice(["out[m]", "*(out + m)"])
        args = (data, init, n, 0)
        c_args = f"a, out, {n}, 0"
    node_line_py = f"        {node_py} = {node_leaf}\n" if node else ""
    node_line_c = f"    {node_c} = {node_leaf};\n" if node else ""
    py = f'''import numpy as np
from numpy.typing import NDArray

from revec import Output, spawn, task


@task
def f({sig_py}):
    if {base}:
        for i in {loop_py}:
            {store_py} = {leaf}
    else:
        {split_py}
{node_line_py}        if {g_py if gate else "True"}:
            spawn(f, {left_py})
        spawn(f, {right_py})
'''
    values = ", ".join(str(int(v)) for v in data)
    c = f'''#include <stdio.h>
#include <cilk/cilk.h>

void f({sig_c}) {{
    if ({base}) {{
        for ({loop_c})
            {store_c} = {leaf};
        return;
    }}
    {split_c}
{node_line_c}    if ({g_c if gate else "1"})
        cilk_spawn f({left_c});
    f({right_c});
    cilk_sync;
}}

int main(void) {{
    static const {c_in} a[{max(n, 1)}] = {{{values}}};
    static {c_out} out[{size}];
    for (int i = 0; i < {size}; i++) out[i] = -1;
    f({c_args});
    for (int i = 0; i < {size}; i++) printf("{fmt}\\n", out[i]);
    return 0;
}}
'''
    return OutputProgram(seed, shape, py, c, args, 1)
