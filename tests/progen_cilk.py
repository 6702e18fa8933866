"""A hypothesis strategy that writes Cilk C files as people write them, with a main for
gcc's serial elision.

A file holds several tasks ``fK(d, a, s)`` (``d`` decreases on every call, ``a`` varies
and has a random ``<stdint.h>`` type, ``s`` is never assigned), each of one shape:

- ``pair``: ``x = cilk_spawn f(..); y = f(..);`` (a plain recursive call beside the spawn,
  as in OpenCilk's fib), ``cilk_sync``, ``return x + y [+ local]``;
- ``array``: ``counts[k++] = cilk_spawn f(..)`` in a ``for`` or ``while`` loop (under an
  ``if``), summed after ``cilk_sync`` (Cilk-5 nqueens style);
- ``loop``: ``total += f(..)`` in a ``for`` loop, plain recursive calls;
- ``max`` / ``min``: ``return local + (x > y ? x : y)`` of spawned results;
- ``void``: a void task with ``cilk_spawn f(..);`` statements in loops and ``if``s and
  a plain recursive call (its answer is its number of tasks).

Around them: ``#define`` constants, file-scope ``const`` scalars and arrays, a
``static`` helper with a loop, and local expressions over every integer type of
``<stdint.h>`` (integer promotions, unsigned wraparound, C's truncating ``/`` and ``%``,
shifts, mixed signed/unsigned comparisons, casts, ``?:``).  Some files use MIT Cilk-5
spelling (``cilk``, ``spawn``, ``sync``).  Signed overflow is defined as wraparound
(gcc's ``-fwrapv``, as revec computes); divisors are never 0 or -1 and shift counts stay
below the width, so nothing else is undefined.  Trees stay below ~3,000 tasks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

INT_TYPES = ["int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
             "uint64_t", "int", "unsigned", "long", "char", "short", "unsigned char",
             "unsigned long"]
RESULT_TYPES = ["int64_t", "int32_t", "uint32_t", "uint64_t", "long", "int", "unsigned",
                "double", "float"]
MAX_RESULT_TYPES = ["int64_t", "int32_t", "long", "int"]
DEPTH = int(__import__("os").environ.get("CILK_GEN_DEPTH", "2"))  # of local expressions
SHAPES = ["pair", "array", "loop", "max", "min", "void", "acc"]
RANGES = {"int8_t": (-128, 127), "int16_t": (-32768, 32767), "int32_t": (-2**31, 2**31 - 1),
          "int64_t": (-2**63, 2**63 - 1), "uint8_t": (0, 255), "uint16_t": (0, 65535),
          "uint32_t": (0, 2**32 - 1), "uint64_t": (0, 2**64 - 1), "int": (-2**31, 2**31 - 1),
          "unsigned": (0, 2**32 - 1), "long": (-2**63, 2**63 - 1), "char": (-128, 127),
          "short": (-32768, 32767), "unsigned char": (0, 255),
          "unsigned long": (0, 2**64 - 1)}


@dataclass
class TaskSpec:
    name: str
    shape: str
    result: str | None  # C result type; None: void
    args: list[tuple[int, int, int]]  # root arguments (d, a, s) to run


@dataclass
class CilkFile:
    source: str
    tasks: list[TaskSpec] = field(default_factory=list)
    cilk5: bool = False

    def main_source(self) -> str:
        """A main for the serial elision: every task on every argument set, printing
        the result (or nothing for void) and the number of calls of the task, counted
        by gcc's -finstrument-functions hooks."""
        lines = ["#include <stdio.h>", "#include <stdint.h>", "",
                 "static void *rv_task; static long rv_calls;",
                 "__attribute__((no_instrument_function)) void "
                 "__cyg_profile_func_enter(void *fn, void *site) "
                 "{ (void)site; if (fn == rv_task) rv_calls++; }",
                 "__attribute__((no_instrument_function)) void "
                 "__cyg_profile_func_exit(void *fn, void *site) { (void)fn; (void)site; }", ""]
        for t in self.tasks:
            lines.append(f"{t.result or 'void'} {t.name}(int16_t d, {self.atype(t)} a, "
                         "int32_t s);")
        lines += ["", "int main(void) {"]
        for t in self.tasks:
            for d, a, s in t.args:
                call = f"{t.name}({d}, ({self.atype(t)}){_c_int(a)}, {s})"
                lines.append(f"    rv_task = (void *){t.name}; rv_calls = 0;")
                if t.result is None:
                    lines.append(f"    {call}; printf(\"-\\n\");")
                elif t.result in ("double", "float"):
                    lines.append(f"    printf(\"%.17g\\n\", {call});")
                elif t.result in ("uint32_t", "uint64_t", "unsigned", "unsigned long"):
                    lines.append(f"    printf(\"%llu\\n\", (unsigned long long){call});")
                else:
                    lines.append(f"    printf(\"%lld\\n\", (long long){call});")
                lines.append("    printf(\"%ld\\n\", rv_calls);")
        lines += ["    return 0;", "}", ""]
        return "\n".join(lines)

    def atype(self, t: TaskSpec) -> str:
        return self.atypes[t.name]

    atypes: dict[str, str] = field(default_factory=dict)


def _c_int(v: int) -> str:
    if v < -2**63 + 1:
        return f"({v + 1}LL - 1)"
    if v > 2**63 - 1:
        return f"{v}ULL"
    return f"{v}LL"


@st.composite
def cilk_files(draw: st.DrawFn, n_tasks: int = 4, shapes: list[str] | None = None
               ) -> CilkFile:
    d = draw
    cilk5 = d(st.integers(0, 4)) == 0
    spawn_kw = "spawn" if cilk5 else "cilk_spawn"
    sync_kw = "sync" if cilk5 else "cilk_sync"
    tab_t = d(st.sampled_from(INT_TYPES[:8]))
    lo, hi = RANGES[tab_t]
    tab = [d(st.integers(lo, hi)) for _ in range(8)]
    k1 = d(st.integers(-50, 50))
    c1_t = d(st.sampled_from(["int32_t", "uint16_t", "int64_t", "uint32_t"]))
    c1 = d(st.integers(*RANGES[c1_t]))
    head = ["#include <stdint.h>", "#include <stdbool.h>"]
    if not cilk5:
        head.insert(0, "#include <cilk/cilk.h>")
    head += ["", "/* generated: constants, a table and a helper */",
             f"#define K1 {k1}", "#define KMASK 0x3Fu", "#define MAXK 4",
             f"static const {tab_t} TAB[8] = {{{', '.join(_c_int(v) for v in tab)}}};",
             f"const {c1_t} C1 = {_c_int(c1)};", "",
             "static int32_t mix(int32_t x, uint8_t y) {",
             "    int32_t t = x * 3 + y;",
             "    for (int j = 0; j < (y & 3); j++)",
             "        t ^= t >> 2;",
             "    if (t > 20)",
             "        return t - 20;",
             "    return t;",
             "}", ""]
    out = CilkFile("", [], cilk5)
    body: list[str] = []
    for k in range(n_tasks):
        shape = d(st.sampled_from(shapes or SHAPES))
        name = f"f{k}"
        atype = d(st.sampled_from(INT_TYPES))
        out.atypes[name] = atype
        text, result, fan = _task(d, name, shape, atype, spawn_kw, sync_kw, cilk5)
        body += text + [""]
        args = []
        dmax = {1: 12, 2: 10, 3: 7}[fan]
        for _ in range(d(st.integers(1, 2))):
            args.append((d(st.integers(-1, dmax)), d(st.integers(*RANGES[atype])),
                         d(st.integers(-3, 5))))
        out.tasks.append(TaskSpec(name, shape, result, args))
    out.source = "\n".join(head + body)
    return out


def _expr(d: st.DrawFn, names: list[str], depth: int, stable: bool = False) -> str:
    """A C expression over ``names`` (no undefined behaviour under -fwrapv); ``stable``:
    parameters and constants only (no table, no helper call)."""
    if depth <= 0 or d(st.integers(0, 3)) == 0:
        extra = [] if stable else ["TAB[(a) & 7]"]
        return d(st.sampled_from([
            *names, *names, str(d(st.integers(0, 9))), f"{d(st.integers(0, 300))}u",
            "K1", "C1", "KMASK", "(-7)", *extra]))
    a = _expr(d, names, depth - 1, stable)
    b = _expr(d, names, depth - 1, stable)
    kind = d(st.integers(0, 11 if not stable else 8))
    if kind == 9 and stable:
        kind = 0
    if kind <= 2:
        return f"({a} {d(st.sampled_from(['+', '-', '*', '&', '|', '^']))} {b})"
    if kind == 3:
        return f"({a} {d(st.sampled_from(['/', '%']))} (({b} & 7) + 1))"
    if kind == 4:
        return f"({a} {d(st.sampled_from(['<<', '>>']))} ({b} & 7))"
    if kind == 5:
        return f"({a} {d(st.sampled_from(['<', '<=', '==', '!=', '>']))} {b})"
    if kind == 6:
        t = d(st.sampled_from(["uint8_t", "int8_t", "int16_t", "uint16_t", "uint32_t",
                               "int64_t", "unsigned", "_Bool", "double", "bool"]))
        if t == "double":
            return f"(int32_t)((double)({a} & 1023) * 0.5)"
        return f"({t})({a})"
    if kind == 7:
        return f"({a} > {b} ? {a} : {b})"
    if kind == 8:
        return f"({d(st.sampled_from(['-', '~', '!']))}{a})"
    if kind == 9:
        return f"mix({a}, {b})"
    if kind == 10:
        return f"({a} && {b})"
    return f"({a} ? {b} : {_expr(d, names, 0, stable)})"


def _task(d: st.DrawFn, name: str, shape: str, atype: str, spawn_kw: str, sync_kw: str,
          cilk5: bool) -> tuple[list[str], str | None, int]:
    names = ["d", "a", "s"]
    if cilk5 and shape == "loop":  # Cilk-5 calls a cilk function only by spawn
        shape = "pair"
    maxmode = shape in ("max", "min")
    if shape == "void":
        result: str | None = None
    elif maxmode:
        result = d(st.sampled_from(MAX_RESULT_TYPES))
    else:
        result = d(st.sampled_from(RESULT_TYPES))
    # floating results: every local value is a small multiple of 1/4, so every sum is
    # exact in float and double, whatever order revec adds them in
    floaty = result in ("double", "float")
    prefix = "cilk " if cilk5 else ""
    threshold = d(st.integers(0, 2))
    lines = [f"{prefix}{result or 'void'} {name}(int16_t d, {atype} a, int32_t s) {{"]
    mtype = d(st.sampled_from(INT_TYPES))
    prologue = d(st.booleans())
    if prologue:
        lines.append(f"    {mtype} m = {_expr(d, names, DEPTH)};")
        names = [*names, "m"]

    def local(stable: bool = False) -> str:
        if floaty:
            return d(st.sampled_from(["d * 0.25", "1.5", "(a % 5) * 0.5 + 1.0",
                                      f"({result})(s & 3)"]))
        e = _expr(d, ["d", "a", "s"] if stable else names, DEPTH, stable)
        if maxmode:  # small, so path sums never wrap
            return f"(int)(({e}) & 15)"
        return e

    def arg_a() -> str:
        return d(st.sampled_from(["a", "a + 1", "a ^ d", "(a * 3) % 11", "a - d",
                                  f"({_expr(d, names, 1)})"]))

    def call(dec: int = 1) -> str:
        return f"{name}(d - {dec}, {arg_a()}, s)"

    base_test = f"d <= {threshold}"
    if prologue and d(st.booleans()):
        base_test += f" || (m == 0 && d <= {threshold + 1})"
    if result is None:
        lines.append(f"    if ({base_test})")
        lines.append("        return;")
    elif d(st.booleans()):
        lines += [f"    if ({base_test}) {{", "        if ((a & 1) == 0)",
                  f"            return {local()};", f"        return {local()};", "    }"]
    else:
        lines += [f"    if ({base_test})", f"        return {local()};"]
    fan = 2
    maybe_local = (lambda: f" + {local()}") if d(st.booleans()) else (lambda: "")
    if shape == "pair":
        plain = not cilk5 and d(st.booleans())
        second = call(2) if plain else f"{spawn_kw} {call(2)}"
        lines += [f"    {result} x = {spawn_kw} {call(1)};", f"    {result} y;",
                  f"    y = {second};", f"    {sync_kw};"]
        if d(st.booleans()):
            lines.append(f"    return x + y{maybe_local()};")
        else:
            weights = ["2 * x", "x"] if result == "float" else ["2 * x", "x * s", "x"]
            lines.append(f"    return y + {d(st.sampled_from(weights))}"
                         f"{maybe_local()};")
    elif shape == "array":
        fan = d(st.integers(1, 3))
        lines += [f"    {result} counts[MAXK];", "    int k = 0;",
                  f"    {result} total = {'0.0' if floaty else '0'};"]
        cond = d(st.sampled_from(["", "(i + a) % 2 == 0 || i == 0", "i < d"]))
        use_while = d(st.booleans())
        if use_while:
            lines += ["    int i = 0;", f"    while (i < {fan}) {{"]
        else:
            lines.append(f"    for (int i = 0; i < {fan}; i++) {{")
        spawn = f"counts[k++] = {spawn_kw} {name}(d - 1, a + i, s);"
        if cond:
            lines += [f"        if ({cond})", f"            {spawn}"]
        else:
            lines.append(f"        {spawn}")
        if use_while:
            lines.append("        i++;")
        lines += ["    }", f"    {sync_kw};", "    for (int j = 0; j < k; j++)",
                  "        total += counts[j];", f"    return total{maybe_local()};"]
    elif shape == "loop":
        fan = d(st.integers(1, 3))
        lines += [f"    {result} total = {'1.0' if floaty else local()};",
                  f"    for (int i = 0; i < {fan}; i++)",
                  f"        total += {name}(d - 1, a + i, s);",
                  f"    return total{maybe_local()};"]
    elif maxmode:
        op = ">" if shape != "min" else "<"
        lines += [f"    {result} x = {spawn_kw} {call(1)};",
                  f"    {result} y = {spawn_kw} {call(2)};", f"    {sync_kw};",
                  f"    return {local(True) + ' + ' if d(st.booleans()) else ''}"
                  f"(x {op} y ? x : y);"]
    elif shape == "acc":  # x += cilk_spawn f(...), a plain or spawned call beside it
        plain = not cilk5 and d(st.booleans())
        second = call(2) if plain else f"{spawn_kw} {call(2)}"
        lines += [f"    {result} total = {local()};", f"    total += {spawn_kw} {call(1)};",
                  f"    {result} y = {second};", f"    {sync_kw};",
                  f"    return total + y{maybe_local()};"]
    else:  # void
        fan = 3
        lines += [f"    {spawn_kw} {call(1)};",
                  f"    for (int i = 0; i < {d(st.integers(0, 1))}; i++)",
                  f"        {spawn_kw} {name}(d - 2, a + i, s);"]
        if not cilk5:
            lines += ["    if ((a & 1) == 0)", f"        {call(2)};"]
        lines.append(f"    {sync_kw};")
    lines.append("}")
    return lines, result, fan


# ---------------------------------------------------------------------- out-parameters
@dataclass
class OutParamFile:
    """Tasks returning their result through an out-parameter (``source``), the same
    tasks returning it (``twin``), a main for gcc's elision of ``source`` printing
    every call's result, and the calls (task, root arguments without the pointer)."""

    source: str
    twin: str
    main: str
    calls: list[tuple[str, tuple[int, ...]]]
    cilk5: bool = False


OUT_SHAPES = ["pair", "weighted", "max", "min", "indexed", "counter", "accumulate"]


@st.composite
def outparam_files(draw: st.DrawFn, n_tasks: int = 2) -> OutParamFile:
    """A file of ``n_tasks`` out-parameter tasks ``gK(int d, int a, T *res)`` in the
    shapes people write (fib's ``cilk_spawn f(.., &x); f(.., &y)``; weighted sums;
    max/min with a local term; BOTS's array filled by the loop index, 0 where pruned;
    Cilk-5's ``&counts[k++]``; ``*res = e0`` then ``*res += ...``), base cases by early
    return or if/else, ``*res`` or ``res[0]``, sometimes in MIT Cilk-5 spelling."""
    d = draw
    cilk5 = d(st.integers(0, 3)) == 0
    sp, sy = ("spawn", "sync") if cilk5 else ("cilk_spawn", "cilk_sync")
    head = ["#include <stdint.h>", "#define W 3", ""]
    if not cilk5:
        head.insert(0, "#include <cilk/cilk.h>")
    out, twin, protos = list(head), list(head), []
    calls: list[tuple[str, tuple[int, ...]]] = []
    for k in range(n_tasks):
        name = f"g{k}"
        shape = d(st.sampled_from(OUT_SHAPES))
        ty = d(st.sampled_from(["int", "long", "int64_t"] if shape in ("max", "min")
                               else ["int", "long", "int64_t", "unsigned", "uint32_t"]))
        star = d(st.sampled_from(["*res", "res[0]"]))
        ifelse = d(st.booleans())
        leaf = d(st.sampled_from(["a & 7", "d + a % 5", "1", "(a ^ d) & 3"]))
        local = d(st.sampled_from(["(a & 3)", "d", "1", "(d * a) % 4"]))
        kw = "cilk " if cilk5 else ""
        o = [f"{kw}void {name}(int d, int a, {ty} *res) {{"]
        t = [f"{kw}{ty} {name}(int d, int a) {{"]
        if shape in ("pair", "weighted", "max", "min", "accumulate"):
            second_plain = not cilk5 and d(st.booleans())
            s2 = "" if second_plain else f"{sp} "
            body_o = [f"{ty} x, y;", f"{sp} {name}(d - 1, a + 1, &x);",
                      f"{s2}{name}(d - 2, a ^ d, &y);", f"{sy};"]
            body_t = [f"{ty} x, y;", f"x = {sp} {name}(d - 1, a + 1);",
                      f"y = {s2}{name}(d - 2, a ^ d);", f"{sy};"]
            if shape == "pair":
                comb = "x + y"
            elif shape == "weighted":
                comb = f"{d(st.sampled_from(['2 * x', 'x * 3', 'x']))} + y + {local}"
            elif shape in ("max", "min"):
                op = ">" if shape == "max" else "<"
                comb = f"{local} + (x {op} y ? x : y)"
            if shape == "accumulate":
                body_o += [f"{star} = {local};", f"{star} += x;", f"{star} += y;"]
                body_t += [f"return {local} + x + y;"]
            else:
                body_o.append(f"{star} = {comb};")
                body_t.append(f"return {comb};")
            dmax = 11
        else:
            cond = d(st.sampled_from(["(a + i) % 3 != 0", "i <= d % W", "i != 1"]))
            if shape == "indexed":
                body_o = [f"{ty} part[W];", "int i;", "for (i = 0; i < W; i++) {",
                          f"  if ({cond}) {sp} {name}(d - 1, a + i, &part[i]);",
                          "  else part[i] = 0;", "}", f"{sy};", f"{star} = {local};",
                          "for (i = 0; i < W; i++)", f"  {star} += part[i];"]
                body_t = [f"{ty} part[W];", "int i;", "for (i = 0; i < W; i++) {",
                          f"  if ({cond}) part[i] = {sp} {name}(d - 1, a + i);",
                          "  else part[i] = 0;", "}", f"{sy};", f"{ty} s = {local};",
                          "for (i = 0; i < W; i++)", "  s += part[i];", "return s;"]
            else:  # counter
                body_o = [f"{ty} part[W];", "int k = 0;", "for (int i = 0; i < W; i++)",
                          f"  if ({cond}) {sp} {name}(d - 1, a + i, &part[k++]);",
                          f"{sy};", f"{star} = {local};", "for (int j = 0; j < k; j++)",
                          f"  {star} += part[j];"]
                body_t = [f"{ty} part[W];", "int k = 0;", f"{ty} s = {local};",
                          "for (int i = 0; i < W; i++)",
                          f"  if ({cond}) part[k++] = {sp} {name}(d - 1, a + i);",
                          f"{sy};", "for (int j = 0; j < k; j++)", "  s += part[j];",
                          "return s;"]
            dmax = 6
        if ifelse:
            o += ["  if (d < 2)", f"    {star} = {leaf};", "  else {",
                  *[f"    {x}" for x in body_o], "  }", "}"]
            t += ["  if (d < 2)", f"    return {leaf};", "  else {",
                  *[f"    {x}" for x in body_t], "  }", "}"]
        else:
            o += [f"  if (d < 2) {{ {star} = {leaf}; return; }}",
                  *[f"  {x}" for x in body_o], "}"]
            t += [f"  if (d < 2) return {leaf};", *[f"  {x}" for x in body_t], "}"]
        out += [*o, ""]
        twin += [*t, ""]
        protos.append(f"void {name}(int d, int a, {ty} *res);")
        for _ in range(d(st.integers(1, 2))):
            calls.append((name, (d(st.integers(0, dmax)), d(st.integers(0, 50)))))
        protos[-1] += f" /* {ty} */"
    main = ["#include <stdio.h>", "#include <stdint.h>", *protos, "int main(void) {"]
    for name, (dd, aa) in calls:
        ty = next(p for p in protos if f" {name}(" in p).split("/* ")[1][:-3]
        main += [f"  {{ {ty} r; {name}({dd}, {aa}, &r); printf(\"%lld\\n\", (long long)r); }}"]
    main += ["  return 0;", "}", ""]
    return OutParamFile("\n".join(out), "\n".join(twin), "\n".join(main), calls, cilk5)
