"""Fixed-base tables (``modforge.zk.msm_table``, ``modforge msm precompute`` / ``--table``) against the
model's naive sum and the variable-base MSM, their file's checks, and the native ``--random`` path."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from modforge.arith.base import ParameterError
from modforge.cli.main import cli
from modforge.zk import bls12_377 as g
from modforge.zk.msm_api import _native, random_instance
from modforge.zk.msm_files import MsmFileError, encode_points, encode_scalars
from modforge.zk.msm_model import naive_msm

pytestmark = pytest.mark.skipif(_native() is None or not hasattr(_native(), "MsmTable"),
                                reason="the native engine with fixed-base tables is not built")

P = g.BLS12_377
SEED = 0x7AB1E


def run(*args: str):
    return CliRunner().invoke(cli, ["msm", *args])


def test_table_edge_cases_match_the_naive_sum() -> None:
    from modforge.zk.msm_table import precompute

    rng = random.Random(SEED)
    points, _ = random_instance(6, 3)
    a, b = points[0], points[1]
    neg_a = (a[0], P.q - a[1])
    cases = [
        ([], []),
        ([a], [rng.randrange(P.r)]),
        (points[:3], [0, 0, 0]),
        ([a, b], [P.r - 1, 1]),
        (points, [12345] * 6),
        ([a, a, b, a], [3, 5, P.r - 7, 9]),
        ([a, neg_a, b], [99, 99, 2]),
        ([a, None, b], [5, rng.randrange(P.r), 7]),
        (points[:5], [rng.randrange(P.r) for _ in range(5)]),
    ]
    for window in (3, 9, 16):
        for pts, scs in cases:
            table = precompute(pts, window=window)
            assert table.n == len(pts) and table.window == window
            assert table.msm(scs, threads=1) == table.msm(scs, threads=2) == naive_msm(pts, scs), (window, pts, scs)


def test_table_matches_the_variable_base_msm_on_random_instances() -> None:
    from modforge.zk import msm
    from modforge.zk.msm_table import precompute

    rng = random.Random(SEED)
    for round_ in range(4):
        n = rng.randrange(1, 300)
        points, scalars = random_instance(n, rng.randrange(1 << 32))
        table = precompute(points, trusted=True)
        assert table.msm(scalars) == msm(points, scalars, trusted=True), f"seed={SEED} round={round_} n={n}"


def test_save_load_and_rejections(tmp_path: Path) -> None:
    from modforge.zk.msm_table import load_table, precompute

    points, scalars = random_instance(10, 4)
    table = precompute(points, window=12)
    path = tmp_path / "t.msmt"
    table.save(path)
    assert path.stat().st_size == 32 + 10 * 22 * 96  # header, then 22 windows of 96-byte points each
    assert load_table(path).msm(scalars) == naive_msm(points, scalars)
    data = path.read_bytes()
    (tmp_path / "short").write_bytes(data[:-1])
    with pytest.raises(MsmFileError, match="short: .*10 points x 22 windows need"):
        load_table(tmp_path / "short")
    # a table built (trusted) from a point of order 2 loads only when trusted
    order2 = (P.q - 1, 0)
    precompute([points[0], order2], window=8, trusted=True).save(tmp_path / "bad")
    with pytest.raises(MsmFileError, match="point 1: not in the prime-order subgroup G1"):
        load_table(tmp_path / "bad")
    assert load_table(tmp_path / "bad", trusted=True).msm([0, 3]) == order2
    with pytest.raises(ParameterError, match="point 1 is not in the prime-order subgroup"):
        precompute([points[0], order2])
    with pytest.raises(ParameterError, match="3 scalars for a table of 10 points"):
        table.msm([1, 2, 3])
    with pytest.raises(ParameterError, match="window"):
        precompute(points, window=23)


def test_cli_precompute_then_table(tmp_path: Path) -> None:
    points, scalars = random_instance(12, 8)
    (tmp_path / "p").write_bytes(encode_points(points, "gnark"))
    (tmp_path / "s").write_bytes(encode_scalars(scalars, "gnark"))
    res = run("precompute", "--points", str(tmp_path / "p"), "--format", "gnark", "--out", str(tmp_path / "t"),
              "--window", "10", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert (doc["n"], doc["window"], doc["windows"]) == (12, 10, 26)
    assert doc["file_bytes"] == (tmp_path / "t").stat().st_size == 32 + 12 * 26 * 96
    res = run("--table", str(tmp_path / "t"), "--scalars", str(tmp_path / "s"), "--format", "gnark", "--json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    expect = naive_msm(points, scalars)
    assert expect is not None and (got["x"], got["y"]) == (f"{expect[0]:#x}", f"{expect[1]:#x}")
    assert got["table"]["window"] == 10
    (tmp_path / "t2").write_bytes((tmp_path / "t").read_bytes()[:100])
    (tmp_path / "s5").write_bytes(encode_scalars(scalars[:5], "gnark"))
    cases = [
        (["--table", str(tmp_path / "t"), "--points", str(tmp_path / "p"), "--scalars", str(tmp_path / "s")],
         "modforge: error: --table: give --table with --scalars only"),
        (["--table", str(tmp_path / "t")], "modforge: error: --scalars: --table needs the scalars file"),
        (["--random", str(1 << 29)], "modforge: error: --random: must be between 0 and 2^28"),
        (["--random", "-1"], "modforge: error: --random: must be between 0 and 2^28"),
        (["--table", str(tmp_path / "t2"), "--scalars", str(tmp_path / "s"), "--format", "gnark"],
         f"modforge: error: {tmp_path / 't2'}: 100 bytes, but 12 points x 26 windows need"),
        (["--table", str(tmp_path / "t"), "--scalars", str(tmp_path / "s5"), "--format", "gnark"],
         f"modforge: error: {tmp_path / 's5'}: 5 scalars for the 12 points of {tmp_path / 't'}"),
        (["precompute", "--points", str(tmp_path / "p"), "--format", "gnark", "--out", str(tmp_path / "t"),
          "--window", "1"], "modforge: error: --window: must be between 2 and 22"),
        (["precompute", "--points", str(tmp_path / "p"), "--format", "gnark", "--out", str(tmp_path)],
         "modforge: error: Invalid value for '--out'"),
    ]
    for args, line in cases:
        res = run(*args)
        assert res.exit_code == 2, (args, res.output)
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(line), (args, res.output)


def test_native_random_with_progress_matches_the_python_instance() -> None:
    n, seed = 40, 77
    res = run("--random", str(n), "--seed", str(seed), "--json", "--progress", "--threads", "2")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    expect = naive_msm(*random_instance(n, seed))
    assert expect is not None and (doc["x"], doc["y"]) == (f"{expect[0]:#x}", f"{expect[1]:#x}")
    calls: list[tuple[int, int]] = []
    raw = _native().msm_bls12_377_random(1 << 12, 1, 1, lambda done, total: calls.append((done, total)))
    assert raw is not None
    assert all(0 <= d <= t for d, t in calls)
