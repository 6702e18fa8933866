"""Fingerprints of what revec derives from a fixed set of programs: the checked IR, the
kernel plans and the generated C and numba modules, one SHA-256 each.

A refactor that must not change behaviour (a shared front-end core, the plan moving
decisions out of the emitters) records the fingerprints before and compares after::

    python -m tests.support.fingerprint record /tmp/before.json
    ... change the code ...
    python -m tests.support.fingerprint compare /tmp/before.json [--dump DIR]

The programs are the benchmarks (Python, natural and Cilk C), ``tests/programs`` and a
fixed, derandomized sample of each differential generator (``--generated N`` per
generator).  Hypothesis also draws constants from the local modules a process has
loaded, so the sample is fixed for a fresh process running this command (a test that
draws it after importing other modules gets another fixed sample).  ``compare`` lists every entry that changed; ``--dump DIR`` writes the
texts of both sides' changed entries (``record --dump DIR`` keeps a baseline's texts).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _generated(n: int, tmp: Path) -> Iterator[Path]:
    """``n`` programs of each hypothesis generator, the same ones on every run."""
    from hypothesis import HealthCheck, Phase, given, settings

    from tests.progen import task_programs
    from tests.progen_cilk import cilk_files
    from tests.progen_returns import return_programs

    gens: list[tuple[str, Any, str, Callable[[Any], str]]] = [
        ("gen", task_programs(), ".py", lambda s: s.source),
        ("ret", return_programs(), ".py", lambda s: s.source),
        ("cilk", cilk_files(), ".c", lambda s: s.source),
    ]
    def drawn(strategy: Any, text_of: Callable[[Any], str]) -> list[str]:
        texts: list[str] = []

        @settings(max_examples=n, derandomize=True, database=None, deadline=None,
                  phases=[Phase.generate], suppress_health_check=list(HealthCheck))
        @given(strategy)
        def collect(spec: Any) -> None:
            texts.append(text_of(spec))

        collect()
        return texts

    for tag, strategy, suffix, text_of in gens:
        for i, text in enumerate(drawn(strategy, text_of)):
            p = tmp / f"{tag}{i:03d}{suffix}"
            p.write_text(text)
            yield p


def programs(n_generated: int, tmp: Path) -> list[Path]:
    out = sorted((ROOT / "benchmarks").glob("*.py"))
    out = [p for p in out if p.name != "treebuild.py"]
    out += sorted((ROOT / "benchmarks" / "natural").glob("*.py"))
    out += sorted((ROOT / "benchmarks" / "cilk").glob("*.c"))
    out += sorted((ROOT / "tests" / "programs").glob("*.py"))
    out += list(_generated(n_generated, tmp))
    return out


def derived(path: Path) -> Iterator[tuple[str, str]]:
    """(kind, text) of everything revec derives from one program, per task."""
    from revec.backends.c_codegen import generate_c_module
    from revec.backends.numba_codegen import generate_numba_module
    from revec.errors import RevecError
    from revec.frontend import load_program
    from revec.transforms.kernel_plan import build_plan

    try:
        program = load_program(path)
    except RevecError as err:
        yield "error", err.format()
        return
    for name, t in program.tasks.items():
        yield f"{name}.ir", repr(t)
        yield f"{name}.plan", build_plan(program, name).render()
        yield f"{name}.plan-numba", build_plan(program, name, target="numba").render()
        yield f"{name}.plan-numba-scalar", build_plan(program, name, "scalar", "numba").render()
        yield f"{name}.c", generate_c_module(program, name)
        yield f"{name}.numba", generate_numba_module(program, name)
        yield f"{name}.numba-scalar", generate_numba_module(program, name, "scalar")
    yield "helpers", repr(program.helpers)


def fingerprints(n_generated: int, dump: Path | None) -> dict[str, str]:
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in programs(n_generated, Path(tmp)):
            rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else Path(path.name)
            for kind, text in derived(path):
                key = f"{rel}:{kind}"
                # generated programs live in a temporary folder and the checkout may
                # live anywhere: neither folder's name is part of what is derived
                text = text.replace(tmp, "<tmp>").replace(str(ROOT), "<root>")
                out[key] = hashlib.sha256(text.encode()).hexdigest()
                if dump is not None:
                    f = dump / key.replace("/", "__").replace(":", "--")
                    f.parent.mkdir(parents=True, exist_ok=True)
                    f.write_text(text)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=("record", "compare"))
    ap.add_argument("file", type=Path)
    ap.add_argument("--generated", type=int, default=40,
                    help="programs drawn from each differential generator (default 40)")
    ap.add_argument("--dump", type=Path, help="write the derived texts into this folder")
    ap.add_argument("--only", default="",
                    help="compare only keys containing this text (e.g. '.numba')")
    a = ap.parse_args(argv)
    new = fingerprints(a.generated, a.dump)
    if a.action == "record":
        a.file.write_text(json.dumps(new, indent=1, sort_keys=True) + "\n")
        print(f"{len(new)} fingerprints -> {a.file}")
        return 0
    old = json.loads(a.file.read_text())
    keys = sorted(k for k in set(old) | set(new) if a.only in k)
    changed = [k for k in keys if old.get(k) != new.get(k)]
    for k in changed:
        why = "new" if k not in old else "gone" if k not in new else "changed"
        print(f"{why:8s}{k}")
    print(f"{len(changed)} of {len(keys)} entries differ")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
