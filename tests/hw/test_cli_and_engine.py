"""`modforge hw gen/sim` and the engine's `sim:<design>` backend."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from modforge.cli.main import cli
from modforge.engine import ModRing

from .helpers import hw_modulus


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_gen_writes_rtl_harness_and_manifest(tmp_path) -> None:
    res = run("hw", "gen", "ozturk", "--bits", "64", "--modulus", hex(hw_modulus(64)), "--cycles", "2",
              "-o", str(tmp_path), "--json")
    assert res.exit_code == 0, res.output
    man = json.loads(res.output)
    assert man["latency"] == 2 and man["forbidden_operators"] == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["harness.cpp", "manifest.json", "mf_ozturk_64.v"]
    assert json.loads((tmp_path / "manifest.json").read_text())["params_sha256"] == man["params_sha256"]


def test_sim_json_reports_vectors_mismatches_and_cycles_per_op() -> None:
    res = run("hw", "sim", "ozturk", "--bits", "64", "--modulus", hex(hw_modulus(64)), "--vectors", "300",
              "--chain", "30", "--seed", "5", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["vectors"] >= 300 and doc["mismatches"] == 0 and doc["cycles_per_op"] == 1.0
    assert doc["chain"] == 30 and doc["seed"] == 5


def test_a_modulus_option_is_a_value_not_a_size(tmp_path) -> None:
    """`--opt adder_modulus=P` (make bench-hw's test-prime controller) was refused as "far beyond any
    design" by the size guard meant for widths and counts."""
    args = ["hw", "gen", "msm-controller", "--opt", "adder=edwards", "--opt", "karatsuba_depth=1",
            "--opt", "windows=4", "--opt", "window_bits=3"]
    res = CliRunner().invoke(cli, [*args, "--opt", "adder_modulus=0xd041445db6844b37", "-o", str(tmp_path / "m"),
                                   "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["params"]["adder_modulus"] in (0xD041445DB6844B37, hex(0xD041445DB6844B37))
    res = CliRunner().invoke(cli, [*args, "--opt", "adder_modulus=0x" + "f" * 6000, "-o", str(tmp_path / "n")])
    assert res.exit_code == 2 and "adder_modulus" in res.output, res.output


def test_sim_builds_at_the_cxx_optimisation_asked(monkeypatch) -> None:
    """--cxx-opt reaches the build (its level is part of the build's cache key); others are refused."""
    from modforge.arith.base import ParameterError
    from modforge.hw import flow

    def fake_simulate(design, **kw):
        raise ParameterError("probe", f"opt {kw.get('opt')}")

    monkeypatch.setattr(flow, "simulate", fake_simulate)
    for args, opt in (((), "-O0"), (("--cxx-opt", "-O2"), "-O2")):
        res = CliRunner().invoke(cli, ["hw", "sim", "ozturk", "--bits", "64", *args])
        assert res.exit_code == 2 and f"probe: opt {opt}" in res.output, res.output
    res = CliRunner().invoke(cli, ["hw", "sim", "ozturk", "--bits", "64", "--cxx-opt", "-O3"])
    assert res.exit_code == 2 and "--cxx-opt" in res.output
    assert flow.build_key(flow.make_design("ozturk", bits=64), "-O0") != \
        flow.build_key(flow.make_design("ozturk", bits=64), "-O1")


@pytest.mark.parametrize("args,param", [
    (("hw", "gen", "booth", "--bits", "64", "-o", "x"), "arch"),
    (("hw", "sim", "ozturk", "--bits", "64", "--opt", "cycles=0"), "cycles"),
    (("hw", "sim", "ozturk"), "bits"),
    (("hw", "sim", "predictive-montgomery", "--bits", "64", "--cycles", "2"), "cycles"),
    # Two values for one option are refused, not one silently dropped.
    (("hw", "gen", "ozturk", "--bits", "64", "--opt", "word_bits=8", "--word-bits", "32", "-o", "x"), "opt"),
    (("hw", "gen", "ozturk", "--bits", "64", "--opt", "cycles=2", "--cycles", "3", "-o", "x"), "opt"),
    # Sizes far past any design are refused at once (these ran for minutes).
    (("hw", "gen", "ozturk", "--bits", "64", "--word-bits", "99999999", "-o", "x"), "word_bits"),
    (("hw", "gen", "ozturk", "--bits", "64", "--opt", "redundant_words=99999999", "-o", "x"), "redundant_words"),
    # One option twice with two values (the last one used to win silently).
    (("hw", "gen", "ozturk", "--bits", "64", "--opt", "word_bits=8", "--opt", "word_bits=16", "-o", "x"), "opt"),
    (("modmul", "--algo", "ozturk", "--bits", "64", "--opt", "word_bits=8", "--opt", "word_bits=16", "1", "1"),
     "opt"),
    # Counts the model would take days over (and a chain past the designs' 32-bit in_count).
    (("hw", "sim", "ozturk", "--bits", "64", "--vectors", "100000000000"), "vectors"),
    (("hw", "sim", "ozturk", "--bits", "64", "--chain", "100000000000"), "chain"),
    (("hw", "bench", "--t", "100000000000"), "t"),
    # One width range, said the same way for small and huge widths.
    (("hw", "gen", "ozturk", "--bits", "7", "-o", "x"), "bits"),
    (("hw", "gen", "ozturk", "--bits", "99999999999999999999", "-o", "x"), "bits"),
    # Too few digits is the digits' fault, not the modulus'.
    (("hw", "gen", "san-montgomery", "--bits", "64", "--opt", "digits=1", "-o", "x"), "digits"),
])
def test_bad_input_exits_2_naming_the_parameter(args, param: str) -> None:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 2, res.output
    assert f"modforge: error: {param}:" in res.output


@pytest.mark.parametrize("arch", ["ozturk", "predictive-montgomery", "san-montgomery"])
def test_engine_sim_backend_squares_on_the_design(arch: str) -> None:
    n = hw_modulus(64)
    ring = ModRing(n, backend=f"sim:{arch}")
    gmp = ModRing(n, backend="gmp")
    for x in (0, 1, 2, n - 1, n // 3):
        assert ring.sqr(x) == gmp.sqr(x)
        assert ring.sqr_n(x, 37) == gmp.sqr_n(x, 37)
    assert ring.sqr_n(5, 0) == 5
    rep = ring._impl.report()
    assert rep["squarings"] == 5 * 38 and rep["cycles"] >= rep["squarings"] * ring._impl.design.cycles_per_op()
    assert rep["projected_seconds"] > 0 and rep["clock_mhz"] > 0
    ring._impl.close()


@pytest.mark.parametrize("arch", ["ozturk", "predictive-montgomery"])
def test_vdf_on_the_simulated_squarer_matches_gmp_at_256_bits(arch: str) -> None:
    """t = 10,000 squarings of a 256-bit VDF through the engine API (shares the 256-bit test builds)."""
    from modforge.vdf import run as vdf_run

    n = hw_modulus(256)
    sim = vdf_run(n, 7, 10_000, None, backend=f"sim:{arch}")
    ref = vdf_run(n, 7, 10_000, None, backend="gmp")
    assert sim.evaluation.y == ref.evaluation.y
    assert sim.evaluation.backend == f"sim:{arch}"


def test_vdf_eval_cli_accepts_the_sim_backend() -> None:
    n = hw_modulus(256)
    res = CliRunner().invoke(cli, ["vdf", "eval", "--modulus", hex(n), "--x", "7", "--t", "1000", "--backend",
                                   "sim:ozturk", "--json"])
    ref = CliRunner().invoke(cli, ["vdf", "eval", "--modulus", hex(n), "--x", "7", "--t", "1000", "--backend",
                                   "gmp", "--json"])
    assert ref.exit_code == 0, ref.output
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["y"] == json.loads(ref.output)["y"]
    assert doc["backend_report"]["squarings"] >= 1000 and doc["backend_report"]["cycles_per_squaring"] >= 1
