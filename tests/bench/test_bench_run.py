"""The measuring loop on a tiny budget: schema, checks against gmpy2, failing anchors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from modforge.bench.impls import EngineImpl, Gmpy2Impl, PipeImpl
from modforge.bench.vdf import SCHEMA, VdfBenchParams, run_vdf_bench

FAKE = Path(__file__).with_name("fake_anchor.py")
TINY = VdfBenchParams(bits=(256, 512), repeats=3, seconds=0.002)


def fake(name: str, mode: str) -> PipeImpl:
    return PipeImpl(name, (sys.executable, str(FAKE), mode), detail=f"fake {mode}")


def test_document_schema_and_every_result_checked() -> None:
    impls = [EngineImpl("gmp"), EngineImpl("python"), Gmpy2Impl(), fake("gmp-native-powm", "good")]
    doc = run_vdf_bench(TINY, impls, skipped=[{"impl": "openssl-mont", "why": "test"}])
    assert doc["schema"] == SCHEMA
    assert set(doc) >= {"machine", "date", "commit", "params", "widths", "anchors", "results", "skipped", "errors"}
    assert {"cpu_model", "flags_of_interest", "kernel", "python", "rustc", "compiler"} <= set(doc["machine"])
    assert doc["errors"] == [] and isinstance(doc["warnings"], list)  # warnings depend on the machine's load
    assert doc["skipped"] == [{"impl": "openssl-mont", "why": "test"}]
    assert [w["bits"] for w in doc["widths"]] == [256, 512]
    assert all(w["best_anchor"] == "gmp-native-powm" for w in doc["widths"])
    assert len(doc["results"]) == 2 * len(impls)
    for r in doc["results"]:
        assert r["kind"] in ("ours", "anchor")
        assert r["kind"] == ("ours" if r["impl"].startswith("engine-") else "anchor")
        assert r["runs"] == TINY.repeats and len(r["samples"]) == TINY.repeats
        assert r["k"] >= TINY.min_k and r["verified"] is True
        assert r["clock"] == "cpu" and r["wall_ns_per_sqr_median"] > 0
        s = r["spread"]
        assert 0 < s["min"] <= s["q1"] <= r["ns_per_sqr_median"] <= s["q3"] <= s["max"]
        assert r["ratio_reference"] == "gmp-native-powm" and r["ratio_vs_best_anchor"] > 0
    assert {a["impl"] for a in doc["anchors"]} == {"gmpy2-powm", "gmp-native-powm"}
    assert next(a for a in doc["anchors"] if a["impl"] == "gmp-native-powm")["version"] == "fake 1.0"


def test_a_wrong_result_is_an_error() -> None:
    doc = run_vdf_bench(VdfBenchParams(bits=(256,), repeats=2, seconds=0.002),
                        [Gmpy2Impl(), fake("openssl-mont", "wrong")])
    assert [e["impl"] for e in doc["errors"]] == ["openssl-mont"]
    assert "disagrees with gmpy2" in doc["errors"][0]["why"]
    assert [r["impl"] for r in doc["results"]] == ["gmpy2-powm"]


@pytest.mark.parametrize("mode, words", [("crash", "exited (code 3)"), ("refuse", "bad modulus")])
def test_a_failing_anchor_is_skipped_not_fatal(mode: str, words: str) -> None:
    doc = run_vdf_bench(VdfBenchParams(bits=(256, 512), repeats=2, seconds=0.002),
                        [Gmpy2Impl(), fake("openssl-mont", mode)])
    assert doc["errors"] == []
    assert {r["impl"] for r in doc["results"]} == {"gmpy2-powm"}
    assert doc["skipped"] and doc["skipped"][0]["impl"] == "openssl-mont"
    assert words in doc["skipped"][0]["why"]


def test_a_missing_anchor_program_is_skipped() -> None:
    impl = PipeImpl("gmp-native-powm", ("/nonexistent/gmp_sqr", "powm"))
    doc = run_vdf_bench(VdfBenchParams(bits=(256,), repeats=1, seconds=0.002), [Gmpy2Impl(), impl])
    assert doc["errors"] == [] and [s["impl"] for s in doc["skipped"]] == ["gmp-native-powm"]
    assert "cannot start" in doc["skipped"][0]["why"]


def test_an_anchor_that_does_not_start_properly_is_skipped() -> None:
    doc = run_vdf_bench(VdfBenchParams(bits=(256,), repeats=1, seconds=0.002),
                        [Gmpy2Impl(), fake("openssl-mont", "noready")])
    assert doc["errors"] == [] and [s["impl"] for s in doc["skipped"]] == ["openssl-mont"]
    assert "did not start" in doc["skipped"][0]["why"]


def test_cpu_time_far_below_wall_time_is_flagged() -> None:
    doc = run_vdf_bench(VdfBenchParams(bits=(256,), repeats=2, seconds=0.002),
                        [Gmpy2Impl(), fake("openssl-mont", "lowcpu")])
    assert [w["impl"] for w in doc["warnings"]] == ["openssl-mont"]
    assert "--clock wall" in doc["warnings"][0]["why"]
    row = next(r for r in doc["results"] if r["impl"] == "openssl-mont")
    assert row["cpu_over_wall"] < 0.25


class Broken(EngineImpl):
    """A backend of ours whose sqr_n raises."""

    def __init__(self) -> None:
        super().__init__("gmp")
        self.name = "engine-broken"

    def prepare(self, modulus: int) -> None:
        super().prepare(modulus)

        class Ring:
            def sqr_n(self, x: int, k: int) -> int:
                raise ValueError("boom")

        self._ring = Ring()


def test_a_backend_of_ours_that_raises_is_an_error() -> None:
    doc = run_vdf_bench(VdfBenchParams(bits=(256,), repeats=1, seconds=0.002), [Gmpy2Impl(), Broken()])
    assert [e["impl"] for e in doc["errors"]] == ["engine-broken"]
    assert "ValueError: boom" in doc["errors"][0]["why"]
