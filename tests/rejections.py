"""The shared check of a located rejection: the error's message and position, then
`revec check` and `revec transform` in process (exit 2, ``file:line:col: error:``,
the caret under the column, no output file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from revec.cli import main
from revec.errors import RevecError
from revec.frontend import load_program


def assert_located_rejection(path: Path, message: str, line: int, col: int, out: Path,
                             transform_args: tuple[str, ...],
                             capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(RevecError) as info:
        load_program(path)
    err = info.value
    assert message in err.message, err.format()
    assert err.loc is not None and (err.loc.line, err.loc.col) == (line, col), err.format()
    for argv in (("check", str(path)),
                 ("transform", str(path), *transform_args, "-o", str(out))):
        capsys.readouterr()
        code = main(list(argv))
        stderr = capsys.readouterr().err
        assert code == 2, stderr
        assert stderr.startswith(f"{path}:{line}:{col}: error: "), stderr
        assert message in stderr
        assert stderr.splitlines()[2].index("^") == 4 + col - 1
    assert not out.exists(), "a rejected program must not leave an output file"


def where(source: str, needle: str) -> tuple[int, int]:
    """The 1-based line and column where ``needle`` first occurs in ``source``."""
    at = source.index(needle)
    return source.count("\n", 0, at) + 1, at - (source.rfind("\n", 0, at) + 1) + 1
