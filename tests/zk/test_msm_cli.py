"""``modforge msm`` and ``modforge msm model``: results against the naive sum, exit codes, one-line
errors, JSON, atomic --out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from modforge.cli.main import cli
from modforge.zk import bls12_377 as g
from modforge.zk.msm_api import random_instance
from modforge.zk.msm_files import encode_points, encode_result, encode_scalars
from modforge.zk.msm_model import naive_msm

P = g.BLS12_377


def run(*args: str):
    return CliRunner().invoke(cli, ["msm", *args])


def test_random_instance_json_matches_the_naive_sum() -> None:
    res = run("--random", "9", "--seed", "5", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    expect = naive_msm(*random_instance(9, 5))
    assert expect is not None
    assert doc["x"] == f"{expect[0]:#x}" and doc["y"] == f"{expect[1]:#x}" and doc["infinity"] is False
    assert doc["n"] == 9 and doc["seconds"] >= 0


@pytest.mark.parametrize("fmt", ["ark", "gnark"])
def test_files_and_out(tmp_path: Path, fmt: str) -> None:
    points, scalars = random_instance(7, 11)
    (tmp_path / "p").write_bytes(encode_points(points, fmt))
    (tmp_path / "s").write_bytes(encode_scalars(scalars, fmt))
    res = run("--points", str(tmp_path / "p"), "--scalars", str(tmp_path / "s"), "--format", fmt,
              "--out", str(tmp_path / "r"))
    assert res.exit_code == 0, res.output
    expect = naive_msm(points, scalars)
    assert expect is not None
    assert res.output == f"x {expect[0]:#x}\ny {expect[1]:#x}\n"
    assert (tmp_path / "r").read_bytes() == encode_result(expect, fmt)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p", "r", "s"]  # no temporary left behind


def test_identity_result() -> None:
    res = run("--random", "0", "--json")
    assert res.exit_code == 0 and json.loads(res.output)["infinity"] is True


def test_bad_inputs_exit_2_with_one_line(tmp_path: Path) -> None:
    points, scalars = random_instance(3, 1)
    (tmp_path / "p").write_bytes(encode_points(points, "gnark")[:-5])
    (tmp_path / "s").write_bytes(encode_scalars(scalars, "gnark"))
    (tmp_path / "p2").write_bytes(encode_points(points[:2], "gnark"))
    cases = [
        (["--points", str(tmp_path / "p"), "--scalars", str(tmp_path / "s"), "--format", "gnark"],
         f"modforge: error: {tmp_path / 'p'}: 283 bytes is not a whole number of 96-byte raw points"),
        (["--points", str(tmp_path / "p2"), "--scalars", str(tmp_path / "s"), "--format", "gnark"],
         f"modforge: error: {tmp_path / 's'}: 3 scalars for 2 points in {tmp_path / 'p2'}"),
        (["--random", "3", "--points", str(tmp_path / "p")], "modforge: error: --random: give either"),
        (["--points", str(tmp_path / "p")], "modforge: error: --points/--scalars: both files are needed"),
        (["--points", str(tmp_path / "missing"), "--scalars", str(tmp_path / "s")], "modforge: error: "),
        (["model", "--log-n", "40"], "modforge: error: --log-n: must be between 0 and 26"),
    ]
    for args, line in cases:
        res = run(*args)
        assert res.exit_code == 2, (args, res.output)
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(line), (args, res.output)


def test_model_command_reports_the_controller() -> None:
    res = run("model", "--log-n", "9", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["n"] == 512 and doc["adder_latency"] == 238 and doc["fifo_depth"] == 4
    assert sorted(doc["windows"]) == [12] * 7 + [13] * 13
    assert doc["issued"] + doc["bubbles"] + doc["adder_latency"] == doc["cycles"]
    assert 0.9 < doc["utilisation"] < 1 and doc["seed_seconds"] is None
    text = run("model", "--log-n", "6", "--latency", "10", "--windows", "40").output
    assert "no published figure at this size" in text and "40 (7, 7, 7" in text
