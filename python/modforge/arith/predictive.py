"""The redundant "predictive" Montgomery squarer of the VDF competition.

Seed: 000_e97926a82e6a65ea.txt, "Predictive Montgomery multiplier", tricks 1
to 4: Montgomery multiplication in RBR with one extra word (65 words of
16 + 1 bits for a 1024-bit modulus), one multiplier array that computes either
a full square, the lower ``W + x`` words or the upper ``W + x`` words of a
product, a check of the boundary words that branches to a full-width,
carry-propagated computation in the rare case a carry might cross the
boundary unseen, and a single-register loop.

One Montgomery squaring ``Z = (A*A + Q*P) / R`` with ``R = 2**(d*W)`` runs
three passes through the multiplier:

1. **square**: ``t = A*A`` in RBR (:func:`~modforge.arith.rbr.polsqr`),
   ``W(W+1)/2`` word products.  ``T0 = t[0:W]``, ``T1 = t[W:]``.
2. **lower**: ``q = T0 * P'`` keeping only digits ``0..W-1`` (products with
   ``i + j <= W - 1``): ``Q0 = q mod R`` in RBR, ``W(W+1)/2`` products.
3. **upper**: the products ``q_i * p_j`` with ``i + j >= W - x`` (the ``x``
   guard diagonals below the boundary), plus ``T1`` at column ``W`` and up,
   plus the carry ``c`` into column ``W``.  Digits ``W..2W-1`` are ``Z``.

Why ``c`` can be predicted: ``T0 + Q0*P == 0 (mod R)``, so whatever the low
columns hold sums to an exact multiple of ``R``.  When ``T0 < R`` and the
part of ``Q0*P`` below column ``W`` (guard digits plus the columns never
computed) is also ``< R``, that multiple is ``R`` if ``T0 != 0`` and ``0``
otherwise, so ``c = [T0 != 0]``: an OR over ``T0``'s digits, no carry chain.
The seed's design adds a constant 1; we add the zero test, which the
constant gets wrong exactly when ``A*A`` is a multiple of ``R`` (e.g. ``A =
0``).

The **boundary checks** look at one digit each, the top digit below the
boundary: ``t[W-1]`` (is ``T0 < R``?), ``q[W-1]`` (is ``Q0 < R``?, which keeps
the output bound) and the top guard digit of pass 3 (can the guard digits
plus the uncomputed columns reach ``R``?).  A digit at or above its
threshold - all ones, "no free bits to absorb a carry" - sends the
squaring down the **fallback**: every carry propagated, the full ``W*W``
product ``Q0*P`` and an exact division by ``R``.  Thresholds are derived
from the parameters (:meth:`PredictiveParams.thresholds`), and the guard
width ``x`` must make the uncomputed columns small against one word.

The output is ``< redundant_bound``, the fixed point of
``B -> (B-1)**2 // R + P + 1``: about ``P * (1 + P/R)``, i.e. a hair above
``P`` (``P/R < 2**-16`` here).  The seed says the extra word makes the result
"less than p"; what it buys, precisely, is this bound without any final
comparison inside the loop.  The canonical residue ``< P`` is produced once,
at the end, with one conditional subtraction.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .base import Cost, Outcome, ParameterError, check_operand, require_modulus, require_positive, value_of
from .rbr import RBRParams, equalize, polmul, polsqr
from .registry import AlgorithmInfo


@dataclass(frozen=True)
class PredictiveParams:
    """Odd modulus ``P``; ``words`` ``W`` (default ``ceil(n/d) + 1``) and ``guard_words`` ``x``."""

    modulus: int
    bits: int | None = None
    word_bits: int = 16
    redundant_bits: int = 1
    extra_words: int = 1
    guard_words: int = 3

    def __post_init__(self) -> None:
        require_positive("bits", self.design_bits)
        require_modulus(self.modulus, odd=True, max_bits=self.design_bits)
        require_positive("word_bits", self.word_bits)
        require_positive("redundant_bits", self.redundant_bits)
        require_positive("extra_words", self.extra_words)
        require_positive("guard_words", self.guard_words)
        needed = -(-self.design_bits // self.word_bits) + self.extra_words
        if self.guard_words > max(3, needed - 1):
            # W = max(needed, x + 1): more guard words than that silently widen the whole datapath.
            raise ParameterError("guard_words", f"{self.guard_words} guard words would make W = "
                                                f"{self.guard_words + 1} words for a {self.design_bits}-bit "
                                                f"design that needs {needed}; at most {max(3, needed - 1)}")
        if self.extra_words > 16:
            raise ParameterError("extra_words", f"must be at most 16, got {self.extra_words}")
        self.rbr  # checks the carries fit
        if 4 * self.modulus >= self.radix:
            raise ParameterError("extra_words", "the Montgomery radix 2^(d*W) must exceed 4*modulus "
                                                "for the redundant output to stay bounded")
        t = self.thresholds()
        if min(t.values()) <= 0:
            raise ParameterError("guard_words", f"{self.guard_words} guard word(s) leave the uncomputed columns "
                                                "able to reach the boundary word; use more")
        if self.output_bound() > self.rbr.value_bound:
            raise ParameterError("extra_words", "the output bound does not fit in the words")

    @property
    def design_bits(self) -> int:
        return self.bits if self.bits is not None else self.modulus.bit_length()

    @property
    def words(self) -> int:
        """``W = ceil(n/d) + extra_words`` (65 for 1024 bits, d = 16), at least ``x + 1``.

        Tiny moduli get more words so that the guard diagonals sit above
        at least one uncomputed diagonal.
        """
        return max(-(-self.design_bits // self.word_bits) + self.extra_words, self.guard_words + 1)

    @cached_property
    def rbr(self) -> RBRParams:
        return RBRParams(word_bits=self.word_bits, redundant_bits=self.redundant_bits, words=self.words)

    @property
    def radix(self) -> int:
        return 1 << (self.word_bits * self.words)

    @cached_property
    def p_prime(self) -> int:
        """``P' = -P^-1 mod R`` (a constant of the design, like P itself)."""
        return (-pow(self.modulus, -1, self.radix)) % self.radix

    # -- bounds and thresholds ----------------------------------------------
    def _lower_digits_max(self, count: int) -> int:
        """Largest value of ``count`` RBR digits at weights 2^(d*i), i < count."""
        return value_of([self.rbr.digit_max] * count, self.word_bits)

    def uncomputed_max(self) -> int:
        """Bound on the value of the products ``q_i*p_j`` with ``i + j < W - x`` (never computed)."""
        d = self.word_bits
        pmax = (1 << d) - 1  # P is canonical: its digits are d bits
        total = 0
        for s in range(self.words - self.guard_words):
            total += (s + 1) * self.rbr.digit_max * pmax << (d * s)
        return total

    def thresholds(self) -> dict[str, int]:
        """Smallest boundary-digit value that triggers the fallback, per check.

        A digit strictly below its threshold proves the quantity under it is
        below ``R``.
        """
        d = self.word_bits
        unit = 1 << (d * (self.words - 1))  # weight of digit W-1
        below = self._lower_digits_max(self.words - 1)
        # T0 = t[W-1]*unit + (lower digits) < R  <=>  t[W-1] < (R - below) / unit
        split = (self.radix - below + unit - 1) // unit
        guard_rest = self._lower_digits_max(self.words - 1) - self._lower_digits_max(self.words - self.guard_words)
        guard = (self.radix - guard_rest - self.uncomputed_max() + unit - 1) // unit
        return {"square_split": split, "lower_split": split, "upper_guard": guard}

    def output_bound(self) -> int:
        """Fixed point ``B`` of ``B -> (B-1)^2 // R + P + 1`` starting from ``2P``."""
        bound = 2 * self.modulus
        while True:
            nxt = (bound - 1) ** 2 // self.radix + self.modulus + 1
            if nxt >= bound:
                return bound
            bound = nxt

    # -- cost -------------------------------------------------------------
    def window_products(self) -> dict[str, int]:
        w, x = self.words, self.guard_words
        full = w * w
        return {
            "square": w * (w + 1) // 2,
            "lower": w * (w + 1) // 2,  # i + j <= W - 1
            "upper": full - (w - x) * (w - x + 1) // 2,  # i + j >= W - x
            "full": full,
        }


class PredictiveMontgomery:
    """Bit-exact model of the predictive Montgomery squarer (and its multiply mode)."""

    def __init__(self, params: PredictiveParams):
        self.params = params
        self.modulus = params.modulus
        self.fallbacks = {"square_split": 0, "lower_split": 0, "upper_guard": 0}
        self.operations = 0

    @cached_property
    def _p_digits(self) -> tuple[int, ...]:
        return self.params.rbr.to_digits(self.modulus)

    @cached_property
    def _p_prime_digits(self) -> tuple[int, ...]:
        return self.params.rbr.to_digits(self.params.p_prime)

    # -- the three passes ---------------------------------------------------
    def _lower_window(self, t0: tuple[int, ...]) -> tuple[int, ...]:
        """Digits 0..W-1 of ``T0 * P'`` from the products with ``i + j <= W - 1``."""
        p = self.params
        d, mask, w = p.word_bits, p.rbr.word_mask, p.words
        cols = [0] * (w + 2)
        for i, ti in enumerate(t0):
            for j in range(w - i):
                prod = ti * self._p_prime_digits[j]
                c = i + j
                cols[c] += prod & mask
                cols[c + 1] += (prod >> d) & mask
                cols[c + 2] += prod >> (2 * d)
        out = [0] * w
        for c in range(w):
            out[c] += cols[c] & mask
            if c + 1 < w:
                out[c + 1] += cols[c] >> d
        return tuple(out)

    def _upper_window(self, q0: tuple[int, ...], t1: tuple[int, ...], carry: int) -> tuple[tuple[int, ...], int]:
        """Pass 3: returns (digits W..2W-1, top guard digit)."""
        p = self.params
        d, mask, w, x = p.word_bits, p.rbr.word_mask, p.words, p.guard_words
        lo = w - x
        cols = [0] * (2 * w + 2)
        for i, qi in enumerate(q0):
            for j in range(max(0, lo - i), w):
                prod = qi * self._p_digits[j]
                c = i + j
                cols[c] += prod & mask
                cols[c + 1] += (prod >> d) & mask
                cols[c + 2] += prod >> (2 * d)
        for m, tm in enumerate(t1):
            cols[w + m] += tm
        cols[w] += carry
        digits = [0] * (2 * w + 2)
        for c in range(lo, 2 * w + 1):
            digits[c] += cols[c] & mask
            digits[c + 1] += cols[c] >> d
        return tuple(digits[w:2 * w + 1]), digits[w - 1]

    def _exact(self, t: int) -> tuple[int, ...]:
        """Fallback: carries propagated (``t`` is the product's value), full ``Q*P``, exact division by R."""
        p = self.params
        q = (t * p.p_prime) & (p.radix - 1)
        z = (t + q * self.modulus) >> (p.word_bits * p.words)
        return p.rbr.to_digits(z)

    def square_digits(self, a: tuple[int, ...]) -> tuple[tuple[int, ...], dict[str, int]]:
        """One Montgomery squaring ``A*A/R`` (mod P) in RBR; returns (digits, stages)."""
        return self.monpro_digits(a, a)

    def monpro_digits(self, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], dict[str, int]]:
        p = self.params
        rbr = p.rbr
        w = p.words
        thr = p.thresholds()
        self.operations += 1
        t = polsqr(rbr, a) if a == b else polmul(rbr, a, b)
        t0, t1 = t[:w], t[w:]
        stages = {"T": rbr.value(t[:w]) + (value_of(t1, p.word_bits) << (p.word_bits * w))}
        reason = None
        if t0[w - 1] >= thr["square_split"]:
            reason = "square_split"
        else:
            q0 = self._lower_window(t0)
            stages["Q0"] = rbr.value(q0)
            if q0[w - 1] >= thr["lower_split"]:
                reason = "lower_split"
            else:
                carry = 1 if any(t0) else 0
                z, guard_top = self._upper_window(q0, t1, carry)
                stages["guard_top"] = guard_top
                stages["carry"] = carry
                if guard_top >= thr["upper_guard"]:
                    reason = "upper_guard"
                else:
                    if z[w]:
                        raise AssertionError("output spilled past W words")  # excluded by output_bound
                    out = z[:w]
                    stages["Z"] = rbr.value(out)
                    return out, stages
        self.fallbacks[reason] += 1
        stages["fallback"] = 1
        out = self._exact(stages["T"])
        stages["Z"] = rbr.value(out)
        stages["fallback_reason"] = list(self.fallbacks).index(reason)
        return out, stages

    # -- domain conversion and the registry face -------------------------------
    def to_montgomery(self, x: int) -> tuple[int, ...]:
        """``x * R mod P`` as digits (done once, before the loop)."""
        return self.params.rbr.to_digits((x << (self.params.word_bits * self.params.words)) % self.modulus)

    def leave_montgomery(self, digits: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
        """Multiply by 1 through the same datapath: (redundant digits of x, canonical x)."""
        one = self.params.rbr.to_digits(1)
        z, _ = self.monpro_digits(digits, one)
        value = self.params.rbr.value(z)
        # The bound is below 2P, so one conditional subtraction makes it canonical.
        return z, value - self.modulus if value >= self.modulus else value

    def from_montgomery(self, digits: tuple[int, ...]) -> int:
        return self.leave_montgomery(digits)[1]

    def modmul(self, a: int, b: int) -> Outcome:
        """``a*b mod P``: into the domain, one Montgomery product, out again.

        ``raw``/``digits`` are the redundant form of ``a*b mod P`` as the
        datapath leaves it (after the multiply by 1), before the final
        subtraction.
        """
        check_operand("a", a, self.modulus)
        check_operand("b", b, self.modulus)
        before = sum(self.fallbacks.values())
        am, bm = self.to_montgomery(a), self.to_montgomery(b)
        z, stages = self.monpro_digits(am, bm)
        stages = {"montgomery_" + k: v for k, v in stages.items()}
        out_digits, result = self.leave_montgomery(z)
        return Outcome(result=result, raw=self.params.rbr.value(out_digits), digits=out_digits,
                       digit_bits=self.params.rbr.digit_bits, digit_weight_bits=self.params.word_bits,
                       stages=stages, events={"fallbacks": sum(self.fallbacks.values()) - before})

    def square_chain(self, x: int, t: int) -> tuple[int, list[tuple[int, ...]]]:
        """``x**(2**t) mod P``: into the Montgomery domain, ``t`` squarings, out."""
        check_operand("x", x, self.modulus)
        digits = self.to_montgomery(x)
        trace = []
        for _ in range(t):
            digits, _ = self.square_digits(digits)
            trace.append(digits)
        return self.from_montgomery(digits), trace

    @property
    def redundant_bound(self) -> int:
        return self.params.output_bound()

    def cost(self) -> Cost:
        p = self.params
        win = p.window_products()
        return Cost(
            word_products=max(win["square"], win["lower"], win["upper"]), product_bits=p.rbr.digit_bits,
            adder_tree_inputs=max(p.rbr.column_heights(square=False)) + 1,
            extra={"words": p.words, "guard_words": p.guard_words, "passes": 3,
                   "square_products": win["square"], "lower_products": win["lower"],
                   "upper_products": win["upper"], "full_product_products": win["full"],
                   "thresholds": p.thresholds(),
                   "output_bound_over_modulus_bits": (p.output_bound() - p.modulus).bit_length()},
        )


def _edge_cases(model: PredictiveMontgomery) -> dict[str, tuple[int, int]]:
    # a = R^-1 mod P makes the Montgomery-domain operand 1, so A*A has T0 != 0 but tiny.
    m = model.modulus
    r_inv = pow(model.params.radix, -1, m)
    return {"montgomery_one": (r_inv, r_inv), "montgomery_one_times_max": (r_inv, m - 1)}


def build(modulus: int, **options) -> PredictiveMontgomery:
    return PredictiveMontgomery(PredictiveParams(modulus=modulus, **options))


ALGORITHMS = [
    AlgorithmInfo(
        name="predictive-montgomery",
        family="predictive",
        seed="000_e97926a82e6a65ea.txt (Predictive Montgomery multiplier, tricks 1-4)",
        summary="RBR Montgomery squarer: square / lower-window / upper-window passes, boundary checks, "
                "full-width fallback; output < P(1+P/R)",
        cost_formula="W=ceil(n/d)+1 words; square W(W+1)/2, lower W(W+1)/2, upper W^2-(W-x)(W-x+1)/2 "
                     "products of (d+1) bits; array = max of the three (2272 for n=1024, d=16, x=3); 3 passes",
        build=build,
        options={"bits": "design width n", "word_bits": "d (16)", "redundant_bits": "r (1)",
                 "extra_words": "words above ceil(n/d) (1)", "guard_words": "x (3)"},
        heavy=True,
        odd_modulus_only=True,
        edge_cases=_edge_cases,
    ),
]
