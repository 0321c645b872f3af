"""Listings and tables read whole in an 80-column terminal (issue: `algos` wrapped to column 0, `hw list`
ignored the width, the cost table cut its headers with an ellipsis)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from modforge.cli.layout import hanging
from modforge.cli.main import cli

ELLIPSIS = "\u2026"


def run80(*args: str) -> str:
    res = CliRunner().invoke(cli, list(args), env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    return res.output


def test_hanging_indents_every_continuation_line() -> None:
    text = hanging("label  ", "word " * 40, width=30)
    lines = text.splitlines()
    assert len(lines) > 3 and lines[0].startswith("label  word")
    assert all(line.startswith(" " * 7) and not line.startswith(" " * 8) for line in lines[1:])
    assert max(map(len, lines)) <= 30
    # A word longer than the line stays whole (a path, a URL).
    assert "x" * 50 in hanging("a ", "x" * 50, width=20)


@pytest.mark.parametrize("args", [("algos",), ("algos", "--bits", "2048"), ("hw", "list")])
def test_fits_80_columns_without_cutting(args: tuple[str, ...]) -> None:
    if args[0] == "hw":
        pytest.importorskip("amaranth")
    out = run80(*args)
    too_long = [line for line in out.splitlines() if len(line) > 80]
    assert not too_long, too_long[:3]
    assert ELLIPSIS not in out
    # Continuation lines are indented: only an entry's first line starts at column 0 (and the table).
    starts = [line for line in out.splitlines() if line and not line[0].isspace()]
    if args[0] == "algos":
        names = {line.split()[0] for line in starts}
        from modforge.arith.registry import all_algorithms

        assert names <= {i.name for i in all_algorithms()} | {"cost"}, names
