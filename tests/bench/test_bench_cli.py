"""`modforge bench vdf`: options, JSON output and exit codes, on a tiny budget without native anchors."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from modforge.cli.main import cli

TINY = ["--bits", "256", "--repeats", "2", "--seconds", "0.002"]


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(cli, ["bench", "vdf", *args], env=env, catch_exceptions=False)


def test_json_has_medians_for_ours_and_gmpy2() -> None:
    res = run(*TINY, "--json", "--no-anchors")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    impls = {r["impl"]: r for r in doc["results"]}
    assert "engine-gmp" in impls and "gmpy2-powm" in impls
    assert all(r["ns_per_sqr_median"] > 0 and r["bits"] == 256 for r in doc["results"])
    assert impls["engine-gmp"]["kind"] == "ours" and impls["gmpy2-powm"]["kind"] == "anchor"
    assert {s["impl"] for s in doc["skipped"]} >= {"gmp-native-powm", "openssl-mont"}


def test_no_build_with_an_empty_cache_skips_native_anchors(tmp_path: Path) -> None:
    res = run(*TINY, "--json", "--no-build", env={"MODFORGE_BENCH_CACHE": str(tmp_path)})
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    why = {s["impl"]: s["why"] for s in doc["skipped"]}
    assert "--no-build" in why["gmp-native-powm"] and "--no-build" in why["openssl-mont"]
    assert "skipped gmp-native-powm" in res.stderr


def test_wall_clock_and_markdown() -> None:
    res = run(*TINY, "--json", "--no-anchors", "--clock", "wall")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["params"]["clock"] == "wall"
    assert all(r["clock"] == "wall" and r["cpu_ns_per_sqr_median"] > 0 for r in doc["results"])
    res = run(*TINY, "--markdown", "--no-anchors")
    assert res.exit_code == 0, res.output
    assert "| implementation | kind | median ns/sqr |" in res.stdout and "**256 bits**" in res.stdout


def test_tables() -> None:
    res = run(*TINY, "--no-anchors", "--no-pin")
    assert res.exit_code == 0, res.output
    assert "256 bits" in res.stdout and "gmpy2-powm" in res.stdout and "engine-gmp" in res.stdout


def test_bad_options_exit_2() -> None:
    for args in (["--bits", "12x"], ["--bits", "32"], ["--repeats", "0"], ["--seconds", "0"],
                 ["--json", "--markdown"], ["--clock", "tsc"]):
        res = run(*args)
        assert res.exit_code == 2, (args, res.output)
        assert "error" in res.stderr.lower()


def test_a_width_list_reads_numbers_as_every_option_does() -> None:
    """int() took '+5' and '\u0661\u0660'; a 5000-digit width was a traceback (str() of it, in the message)."""
    for text, message in (("1024,+5", "bits: not a comma-separated list of integers: '1024,+5' (not a decimal or "
                                      "0x-hex integer: '+5' (no '+' sign))"),
                          ("1024,\u0661\u0660", "(ASCII digits only)"),
                          ("1024," + "9" * 5000, "bits: each width must be an integer from 64 to 16384, got a "
                                                 "16610-bit number")):
        res = run("--bits", text)
        assert res.exit_code == 2 and message in res.stderr and res.stderr.count("\n") == 1, res.output
    assert run(*TINY, "--bits", "0x100", "--json", "--no-anchors").exit_code == 0
