"""Cilk C tasks in the shapes programmers write (tests/test_c_shapes.py), generated
with mutations, for the sweep that no program passes ``check`` and then fails ``run``.

A program ``F(int16_t d, int32_t a)`` (``d`` decreases on every call) combines, at
random: the form of its body (an early ``return``, ``if``/``else`` with returns in both,
a shared ``return`` after ``if``/``else``, the recursive branch first with or without
``else``), guard ``if``s with early returns, the way results are combined (directly,
through a temporary, ``best = x > y ? x : y``, the expanded ``MAX`` macro, min,
``acc += child`` after the sync with ``acc`` declared early or late, a collecting array
filled through ``k++`` and summed up to ``k`` or over the filling loop's bound, with the
accumulator declared after the spawns, or filled by the loop index), a spawn or a plain
call for the second child, and a serial cutoff calling ``F_seq``, the task's elision.
A mutation then makes some programs use a variation revec may reject (a result used
twice, a product of results, a cutoff whose serial copy differs from the elision, an
array summed over another bound, a result narrowed in a temporary, a result tested in a
condition).  Every program is valid C; its answer is gcc's serial elision.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

RESULT_TYPES = ["long", "int64_t", "int"]
FORMS = ["early", "else", "shared", "rfirst", "rfirst_noelse"]
COMBOS = ["direct", "tmp", "max", "macro_max", "min", "acc_early", "acc_late", "array_k",
          "array_bound", "array_index"]
MUTATIONS = ["reuse", "product", "cutoff_differs", "other_bound", "narrow", "condition"]


@dataclass
class ShapeProgram:
    name: str
    source: str  # the task (and its serial copy), no main
    counted: str  # the function whose calls count the tree (the task, or its twin)
    twin: str  # a copy of the task without its cutoff (counts the tree), or ""
    args: tuple[int, int]
    mutation: str | None


def generate(rng: random.Random, name: str) -> ShapeProgram:
    rt = rng.choice(RESULT_TYPES)
    form = rng.choice(FORMS)
    combo = rng.choice(COMBOS)
    mutation = rng.choice(MUTATIONS) if rng.random() < 0.3 else None
    plain = rng.random() < 0.5  # the second child a plain call
    cutoff = rng.random() < 0.3 or mutation == "cutoff_differs"
    guard_before = rng.random() < 0.25
    guard_inside = rng.random() < 0.3
    k1, k2, k3 = rng.randint(1, 9), rng.randint(1, 9), rng.randint(2, 13)
    base_value = f"({rt})(a % {k3} - {k3 // 2})"
    local = f"({rt})(a & {rng.choice([1, 3, 7])})"
    width = rng.choice(["2", "3", "(a & 1) + 2"])

    def body(fn: str, spawn: str, sync: str) -> tuple[list[str], list[str], list[str]]:
        """(statements before the is-base test, the inductive statements ending with
        the returned value's statement, declarations at the top)"""
        s2 = "" if plain else spawn
        top: list[str] = []
        ind: list[str] = []
        if guard_inside:
            ind.append(f"if (a % 5 == {k1 % 5}) return {local};")
        ty = "int16_t" if mutation == "narrow" else rt
        if combo.startswith("array"):
            top += [f"{rt} part[4];"] + (["int k = 0;"] if combo != "array_index" else [])
            index = "i" if combo == "array_index" else "k++"
            ind.append(f"for (int i = 0; i < {width}; i++) part[{index}] = {spawn}"
                       f"{fn}(d - 1 - i % 2, a + i * {k1});")
            ind.append(sync)
            ind.append(f"{rt} total = {local};")
            bound = "k" if combo == "array_k" else width
            if mutation == "other_bound":
                bound = "3" if width != "3" else "2"
            ind.append(f"for (int i = 0; i < {bound}; i++) total += part[i];")
            ind.append("return total;")
            return [], ind, top
        ind.append(f"{rt} x = {spawn}{fn}(d - 1, a + {k1});")
        ind.append(f"{rt} y = {s2}{fn}(d - 2, a * 3 + {k2});")
        ind.append(sync)
        if mutation == "condition":
            ind.append(f"if (x > {k1}) return y;")
        second = "x" if mutation == "reuse" else local
        if combo == "direct":
            op = "*" if mutation == "product" else "+"
            ind.append(f"return x {op} y + {second};")
        elif combo == "tmp":
            op = "*" if mutation == "product" else "+"
            ind.append(f"{ty} tmp = x {op} y;")
            ind.append(f"return tmp + {second};")
        elif combo in ("max", "macro_max", "min"):
            cmp = "<" if combo == "min" else ">"
            value = (f"(({'x'}) {cmp} ({'y'}) ? ({'x'}) : ({'y'}))" if combo == "macro_max"
                     else f"x {cmp} y ? x : y")
            ind.append(f"{ty} best = {value};")
            ind.append("return best;" if mutation != "reuse" else "return best + x;")
        else:  # acc_early / acc_late
            if combo == "acc_early":
                top.append(f"{ty} acc = {local};")
            else:
                ind.append(f"{ty} acc = {local};")
            ind.append("acc += x;")
            ind.append("acc += y;" if mutation != "reuse" else "acc += x;")
            ind.append("return acc;")
        return [], ind, top

    def task(fn: str, serial: bool, with_cutoff: bool) -> str:
        spawn, sync = ("", "") if serial else ("cilk_spawn ", "cilk_sync;")
        _, ind, top = body(fn, spawn, sync)
        ind = [s for s in ind if s]
        lines = [f"{rt} {fn}(int16_t d, int32_t a) {{", *top]
        if guard_before:
            lines.append(f"if (a % 7 == {k2 % 7}) return {base_value};")
        if with_cutoff:
            lines.append(f"if (d < 3) return {name}_seq(d, a);")
        test, neg = "d <= 0", "d > 0"
        if form == "early":
            lines += [f"if ({test}) return {base_value};", *ind]
        elif form == "else":
            lines += [f"if ({test}) {{", f"return {base_value};", "} else {", *ind, "}"]
        elif form == "rfirst":
            lines += [f"if ({neg}) {{", *ind, "} else {", f"return {base_value};", "}"]
        elif form == "rfirst_noelse":
            lines += [f"if ({neg}) {{", *ind, "}", f"return {base_value};"]
        else:  # shared: the result in a local, one return after if / else
            res = list(ind)
            last = res.pop()
            assert last.startswith("return ")
            lines += [f"{rt} res;", f"if ({test}) {{", f"res = {base_value};", "} else {",
                      *res, f"res = {last[len('return '):-1]};", "}", "return res;"]
        return "\n".join([lines[0], *("    " + x for x in lines[1:]), "}"]) + "\n"

    src = ""
    if cutoff:
        serial = task(f"{name}_seq", True, False)
        if mutation == "cutoff_differs":
            serial = serial.replace(f"a + {k1}", f"a + {k1 + 1}", 1) if f"a + {k1}" in serial \
                else serial.replace("d - 1", "d - 1 + 0", 1)
        src += serial
    src += task(name, False, cutoff)
    twin = task(f"{name}_plain", False, False) if cutoff else ""
    return ShapeProgram(name, src, f"{name}_plain" if cutoff else name, twin,
                        (rng.randint(5, 8), rng.randint(-50, 50)), mutation)
