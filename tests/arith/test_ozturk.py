"""Ozturk's fixed-modulus multiplier with table reduction (seeds 000, 002 Sec. I)."""

from __future__ import annotations

import random

import pytest

from modforge.arith.base import ParameterError
from modforge.arith.ozturk import OzturkModel, OzturkParams, build
from modforge.data import vdf_alliance_modulus

N = vdf_alliance_modulus()


def test_layout_of_the_competition_design() -> None:
    """64 words of 16 + 1 bits plus 2 redundant words; tables derived from the layout."""
    p = OzturkParams(modulus=N)
    assert (p.design_bits, p.base_words, p.words, p.digit_bits) == (1024, 64, 66, 17)
    # Product digits 64..132 go through the tables, three 6-bit chunks each.
    assert list(p.reduced_digits) == list(range(64, 2 * 66 + 1))
    assert p.chunk_widths() == [6, 6, 5]
    assert p.table_count == len(p.reduced_digits) * 3
    cost = build(N).cost(square=True)
    assert cost.word_products == 66 * 67 // 2
    assert cost.table_entries == 64 and cost.table_entry_bits == 1024
    assert cost.table_bits == p.table_count * 64 * 1024
    # "reduced back to a 1024 + log2(height of the tree) bit value": the bound's excess is ~log2(tables).
    excess = (p.result_bound() - 1).bit_length() - 1024
    assert excess == (p.table_count + 2).bit_length()


def test_tables_hold_the_residues_of_their_weights() -> None:
    model = build(N)
    p = model.params
    for (digit, offset), table in list(model.tables().items())[::37]:
        weight = pow(2, 16 * digit + offset, N)
        assert len(table) == 64
        assert all(entry == v * weight % N for v, entry in enumerate(table))
    with pytest.raises(ParameterError, match=r"^digit: no table for digit 3"):
        model.table(3, 0)
    assert p.table_count == len(model.tables())


@pytest.mark.parametrize("lut_bits", [1, 4, 6, 9, 17])
def test_chained_squarings_stay_below_the_fixed_bound(lut_bits: int) -> None:
    seed = 1000 + lut_bits
    rng = random.Random(seed)
    m = rng.getrandbits(512) | (1 << 511) | 1
    model = build(m, lut_bits=lut_bits)
    bound = model.redundant_bound
    digits = model.params.rbr.max_digits  # maximal redundant digits as the first input
    value = model.params.rbr.value(digits) % m
    for step in range(300):
        digits, _ = model.multiply_digits(digits, digits)
        raw = model.params.rbr.value(digits)
        value = value * value % m
        assert raw < bound, f"seed {seed} step {step}: output above bound"
        assert raw % m == value, f"seed {seed} step {step}"
        assert max(digits) <= model.params.rbr.digit_max


def test_vdf_modulus_chain_matches_pow() -> None:
    model = build(N)
    t = 1500
    result, trace = model.square_chain(2, t)
    assert result == pow(2, 1 << t, N)
    assert max(model.params.rbr.value(d) for d in trace) < model.redundant_bound


def test_final_conversion_needs_at_most_quotient_bits_subtractions() -> None:
    model = build(N)
    worst = model.redundant_bound - 1
    residue, subtractions = model.canonical(worst)
    assert residue == worst % N
    assert subtractions <= model.params.quotient_bits + 1


def test_invalid_parameters_are_named() -> None:
    with pytest.raises(ParameterError, match=r"^modulus: is 1024 bits wide, wider than the design's 512 bits"):
        OzturkParams(modulus=N, bits=512)
    with pytest.raises(ParameterError, match=r"^lut_bits: must be positive"):
        OzturkParams(modulus=N, lut_bits=0)
    with pytest.raises(ParameterError, match=r"^redundant_words: must be positive"):
        OzturkParams(modulus=N, redundant_words=0)
    with pytest.raises(ParameterError, match=r"^word_bits: 2-bit words cannot hold the carries"):
        OzturkParams(modulus=N, word_bits=2)
    with pytest.raises(ParameterError, match=r"^a: operand out of range: need 0 <= a < modulus"):
        OzturkModel(OzturkParams(modulus=N)).modmul(N, 1)
