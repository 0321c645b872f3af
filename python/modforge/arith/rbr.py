"""Redundant bit representation (RBR) and Ozturk's polynomial multiplication.

Seed: 002_abd2559fcdba976b.txt, Algorithm 3 (reprinted there from Ozturk,
ePrint 2019/826, Alg. 7); the representation itself is described in
000_e97926a82e6a65ea.txt ("Ozturk multiplier", trick 1).

An RBR number with word size ``d`` and ``r`` redundant bits is a vector of
digits ``A_i`` with ``0 <= A_i < 2**(d+r)`` and value ``sum A_i * 2**(d*i)``:
neighbouring digits overlap by ``r`` bits, so a sum of partial products never
needs a carry to travel further than the next digit.

:func:`polmul` is Algorithm 3 generalised from ``r = 1`` to any ``r``: every
word product ``T = A_i * B_j`` (``2d + 2r`` bits) is cut into ``T0`` (d bits),
``T1`` (d bits) and ``T2`` (2r bits) that go to columns ``i+j``, ``i+j+1`` and
``i+j+2``; each column sum ``D_c`` is then cut once more at ``d`` bits and
its high part moved one column up.  That single short step leaves every
output digit below ``2**(d+r)`` provided the column sums are small enough,
which :class:`RBRParams` checks when it is built (the "word size that can
hold the carries" condition).

:func:`polsqr` is the squaring form the seed's hardware uses: each cross
product ``A_i * A_j`` (``i < j``) is computed once and doubled by a shift, so
a squaring costs ``(k+1)(k+2)/2`` word products instead of ``(k+1)**2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .base import Cost, ParameterError, require_positive, value_of


@dataclass(frozen=True)
class RBRParams:
    """Word size ``word_bits`` (d), ``redundant_bits`` (r) and ``words`` (k+1 digits).

    ``words`` is the number of input digits, ``k + 1`` in the seed's notation.
    """

    word_bits: int = 16
    redundant_bits: int = 1
    words: int = 65

    def __post_init__(self) -> None:
        require_positive("word_bits", self.word_bits)
        require_positive("redundant_bits", self.redundant_bits)
        require_positive("words", self.words)
        if self.redundant_bits > self.word_bits:
            raise ParameterError("redundant_bits", f"must not exceed word_bits ({self.word_bits})")
        # Alg. 3's promise 0 <= C_i < 2^(d+r) holds only if the high part of
        # the tallest column, plus a full low part, stays below 2^(d+r).
        worst = self.max_column_sum(square=True)
        if (worst >> self.word_bits) + self.word_mask > self.digit_max:
            raise ParameterError(
                "word_bits",
                f"{self.word_bits}-bit words cannot hold the carries of a {self.words}-word product "
                f"with {self.redundant_bits} redundant bit(s): a column sums to {worst.bit_length()} bits, "
                f"its carry does not fit in {self.redundant_bits} redundant bit(s)")

    # -- derived numbers -------------------------------------------------
    @property
    def k(self) -> int:
        """The seed's ``k``: inputs have digits ``0..k``."""
        return self.words - 1

    @property
    def digit_bits(self) -> int:
        return self.word_bits + self.redundant_bits

    @property
    def digit_max(self) -> int:
        return (1 << self.digit_bits) - 1

    @property
    def word_mask(self) -> int:
        return (1 << self.word_bits) - 1

    @property
    def product_digits(self) -> int:
        """Digits of a product: ``C_0 .. C_{2k+2}``."""
        return 2 * self.k + 3

    @property
    def value_bound(self) -> int:
        """Exclusive bound on the value of ``words`` digits each ``< 2**(d+r)``."""
        return value_of([self.digit_max] * self.words, self.word_bits) + 1

    @property
    def canonical_bits(self) -> int:
        """Bits of canonical (non-redundant) value the digits stand for: ``d * words``."""
        return self.word_bits * self.words

    def high_part_bits(self, square: bool) -> int:
        """Width of ``T2``: 2r bits, one more when a doubled cross product is split."""
        return 2 * self.redundant_bits + (1 if square else 0)

    def column_heights(self, square: bool = False) -> list[int]:
        """Pieces (T0, T1, T2) landing in each column: the adder-tree input counts."""
        heights = [0] * self.product_digits
        for i in range(self.words):
            for j in range(i if square else 0, self.words):
                for s in range(3):
                    heights[i + j + s] += 1
        return heights

    def max_column_sum(self, square: bool = False) -> int:
        """Largest possible column sum ``D_c`` for digits at their maximum."""
        d = self.word_bits
        dmax = self.digit_max
        best = 0
        for c in range(self.product_digits):
            total = 0
            for piece, shift in ((c, 0), (c - 1, d), (c - 2, 2 * d)):
                if piece < 0:
                    continue
                # Pairs (i, j), 0 <= i, j <= k, with i + j == piece.
                lo = max(0, piece - self.k)
                hi = min(piece, self.k)
                if lo > hi:
                    continue
                n_pairs = hi - lo + 1
                piece_bits = d if shift < 2 * d else self.high_part_bits(square)
                per_product = min((dmax * dmax * (2 if square else 1)) >> shift, (1 << piece_bits) - 1)
                total += n_pairs * per_product
            best = max(best, total)
        return best

    def cost(self, square: bool = False) -> Cost:
        n = self.words
        products = n * (n + 1) // 2 if square else n * n
        return Cost(word_products=products, product_bits=self.digit_bits,
                    adder_tree_inputs=max(self.column_heights(square)),
                    extra={"words": n, "word_bits": self.word_bits, "redundant_bits": self.redundant_bits})

    # -- conversions ----------------------------------------------------
    def to_digits(self, value: int) -> tuple[int, ...]:
        """Canonical digits (each ``< 2**d``) of a value, the top digit taking any excess."""
        if value < 0:
            raise ParameterError("value", "must be non-negative")
        d = self.word_bits
        digits = [(value >> (d * i)) & self.word_mask for i in range(self.words - 1)]
        top = value >> (d * (self.words - 1))
        if top > self.digit_max:
            raise ParameterError("value", f"{value.bit_length()} bits do not fit in {self.words} RBR digits "
                                          f"of {d}+{self.redundant_bits} bits")
        digits.append(top)
        return tuple(digits)

    def check_digits(self, name: str, digits) -> tuple[int, ...]:
        digits = tuple(digits)
        if len(digits) != self.words:
            raise ParameterError(name, f"needs {self.words} digits, got {len(digits)}")
        for i, x in enumerate(digits):
            if not 0 <= x <= self.digit_max:
                raise ParameterError(name, f"digit {i} = {x} is outside [0, 2^{self.digit_bits})")
        return digits

    def value(self, digits) -> int:
        return value_of(digits, self.word_bits)

    @cached_property
    def max_digits(self) -> tuple[int, ...]:
        """All digits at their maximum: the "maximal redundant digits" edge case."""
        return (self.digit_max,) * self.words


def _split_pieces(p: RBRParams, column_sums: list[int], product: int, base: int, square: bool) -> None:
    d = p.word_bits
    mask = p.word_mask
    column_sums[base] += product & mask
    column_sums[base + 1] += (product >> d) & mask
    t2 = product >> (2 * d)
    assert t2 < (1 << p.high_part_bits(square)), "T2 wider than the seed's bound"
    column_sums[base + 2] += t2


def _compress(p: RBRParams, column_sums: list[int]) -> tuple[int, ...]:
    """Lines 12-19 of Alg. 3: one split of every column at d bits."""
    d = p.word_bits
    mask = p.word_mask
    n = len(column_sums)
    out = [0] * n
    out[n - 1] = column_sums[n - 1]
    for i in range(n - 1):
        out[i] += column_sums[i] & mask
        out[i + 1] += column_sums[i] >> d
    return tuple(out)


def column_sums(p: RBRParams, a, b) -> list[int]:
    """The column sums ``D_0 .. D_{2k+2}`` of Alg. 3 (lines 1-11)."""
    a = p.check_digits("a", a)
    b = p.check_digits("b", b)
    sums = [0] * p.product_digits
    for i, ai in enumerate(a):
        for j, bj in enumerate(b):
            _split_pieces(p, sums, ai * bj, i + j, square=False)
    return sums


def square_column_sums(p: RBRParams, a) -> list[int]:
    """Column sums for a squaring with doubled cross products."""
    a = p.check_digits("a", a)
    sums = [0] * p.product_digits
    for i, ai in enumerate(a):
        _split_pieces(p, sums, ai * ai, 2 * i, square=False)
        for j in range(i + 1, len(a)):
            _split_pieces(p, sums, (ai * a[j]) << 1, i + j, square=True)
    return sums


def polmul(p: RBRParams, a, b) -> tuple[int, ...]:
    """``OzturkPolMul``: product digits ``C_0..C_{2k+2}``, each ``< 2**(d+r)``."""
    return _compress(p, column_sums(p, a, b))


def polsqr(p: RBRParams, a) -> tuple[int, ...]:
    """Squaring with doubled cross terms; same output form as :func:`polmul`."""
    return _compress(p, square_column_sums(p, a))


def equalize(p: RBRParams, digits, count: int | None = None) -> tuple[int, ...]:
    """Propagate every carry: digits ``< 2**d`` except the top one, which takes the rest.

    This is the full-width carry chain RBR exists to avoid; designs run it
    once at the end, or on the rare path (the predictive multiplier's
    fallback).
    """
    count = len(digits) if count is None else count
    total = value_of(digits, p.word_bits)
    d = p.word_bits
    out = [(total >> (d * i)) & p.word_mask for i in range(count - 1)]
    out.append(total >> (d * (count - 1)))
    return tuple(out)
