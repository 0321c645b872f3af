"""`modforge hw explore`: grid, Pareto front, and the CSV / JSON / PNG it writes.

The sweep machinery is tested on a 2-point grid with the synthesis replaced by a stub (in-process,
``jobs=1``), so the test takes a second; the real Yosys path is covered by tests/hw/test_synth.py
and shares its cache with the sweep.
"""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from modforge.arith.base import ParameterError
from modforge.hw import explore, synth


def _fake_report(design, targets=("xilinx",), method="auto", jobs=1, progress=None):
    figs = {k: {"value": v, "flat": design.design_bits <= synth.FLAT_LIMIT}
            for k, v in {"lut": 1000 * design.words, "ff": 100, "dsp": design.resources()["dsp"], "carry": 10,
                         "muxf": 0, "ram_cells": 0, "rom_bits": design.resources().get("rom_bits", 0),
                         "ram_bits": 0, "depth": 20 + design.words}.items()}
    figs["depth"]["path"] = {"lut": 10}
    return {"arch": design.arch, "bits": design.design_bits, "params": {"word_bits": design.word_bits},
            "latency": design.latency(), "cycles_per_op": design.cycles_per_op(),
            "declared": {"dsp": design.resources()["dsp"]},
            "targets": {t: {"method": "flat", "figures": figs} for t in targets}}


@pytest.fixture
def stub_synthesis(monkeypatch):
    monkeypatch.setattr(synth, "report", _fake_report)
    monkeypatch.setattr(synth, "yosys_version", lambda: "Yosys (stub)")


def test_explore_two_points_writes_csv_json_png(tmp_path, stub_synthesis):
    doc = explore.explore(["ozturk", "predictive-montgomery"], [64], [16], tmp_path, jobs=1)
    assert [p["status"] for p in doc["points"]] == ["ok", "ok"]
    with open(tmp_path / "explore.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["arch"] for r in rows] == ["ozturk", "predictive-montgomery"]
    assert rows[1]["cycles_per_op"] == "3" and int(rows[0]["lut"]) > 0
    data = json.loads((tmp_path / "explore.json").read_text())
    assert len(data["points"]) == 2
    assert any(p["table"] == "002 Table I" for p in data["published"])
    assert all(p["source"] == "published, not measured here" for p in data["published"])
    png = (tmp_path / "pareto.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_explore_records_refused_points(tmp_path, stub_synthesis):
    rows = explore.sweep(explore.grid(["predictive-montgomery"], [64], [32]), jobs=1)
    assert rows[0]["status"] == "refused" and rows[0]["error"].startswith("word_bits")


def test_grid_and_pareto():
    pts = explore.grid(["ozturk", "san-montgomery"], [64, 128], [16, 32])
    assert len(pts) == 8
    with pytest.raises(ParameterError):
        explore.grid(["nope"], [64], [16])
    with pytest.raises(ParameterError):
        explore.grid(["ozturk"], [8], [16])
    assert explore.pareto([(1, 10), (2, 5), (3, 6), (1, 12), (4, 1)]) == [0, 1, 4]


def test_explore_cli(tmp_path, stub_synthesis):
    from modforge.cli.hw_report import explore_cmd

    res = CliRunner().invoke(explore_cmd, ["--archs", "ozturk", "--bits", "64,128", "--word-bits", "16",
                                           "--jobs", "1", "--out", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert [p["bits"] for p in doc["points"]] == [64, 128]
    assert (tmp_path / "pareto.png").exists()
    res = CliRunner().invoke(explore_cmd, ["--bits", "64,x", "--out", str(tmp_path)])
    assert res.exit_code == 2
    # A value given twice is one point, not duplicate rows.
    res = CliRunner().invoke(explore_cmd, ["--archs", "ozturk,ozturk", "--bits", "64,64", "--word-bits", "16,16",
                                           "--jobs", "1", "--out", str(tmp_path / "dup"), "--json"])
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.output)["points"]) == 1


def _explore_cli(*args):
    from modforge.cli.main import cli

    return CliRunner().invoke(cli, ["hw", "explore", "--archs", "ozturk", "--bits", "64", "--word-bits", "16",
                                    "--jobs", "1", *[str(a) for a in args]], catch_exceptions=False)


@pytest.fixture
def no_sweep(monkeypatch, stub_synthesis):
    """A sweep that fails the test if it runs: the refusals must come before it."""
    monkeypatch.setattr(explore, "sweep", lambda *a, **k: pytest.fail("swept before the check"))


def test_explore_refuses_a_bad_output_before_the_sweep(tmp_path, no_sweep):
    from ..support import one_line_error

    target = tmp_path / "elsewhere.csv"
    target.write_text("the user's file")
    out = tmp_path / "out"
    out.mkdir()
    (out / "explore.csv").symlink_to(target)
    one_line_error(_explore_cli("-o", out), "is a symbolic link")
    assert target.read_text() == "the user's file"
    (out / "explore.csv").unlink()
    (out / "pareto.png").mkdir()
    one_line_error(_explore_cli("-o", out), f"out: '{out / 'pareto.png'}' is a directory")
    one_line_error(_explore_cli("-o", ""), "out: empty path")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    one_line_error(_explore_cli("-o", tmp_path / "dangling"),
                   f"out: '{tmp_path / 'dangling'}' is a symbolic link to nothing")
    (tmp_path / "f").write_text("")
    one_line_error(_explore_cli("-o", tmp_path / "f"), "is a file")      # click says it, as for hw gen


def test_explore_full_disk_leaves_the_previous_outputs_whole(tmp_path, stub_synthesis, monkeypatch):
    explore.explore(["ozturk"], [64], [16], tmp_path, jobs=1)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    from modforge import fileio

    real = fileio.stage_file
    calls = []

    def full_disk(path, data, *a):
        calls.append(path)
        if len(calls) == 3:
            raise OSError(28, "No space left on device", str(path))
        return real(path, data, *a)

    monkeypatch.setattr(fileio, "stage_file", full_disk)
    with pytest.raises(OSError, match="No space left"):
        explore.explore(["ozturk"], [128], [16], tmp_path, jobs=1)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_a_sweep_forks_no_more_workers_than_points(tmp_path, stub_synthesis, monkeypatch):
    from modforge.hw import pool

    sizes = []

    class Spy(pool.ProcessPoolExecutor):
        def __init__(self, max_workers, **kw):
            sizes.append(max_workers)
            super().__init__(max_workers=max_workers, **kw)

    monkeypatch.setattr(pool, "ProcessPoolExecutor", Spy)
    rows = explore.sweep(explore.grid(["ozturk"], [64, 128], [16]), jobs=64)
    assert [r["status"] for r in rows] == ["ok", "ok"] and sizes == [2]


def test_grid_axes_apply_where_the_parameter_exists():
    pts = explore.grid(["goldilocks-mul", "ntt-cluster", "ozturk", "pam-mpu"], [64, 128], [16, 32],
                       {"cycles": [3, 6], "cores": [2, 8]})
    by_arch: dict[str, list] = {}
    for p in pts:
        by_arch.setdefault(p.arch, []).append(p)
    # Goldilocks designs have one width (64) and no word size; `cycles` is theirs, `cores` the cluster's.
    assert [(p.bits, p.options) for p in by_arch["goldilocks-mul"]] == [(64, (("cycles", 3),)), (64, (("cycles", 6),))]
    assert [(p.bits, p.options) for p in by_arch["ntt-cluster"]] == [(64, (("cores", 2),)), (64, (("cores", 8),))]
    # ozturk has `cycles` and a word size: 2 widths x 2 word sizes x 2 cycle counts.
    assert len(by_arch["ozturk"]) == 8 and {p.options for p in by_arch["ozturk"]} == {(("cycles", 3),), (("cycles", 6),)}
    # pam-mpu has neither axis and no digits: one point per width, not one per word size.
    assert [(p.bits, p.options) for p in by_arch["pam-mpu"]] == [(64, ()), (128, ())]
    keys = {explore.row_key(p, "xilinx", "estimate") for p in pts}
    assert len(keys) == len(pts)
    with pytest.raises(ParameterError, match="none of"):
        explore.grid(["ozturk"], [64], [16], {"cores": [2]})
    with pytest.raises(ParameterError, match="--word-bits"):
        explore.grid(["ozturk"], [64], [16], {"word_bits": [16]})


def test_explore_estimates_a_seed003_axis(tmp_path):
    """Real generation (no Yosys): the Goldilocks multiplier's latency is its `cycles` parameter."""
    from modforge.cli.hw_report import explore_cmd

    res = CliRunner().invoke(explore_cmd, ["--archs", "goldilocks-mul", "--opt", "cycles=2,5", "--method", "estimate",
                                           "--jobs", "1", "--no-cache", "--out", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["axes"] == {"cycles": [2, 5]}
    assert [(p["options"], p["latency"], p["status"]) for p in doc["points"]] == [("cycles=2", 2, "ok"),
                                                                                ("cycles=5", 5, "ok")]
    with open(tmp_path / "explore.csv") as fh:
        assert [r["options"] for r in csv.DictReader(fh)] == ["cycles=2", "cycles=5"]
    for bad, what in ((["--opt", "cycles"], "KEY=V1,V2"), (["--opt", "cycles="], "no values"),
                      (["--opt", "cycles=2", "--opt", "cycles=3"], "given twice"),
                      (["--opt", "cores=2"], "none of")):
        res = CliRunner().invoke(explore_cmd, ["--archs", "goldilocks-mul", "--method", "estimate", "--jobs", "1",
                                               "--out", str(tmp_path / "bad"), *bad])
        assert res.exit_code == 2 and what in res.output, (bad, res.output)
