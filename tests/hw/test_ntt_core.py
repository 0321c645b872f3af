"""Seed 003's NTT core (``ntt-core``): Verilator against the NTT model and the native engine.

One build sized for 2^12 (the seed's cores) runs transforms of every size 2^1 .. 2^12 (the size is a
runtime input): the named cases of issue 27 at 2^4 (all zeros, all p - 1, a single 1 first and last,
values just below p), then a seeded random transform per size.  Every output word must equal the model's
forward transform (itself checked against the native engine), and every transform must take exactly the
cycles of the cycle model (``ntt_cycles.core_transform_cycles``).  The harness must also fail when it
should: a vector file with one wrong word and one wrong cycle count exits 1 and names both.
"""

from __future__ import annotations

import pytest

from modforge.arith.base import ParameterError
from modforge.hw.flow import ensure_built, make_design
from modforge.hw.ntt_harness import core_vectors, run_harness
from modforge.zk.ntt_cycles import FpgaNttDesign, core_transform_cycles, sub_transform_cycles


@pytest.fixture(scope="module")
def core():
    return make_design("ntt-core")


def test_cycle_formula_is_the_models(core) -> None:
    assert core.pipeline == FpgaNttDesign().pipeline_cycles == 8       # the model's default: multiplier + 2
    for log_m in (1, 4, 12):
        m = 1 << log_m
        assert core.transform_cycles(log_m) == 2 * m + log_m * (m // 2 + core.pipeline)
        assert core_transform_cycles(core.cycle_model(), log_m) == 2 * m + sub_transform_cycles(
            core.cycle_model(), log_m, False)


def test_parameters_are_checked() -> None:
    with pytest.raises(ParameterError, match="log_n"):
        make_design("ntt-core", options={"log_n": 17})
    with pytest.raises(ParameterError, match="modulus"):
        make_design("ntt-core", modulus=97)
    assert make_design("ntt-core", options={"cycles": 3}).pipeline == 5


def test_every_size_matches_the_model_at_exactly_the_models_cycles(core) -> None:
    seed = 3012
    doc = core.simulate(vectors=1, seed=seed)
    report = doc["mismatch_report"][:4000]
    assert doc["mismatches"] == 0 and doc["exit_code"] == 0, f"seed {seed}:\n{report}"
    assert doc["latency_mismatches"] == 0 and doc["protocol_errors"] == 0, report
    assert doc["sizes"] == list(range(1, 13))
    assert doc["outputs"] == doc["expected_outputs"] and doc["cycles"] == doc["expected_cycles"]
    assert {"all_zeros_2^4", "all_p_minus_1_2^4", "single_one_first_2^4", "just_below_p_2^4"} <= set(doc["edge_cases"])


def test_the_harness_fails_on_a_wrong_word_and_a_wrong_cycle_count(core, tmp_path) -> None:
    text, _ = core_vectors(core, [4, 5], 1, 7, None)
    lines = text.splitlines()
    head = lines[1].split()
    lines[1] = " ".join(head[:3] + [str(int(head[3]) + 1)])          # the first transform: one cycle too many
    words = lines[6].split()
    words[3] = format(int(words[3], 16) ^ 1, "x")                     # the second: one output bit flipped
    lines[6] = " ".join(words)
    vec = tmp_path / "vectors.txt"
    vec.write_text("\n".join(lines) + "\n")
    summary, report, code = run_harness(ensure_built(core).exe, vec)
    assert code == 1 and summary["mismatches"] == 1 and summary["cycle_mismatches"] == 1, report
    assert "MISMATCH random0_2^5 (2^5) word 2" in report and "CYCLES random0_2^4" in report


@pytest.mark.parametrize("arch,options", [("ntt-core", {"log_n": 4}),
                                          ("ntt-cluster", {"cores": 2, "log_n1": 2, "log_n2": 2})])
def test_generates_reproducibly_without_forbidden_operators(arch, options) -> None:
    from modforge.hw.flow import generate, rtl_name
    from modforge.hw.scan import scan

    d = make_design(arch, options=options)
    first, second = generate(d), generate(d)
    assert first == second
    assert scan(first[rtl_name(d)], d.dsp_bits) == []
    assert "Regenerate: modforge hw gen " + arch in first[rtl_name(d)]
