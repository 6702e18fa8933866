"""A hypothesis strategy that writes random task programs in revec's language.

Programs have 1 to 4 parameters of different integer widths (the first, ``d``,
decreases on every spawn so trees are finite), fan-out 1 to 4, spawns straight,
under conditions and in ``for`` / ``while`` loops, an optional early ``return``,
helper calls, module-level constant arrays, and sum / min / max reducers in both
the ``if/else`` and the early-return form.  Integer arithmetic may wrap: the
front end types it exactly as NumPy does, so every variant must agree bit for bit.
Two counting reducers (``calls`` in both cases, ``leaves`` in the base case) let
the tests check the scheduler's task and leaf statistics too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"]
DEPTH_TYPES = ["int8", "int16", "int32", "int64"]


@dataclass
class Spec:
    source: str
    task: str
    args: tuple[int, ...]
    param_types: list[str] = field(default_factory=list)


class Writer:
    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.params: list[tuple[str, str]] = []
        self.locals: list[tuple[str, str]] = []
        self.has_table = False
        self.table_len = 1
        self.helpers: list[str] = []  # names of helpers taking (a: int32, b: int32)

    # ------------------------------------------------------------------ expressions
    def atom(self) -> str:
        d = self.draw
        names = [n for n, _ in self.params] + [n for n, _ in self.locals]
        choices = ["name", "name", "lit"]
        if self.has_table:
            choices.append("table")
        if self.helpers:
            choices.append("helper")
        kind = d(st.sampled_from(choices))
        if kind == "name":
            return d(st.sampled_from(names))
        if kind == "lit":
            return str(d(st.integers(0, 60)))
        if kind == "table":
            return f"TBL[d % {self.table_len}]"
        h = d(st.sampled_from(self.helpers))
        a, b = d(st.sampled_from(names)), d(st.sampled_from(names))
        return f"{h}(np.int32({a}), np.int32({b}))"

    def expr(self, depth: int = 2) -> str:
        d = self.draw
        if depth == 0 or d(st.integers(0, 2)) == 0:
            return self.atom()
        form = d(st.sampled_from(["bin", "bin", "bin", "shift", "divmod", "unary", "npminmax"]))
        if form == "bin":
            op = d(st.sampled_from(["+", "-", "*", "&", "|", "^"]))
            return f"({self.expr(depth - 1)} {op} {self.expr(depth - 1)})"
        if form == "shift":
            # shift a name: a shifted bare literal can leave int8's range, which NumPy
            # rejects next to an int8 value (and so does revec check)
            names = [n for n, _ in self.params] + [n for n, _ in self.locals]
            op = d(st.sampled_from(["<<", ">>"]))
            return f"({d(st.sampled_from(names))} {op} {d(st.integers(0, 3))})"
        if form == "divmod":
            op = d(st.sampled_from(["//", "%"]))
            return f"({self.expr(depth - 1)} {op} {d(st.integers(1, 7))})"
        if form == "unary":
            # negating a name: a negated bare literal next to an unsigned value is an
            # OverflowError in NumPy 2 (and rejected by revec check)
            names = [n for n, _ in self.params] + [n for n, _ in self.locals]
            return f"(-{d(st.sampled_from(names))})"
        fn = d(st.sampled_from(["np.minimum", "np.maximum"]))
        return f"{fn}({self.expr(depth - 1)}, {self.expr(depth - 1)})"

    def cond(self) -> str:
        d = self.draw
        form = d(st.sampled_from(["mask", "cmp", "and"]))
        if form == "mask":
            return f"({self.expr(1)} & {d(st.integers(1, 7))}) == {d(st.integers(0, 3))}"
        if form == "cmp":
            op = d(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
            return f"{self.expr(1)} {op} {self.expr(1)}"
        return f"({self.cond()}) and not ({self.cond()})"

    def cast_expr(self, ty: str) -> str:
        return f"np.{ty}({self.expr()})"


@st.composite
def task_programs(draw: st.DrawFn) -> Spec:
    w = Writer(draw)
    nparams = draw(st.integers(1, 4))
    dty = draw(st.sampled_from(DEPTH_TYPES))
    w.params = [("d", dty)] + [
        (name, draw(st.sampled_from(INT_TYPES))) for name in ("a", "b", "c")[: nparams - 1]]
    lines = ["import numpy as np", "", "from revec import Reducer, reduce, spawn, task", ""]
    # module-level constants
    if draw(st.booleans()):
        tdt = draw(st.sampled_from(INT_TYPES))
        info = np.iinfo(tdt)
        vals = draw(st.lists(st.integers(max(info.min, -1000), min(info.max, 1000)),
                             min_size=1, max_size=9))
        w.has_table = True
        w.table_len = len(vals)
        lines.append(f"TBL = np.array({vals}, dtype=np.{tdt})")
    lines.append(f"K = {draw(st.integers(1, 9))}")
    # reducers
    acc_ty = draw(st.sampled_from(["int64", "int32", "uint16", "int8"]))
    acc_op = draw(st.sampled_from(["sum", "min", "max"]))
    lines += [
        'calls = Reducer(np.int64, "sum")',
        'leaves = Reducer(np.int64, "sum")',
        f'acc = Reducer(np.{acc_ty}, "{acc_op}")',
        'fsum = Reducer(np.float64, "sum")',
        'fmin = Reducer(np.float32, "min")',
        "",
    ]
    # helpers
    if draw(st.booleans()):
        lines += ["", "def mix(x: np.int32, y: np.int32):"]
        if draw(st.booleans()):
            lines += ["    s = x", "    for i in range(3):",
                      "        s = np.int32((s ^ (y + i)) * 3)", "    return s"]
        else:
            lines += ["    if x > y:", "        return x - y", "    return np.int32(y * 2 + 1)"]
        w.helpers.append("mix")
        lines.append("")
    # the task
    sig = ", ".join(f"{n}: np.{t}" for n, t in w.params)
    lines += ["", "@task", f"def f({sig}):"]
    base_threshold = draw(st.integers(0, 2))
    base_cond = f"d <= {base_threshold}"
    if draw(st.booleans()):
        base_cond = f"{base_cond} or ({w.cond()}) and d < {base_threshold + 2}"
    base = ["reduce(calls, 1)", "reduce(leaves, 1)"]
    base.append(f"reduce(acc, {w.expr()})")
    if draw(st.booleans()):
        base += [f"t = {w.cast_expr('int32')}", "if t > 3:",
                 "    reduce(fsum, t * 0.5 + d)", "else:",
                 "    reduce(fmin, np.float32(t) * np.float32(0.25))"]
    early_form = draw(st.booleans())
    ind: list[str] = ["reduce(calls, 1)"]
    # locals of the inductive case
    for i in range(draw(st.integers(0, 2))):
        ty = draw(st.sampled_from(INT_TYPES))
        ind.append(f"l{i} = {w.cast_expr(ty)}")
        w.locals.append((f"l{i}", ty))
    if draw(st.integers(0, 3)) == 0:
        ind += [f"if {w.cond()}:", "    reduce(acc, d)", "    return"]
    fanout = draw(st.integers(1, 4))

    def spawn_args(dexpr: str) -> str:
        rest = [w.expr() for _ in w.params[1:]]
        return ", ".join([dexpr, *rest])

    remaining = fanout
    while remaining > 0:
        form = draw(st.sampled_from(["plain", "cond", "for", "while"]))
        step = draw(st.integers(1, 2))
        if form == "plain":
            ind.append(f"spawn(f, {spawn_args(f'd - {step}')})")
            remaining -= 1
        elif form == "cond":
            ind += [f"if {w.cond()}:", f"    spawn(f, {spawn_args(f'd - {step}')})"]
            if draw(st.booleans()) and remaining >= 1:
                ind += ["else:", f"    spawn(f, {spawn_args('d - 1')})"]
            remaining -= 1
        elif form == "for":
            trips = draw(st.integers(1, remaining))
            ind += [f"for i in range({trips}):",
                    f"    spawn(f, {spawn_args('d - 1 - (i % 2)')})"]
            remaining -= trips
        else:
            trips = draw(st.integers(1, remaining))
            ind += ["j = 0", f"while j < {trips}:",
                    f"    if j == {trips - 1} and ({w.cond()}):", "        break",
                    f"    spawn(f, {spawn_args('d - 1')})", "    j += 1"]
            remaining -= trips
    if early_form:
        lines.append(f"    if {base_cond}:")
        lines += [f"        {s}" for s in base] + ["        return"]
        lines += [f"    {s}" for s in ind]
    else:
        lines.append(f"    if {base_cond}:")
        lines += [f"        {s}" for s in base]
        lines.append("    else:")
        lines += [f"        {s}" for s in ind]
    # root: keep the tree small enough for the plain-Python reference
    max_depth = 40 if fanout == 1 else int(math.log(1500) / math.log(fanout)) + base_threshold
    d0 = draw(st.integers(0, min(max_depth, int(np.iinfo(dty).max))))
    args = [d0]
    for _, t in w.params[1:]:
        info = np.iinfo(t)
        args.append(draw(st.integers(int(info.min), int(info.max))))
    return Spec("\n".join(lines) + "\n", "f", tuple(args), [t for _, t in w.params])
