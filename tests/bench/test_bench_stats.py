"""Statistics, ratios, parameters and inputs of `bench vdf` (no measuring)."""

from __future__ import annotations

import pytest

from modforge.arith.base import ParameterError
from modforge.bench.vdf import (VdfBenchParams, add_ratios, base_for, modulus_for, parse_bits,
                                summarize)
from modforge.data import vdf_alliance_modulus


def row(bits: int, impl: str, median: float, kind: str = "anchor") -> dict:
    return {"bits": bits, "impl": impl, "kind": kind, "ns_per_sqr_median": median}


def test_summarize_median_and_spread() -> None:
    s = summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s["median"], s["min"], s["max"]) == (3.0, 1.0, 5.0)
    assert (s["q1"], s["q3"]) == (2.0, 4.0)
    assert s["rel_range"] == pytest.approx(4 / 3)


def test_summarize_single_sample() -> None:
    assert summarize([7.0]) == {"median": 7.0, "min": 7.0, "max": 7.0, "q1": 7.0, "q3": 7.0, "rel_range": 0.0}


def test_ratio_is_the_speedup_over_the_fastest_native_anchor() -> None:
    rows = [row(1024, "gmp-native-powm", 200.0), row(1024, "openssl-mont", 180.0),
            row(1024, "gmpy2-powm", 300.0), row(1024, "engine-ifma", 60.0, "ours"),
            row(2048, "gmp-native-powm", 600.0), row(2048, "engine-ifma", 200.0, "ours")]
    best = add_ratios(rows)
    assert best == {1024: "openssl-mont", 2048: "gmp-native-powm"}
    by = {(r["bits"], r["impl"]): r for r in rows}
    assert by[1024, "engine-ifma"]["ratio_vs_best_anchor"] == pytest.approx(3.0)
    assert by[1024, "openssl-mont"]["ratio_vs_best_anchor"] == pytest.approx(1.0)
    assert by[1024, "gmpy2-powm"]["ratio_vs_best_anchor"] == pytest.approx(0.6)
    assert by[2048, "engine-ifma"]["ratio_vs_best_anchor"] == pytest.approx(3.0)
    assert all(r["ratio_reference"] == best[r["bits"]] for r in rows)


def test_paired_ratio_is_the_median_of_per_round_speedups() -> None:
    # Per-round speed-ups: 3, 3, 3 for ours; 2, 4, 0.5 for the slow one (median 2).
    anchor = row(1024, "openssl-mont", 0.0) | {"samples": [300.0, 600.0, 300.0]}
    ours = row(1024, "engine-avx512f", 0.0, "ours") | {"samples": [100.0, 200.0, 100.0]}
    slow = row(1024, "engine-adx", 0.0, "ours") | {"samples": [150.0, 150.0, 600.0]}
    for r in (anchor, ours, slow):
        r["ns_per_sqr_median"] = sorted(r["samples"])[1]
    add_ratios([anchor, ours, slow])
    assert ours["paired_ratio_vs_best_anchor"] == pytest.approx(3.0)
    assert ours["paired_ratio_range"] == pytest.approx([3.0, 3.0])
    assert slow["paired_ratio_vs_best_anchor"] == pytest.approx(2.0)      # 2.0, 4.0, 0.5
    assert slow["paired_ratio_range"] == pytest.approx([0.5, 4.0])
    assert slow["ratio_vs_best_anchor"] == pytest.approx(2.0)
    assert anchor["paired_ratio_vs_best_anchor"] == pytest.approx(1.0)


def test_no_paired_ratio_without_samples_of_every_round() -> None:
    anchor = row(1024, "openssl-mont", 300.0) | {"samples": [300.0, 300.0]}
    ours = row(1024, "engine-ifma", 100.0, "ours") | {"samples": [100.0]}
    bare = row(1024, "engine-adx", 150.0, "ours")
    add_ratios([anchor, ours, bare])
    assert ours["paired_ratio_vs_best_anchor"] is None and bare["paired_ratio_vs_best_anchor"] is None
    assert ours["ratio_vs_best_anchor"] == pytest.approx(3.0)


def test_gmpy2_is_only_a_fallback_reference() -> None:
    rows = [row(1024, "gmpy2-powm", 300.0), row(1024, "engine-gmp", 150.0, "ours")]
    assert add_ratios(rows) == {1024: "gmpy2-powm"}
    assert rows[1]["ratio_vs_best_anchor"] == pytest.approx(2.0)


def test_no_anchor_no_ratio() -> None:
    rows = [row(256, "engine-python", 100.0, "ours")]
    assert add_ratios(rows) == {256: None}
    assert rows[0]["ratio_vs_best_anchor"] is None


@pytest.mark.parametrize("kwargs, name", [
    ({"bits": ()}, "bits"), ({"bits": (32,)}, "bits"), ({"bits": (1024, 1024)}, "bits"),
    ({"repeats": 0}, "repeats"), ({"seconds": 0.0}, "seconds"), ({"seconds": -1.0}, "seconds"),
    ({"clock": "tsc"}, "clock"),
])
def test_params_reject_bad_values(kwargs: dict, name: str) -> None:
    with pytest.raises(ParameterError) as exc:
        VdfBenchParams(**kwargs)
    assert str(exc.value).startswith(name)


def test_parse_bits() -> None:
    assert parse_bits("1024, 2048,") == (1024, 2048)
    with pytest.raises(ParameterError):
        parse_bits("1024,x")


def test_inputs_are_fixed_and_in_range() -> None:
    n, source = modulus_for(1024)
    assert n == vdf_alliance_modulus() and source == "vdf_alliance_2019"
    for bits in (256, 2048, 3072):
        n, source = modulus_for(bits)
        assert n.bit_length() == bits and n % 2 == 1
        assert modulus_for(bits) == (n, source)
        x = base_for(bits, n)
        assert 1 < x < n and x == base_for(bits, n)
