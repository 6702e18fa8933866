"""The plan's if-converted lane code (:class:`revec.transforms.lanes.LaneBody`) run with
NumPy over all the threads of a step at once.

A lane body is the statements of a step rewritten for threads in lock step
(``revec/transforms/lanes.py``): every ``if`` became lane conditions, an assignment under
a condition a select, a spawn a site that records per lane whether it spawned and as
which spawn number.  The compiled kernels print these operations for 32 lanes at a time
(``c_lanes.py``, ``numba_lanes.py``); here each operation is one NumPy operation over
every lane, exactly as the plan states it:

* ``Cond``: lane condition ``_c<i>`` = ``cond`` (or ``not cond``) and its guard;
* ``SetVar``: ``target = value`` where the guard holds, the old value elsewhere; the
  value is computed in every lane (the plan only converts speculable code under a
  condition, so that is safe, and it is what the lane code does);
* ``MakeSpawn``: where the guard holds the lane makes a spawn with its spawn number
  ``_k`` (which must be one of the site's ``kset``), then ``_k`` grows by one;
* ``Fold``: a reduction of the lanes where the guard holds;
* ``Plain``: a top-level statement every lane runs as it is (through
  :class:`~.numpy_eval.Threads`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from revec.backends.numpy_eval import Evaluator, Lanes, Mask, Threads, Values, exact, lanes_of
from revec.transforms import lanes as ln

# a site made spawns: (site, lanes that spawned, their spawn numbers, the children's
# column values over those lanes)
SiteHook = Callable[[ln.SpawnSite, Mask, Values, dict[str, Values]], None]
ReduceHook = Callable[[str, Values], None]


def run_lane_body(ev: Evaluator, body: ln.LaneBody, env: dict[str, Values], n: int,
                  on_spawn: SiteHook | None, on_reduce: ReduceHook) -> None:
    """Run ``body`` over the ``n`` lanes of ``env`` (changed in place)."""
    every = np.ones(n, np.bool_)
    index = np.arange(n)
    conds: dict[int, Mask] = {}
    k = np.zeros(n, np.int64)  # each lane's spawns so far (the lane code's ``_k``)

    def guard(g: int | None) -> Mask:
        return every if g is None else conds[g]

    with exact():
        for op in body.ops:
            lanes = Lanes(env, index)  # every lane
            match op:
                case ln.Cond(index=i, cond=c, guard=g, negate=neg):
                    value = ev.expr(c, lanes)
                    conds[i] = guard(g) & (~value if neg else value)
                case ln.SetVar(target=t, value=v, guard=g):
                    value = ev.expr(v, lanes)
                    old = env.get(t)
                    assert old is None or old.dtype == value.dtype, (t, old, value.dtype)
                    if g is None:  # every lane (a local may be assigned here first)
                        env[t] = value
                    else:
                        assert old is not None, f"{t!r} kept under a condition, never set"
                        env[t] = np.where(guard(g), value, old)
                case ln.MakeSpawn(site=site, guard=g, args=args):
                    made = guard(g)
                    ks = k[made]
                    assert set(np.unique(ks).tolist()) <= site.kset, (
                        f"spawn site {site.index}: spawn numbers "
                        f"{sorted(set(ks.tolist()))} outside the plan's {sorted(site.kset)}")
                    if on_spawn is None:
                        raise AssertionError("a spawn site in lane code that cannot spawn")
                    made_lanes = lanes_of(env, made)
                    on_spawn(site, made, ks, {name: ev.expr(e, made_lanes) for name, e in args})
                    k[made] += 1
                case ln.Fold(stmt=r, guard=g):
                    on_reduce(r.reducer, ev.expr(r.value, lanes)[guard(g)])
                case ln.Plain(stmt=s):
                    Threads(ev, env, n, None, on_reduce).run((s,))
                case _:
                    raise AssertionError(f"unknown lane operation {type(op).__name__}")
