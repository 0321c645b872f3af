"""Barrett reduction: oracle ``a*b % m``, the estimate error bound, the window width."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from modforge.arith import barrett as B
from modforge.arith.base import ParameterError


def test_mu_is_floor_4_pow_k_over_m():
    rng = random.Random(3)
    for case in range(200):
        m = rng.randrange(3, 1 << rng.randrange(2, 600))
        k = m.bit_length()
        assert B.BarrettParams(m).mu == 4 ** k // m, f"seed 3 case {case}"
        # Word-level: mu = floor(b^(2k) / m) with k radix-b digits.
        p = B.BarrettParams(m, radix_bits=32)
        digits = -(-k // 32)
        assert p.k == digits and p.mu == (2 ** 32) ** (2 * digits) // m


@pytest.mark.parametrize("radix_bits", [1, 2, 3, 8])
def test_exhaustive_small_moduli(radix_bits):
    """Every a, b for every m < 90: exact, at most 2 corrections, raw < 3m, error = corrections."""
    seen = set()
    for m in range(3, 90):
        model = B.build(m, radix_bits=radix_bits)
        for a in range(m):
            for b in range(m):
                out = model.modmul(a, b)
                assert out.result == a * b % m, (m, a, b)
                c = out.events["corrections"]
                assert 0 <= c <= 2, (m, a, b)
                assert out.raw == a * b - out.stages["q3"] * m, (m, a, b)
                assert a * b // m - out.stages["q3"] == c, (m, a, b)   # the estimate error
                assert out.raw < model.redundant_bound == 3 * m
                seen.add(c)
    if radix_bits == 1:
        # The bound 2 is reached by the classic radix-2 form: it is tight.
        assert seen == {0, 1, 2}


def test_radix_2_window_needs_k_plus_2_bits():
    """In radix 2, x - q3*m can reach 2^(k+1): HAC's k+1-digit window (which needs b > 3) is too narrow."""
    found = None
    for m in range(3, 300):
        k = m.bit_length()
        model = B.build(m)
        for a in range(max(0, m - 16), m):
            for b in range(a, m):
                out = model.modmul(a, b)
                assert out.result == a * b % m, (m, a, b)
                if out.raw >= 1 << (k + 1):
                    found = found or (m, a, b)
    assert found is not None
    assert B.build(found[0]).params.window_bits == found[0].bit_length() + 2


EDGE_MODULI = [3, 4, 5, 255, 256, 257, (1 << 64) - 59, (1 << 64) - 1, 1 << 63, (1 << 127) + 1,
               (1 << 1024) - 1, (1 << 2047) + 1, (1 << 4096) - 2, (1 << 4095) + 3]


def named_edges(m: int) -> dict[str, int]:
    n = m.bit_length()
    out = {"zero": 0, "one": 1, "two": 2, "m-1": m - 1, "m-2": m - 2, "half": m >> 1,
           "top_bit": 1 << (n - 1), "below_top_bit": (1 << (n - 1)) - 1,
           "all_ones_words": ((1 << (64 * ((n - 1) // 64))) - 1) or 1}
    return {k: v for k, v in out.items() if 0 <= v < m}


def random_moduli(seed: int, count: int) -> list[int]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        bits = rng.randrange(64, 4097)
        m = rng.getrandbits(bits) | (1 << (bits - 1))
        if i % 4 == 3:
            m = (1 << bits) - rng.randrange(1, 1000)      # just below a power of two
        out.append(m | 1 if i % 2 == 0 else m & ~1)
    return out


@pytest.mark.parametrize("radix_bits", [1, 16, 64])
def test_against_oracle(radix_bits):
    for m in EDGE_MODULI:
        model = B.build(m, radix_bits=radix_bits)
        edges = named_edges(m)
        for an, a in edges.items():
            for bn, b in edges.items():
                out = model.modmul(a, b)
                assert out.result == a * b % m, (hex(m), an, bn)
                assert out.raw % m == out.result and out.raw < model.redundant_bound, (hex(m), an, bn)
                assert out.events["corrections"] <= 2
    seed = 4242 + radix_bits
    rng = random.Random(seed)
    for mi, m in enumerate(random_moduli(seed, 300)):
        model = B.build(m, radix_bits=radix_bits)
        for case in range(4):
            a, b = rng.randrange(m), rng.randrange(m)
            if case == 0:
                a = b = m - 1
            out = model.modmul(a, b)
            msg = f"seed {seed} modulus #{mi} ({m.bit_length()} bits) case {case}"
            assert out.result == a * b % m, msg
            assert out.raw < 3 * m and out.raw % m == out.result, msg
            assert 0 <= out.events["corrections"] <= 2, msg


@settings(derandomize=True, max_examples=300)
@given(st.integers(3, 1 << 300), st.integers(1, 70), st.data())
def test_property(m, radix_bits, data):
    model = B.build(m, radix_bits=radix_bits)
    a = data.draw(st.integers(0, m - 1))
    b = data.draw(st.integers(0, m - 1))
    out = model.modmul(a, b)
    assert out.result == a * b % m
    assert out.events["corrections"] <= 2
    assert out.raw < model.redundant_bound


def test_cost():
    m = (1 << 2048) - 1
    cost = B.build(m, word_bits=64).cost()
    # a*b: 32x32 words; q1 (2049 bits) x mu (2049 bits): 33x33; q3 x m: 32x32.
    assert cost.word_products == 32 * 32 + 33 * 33 + 32 * 32
    assert cost.extra["max_corrections"] == 2
    assert cost.extra["mu_bits"] == (4 ** 2048 // m).bit_length()


def test_registry_entry():
    (info,) = B.ALGORITHMS
    assert info.name == "barrett" and info.kind == "modmul"
    assert info.build(1000003, radix_bits=8).modmul(999999, 999998).result == 999999 * 999998 % 1000003


def test_parameter_errors_name_the_parameter():
    m = (1 << 128) + 51
    model = B.build(m)
    with pytest.raises(ParameterError, match=r"^a: operand out of range: need 0 <= a < modulus, got a value of 129 bits$"):
        model.modmul(m, 0)
    with pytest.raises(ParameterError, match=r"^b: operand out of range: need 0 <= b < modulus, got a negative value$"):
        model.modmul(0, -3)
    with pytest.raises(ParameterError, match=r"^modulus: must be at least 3, got 2$"):
        B.build(2)
    with pytest.raises(ParameterError, match=r"^radix_bits: must be positive, got 0$"):
        B.build(m, radix_bits=0)
    with pytest.raises(ParameterError, match=r"^x: must satisfy 0 <= x < modulus\*\*2$"):
        model.reduce(m * m)
