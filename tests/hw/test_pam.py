"""pam-mpu (seed 004): the model against the plain recurrence, the RTL against the model.

The oracle of the model is :meth:`modforge.arith.montgomery.DecMpu.monpro_plain`, recurrence (1) on
plain integers, and Montgomery's identity ``P beta = A B (mod M)``; the RTL is then run by Verilator
on command streams at 64 and 256 bits (10,000 products in all, named edge cases first), every read
word and every product's busy cycles (the carry completion's data-dependent rows included) equal
to the model's.
"""

from __future__ import annotations

import random

import pytest

from modforge.arith.montgomery import DecMpu, DecMpuParams
from modforge.arith.pam import Cmd, PamParams, PamUnit, product
from modforge.hw.flow import generate, make_design, rtl_name, simulate
from modforge.hw.pam import edge_cases, program
from modforge.hw.scan import scan

VECTORS = {64: 8_000, 256: 2_000}


@pytest.mark.parametrize("bits", [64, 256])
def test_model_is_recurrence_one_and_montgomery(bits: int) -> None:
    p = PamParams(bits)
    seed = 29 + bits
    rng = random.Random(seed)
    cases = [(name, m, a, b if not sq else a) for name, m, a, b, sq in edge_cases(p)]
    for i in range(300):
        m = rng.randrange(1 << (bits - 1), 1 << bits) | 1
        cases.append((f"random {i}", m, rng.randrange(2 * m), rng.randrange(2 * m)))
    for name, m, a, b in cases:
        res = product(p, a, b, m)
        plain = DecMpu(DecMpuParams(m, extra_bits=2, bits=bits)).monpro_plain(a, b)
        assert res.value == plain.raw, f"seed {seed}, {name}"
        assert res.quotient == plain.stages["Q"], f"seed {seed}, {name}"
        assert (res.value * p.beta - a * b) % m == 0 and res.value < 2 * m, f"seed {seed}, {name}"
        assert res.busy == 1 + p.iterations + res.carry_rows and 0 <= res.carry_rows <= p.state_bits


def test_command_stream_reads_the_product_word_by_word() -> None:
    p = PamParams(64)
    m, a, b = 0xF123456789ABCDEF, 0x1_2345_6789_ABCD_EF01, 0x1_E246_8ACF_1357_9BDD
    unit = PamUnit(p)
    words = [unit.run(op, data)[1] for op, data, _ in program(p, m, a, b, square=False)]
    got = sum(w << (32 * i) for i, w in enumerate(x for x in words if x is not None))
    assert got == product(p, a, b, m).value == DecMpu(DecMpuParams(m, bits=64)).monpro_plain(a, b).raw
    # With a next operand written while the product runs: the first result's words, then the second's.
    then = 0x1_0000_0000_0000_0003
    unit = PamUnit(p)
    cmds = program(p, m, a, b, square=False, then=then)
    assert [op for op, _, overlapped in cmds if overlapped] == [Cmd.WRITE_B] * p.words
    words = [w for w in (unit.run(op, data)[1] for op, data, _ in cmds) if w is not None]
    first = sum(w << (32 * i) for i, w in enumerate(words[:p.words]))
    second = sum(w << (32 * i) for i, w in enumerate(words[p.words:]))
    assert first == got
    assert second == DecMpu(DecMpuParams(m, bits=64)).monpro_plain(first, then).raw


@pytest.mark.parametrize("bits", [64, 256])
def test_rtl_matches_the_model_at_its_cycle_counts(bits: int) -> None:
    d = make_design("pam-mpu", bits=bits)
    files = generate(d)
    assert files == generate(d)                                    # reproducible byte for byte
    assert scan(files[rtl_name(d)], d.dsp_bits) == []
    seed = 4000 + bits
    doc = simulate(d, vectors=VECTORS[bits], seed=seed)
    report = doc["mismatch_report"][:4000]
    assert doc["mismatches"] == 0 and doc["latency_mismatches"] == 0, f"seed {seed}:\n{report}"
    assert doc["protocol_errors"] == 0 and doc["exit_code"] == 0, report
    assert doc["vectors"] == VECTORS[bits] and doc["chained"] == VECTORS[bits] // 8
    assert doc["outputs"] == doc["expected_outputs"] == VECTORS[bits] + doc["chained"]
    assert {"zero_times_zero", "max_operands", "max_square", "smallest_modulus",
            "longest_carry_completion"} <= set(doc["edge_cases"])
    assert doc["cycles_per_op"] == pytest.approx(doc["model_cycles_per_op"], abs=1e-3)
    assert doc["cycles_per_op"] > d.latency()                      # carry completion took cycles


def test_bad_parameters_are_one_line_errors(tmp_path) -> None:
    from click.testing import CliRunner

    from modforge.arith.base import ParameterError
    from modforge.cli.main import cli

    for kwargs, param in (({"bits": 4}, "bits"), ({"bits": 64, "extra_bits": 1}, "extra_bits")):
        with pytest.raises(ParameterError) as err:
            PamParams(**kwargs)
        assert err.value.param == param
    res = CliRunner().invoke(cli, ["hw", "gen", "pam-mpu", "--bits", "64", "--opt", "word_bits=16", "-o",
                                   str(tmp_path / "out")])
    assert res.exit_code == 2 and "modforge: error: word_bits: is not a parameter of pam-mpu" in res.output
    res = CliRunner().invoke(cli, ["hw", "gen", "pam-mpu", "--bits", "64", "--modulus", hex((1 << 65) + 1), "-o",
                                   str(tmp_path / "out")])
    assert res.exit_code == 2 and "modulus" in res.output
