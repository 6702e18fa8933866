"""A hypothesis strategy that writes return-value recursion as people write it.

Every program has one task ``f(d, a, s)`` (``d`` decreases on every call, ``a`` varies,
``s`` is a parameter the task never assigns: a weight or offset) returning a value
combined from its own calls in one of the supported shapes:

- ``sum``: ``return f(..) + f(..) [+ local]``, several calls, optionally under ``if``;
- ``weighted``: ``return w1 * f(..) + w2 * f(..) [- f(..)] + local`` with constant or
  parameter weights;
- ``for`` / ``while``: ``total = init; ... total += [w *] f(..) ...; return total + local``;
- ``locals``: ``x = f(..); y = f(..); return x + w * y + local``;
- ``max`` / ``min``: ``return local + max(f(..), f(..)[, local])``;
- ``maxloop``: ``best = f(..); for ...: best = max(best, f(..)); return best + s``;

with an optional prologue (locals before the is-base test, used by the test and by
both cases), an unannotated helper (typed from its call sites), an optional result
annotation (int64 / int32 / uint32 / float64, or inferred) and base cases that return
local expressions.  Trees stay small (about 2,000 calls at most) for the plain-Python
reference.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

A_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"]
SHAPES = ["sum", "weighted", "for", "while", "locals", "max", "min", "maxloop"]


@dataclass
class ReturnSpec:
    source: str
    task: str
    args: tuple[int, ...]
    shape: str
    result_type: str | None


@st.composite
def return_programs(draw: st.DrawFn, shape: str | None = None) -> ReturnSpec:
    d = draw
    shape = shape or d(st.sampled_from(SHAPES))
    maxmode = shape in ("max", "min", "maxloop")
    floaty = not maxmode and d(st.integers(0, 5)) == 0
    if floaty:
        rtype: str | None = "float64"
    elif maxmode:
        rtype = d(st.sampled_from(["int64", "int32", None]))
    else:
        rtype = d(st.sampled_from(["int64", "int32", "uint32", None]))
    atype = d(st.sampled_from(A_TYPES))
    helper = d(st.booleans())
    prologue = d(st.booleans())
    threshold = d(st.integers(0, 2))

    def local() -> str:
        """A call-free term (small, so max/min path sums never overflow)."""
        if floaty:
            return d(st.sampled_from(["d * 0.25", "1.5", "(a % 5) * 0.5 + 1.0"]))
        opts = ["d", "(a % 7)", "3", "(d * 2 + 1)", "np.int32(a & 5)"]
        if helper:
            opts.append("mix(d, a % 9)")
        if prologue:
            opts.append("m")
        return d(st.sampled_from(opts))

    def arg_a() -> str:
        return d(st.sampled_from(["a", "a + 1", "a ^ d", "(a * 3) % 11", "a - d"]))

    def call(dec: int = 1) -> str:
        return f"f(d - {dec}, {arg_a()}, s)"

    def weight() -> str:
        if floaty:
            return d(st.sampled_from(["2.0", "0.5", "s"]))
        return d(st.sampled_from(["2", "3", "s", "(s + 1)"]))

    maybe_local = (lambda: f" + {local()}") if d(st.booleans()) else (lambda: "")
    lines = ["import numpy as np", "", "from revec import task", ""]
    if helper:
        lines += ["", "def mix(x, y):", "    t = x * 3 + y",
                  "    if t > 20:", "        return t - 20", "    return t", ""]
    ann = f" -> np.{rtype}" if rtype is not None else ""
    lines += ["", "@task", f"def f(d: np.int16, a: np.{atype}, s: np.int32){ann}:"]
    body: list[str] = []
    if prologue:
        body.append(d(st.sampled_from(["m = d % 3", "m = (a & 3) + 1", "m = np.int64(d) * 2"])))
    base_test = f"d <= {threshold}"
    if prologue and d(st.booleans()):
        base_test += f" or (m == 0 and d <= {threshold + 1})"
    body.append(f"if {base_test}:")
    if d(st.booleans()):
        body += ["    if (a & 1) == 0:", f"        return {local()}", f"    return {local()}"]
    else:
        body.append(f"    return {local()}")
    fan = 2
    if shape == "sum":
        fan = d(st.integers(1, 3))
        terms = " + ".join(call(d(st.integers(1, 2))) for _ in range(fan))
        if d(st.booleans()):
            body += ["if (a % 3) == 0:", f"    return {call()}{maybe_local()}"]
        body.append(f"return {terms}{maybe_local()}")
    elif shape == "weighted":
        fan = d(st.integers(2, 3))
        terms = [f"{weight()} * {call(1)}", f"{call(2)} * {weight()}"]
        if fan == 3:
            terms.append(f"- {call(2)}" if not floaty else f"+ {call(2)}")
        body.append("return " + terms[0] + " + " + " ".join(
            [terms[1]] + terms[2:]) + maybe_local())
    elif shape in ("for", "while"):
        fan = d(st.integers(1, 3))
        w = f"{weight()} * " if d(st.booleans()) else ""
        init = "0.0" if floaty else "0"
        body.append(f"total = {init}")
        if shape == "for":
            body += [f"for i in range({fan}):"]
            if d(st.booleans()):
                body += ["    if (i + a) % 2 == 0:",
                         f"        total += {w}f(d - 1 - (i % 2), {arg_a()}, s)"]
            else:
                body += [f"    total += {w}f(d - 1 - (i % 2), {arg_a()}, s)"]
        else:
            body += ["j = 0", f"while j < {fan}:", f"    total = total + {w}{call()}",
                     "    j += 1"]
        body.append(f"return total{maybe_local()}")
    elif shape == "locals":
        body += [f"x = {call(1)}", f"y = {call(2)}", f"return x + {weight()} * y{maybe_local()}"]
    elif shape in ("max", "min"):
        fn = shape
        args = [call(1), call(2)]
        if d(st.booleans()):
            args.append(local())
        body.append(f"return {local()} + {fn}({', '.join(args)})")
    else:  # maxloop
        fan = d(st.integers(2, 3))
        fn = d(st.sampled_from(["max", "min"]))
        body += [f"best = {call(1)}", f"for i in range({fan - 1}):",
                 f"    best = {fn}(best, f(d - 2, a + i, s))",
                 f"return best + {d(st.sampled_from(['1', 's', '0']))}"]
    lines += [f"    {b}" for b in body]
    max_d = {1: 30, 2: 10, 3: 7}[fan]
    d0 = d(st.integers(0, max_d))
    a0 = d(st.integers(0, 100))
    s0 = d(st.integers(-3, 3)) if not maxmode else d(st.integers(0, 5))
    return ReturnSpec("\n".join(lines) + "\n", "f", (d0, a0, s0), shape, rtype)
