"""A trapdoor of trivial factors (p = 1, q = n) multiplies to the modulus: the error must say p is no prime
(issue 31 item 5; it said "p * q is not this puzzle's modulus", which is false)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ..support import one_line_error
from modforge.cli.main import cli
from modforge.timelock.puzzle import seal

N = 1009 * 1013


def _files(tmp_path, p: int, q: int):
    puzzle = tmp_path / "small.json"
    puzzle.write_bytes(seal(N, 2, 10, pow(2, 1 << 10, N), b"hi", "2026-01-01T00:00:00Z", None).to_json())
    trapdoor = tmp_path / "small.trapdoor"
    trapdoor.write_text(json.dumps({"format": "modforge-timelock-trapdoor", "version": 1, "task_id": "x",
                                    "n": hex(N), "p": hex(p), "q": hex(q)}))
    return puzzle, trapdoor


@pytest.mark.parametrize("p, q, field", [(1, N, "p"), (N, 1, "q")])
def test_a_trivial_factorisation_names_the_field_that_is_no_prime(tmp_path, p: int, q: int, field: str) -> None:
    puzzle, trapdoor = _files(tmp_path, p, q)
    res = CliRunner().invoke(cli, ["timelock", "solve", str(puzzle), "--trapdoor", str(trapdoor)],
                             catch_exceptions=False)
    one_line_error(res, f"field {field!r} is 1, not a prime (p * q is the modulus, but trivially")
    assert "is not this puzzle's modulus" not in res.stderr


def test_factors_that_do_not_multiply_to_n_still_say_so(tmp_path) -> None:
    puzzle, trapdoor = _files(tmp_path, 1, N + 2)
    res = CliRunner().invoke(cli, ["timelock", "solve", str(puzzle), "--trapdoor", str(trapdoor)],
                             catch_exceptions=False)
    one_line_error(res, "trapdoor: p * q is not this puzzle's modulus")
