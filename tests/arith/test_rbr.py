"""RBR digits and Ozturk's polynomial multiplication (seed 002, Alg. 3)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from modforge.arith.base import ParameterError
from modforge.arith.rbr import RBRParams, equalize, polmul, polsqr

SHAPES = [(8, 1, 3), (8, 1, 17), (16, 1, 5), (16, 1, 65), (16, 2, 33), (32, 1, 9), (64, 1, 17)]


def random_digits(rng: random.Random, p: RBRParams) -> tuple[int, ...]:
    style = rng.randrange(4)
    if style == 0:
        return p.max_digits
    if style == 1:
        return tuple(rng.choice((0, p.digit_max, p.word_mask, 1 << p.word_bits)) for _ in range(p.words))
    return tuple(rng.randrange(p.digit_max + 1) for _ in range(p.words))


@pytest.mark.parametrize("shape", SHAPES, ids=[f"d{d}r{r}w{w}" for d, r, w in SHAPES])
def test_product_is_exact_and_digits_stay_redundant(shape) -> None:
    d, r, words = shape
    p = RBRParams(word_bits=d, redundant_bits=r, words=words)
    seed = d * 1000 + r * 100 + words
    rng = random.Random(seed)
    cases = [(p.max_digits, p.max_digits), ((0,) * words, p.max_digits)]
    cases += [(random_digits(rng, p), random_digits(rng, p)) for _ in range(150)]
    for a, b in cases:
        for c, expect in ((polmul(p, a, b), p.value(a) * p.value(b)), (polsqr(p, a), p.value(a) ** 2)):
            assert len(c) == p.product_digits
            assert p.value(c) == expect, f"seed {seed}: a={a} b={b}"
            assert max(c) <= p.digit_max, f"seed {seed}: digit overflow a={a} b={b}"


def test_word_product_counts_match_the_seed() -> None:
    """Seed 000: a full 65-word product is 4225 word products, a squaring about half."""
    p = RBRParams(word_bits=16, redundant_bits=1, words=65)
    assert p.cost().word_products == 4225
    assert p.cost(square=True).word_products == 65 * 66 // 2 == 2145
    # Each product splits into three pieces: a column receives at most 3 per diagonal.
    assert max(p.column_heights()) <= 3 * 65


def test_word_size_that_cannot_hold_the_carries_is_rejected() -> None:
    with pytest.raises(ParameterError, match=r"^word_bits: 4-bit words cannot hold the carries of a 65-word product"):
        RBRParams(word_bits=4, redundant_bits=1, words=65)
    # The largest word count a word size supports is where the check starts failing.
    RBRParams(word_bits=8, redundant_bits=1, words=20)
    with pytest.raises(ParameterError, match=r"^word_bits"):
        RBRParams(word_bits=8, redundant_bits=1, words=200)


def test_invalid_parameters_are_named() -> None:
    with pytest.raises(ParameterError, match=r"^words: must be positive"):
        RBRParams(words=0)
    with pytest.raises(ParameterError, match=r"^redundant_bits: must not exceed word_bits"):
        RBRParams(word_bits=4, redundant_bits=5, words=2)
    p = RBRParams(word_bits=16, redundant_bits=1, words=4)
    with pytest.raises(ParameterError, match=r"^a: digit 2 = 131072 is outside"):
        polmul(p, (0, 0, 1 << 17, 0), (0, 0, 0, 0))
    with pytest.raises(ParameterError, match=r"^a: needs 4 digits, got 3"):
        polsqr(p, (0, 0, 0))
    with pytest.raises(ParameterError, match=r"^value: .* do not fit in 4 RBR digits"):
        p.to_digits(1 << 70)


def test_equalize_propagates_every_carry() -> None:
    p = RBRParams(word_bits=16, redundant_bits=1, words=8)
    digits = p.max_digits  # every digit overflows into the next: a ripple across the whole width
    flat = equalize(p, digits)
    assert p.value(flat) == p.value(digits)
    assert all(x < (1 << 16) for x in flat[:-1])


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.integers(0, (1 << 17) - 1), min_size=9, max_size=9),
       st.lists(st.integers(0, (1 << 17) - 1), min_size=9, max_size=9))
def test_polmul_property(a, b) -> None:
    p = RBRParams(word_bits=16, redundant_bits=1, words=9)
    c = polmul(p, a, b)
    assert p.value(c) == p.value(a) * p.value(b)
    assert max(c) <= p.digit_max
