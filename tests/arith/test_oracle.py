"""Every registered model against the oracle ``a*b % m``.

One check, every implementation: a model joins this suite by appearing in
the registry.  Named edge operands come first, then seeded random operands
over moduli from 64 to 4096 bits.  Every outcome is checked three ways: the
canonical result equals the oracle, the raw (possibly redundant) output is
congruent to it and below the model's stated bound, and the digit vector,
when the model keeps one, has the raw value.
"""

from __future__ import annotations

import random

import pytest

from modforge.arith.base import value_of
from modforge.arith.registry import AlgorithmInfo, all_algorithms

ALGOS = all_algorithms()

# (bits, moduli per width, operand pairs per modulus) for light and heavy models.
LIGHT_PLAN = [(64, 4, 150), (65, 2, 100), (128, 3, 100), (256, 3, 80), (511, 2, 60), (512, 2, 60),
              (1024, 2, 40), (1536, 1, 20), (2048, 1, 20), (3072, 1, 10), (4096, 1, 8)]
HEAVY_PLAN = [(64, 8, 200), (65, 2, 100), (128, 3, 150), (256, 3, 80), (512, 2, 30),
              (1024, 2, 10), (1536, 1, 4), (2048, 1, 3), (3072, 1, 2), (4096, 1, 2)]


def random_modulus(rng: random.Random, bits: int, odd: bool) -> int:
    m = rng.getrandbits(bits) | (1 << (bits - 1))
    return m | 1 if odd else m


def edge_operands(m: int) -> dict[str, int]:
    n = m.bit_length()
    ones = (1 << (n - 1)) - 1  # all-ones words below the modulus' top bit
    return {
        "zero": 0, "one": 1, "two": 2, "m-1": m - 1, "m-2": m - 2, "half": m >> 1,
        "all_ones_below_top": ones,
        "alternating_words": int("ffff0000" * (n // 32 + 1), 16) % m,
        "top_bit_only": 1 << (n - 1) if (1 << (n - 1)) < m else m - 1,
        "long_zero_run": ((1 << (n - 2)) | 1) % m,
        "radix_power": (1 << (n - 2)) % m,
    }


def check(info: AlgorithmInfo, model, a: int, b: int, context: str) -> None:
    m = model.modulus
    out = model.modmul(a, b)
    where = f"{info.name}: m=0x{m:x} a=0x{a:x} b=0x{b:x} ({context})"
    assert out.result == a * b % m, f"wrong result, {where}"
    assert out.raw % m == out.result, f"raw output not congruent, {where}"
    assert 0 <= out.raw < model.redundant_bound, f"raw output above the stated bound, {where}"
    if out.digits is not None:
        assert value_of(out.digits, out.digit_weight_bits) == out.raw, f"digit vector disagrees with raw, {where}"
        assert all(0 <= d < (1 << out.digit_bits) for d in out.digits), f"digit overflow, {where}"


@pytest.mark.parametrize("info", ALGOS, ids=[a.name for a in ALGOS])
def test_edge_operands(info: AlgorithmInfo) -> None:
    rng = random.Random(20261122)
    moduli = [random_modulus(rng, bits, odd=True) for bits in (64, 127, 256, 1024)]
    moduli.append((1 << 521) - 1)  # a Mersenne prime: all-ones modulus words
    moduli.append(3 * (1 << 130) + 1 if info.odd_modulus_only else (1 << 129) + 2)
    for m in moduli:
        model = info.build(m)
        names = edge_operands(m)
        if info.edge_cases:
            extra = info.edge_cases(model)
        else:
            extra = {}
        for na, a in names.items():
            for nb, b in names.items():
                check(info, model, a, b, f"edge {na} x {nb}")
        for name, (a, b) in extra.items():
            check(info, model, a, b, f"edge {name}")


@pytest.mark.parametrize("info", ALGOS, ids=[a.name for a in ALGOS])
@pytest.mark.parametrize("band", ["small", "large"])
def test_random_against_oracle(info: AlgorithmInfo, band: str) -> None:
    plan = HEAVY_PLAN if info.heavy else LIGHT_PLAN
    plan = [row for row in plan if (row[0] <= 512) == (band == "small")]
    seed = sum(map(ord, info.name + band))  # stable across runs and processes
    rng = random.Random(seed)
    total = 0
    for bits, n_moduli, pairs in plan:
        for _ in range(n_moduli):
            odd = info.odd_modulus_only or rng.random() < 0.75
            m = random_modulus(rng, bits, odd)
            model = info.build(m)
            for _ in range(pairs):
                a, b = rng.randrange(m), rng.randrange(m)
                check(info, model, a, b, f"seed {seed}, {bits} bits")
                total += 1
            check(info, model, a, a, f"seed {seed}, {bits} bits, square")
    assert total > 0


@pytest.mark.parametrize("info", ALGOS, ids=[a.name for a in ALGOS])
def test_lcs35_toy_example(info: AlgorithmInfo) -> None:
    """Seed 000: n = 253, t = 10, starting from 2, gives 71 (each step through the model)."""
    model = info.build(253)
    x = 2
    for _ in range(10):
        x = model.modmul(x, x).result
    assert x == 71


@pytest.mark.parametrize("info", ALGOS, ids=[a.name for a in ALGOS])
def test_operand_out_of_range_is_named(info: AlgorithmInfo) -> None:
    model = info.build(1000003)
    with pytest.raises(ValueError, match=r"^a: operand out of range"):
        model.modmul(1000003, 1)
    with pytest.raises(ValueError, match=r"^b: operand out of range"):
        model.modmul(1, -1)
