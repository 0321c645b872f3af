"""The Goldilocks field of seed 003's NTT, as a bit-exact model of the reduction the ZPrize design uses.

Seed 003 (../shared/seeds/003_5c7e6dc92c5cc8aa.txt, section "NTT") fixes the "Solinas prime
2^64 - 2^32 + 1".  Its structure is what makes the reduction cheap: with p = 2^64 - 2^32 + 1,

    2^64 = 2^32 - 1   (mod p)        and so        2^96 = 2^32 * (2^32 - 1) = 2^64 - 2^32 = -1   (mod p).

A 128-bit product x = x_lo + 2^64 * x_mid + 2^96 * x_hi (x_lo 64 bits, x_mid and x_hi 32 bits each)
is therefore x_lo + (2^32 - 1) * x_mid - x_hi (mod p): one 64-bit subtraction, one 32x32-bit product
(a shift and a subtraction in hardware) and one 64-bit addition, with a conditional correction after
each.  No multiplier beyond the 64x64 product is needed.  :func:`reduce128` performs exactly those
steps and returns every intermediate value, each with its width stated, so that an RTL simulation or a
native kernel can be compared step by step.

Everything numeric is derived from :class:`GoldilocksParams` (the two word sizes and the generator of
the multiplicative group, which is a convention: 7 is the one Plonky3 and plonky2 use, and Plonky3's
``TWO_ADIC_GENERATORS`` table, which the ZPrize harness uses, is 7^((p - 1) / 2^32) and its squarings;
tests/zk/test_goldilocks.py checks both that 7 generates the group and that table).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from ..arith.base import ParameterError


@dataclass(frozen=True)
class GoldilocksParams:
    """p = 2^word_bits - 2^half_bits + 1 with half_bits = word_bits / 2 (seed 003, "NTT")."""

    word_bits: int = 64
    half_bits: int = 32
    multiplicative_generator: int = 7   # generates F_p^*; the convention of Plonky3 / plonky2

    def __post_init__(self) -> None:
        if self.word_bits != 2 * self.half_bits or self.half_bits < 1:
            raise ParameterError("word_bits", "the reduction needs word_bits = 2 * half_bits")

    @cached_property
    def p(self) -> int:
        return (1 << self.word_bits) - (1 << self.half_bits) + 1

    @cached_property
    def epsilon(self) -> int:
        """2^word_bits mod p = 2^half_bits - 1: what a carry out of the word is worth."""
        return (1 << self.half_bits) - 1

    @cached_property
    def two_adicity(self) -> int:
        """The largest s with 2^s | p - 1 (32 for Goldilocks): the largest power-of-two NTT size is 2^s."""
        m = self.p - 1
        return (m & -m).bit_length() - 1

    @cached_property
    def two_adic_generator(self) -> int:
        """The generator of the subgroup of order 2^two_adicity: g^((p - 1) / 2^s), Plonky3's table top."""
        return pow(self.multiplicative_generator, (self.p - 1) >> self.two_adicity, self.p)

    def root_of_unity(self, log_n: int) -> int:
        """w_n, the generator of order n = 2^log_n: ``TWO_ADIC_GENERATORS[log_n]`` in Plonky3's table
        (each entry the square of the next)."""
        if not 0 <= log_n <= self.two_adicity:
            raise ParameterError("log_n", f"must be in 0..{self.two_adicity}, got {log_n}")
        return pow(self.two_adic_generator, 1 << (self.two_adicity - log_n), self.p)


GOLDILOCKS = GoldilocksParams()
P = GOLDILOCKS.p


class Reduction(NamedTuple):
    """The named intermediate values of :func:`reduce128`, each with its width."""

    x_lo: int          # 64 bits: x mod 2^64
    x_mid: int         # 32 bits: bits 64..95 of x
    x_hi: int          # 32 bits: bits 96..127 of x
    borrow: int        # 1 bit: x_lo < x_hi
    t0: int            # 64 bits: x_lo - x_hi (mod p), as a 64-bit word (may be >= p)
    t1: int            # 64 bits: x_mid * (2^32 - 1) < 2^64 - 2^33 + 2, computed as (x_mid << 32) - x_mid
    carry: int         # 1 bit: t0 + t1 >= 2^64
    t2: int            # 64 bits: t0 + t1 (mod p), as a 64-bit word (may be >= p)
    result: int        # 64 bits, canonical: t2 - p if t2 >= p, < p


def reduce128(x: int, params: GoldilocksParams = GOLDILOCKS) -> Reduction:
    """Reduce a 128-bit x (a 64x64-bit product) mod p with 2^64 = 2^32 - 1 and 2^96 = -1, bit-exact.

    Every step is a fixed-width word operation; the comments bound each value so that no step can
    overflow its word (the bounds are what an RTL implementation relies on)."""
    w, h = params.word_bits, params.half_bits
    word_mask, half_mask = (1 << w) - 1, (1 << h) - 1
    if not 0 <= x < 1 << (2 * w):
        raise ParameterError("x", f"must be a {2 * w}-bit unsigned integer")
    x_lo = x & word_mask
    x_mid = (x >> w) & half_mask
    x_hi = x >> (w + h)
    # x_lo - x_hi with a borrow out of the 64-bit word; the wrapped value is 2^64 too much, and
    # 2^64 = epsilon (mod p), so subtracting epsilon corrects it.  No second borrow: after a borrow the
    # wrapped word is >= 2^64 - 2^32 + 1 > epsilon.
    borrow = int(x_lo < x_hi)
    t0 = (x_lo - x_hi) & word_mask
    if borrow:
        t0 = (t0 - params.epsilon) & word_mask
    # x_mid * 2^64 = x_mid * epsilon (mod p); a 32x32-bit product, the shift-and-subtract of hardware.
    t1 = (x_mid << h) - x_mid
    # t0 + t1 with a carry out of the word, worth epsilon; no second carry, because after a carry the
    # wrapped sum is < t1 <= (2^32 - 1)^2 and adding epsilon keeps it below 2^64.
    total = t0 + t1
    carry = total >> w
    t2 = total & word_mask
    if carry:
        t2 = t2 + params.epsilon
    result = t2 - params.p if t2 >= params.p else t2
    return Reduction(x_lo, x_mid, x_hi, borrow, t0, t1, carry, t2, result)


def mul(a: int, b: int, params: GoldilocksParams = GOLDILOCKS) -> int:
    """a * b mod p for canonical a, b: the 64x64 -> 128-bit product, then :func:`reduce128`."""
    return reduce128(a * b, params).result


def add(a: int, b: int, params: GoldilocksParams = GOLDILOCKS) -> int:
    """a + b mod p for canonical a, b: a 65-bit sum, one conditional subtraction of p."""
    s = a + b
    return s - params.p if s >= params.p else s


def sub(a: int, b: int, params: GoldilocksParams = GOLDILOCKS) -> int:
    """a - b mod p for canonical a, b: a borrow adds p back."""
    d = a - b
    return d + params.p if d < 0 else d


def power(a: int, e: int, params: GoldilocksParams = GOLDILOCKS) -> int:
    """a^e mod p by square-and-multiply over :func:`mul` (e >= 0)."""
    result, base = 1, a
    while e:
        if e & 1:
            result = mul(result, base, params)
        base = mul(base, base, params)
        e >>= 1
    return result


def inverse(a: int, params: GoldilocksParams = GOLDILOCKS) -> int:
    """a^-1 mod p by Fermat (a^(p - 2)); a must be nonzero."""
    if a % params.p == 0:
        raise ParameterError("a", "zero has no inverse")
    return power(a, params.p - 2, params)
