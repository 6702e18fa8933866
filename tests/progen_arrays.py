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


# --------------------------------------------------------------------------- arrays of structs
# (struct_program: a separate generator, so array_program's seeds generate what they did)
FIELD_TYPES = {  # C type -> (NumPy type, value range)
    "int": ("int32", (-500, 500)), "short": ("int16", (-300, 300)),
    "long": ("int64", (-10 ** 6, 10 ** 6)), "unsigned char": ("uint8", (0, 255)),
    "unsigned short": ("uint16", (0, 900)), "int64_t": ("int64", (-5000, 5000)),
    "double": ("float64", (-40, 40)),
}
FIELD_NAMES = ["value", "weight", "cost", "id", "level", "score", "size", "x", "y"]


@dataclass
class StructProgram:
    seed: int
    shape: str  # walk (halving a view) / knap (one item per level) / global (a file-scope
    #             pointer to structs, ranges of indices)
    c: str  # the program, its main() included (revec does not read main)
    args: tuple[Any, ...]  # the root call's arguments (the structs as the caller passes them)
    inputs: dict[str, Any]  # file-scope pointers' arrays
    forms: list[str] = field(default_factory=list)  # the spellings used


READS_AT_0 = ["{e}->{f}", "{e}[0].{f}", "(*{e}).{f}", "(({e}) + 0)->{f}"]
READS_AT_I = ["{e}[{i}].{f}", "({e} + {i})->{f}", "(*({e} + {i})).{f}"]


def _field_read(rng: random.Random, e: str, i: str | None, f: str, forms: list[str]) -> str:
    form = rng.choice(READS_AT_0 if i is None else READS_AT_I)
    forms.append(form)
    return form.format(e=e, i=i, f=f)


def struct_program(seed: int) -> StructProgram:
    rng = random.Random(10_000 + seed)
    shape = ["walk", "knap", "global"][seed % 3]
    nf = rng.randint(2, 4)
    names = rng.sample(FIELD_NAMES, nf)
    ctypes = [rng.choice(list(FIELD_TYPES)) for _ in names]
    if shape == "knap":  # the weight and value are integers
        ctypes[0] = rng.choice(["int", "short", "long"])
        ctypes[1] = rng.choice(["int", "unsigned char", "int64_t"])
    typedef = rng.random() < 0.5
    struct = "item_t" if typedef else "struct item"
    body = "".join(f"    {t} {f};\n" for t, f in zip(ctypes, names))
    decl = f"typedef struct {{\n{body}}} item_t;\n" if typedef else \
        f"struct item {{\n{body}}};\n"
    n = rng.randint(1, 14 if shape == "knap" else 30)
    data: dict[str, list[Any]] = {}
    for t, f in zip(ctypes, names):
        np_t, (lo, hi) = FIELD_TYPES[t]
        if np_t == "float64":
            data[f] = [rng.randint(lo * 4, hi * 4) / 4 for _ in range(n)]
        else:
            data[f] = [rng.randint(lo, hi) for _ in range(n)]
    if shape == "knap":
        data[names[1]] = [abs(w) % 20 + 1 for w in data[names[1]]]
    forms: list[str] = []

    def term(e: str, i: str | None, f: str, k: int) -> str:
        read = _field_read(rng, e, i, f, forms)
        return f"(long)({read} * {k})" if FIELD_TYPES[ctypes[names.index(f)]][0] == \
            "float64" else f"(long){read} * {k}"

    op = rng.choice(["sum", "max"])
    start = "0" if op == "sum" else "-9223372036854775807L - 1"
    fold = "s += v;" if op == "sum" else "if (v > s) s = v;"
    comb = "x + y" if op == "sum" else "x > y ? x : y"
    inputs: dict[str, Any] = {}
    if shape == "walk":
        t = rng.randint(1, 3)
        leaf = " + ".join(term("e", "i", f, rng.randint(-3, 4)) for f in
                          rng.sample(names, rng.randint(1, nf)))
        param = rng.choice([f"const {struct} *e", f"{struct} *e", f"{struct} e[]"])
        right = rng.choice(["e + h", "&e[h]", "h + e"])
        forms += [param.replace(struct, "S"), right]
        task = f'''long f({param}, int n, int d) {{
    if (n <= {t}) {{
        long s = {start};
        for (int i = 0; i < n; i++) {{
            long v = {leaf} + d;
            {fold}
        }}
        return s;
    }}
    int h = n / 2;
    long x = cilk_spawn f(e, h, d + 1);
    long y = cilk_spawn f({right}, n - h, d + 1);
    cilk_sync;
    return {comb};
}}
'''
        call, args_c = "f(items, N, 0)", (n, 0)
    elif shape == "knap":
        v, w = names[0], names[1]
        cap = rng.randint(5, 60)
        param = rng.choice([f"const {struct} *e", f"{struct} *e", f"{struct} e[]"])
        child = rng.choice(["e + 1", "&e[1]", "1 + e"])
        wr, vr = _field_read(rng, "e", None, w, forms), _field_read(rng, "e", None, v, forms)
        forms += [param.replace(struct, "S"), child]
        if nf > 2:
            vr = f"{vr} + {term('e', None, names[2], rng.randint(-2, 2))}"
        task = f'''long f({param}, int n, long c, long v) {{
    if (n == 0) return v;
    if ((long){wr} > c) return f({child}, n - 1, c, v);
    long without = cilk_spawn f({child}, n - 1, c, v);
    long with = cilk_spawn f({child}, n - 1, c - {wr}, v + {vr});
    cilk_sync;
    return with > without ? with : without;
}}
'''
        call, args_c = f"f(items, N, {cap}, 0)", (n, cap, 0)
    else:
        leaf = " + ".join(term("items", "i", f, rng.randint(-3, 4)) for f in
                          rng.sample(names, rng.randint(1, nf)))
        static = rng.choice(["static ", ""])
        task = f'''{static}{struct} *items;

long f(int lo, int hi) {{
    if (hi - lo <= 2) {{
        long s = {start};
        for (int i = lo; i < hi; i++) {{
            long v = {leaf};
            {fold}
        }}
        return s;
    }}
    int m = lo + (hi - lo) / 2;
    long x = cilk_spawn f(lo, m);
    long y = f(m, hi);
    cilk_sync;
    return {comb};
}}
'''
        call, args_c = "f(0, N)", (0, n)
    inits = ", ".join("{" + ", ".join(f".{f} = {data[f][i]!r}" for f in names) + "}"
                      for i in range(n))
    own = "items = arr;\n    " if shape == "global" else f"{struct} *items = arr;\n    "
    c = f'''#include <cilk/cilk.h>
#include <stdint.h>
#include <stdio.h>

{decl}
{task}
int main(void) {{
    enum {{ N = {n} }};
    {struct} arr[{n}] = {{{inits}}};
    {own}printf("%ld\\n", {call});
    return 0;
}}
'''
    # the caller's arrays: a structured array (fields in another order, sometimes an
    # extra field) or a dict of one array per field
    dtypes = [(f, FIELD_TYPES[t][0]) for t, f in zip(ctypes, names)]
    if rng.random() < 0.6:
        order = rng.sample(dtypes, len(dtypes)) + ([("extra", "int8")] if rng.random() < 0.4
                                                   else [])
        arr = np.zeros(n, dtype=order)
        for f, _ in dtypes:
            arr[f] = data[f]
        value: Any = arr
    else:
        value = {f: np.array(data[f], dtype=dt) for f, dt in dtypes}
    if shape == "global":
        inputs = {"items": value}
        args: tuple[Any, ...] = args_c
    else:
        args = (value, *args_c)
    return StructProgram(seed, shape, c, args, inputs, forms)
