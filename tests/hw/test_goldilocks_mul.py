"""Seed 003's Goldilocks multiplier (``goldilocks-mul``): Verilator against the field model.

10,000 random vectors after the named edge cases (0, 1, p - 1, p, 2^64 - 1 and one pair for every
reachable combination of the reduction's borrow, carry and subtraction of p), and a chain of 1,000
squarings fed back inside the design; every result must equal the model's (itself checked against
``a * b % p``) exactly ``cycles`` edges after its operands.
"""

from __future__ import annotations

import pytest

from modforge.arith.base import ParameterError
from modforge.hw.flow import make_design, simulate
from modforge.hw.goldilocks_mul import BRANCHES, P, branch_cases, branch_of, mul_layers
from modforge.hw.scan import scan


def test_every_reachable_branch_has_an_operand_pair() -> None:
    cases = branch_cases()
    assert sorted(cases) == sorted(BRANCHES)
    for key, (a, b) in cases.items():
        assert branch_of(a, b) == key and 0 <= a < 1 << 64 and 0 <= b < 1 << 64


def test_parameters_are_checked() -> None:
    d = make_design("goldilocks-mul")
    assert d.modulus == P and d.latency() == 6 and d.resources()["dsp"] == 16
    assert make_design("goldilocks-mul", options={"dsp_bits": 26}).resources()["dsp"] == 9
    with pytest.raises(ParameterError, match="modulus"):
        make_design("goldilocks-mul", modulus=P + 2)
    with pytest.raises(ParameterError, match="bits"):
        make_design("goldilocks-mul", bits=128)
    with pytest.raises(ParameterError, match="cycles"):
        make_design("goldilocks-mul", options={"cycles": len(mul_layers(17)) + 1})


def test_rtl_has_no_forbidden_operator() -> None:
    from modforge.hw.flow import emit_rtl

    assert scan(emit_rtl(make_design("goldilocks-mul")), 17) == []


def test_simulation_matches_the_model_at_exactly_the_latency() -> None:
    d = make_design("goldilocks-mul")
    seed = 2003
    doc = simulate(d, vectors=10_000, chain=1_000, seed=seed)
    report = doc["mismatch_report"][:4000]
    assert doc["mismatches"] == 0 and doc["exit_code"] == 0, f"seed {seed}:\n{report}"
    assert doc["latency_mismatches"] == 0 and doc["protocol_errors"] == 0, report
    assert doc["outputs"] == doc["expected_outputs"] == doc["vectors"] + 1_000
    assert doc["vectors"] >= 10_000 and doc["chain_checked_against_pow"]
    names = set(doc["edge_cases"])
    assert {"zero_times_p_minus_1", "one_times_one", "p_minus_1_squared", "one_times_p", "all_ones_squared"} <= names
    assert {"branch_borrow{}_carry{}_minus_p{}".format(*k) for k in BRANCHES} <= names
    assert doc["cycles_per_op"] == d.latency() == doc["chain_cycles_per_op"]
