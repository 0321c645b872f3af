"""Every architecture at 64, 128 and 256 bits: Verilator simulation against the models.

At least 10,000 vectors (named edge cases first, then seeded random) and a chain of 1,000
squarings fed back inside the design; every result must match the model's redundant digits,
appear exactly ``latency(params)`` cycles after its input (the fallback latency for a
predictive fallback), and the chain's final value must equal ``pow()``.
"""

from __future__ import annotations

import pytest

from modforge.hw.flow import simulate

from .helpers import CASES, design

VECTORS = 10_000
CHAIN = 1_000
EDGE = {
    "ozturk": {"zero", "one", "m_minus_1", "all_ones_words", "maximal_redundant_digits", "maximal_loop_state"},
    "san-montgomery": {"zero_times_m_minus_1", "one_times_one", "m_minus_1_squared", "all_ones_words",
                       "maximal_redundant_digits", "low_carry_of_2", "feedback_bound_squared"},
    "predictive-montgomery": {"zero", "one", "m_minus_1", "maximal_redundant_digits", "montgomery_one",
                              "forced_fallback_square_split", "forced_fallback_lower_split",
                              "forced_fallback_upper_guard"},
}


@pytest.mark.parametrize("arch,bits", CASES, ids=[f"{a}-{b}" for a, b in CASES])
def test_simulation_matches_the_model_bit_for_bit(arch: str, bits: int) -> None:
    d = design(arch, bits)
    seed = 1000 + bits
    doc = simulate(d, vectors=VECTORS, chain=CHAIN, seed=seed)
    report = doc["mismatch_report"][:4000]
    assert doc["mismatches"] == 0, f"seed {seed}:\n{report}"
    assert doc["exit_code"] == 0, report
    assert doc["latency_mismatches"] == 0, report
    assert doc["vectors"] >= VECTORS and doc["chain"] == CHAIN
    assert doc["outputs"] == doc["vectors"] + CHAIN
    assert doc["chain_checked_against_pow"]
    assert EDGE[arch] <= set(doc["edge_cases"]), set(EDGE[arch]) - set(doc["edge_cases"])
    if arch == "predictive-montgomery":
        # The three fallbacks were forced and each took its own, longer latency.
        for reason in ("square_split", "lower_split", "upper_guard"):
            assert doc["flags"].get(reason, 0) >= 1, doc["flags"]
        assert doc["cycles_per_op"] > 3.0
        # Each latency was checked exactly by the harness; the average sits between 3 and 3 + the fallbacks' share.
        in_chain = sum(v for k, v in doc["flags"].items() if k.startswith("chain_"))
        assert 3.0 <= doc["chain_cycles_per_op"] <= 3.0 + in_chain * (d.latency(3) - 3) / (CHAIN - 1) + 1e-9
    else:
        assert doc["cycles_per_op"] == d.latency() and doc["chain_cycles_per_op"] == d.latency()
