"""Where each kernel plan technique stands for one task on one back end: on, off or not
applicable, and why.

A technique (:data:`revec.transforms.kernel_plan.TECHNIQUES`) is a decision of the plan
that changes the kernels, never the results: whether it applies to a task is read off
the back end's generated source, built with the technique switched on and switched off
(:func:`revec.transforms.kernel_plan.plan_switches`, the other techniques as they are
now).  The same source both ways: it does not apply (the kernel is the same; an
ablation measures nothing there).  Otherwise it is on or off as the source built now
equals one or the other.  ``revec transform --plan`` prints :func:`render_states`;
``revec bench --ablation`` measures the techniques that apply.

A technique's own explanation of why it does not apply is the plan's
``<technique>_note`` attribute (:data:`NOTE_FIELDS` maps older names) when it starts
with "not applied"; it is added to the "n/a" line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from revec import ir
from revec.backends import registry
from revec.transforms import kernel_plan as kp

# a technique whose note field is not named <technique>_note
NOTE_FIELDS = {"leaf_inline": "leaf_note", "uniform_base": "uniform_note", "base_fold": "fold_note",
               "site_blocks": "site_note", "staged_steps": "staged_note",
               "leaf_level": "level_note"}

STATES = ("on", "off", "n/a")


@dataclass(frozen=True)
class TechniqueState:
    name: str
    state: str  # "on" / "off" / "n/a" (the kernel is the same either way)
    default: str  # what it is with no switch given: "on" / "off" / "n/a"
    why: str  # one line: what set it (a switch, the back end's default) or why n/a


def note(plan: kp.KernelPlan, name: str) -> str | None:
    """The plan's own line about technique ``name`` (None: the plan has none)."""
    value = getattr(plan, NOTE_FIELDS.get(name, f"{name}_note"), None)
    return value if isinstance(value, str) and value else None


def source_with(program: ir.Program, task: str, backend: str, off: frozenset[str],
                on: frozenset[str], compaction: str | None = None) -> str:
    """The back end's generated source of ``task`` with exactly ``off`` / ``on`` switched
    (the environment's switches do not apply)."""
    with kp.plan_switches(sorted(off), sorted(on)):
        return registry.get(backend).generate(program, task, compaction)


def technique_states(program: ir.Program, task: str, backend: str,
                     compaction: str | None = None,
                     source: Callable[[frozenset[str], frozenset[str]], str] | None = None
                     ) -> list[TechniqueState]:
    """Each technique's state for ``task`` on ``backend`` under the switches in force
    (:func:`kp.plan_off` / :func:`kp.plan_on`: options, else the environment).
    ``source(off, on)``: the generated source with those switches (default:
    :func:`source_with`; memoized here)."""
    memo: dict[tuple[frozenset[str], frozenset[str]], str] = {}

    def src(off: frozenset[str], on: frozenset[str]) -> str:
        key = (off, on - off)  # off wins
        if key not in memo:
            memo[key] = (source or (lambda a, b: source_with(program, task, backend, a, b,
                                                             compaction)))(*key)
        return memo[key]

    off, on = kp.plan_off(), kp.plan_on()
    now = src(off, on)
    none: frozenset[str] = frozenset()
    with kp.plan_switches(sorted(off), sorted(on - off)):
        plan = kp.build_plan(program, task, "scalar" if compaction == "scalar" else "vector",
                             registry.get(backend).target)
    out = []
    for t in kp.TECHNIQUES:
        t_set = frozenset({t})
        with_on, with_off = src(off - t_set, on | t_set), src(off | t_set, on - t_set)
        d_on, d_off = src(none, t_set), src(t_set, none)
        default = "n/a" if d_on == d_off else "on" if src(none, none) == d_on else "off"
        own = note(plan, t)
        if with_on == with_off:
            out.append(TechniqueState(t, "n/a", default, "not applicable: the kernel is the "
                                      "same with it on or off" + (
                                          f"; {own}" if own and own.startswith("not applied")
                                          else "")))
            continue
        state = "on" if now == with_on else "off"
        if t in off:
            why = f"switched off (--plan-off / {kp.PLAN_OFF_ENV})"
        elif t in on:
            why = f"switched on (--plan-on / {kp.PLAN_ON_ENV})"
        elif state == "on":
            why = f"the {backend} back end's default; --plan-off {t} switches it off"
        else:
            why = f"off by default on the {backend} back end; --plan-on {t} switches it on"
        out.append(TechniqueState(t, state, default, why))
    return out


def render_states(states: list[TechniqueState]) -> str:
    """The ``techniques:`` section ``revec transform --plan`` prints."""
    lines = [f"techniques (--plan-off / --plan-on LIST, {kp.PLAN_OFF_ENV} / "
             f"{kp.PLAN_ON_ENV}):"]
    lines += [f"  {s.name}: {s.state} -- {s.why}" for s in states] or ["  -"]
    return "\n".join(lines) + "\n"
