"""Barrett reduction: the classic modular multiplier the hybrid design is measured against.

Seed: 001_dfb497c295201f64.txt cites Barrett (ref. [8]) as the best-known
approach and compares against Barrett-style FPGA designs (Sec. II, Sec.
VIII-B); it does not print the algorithm.  The model follows the standard
statement (Menezes, van Oorschot, Vanstone, Handbook of Applied
Cryptography, Alg. 14.42 and Fact 14.43), in radix ``b = 2**radix_bits``.

For a modulus ``m`` of ``k`` radix-``b`` digits (``k`` = bit length when
``radix_bits = 1``, the classic form) and ``x = a*b < m**2``:

* precompute ``mu = floor(b**(2k) / m)`` (``floor(4**k / m)`` in radix 2);
* ``q1 = floor(x / b**(k-1))``, ``q3 = floor(q1 * mu / b**(k+1))`` - two
  shifts and one multiplication, an under-estimate of ``floor(x / m)``;
* ``r = (x - q3*m) mod 2**window`` - only the low ``window`` bits of ``x``
  and of ``q3*m`` are needed (a truncated multiplier in hardware);
* at most two conditional subtractions of ``m`` make ``r`` canonical; their
  number is ``Outcome.events["corrections"]``.

Estimate error: ``floor(x/m) - 2 <= q3 <= floor(x/m)``, so ``0 <= r < 3m``.
Proof sketch: ``q1 <= x/b**(k-1)`` and ``mu <= b**(2k)/m`` give ``q3 <=
x/m``; ``q1 > x/b**(k-1) - 1`` and ``mu > b**(2k)/m - 1`` give
``q1*mu/b**(k+1) > x/m - x/b**(2k) - b**(k-1)/m``, and both subtracted terms
are at most 1 (``x < m**2 < b**(2k)``, ``b**(k-1) <= m``), so ``q3 > x/m - 3``.
The window must hold ``3m``: ``radix_bits*(k+1)`` bits when ``b >= 4`` (HAC's
condition ``b > 3``) but ``k + 2`` bits in radix 2, where ``3m`` can exceed
``2**(k+1)``.

``Outcome.raw`` is ``r`` before the corrections (``< 3m``, the
``redundant_bound``); ``result`` is the canonical residue.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Cost, Outcome, ParameterError, check_operand, require_int, require_modulus, require_positive
from .registry import AlgorithmInfo

#: Most conditional subtractions the estimate can need (Fact 14.43).
MAX_CORRECTIONS = 2


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class BarrettParams:
    """A modulus, the estimation radix ``2**radix_bits`` and the cost word ``word_bits``.

    ``radix_bits = 1`` is the classic bit-level form (``mu = floor(4**k/m)``);
    a word-level variant takes ``radix_bits = word_bits``.  ``word_bits`` only
    sizes the cost (``word_bits``-bit multiplier words).
    """

    modulus: int
    radix_bits: int = 1
    word_bits: int = 64

    def __post_init__(self) -> None:
        require_modulus(self.modulus)
        require_positive("radix_bits", self.radix_bits)
        require_positive("word_bits", self.word_bits)

    @property
    def bits(self) -> int:
        return require_int("modulus", self.modulus).bit_length()

    @property
    def k(self) -> int:
        """Radix digits of the modulus (its bit length in radix 2)."""
        return _ceil_div(self.bits, self.radix_bits)

    @property
    def mu(self) -> int:
        """``floor(b**(2k) / m)``: the precomputed reciprocal (a generator-time constant)."""
        return (1 << (2 * self.radix_bits * self.k)) // self.modulus

    @property
    def q1_shift(self) -> int:
        return self.radix_bits * (self.k - 1)

    @property
    def q3_shift(self) -> int:
        return self.radix_bits * (self.k + 1)

    @property
    def window_bits(self) -> int:
        """Low bits of ``x`` and ``q3*m`` kept: enough for ``r < 3m < 2**(radix*k + 2)``."""
        return max(self.radix_bits * (self.k + 1), self.radix_bits * self.k + 2)

    @property
    def q1_bits(self) -> int:
        """``x < 2**(2*bits)``, so ``q1`` has at most ``2*bits - q1_shift`` bits."""
        return 2 * self.bits - self.q1_shift

    @property
    def mu_bits(self) -> int:
        return self.mu.bit_length()

    @property
    def q3_bits(self) -> int:
        """``q3 <= floor(x/m) < m``: at most ``bits`` bits."""
        return self.bits

    def words(self, bits: int) -> int:
        return _ceil_div(bits, self.word_bits)

    def cost(self) -> Cost:
        """Three full schoolbook products on ``word_bits`` words (no truncation savings counted)."""
        n_words = self.words(self.bits)
        product = n_words * n_words
        estimate = self.words(self.q1_bits) * self.words(self.mu_bits)
        back = self.words(self.q3_bits) * n_words
        return Cost(word_products=product + estimate + back, product_bits=self.word_bits,
                    extra={"k": self.k, "radix_bits": self.radix_bits, "mu_bits": self.mu_bits,
                           "window_bits": self.window_bits, "product_word_products": product,
                           "estimate_word_products": estimate, "back_multiply_word_products": back,
                           "max_corrections": MAX_CORRECTIONS})


class BarrettModel:
    """Barrett modular multiplication for the modulus in ``params``."""

    def __init__(self, params: BarrettParams):
        self.params = params
        self.modulus = params.modulus
        self._mu = params.mu

    def reduce(self, x: int) -> Outcome:
        """Reduce ``0 <= x < m**2``."""
        p = self.params
        m = self.modulus
        x = require_int("x", x)
        if not 0 <= x < m * m:
            raise ParameterError("x", "must satisfy 0 <= x < modulus**2")
        q1 = x >> p.q1_shift
        q3 = (q1 * self._mu) >> p.q3_shift
        window = (1 << p.window_bits) - 1
        r = (x & window) - ((q3 * m) & window)
        if r < 0:
            r += 1 << p.window_bits
        raw = r
        corrections = 0
        while r >= m:
            r -= m
            corrections += 1
        assert corrections <= MAX_CORRECTIONS, "Barrett estimate off by more than 2"
        return Outcome(result=r, raw=raw, stages={"x": x, "q1": q1, "q3": q3, "r": raw},
                       events={"corrections": corrections})

    def modmul(self, a: int, b: int) -> Outcome:
        check_operand("a", a, self.modulus)
        check_operand("b", b, self.modulus)
        return self.reduce(a * b)

    def cost(self) -> Cost:
        return self.params.cost()

    @property
    def redundant_bound(self) -> int:
        """``raw = x - q3*m < 3m`` (the estimate is at most 2 short)."""
        return (MAX_CORRECTIONS + 1) * self.modulus


def build(modulus: int, **options) -> BarrettModel:
    return BarrettModel(BarrettParams(modulus=modulus, **options))


ALGORITHMS = [
    AlgorithmInfo(
        name="barrett",
        family="barrett",
        seed="001_dfb497c295201f64.txt Sec. II, VIII-B (Barrett [8] as the baseline); HAC Alg. 14.42",
        summary="Barrett reduction, mu = floor(b^(2k)/m) (b = 2: floor(4^k/m)); at most two correction subtractions",
        cost_formula="word products: ceil(n/w)^2 (a*b) + ceil(q1/w)*ceil(mu/w) (estimate) + ceil(n/w)^2 (q3*m); "
                     "<= 2 subtractions of m",
        build=build,
        options={"radix_bits": "estimation radix 2^radix_bits (1 = classic)", "word_bits": "cost word (64)"},
    ),
]
