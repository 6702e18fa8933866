"""The suite's stored records: where ``revec bench`` keeps them and how a report reads
them.

:func:`store` writes one benchmark's JSON record as ``<out>/results/NAME.json`` and
:func:`load_stored` reads them back; :func:`strategy_best` and its helpers pick rows out
of one record.  The suite (:mod:`revec.bench.suite`), its report
(:mod:`revec.bench.suite_report`) and figures (:mod:`revec.bench.suite_figures`) and
``revec report bench`` all build on this module, which imports none of them: the report
is rebuilt from stored records without the code that measures them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from revec.errors import RevecError
from revec.files import write_atomic

RESULTS_DIR = "results"


# ---------------------------------------------------------------------- storage
def suite_dir(reports_dir: Path, size: str) -> Path:
    """Where the suite's report of a size goes: ``reports/bench`` for the default size,
    ``reports/bench/SIZE`` for the others."""
    base = reports_dir / "bench"
    return base if size == "default" else base / size


def stored_dirs(bench_dir: Path) -> list[Path]:
    """The suite report directories under ``reports/bench`` that hold stored records."""
    from revec.bench.presets import SIZES

    cands = [bench_dir, *(bench_dir / s for s in SIZES if s != "default")]
    return [d for d in cands if any((d / RESULTS_DIR).glob("*.json"))]


def store(record: dict[str, Any], out: Path) -> Path:
    path = out / RESULTS_DIR / f"{record['name']}.json"
    write_atomic(path, json.dumps(record, indent=1, default=_json_default) + "\n")
    return path


def load_stored(out: Path) -> list[dict[str, Any]]:
    """The stored records under ``out`` in the suite's benchmark order."""
    from revec.bench.presets import BENCHMARKS

    d = out / RESULTS_DIR
    if not d.is_dir():
        return []
    recs = []
    for f in d.glob("*.json"):
        try:
            recs.append(json.loads(f.read_text()))
        except (OSError, json.JSONDecodeError) as err:
            raise RevecError(f"cannot read stored results {f}: {err}") from None
    order = {n: i for i, n in enumerate(BENCHMARKS)}
    return sorted(recs, key=lambda r: (order.get(r.get("name", ""), 99), r.get("name", "")))


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


# ---------------------------------------------------------------------- record access
def revec_records(rec: dict[str, Any], backend: str, strategy: str,
                  compaction: str | None = None) -> list[dict[str, Any]]:
    want = compaction or ("table" if backend == "c" else None)
    return [r for r in rec["results"] if r["impl"] == "revec" and r["backend"] == backend
            and r["strategy"] == strategy and r.get("compaction") == want]


def best(rows: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The lowest median among the configurations with the most runs."""
    timed = [r for r in rows if r.get("seconds") is not None]
    if not timed:
        return None
    most = max(r["runs"] for r in timed)
    return min((r for r in timed if r["runs"] == most), key=lambda r: r["seconds"])


def baseline(rec: dict[str, Any], impl: str) -> dict[str, Any] | None:
    for r in rec["results"]:
        if r["impl"] == impl:
            return r
    return None


def baseline_seconds(rec: dict[str, Any], impl: str) -> float | None:
    r = baseline(rec, impl)
    return None if r is None else r.get("seconds")


def _bfs(rec: dict[str, Any], backend: str) -> dict[str, Any] | None:
    rows = revec_records(rec, backend, "bfs")
    if not rows:
        return None
    return best(rows) or rows[0]


def strategy_best(rec: dict[str, Any], backend: str, strategy: str) -> dict[str, Any] | None:
    if strategy == "bfs":
        return _bfs(rec, backend)
    return best(revec_records(rec, backend, strategy))
