"""Montgomery multiplication: textbook, word-serial, reduced, low-latency RBR and bit-serial.

Seeds:

* ``002_abd2559fcdba976b.txt`` (I. San, "Low-Latency Montgomery Modular
  Multiplication Suitable for Verifiable Delay Functions"): Algorithm 1
  (textbook MonPro), Algorithm 2 (reduced MonPro: only the partial products
  the result needs), Algorithm 4 (Montgomery on top of Ozturk's redundant
  polynomial multiplication; its text is garbled in the seed, so it is
  rebuilt here from the HLS listing, Algorithm 6).
* ``004_1834f7117338b08e.txt`` (Shand, Bertin, Vuillemin, the DEC PRL PAM
  paper): Sec. 3.1 (Montgomery without the final subtraction, redundant
  results fed back), Sec. 3.4 and 4.3 (the bit-serial modular product unit,
  its recurrence (1), carry-save state and carry-completion detection).

Every model computes the Montgomery product ``monpro(x, y) = x*y*R^-1 mod m``
for its own radix ``R`` (``model.radix``) and exposes it.  The registry face
``modmul(a, b)`` works the way software does: ``a*R mod m`` and ``b*R mod m``
are precomputed with Python integers (the stages say so), one ``monpro``
multiplies in the Montgomery domain and a second ``monpro(., 1)`` leaves it.

Models (registered names):

``montgomery``          Alg. 1 of seed 002 on whole integers, ``R = 2^n``.
``montgomery-cios``     word-serial CIOS (interleaved multiply and reduce),
                        ``2 s^2 + s`` word products, counted as they happen.
``montgomery-reduced``  Alg. 2 of seed 002 with the carry of ``T0 + S0``
                        computed correctly (``T0 != 0``; the printed "+1" is
                        wrong when ``T0 = 0``), word products counted.
``montgomery-ozturk``   Alg. 4/6 of seed 002 on RBR digits (:mod:`.rbr`), with
                        the true carry of the redundant low parts (0..4, not
                        always the 1 the HLS code adds) and an output that can
                        be fed back while below ``4m``.
``dec-mpu``             the PAM modular product unit of seed 004: bit-serial,
                        no final subtraction, carry-save state, carry
                        completion counted in cycles.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .base import (Cost, Outcome, ParameterError, check_operand, require_bool, require_int, require_modulus,
                   require_positive, value_of)
from .rbr import RBRParams, polmul, polsqr
from .registry import AlgorithmInfo

SEED_SAN = "002_abd2559fcdba976b"
SEED_PAM = "004_1834f7117338b08e"


# --------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------
def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def neg_inverse(modulus: int, radix_bits: int) -> int:
    """``-modulus^-1 mod 2^radix_bits`` (the Montgomery constant M' or m0')."""
    radix = 1 << radix_bits
    return (-pow(modulus, -1, radix)) % radix


def count_pairs(rows: int, cols: int, lo: int, hi: int) -> int:
    """Number of word products ``(i, j)``, ``0 <= i < rows``, ``0 <= j < cols``, with ``lo <= i + j <= hi``."""
    total = 0
    for i in range(rows):
        j_lo = max(0, lo - i)
        j_hi = min(cols - 1, hi - i)
        if j_hi >= j_lo:
            total += j_hi - j_lo + 1
    return total


def _merge_events(*outcomes: Outcome) -> dict[str, int]:
    events: dict[str, int] = {}
    for out in outcomes:
        for key, value in out.events.items():
            events[key] = events.get(key, 0) + value
    return events


def _prefixed(prefix: str, stages: dict[str, int]) -> dict[str, int]:
    return {f"{prefix}.{key}": value for key, value in stages.items()}


class _MontgomeryDomain:
    """``modmul`` through the Montgomery domain, shared by every model.

    ``a -> a*R mod m`` is precomputed with Python integers (as software
    does, or as a host would before loading the hardware); the product is
    one ``monpro``; ``monpro(., 1)`` leaves the domain.  A model's ``_feed``
    turns a ``monpro`` outcome into the next ``monpro`` input (the raw,
    possibly redundant value, or its digits), so redundant models really
    feed their redundant output back.
    """

    def __init__(self, params: Any):
        self.params = params
        self.modulus = params.modulus

    @property
    def radix(self) -> int:
        return self.params.radix

    @property
    def redundant_bound(self) -> int:
        """Canonical-output models: results are below the modulus."""
        return self.modulus

    def cost(self) -> Cost:
        return self.params.cost()

    def monpro(self, x: Any, y: Any) -> Outcome:  # pragma: no cover
        raise NotImplementedError

    def to_montgomery(self, a: int) -> int:
        """``a*R mod m``, computed with Python integers (the conversion constant)."""
        return a * self.radix % self.modulus

    def _feed(self, out: Outcome) -> Any:
        return out.raw

    def from_montgomery(self, x: Any) -> Outcome:
        """``monpro(x, 1)``: the canonical value leaves the domain."""
        return self.monpro(x, 1)

    def modmul(self, a: int, b: int) -> Outcome:
        m = self.modulus
        a = check_operand("a", a, m)
        b = check_operand("b", b, m)
        a_bar = self.to_montgomery(a)
        b_bar = self.to_montgomery(b)
        core = self.monpro(a_bar, b_bar)
        out = self.from_montgomery(self._feed(core))
        stages = {"a_mont (Python a*R mod m)": a_bar, "b_mont (Python b*R mod m)": b_bar,
                  "ab_mont": core.raw}
        stages.update(_prefixed("core", core.stages))
        stages.update(_prefixed("out", out.stages))
        return Outcome(result=out.result, raw=out.raw, digits=out.digits, digit_bits=out.digit_bits,
                       digit_weight_bits=out.digit_weight_bits, stages=stages,
                       events=_merge_events(core, out))


# --------------------------------------------------------------------------
# 1. Textbook Montgomery (seed 002, Algorithm 1)
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class MontgomeryParams:
    """Textbook MonPro: odd ``modulus``, radix ``R = 2^bits``.

    ``bits`` is the design width ``n`` (default: the modulus' own width);
    a modulus wider than ``bits`` is rejected.  ``word_bits`` only sets the
    unit of :meth:`cost` (the algorithm works on whole integers).
    """

    modulus: int
    bits: int | None = None
    word_bits: int = 64

    def __post_init__(self) -> None:
        if self.bits is not None:
            require_positive("bits", self.bits)
        require_modulus(self.modulus, odd=True, max_bits=self.bits)
        require_positive("word_bits", self.word_bits)

    @property
    def n(self) -> int:
        return self.bits if self.bits is not None else self.modulus.bit_length()

    @property
    def radix(self) -> int:
        return 1 << self.n

    @property
    def radix_mask(self) -> int:
        return self.radix - 1

    @cached_property
    def m_prime(self) -> int:
        """``M' = -M^-1 mod R``."""
        return neg_inverse(self.modulus, self.n)

    @property
    def words(self) -> int:
        return ceil_div(self.n, self.word_bits)

    def cost(self) -> Cost:
        s = self.words
        return Cost(word_products=3 * s * s, product_bits=self.word_bits, adder_tree_inputs=2,
                    extra={"n": self.n, "words": s, "n_bit_products": 3, "conditional_subtractions": 1})


class Montgomery(_MontgomeryDomain):
    """Algorithm 1: ``T = AB``, ``Q = T M' mod R``, ``Z = (T + QM)/R``, one conditional subtraction."""

    def monpro(self, x: int, y: int) -> Outcome:
        p = self.params
        m = p.modulus
        x = check_operand("x", x, m)
        y = check_operand("y", y, m)
        t = x * y
        q = (t * p.m_prime) & p.radix_mask
        u = t + q * m
        assert u & p.radix_mask == 0, "T + QM is not a multiple of R"
        z = u >> p.n
        assert z < 2 * m
        subtract = z >= m
        if subtract:
            z -= m
        return Outcome(result=z, raw=z, stages={"T": t, "Q": q, "Z_before_subtraction": u >> p.n},
                       events={"final_subtraction": int(subtract)})


# --------------------------------------------------------------------------
# 2. Word-serial CIOS
# --------------------------------------------------------------------------
class _WordLayout:
    """``s`` words of ``word_bits`` (``words`` if given, else enough for the modulus) and radix ``2^(w*s)``."""

    modulus: int
    word_bits: int
    words: int | None

    def _check_layout(self) -> None:
        require_positive("word_bits", self.word_bits)
        if self.words is not None:
            require_positive("words", self.words)
        require_modulus(self.modulus, odd=True,
                        max_bits=None if self.words is None else self.words * self.word_bits)

    @property
    def s(self) -> int:
        return self.words if self.words is not None else ceil_div(self.modulus.bit_length(), self.word_bits)

    @property
    def radix_bits(self) -> int:
        return self.word_bits * self.s

    @property
    def radix(self) -> int:
        return 1 << self.radix_bits

    @property
    def word_mask(self) -> int:
        return (1 << self.word_bits) - 1


@dataclass(frozen=True)
class CIOSParams(_WordLayout):
    """CIOS with ``word_bits``-bit words (``w``) and ``words`` words (``s``); ``R = 2^(w s)``.

    ``words`` defaults to the fewest that hold the modulus; when given, it
    fixes the design width and a wider modulus is rejected.
    """

    modulus: int
    word_bits: int = 64
    words: int | None = None

    def __post_init__(self) -> None:
        self._check_layout()

    @cached_property
    def m0_prime(self) -> int:
        """One word of ``-M^-1 mod 2^w``."""
        return neg_inverse(self.modulus, self.word_bits)

    @cached_property
    def modulus_words(self) -> tuple[int, ...]:
        return tuple((self.modulus >> (self.word_bits * i)) & self.word_mask for i in range(self.s))

    def word_products(self) -> int:
        """``s^2`` (a_j b_i) + ``s`` (t_0 m0') + ``s^2`` (m_i n_j) = ``2 s^2 + s``."""
        return 2 * self.s * self.s + self.s

    def cost(self) -> Cost:
        return Cost(word_products=self.word_products(), product_bits=self.word_bits, adder_tree_inputs=3,
                    extra={"words": self.s, "word_bits": self.word_bits, "outer_iterations": self.s,
                           "conditional_subtractions": 1})


class MontgomeryCIOS(_MontgomeryDomain):
    """Coarsely Integrated Operand Scanning: per word ``b_i`` of ``y``, multiply then reduce one word."""

    def monpro(self, x: int, y: int) -> Outcome:
        p = self.params
        m = p.modulus
        x = check_operand("x", x, m)
        y = check_operand("y", y, m)
        w, s, mask = p.word_bits, p.s, p.word_mask
        a = [(x >> (w * j)) & mask for j in range(s)]
        b = [(y >> (w * j)) & mask for j in range(s)]
        n = p.modulus_words
        m0p = p.m0_prime
        t = [0] * (s + 2)
        products = 0
        for i in range(s):
            # multiply: t += a * b_i
            carry = 0
            bi = b[i]
            for j in range(s):
                u = t[j] + a[j] * bi + carry
                products += 1
                t[j] = u & mask
                carry = u >> w
            u = t[s] + carry
            t[s] = u & mask
            t[s + 1] = u >> w
            # reduce: one word of Q, then t = (t + q_i * M) / 2^w
            qi = (t[0] * m0p) & mask
            products += 1
            u = t[0] + qi * n[0]
            products += 1
            assert u & mask == 0, "low word not cancelled"
            carry = u >> w
            for j in range(1, s):
                u = t[j] + qi * n[j] + carry
                products += 1
                t[j - 1] = u & mask
                carry = u >> w
            u = t[s] + carry
            t[s - 1] = u & mask
            t[s] = t[s + 1] + (u >> w)
            t[s + 1] = 0
            assert t[s] <= 1, "CIOS invariant t < 2M broken"
        z = value_of(t[: s + 1], w)
        assert z < 2 * m
        subtract = z >= m
        result = z - m if subtract else z
        return Outcome(result=result, raw=result, digits=None,
                       stages={"Z_before_subtraction": z},
                       events={"final_subtraction": int(subtract), "word_products": products})


# --------------------------------------------------------------------------
# 3. Reduced Montgomery (seed 002, Algorithm 2)
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class ReducedParams(_WordLayout):
    """Algorithm 2 on ``word_bits``-bit words (``d``), ``words`` words (``s``); ``R = 2^(d s)``.

    The upper half ``S1`` of ``Q0 M`` is formed from the products on
    diagonals ``i + j >= s - 2`` only; the carry out of the discarded low
    products is recovered from the known low half ``S0 = -T0 mod R``
    (see :meth:`ReducedMontgomery.monpro`).  That recovery needs the low
    columns' overflow into column ``s - 1`` to stay below ``2^d``; a word
    size too small for the number of words is rejected.
    """

    modulus: int
    word_bits: int = 16
    words: int | None = None

    def __post_init__(self) -> None:
        self._check_layout()
        if self.low_overflow_max() >= (1 << self.word_bits):
            raise ParameterError(
                "word_bits",
                f"{self.word_bits}-bit words cannot hold the carries of a {self.s}-word reduced Montgomery "
                f"product: the discarded low columns of Q0*M overflow into column s-1 by up to "
                f"{self.low_overflow_max()}, which does not fit in a word")

    @cached_property
    def m_prime(self) -> int:
        return neg_inverse(self.modulus, self.radix_bits)

    def low_overflow_max(self) -> int:
        """Largest ``floor(Y / 2^(d(s-1)))`` for ``Y`` the pieces of ``Q0 M`` below column ``s-1``."""
        s, d = self.s, self.word_bits
        if s < 2:
            return 0
        wmax = (1 << d) - 1
        y = 0
        for c in range(s - 2):  # whole products on diagonals 0 .. s-3
            y += count_pairs(s, s, c, c) * wmax * wmax << (d * c)
        y += count_pairs(s, s, s - 2, s - 2) * wmax << (d * (s - 2))  # low words of diagonal s-2
        return y >> (d * (s - 1))

    def product_counts(self) -> dict[str, int]:
        """Word products per multiplication: ``products_T`` (all of ``A*B``), ``products_Q0``
        (``T0*M'`` on diagonals ``i+j <= s-1``), ``products_S1`` (``Q0*M`` on diagonals ``i+j >= s-2``)."""
        s = self.s
        return {
            "products_T": s * s,
            "products_Q0": count_pairs(s, s, 0, s - 1),
            "products_S1": count_pairs(s, s, s - 2, 2 * s - 2),
        }

    def word_products(self) -> int:
        return sum(self.product_counts().values())

    def cost(self) -> Cost:
        s = self.s
        counts = self.product_counts()
        extra: dict[str, Any] = {"words": s, "word_bits": self.word_bits,
                                 "textbook_word_products": 3 * s * s,
                                 "word_products_if_S_computed_whole": 2 * s * s + counts["products_Q0"],
                                 "conditional_subtractions": 1}
        extra.update(counts)
        return Cost(word_products=self.word_products(), product_bits=self.word_bits, adder_tree_inputs=3,
                    extra=extra)


class ReducedMontgomery(_MontgomeryDomain):
    """Algorithm 2 with the correct carry: ``Z = T1 + S1 + [T0 != 0]``."""

    def _halves(self, x: int, y: int) -> tuple[int, int, int, int, int, int]:
        """T0, T1, Q0, S1 (exact upper half of Q0*M) and the number of word products used."""
        p = self.params
        d, s, mask = p.word_bits, p.s, p.word_mask
        m = p.modulus
        n = p.radix_bits
        products = 0
        # T = A*B: all s^2 products (row i: x_i times all of y).
        t = 0
        for i in range(s):
            t += ((x >> (d * i)) & mask) * y << (d * i)
            products += s
        t0, t1 = t & (p.radix - 1), t >> n
        # Q0 = T0*M' mod R: only the products below R (row i: M' mod 2^(d(s-i))).
        q = 0
        for i in range(s):
            q += ((t0 >> (d * i)) & mask) * (p.m_prime & ((1 << (d * (s - i))) - 1)) << (d * i)
            products += s - i
        q0 = q & (p.radix - 1)
        # S1 = floor(Q0*M / R) from the products on diagonals >= s-2 only.
        high = 0        # pieces at columns >= s, in units of R
        column = 0      # column s-1: low words of diagonal s-1, high words of diagonal s-2
        for i in range(s):
            qi = (q0 >> (d * i)) & mask
            j = s - 2 - i
            if 0 <= j < s:
                column += (qi * ((m >> (d * j)) & mask)) >> d
                products += 1
            j = s - 1 - i
            if 0 <= j < s:
                prod = qi * ((m >> (d * j)) & mask)
                column += prod & mask
                high += prod >> d
                products += 1
            j_lo = s - i
            if j_lo < s:
                high += (qi * (m >> (d * j_lo))) << (d * (i + j_lo - s))
                products += s - j_lo
        # The low half S0 of Q0*M is known without computing it: S0 = -T0 mod R.
        # Its top word is ~T0_top + [T0 below its top word is 0] (a wide OR,
        # no carry chain); it fixes the overflow y_hi of the discarded pieces.
        t0_top = t0 >> (d * (s - 1))
        t0_rest_zero = (t0 & ((1 << (d * (s - 1))) - 1)) == 0
        s0_top = ((~t0_top & mask) + int(t0_rest_zero)) & mask
        y_hi = (s0_top - column) & mask
        kappa = (column + y_hi) >> d
        s1 = high + kappa
        assert s1 == (q0 * m) >> n, "S1 reconstruction from the upper diagonals failed"
        return t0, t1, q0, s1, products, column

    def monpro(self, x: int, y: int) -> Outcome:
        m = self.modulus
        x = check_operand("x", x, m)
        y = check_operand("y", y, m)
        t0, t1, q0, s1, products, _ = self._halves(x, y)
        # T0 + S0 is 0 when T0 = 0 (then Q0 = S0 = 0) and exactly R otherwise.
        carry = int(t0 != 0)
        z = t1 + s1 + carry
        assert z < 2 * m
        subtract = z >= m
        result = z - m if subtract else z
        return Outcome(result=result, raw=result,
                       stages={"T0": t0, "T1": t1, "Q0": q0, "S1": s1, "carry": carry,
                               "Z_before_subtraction": z},
                       events={"final_subtraction": int(subtract), "t0_zero": int(t0 == 0),
                               "word_products": products})

    def monpro_as_printed(self, x: int, y: int) -> int:
        """Algorithm 2 read literally (``Z = T1 + S1 + 1``): wrong whenever ``T0 = 0``.

        Kept to document and test the finding; not used by :meth:`monpro`.
        """
        m = self.modulus
        x = check_operand("x", x, m)
        y = check_operand("y", y, m)
        _, t1, _, s1, _, _ = self._halves(x, y)
        z = t1 + s1 + 1
        return z - m if z >= m else z


# --------------------------------------------------------------------------
# 4. Montgomery on Ozturk's RBR polynomial multiplication (seed 002, Alg. 4/6)
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class OzturkMontParams:
    """Low-latency MonPro on RBR digits: ``word_bits`` = d, ``digits`` = k, ``R = 2^(d k)``.

    Operands are ``k + 1`` RBR digits of ``d + 1`` bits (the seed's
    ``ap_uint<17> x[k+1]`` for ``d = 16``).  ``digits`` defaults to the
    smallest ``k >= ceil(n/d)`` for which outputs below ``4m`` can be fed
    back as inputs (``R`` must be about ``8m``; :meth:`feedback_ok`); that is
    the seed's ``k = n/d`` when the modulus leaves 3 spare bits in the top
    digit, and one more digit otherwise (``n = 1024, d = 16``: ``k = 65``).
    ``feedback=False`` accepts any ``k`` that holds the modulus (the seed's
    Table I sizing); its outputs are then only bounded for canonical inputs
    and must be reduced before they are reused.
    """

    modulus: int
    word_bits: int = 16
    digits: int | None = None
    feedback: bool = True

    def __post_init__(self) -> None:
        require_bool("feedback", self.feedback)
        require_positive("word_bits", self.word_bits)
        if self.word_bits < 4:
            raise ParameterError("word_bits", f"must be at least 4, got {self.word_bits}")
        if self.digits is not None:
            require_positive("digits", self.digits)
        require_modulus(self.modulus, odd=True,
                        max_bits=None if self.digits is None else self.digits * self.word_bits)
        if self.digits is not None and self.digits > self._smallest_k() + 8:
            # Digits past what the modulus needs only widen the datapath (quadratically in DSPs).
            raise ParameterError("digits", f"{self.digits} digits for a {self.modulus.bit_length()}-bit modulus "
                                           f"(it needs {self._smallest_k()}); at most {self._smallest_k() + 8}")
        if self.digits is not None and self.feedback and not self.feedback_ok(self.digits):
            raise ParameterError(
                "digits",
                f"{self.digits} digits of {self.word_bits} bits (R = 2^{self.digits * self.word_bits}) leave no "
                f"room for redundant outputs of a {self.modulus.bit_length()}-bit modulus: feeding outputs back "
                f"needs R of about 8m so that inputs < 4m give outputs < 4m; use at least "
                f"{self._smallest_k()} digits, or feedback=False")
        # Building the RBR parameters checks that d-bit words hold the carries of k+1 digits.
        _ = self.rbr

    def feedback_ok(self, k: int) -> bool:
        """Inputs ``< 4m`` give outputs ``< 4m`` for ``k`` digits (worst case over the low digits of q)."""
        m = self.modulus
        radix = 1 << (self.word_bits * k)
        q_max = value_of([(1 << (self.word_bits + 1)) - 1] * k, self.word_bits)
        return ((4 * m - 1) ** 2 + q_max * m) // radix < 4 * m

    def _smallest_k(self) -> int:
        k = ceil_div(self.modulus.bit_length(), self.word_bits)
        while not self.feedback_ok(k):
            k += 1
        return k

    @cached_property
    def k(self) -> int:
        if self.digits is not None:
            return self.digits
        if self.feedback:
            return self._smallest_k()
        return ceil_div(self.modulus.bit_length(), self.word_bits)

    @cached_property
    def rbr(self) -> RBRParams:
        return RBRParams(word_bits=self.word_bits, redundant_bits=1, words=self.k + 1)

    @property
    def radix_bits(self) -> int:
        return self.word_bits * self.k

    @property
    def radix(self) -> int:
        return 1 << self.radix_bits

    @cached_property
    def m_prime(self) -> int:
        return neg_inverse(self.modulus, self.radix_bits)

    @cached_property
    def m_digits(self) -> tuple[int, ...]:
        return self.rbr.to_digits(self.modulus)

    @cached_property
    def mp_digits(self) -> tuple[int, ...]:
        return self.rbr.to_digits(self.m_prime)

    @cached_property
    def q_max(self) -> int:
        """Largest value of ``ql`` (k digits of d+1 bits): about ``2R``."""
        return value_of([self.rbr.digit_max] * self.k, self.word_bits)

    def output_bound(self, x_bound: int, y_bound: int) -> int:
        """Exclusive bound on ``Z = (x y + ql m)/R`` for ``x < x_bound``, ``y < y_bound``."""
        return ((x_bound - 1) * (y_bound - 1) + self.q_max * self.modulus) // self.radix + 1

    @property
    def redundant_bound(self) -> int:
        """``4m`` when outputs can be fed back; else the bound for canonical inputs."""
        if self.feedback and self.feedback_ok(self.k):
            return 4 * self.modulus
        return self.output_bound(self.modulus, self.modulus)

    @property
    def output_digits(self) -> int:
        """Digits of the exact result: ``E`` has ``k + 3`` entries, ``z`` one more (always 0 on top)."""
        return self.k + 3

    def product_counts(self, square: bool = False) -> dict[str, int]:
        """Word products each polynomial product needs, by which output digits are used.

        An RBR output digit ``c`` reads columns ``c - 1`` and ``c``; a product
        on diagonal ``i + j`` feeds columns ``i + j``, ``+1``, ``+2``.  ``tl``,
        ``ql`` and ``mp``, ``m`` have a zero top digit, so their products run
        over ``k x k`` digits.
        """
        k = self.k
        w = k + 1
        t = w * (w + 1) // 2 if square else w * w
        q = count_pairs(k, k, 0, k - 1)                       # q[0 .. k-1]
        res_hls = count_pairs(k, k, k - 3, 2 * k)             # res[k .. 2k]: columns >= k-1
        res_exact_top = count_pairs(k, k, k - 4, 2 * k)       # + res[k-1] for the exact carry
        return {"t": t, "q": q, "res_hls": res_hls, "res_with_top_carry": res_exact_top,
                "res_full": k * k}

    def cost(self, square: bool = False) -> Cost:
        counts = self.product_counts(square)
        words = counts["t"] + counts["q"] + counts["res_with_top_carry"]
        extra: dict[str, Any] = {"k": self.k, "digits": self.k + 1, "word_bits": self.word_bits,
                                 "word_products_hls": counts["t"] + counts["q"] + counts["res_hls"],
                                 "word_products_full_low_evaluation": counts["t"] + counts["q"]
                                 + counts["res_full"]}
        extra.update({f"products_{key}": value for key, value in counts.items()})
        return Cost(word_products=words, product_bits=self.rbr.digit_bits,
                    adder_tree_inputs=max(self.rbr.column_heights(square)), extra=extra)


class OzturkMontgomery(_MontgomeryDomain):
    """Alg. 4 of seed 002, rebuilt from its HLS code (Alg. 6), with the true low carry.

    ``t = polmul(x, y)``; ``tl = t[0..k-1]``, ``tl[k] = 0``; ``q = polmul(tl, mp)``;
    ``ql = q[0..k-1]``, ``ql[k] = 0``; ``res = polmul(ql, m)``;
    ``E[i] = t[k+i] + res[k+i]`` with ``E[0] += carry``; ``z`` from ``E`` by one
    split at ``d`` bits.  ``carry = (tl + resl)/R`` where ``tl``, ``resl`` are
    the redundant low parts (each up to about ``2R``): 0, 1, 2, 3 (or 4),
    where the HLS code always adds 1.
    """

    @property
    def redundant_bound(self) -> int:
        return self.params.redundant_bound

    def _feed(self, out: Outcome) -> Any:
        return out.digits

    def to_digits(self, value: int) -> tuple[int, ...]:
        return self.params.rbr.to_digits(value)

    def _operand(self, name: str, value: Any) -> tuple[int, ...]:
        rbr = self.params.rbr
        if isinstance(value, (tuple, list)):
            return rbr.check_digits(name, value)
        value = check_operand(name, value, rbr.value_bound, f"the value bound of {rbr.words} RBR digits")
        return rbr.to_digits(value)

    def _products(self, xd, yd, square: bool):
        p = self.params
        rbr, k = p.rbr, p.k
        t = polsqr(rbr, xd) if square else polmul(rbr, xd, yd)
        tl = t[:k] + (0,)
        q = polmul(rbr, tl, p.mp_digits)
        ql = q[:k] + (0,)
        res = polmul(rbr, ql, p.m_digits)
        return t, tl, q, ql, res

    def monpro(self, x: Any, y: Any) -> Outcome:
        xd = self._operand("x", x)
        yd = self._operand("y", y)
        return self._monpro(xd, yd, square=False)

    def square(self, x: Any) -> Outcome:
        """``monpro(x, x)`` with the squaring form of the first product (:func:`rbr.polsqr`)."""
        return self._monpro(self._operand("x", x), None, square=True)

    def _monpro(self, xd, yd, square: bool) -> Outcome:
        p = self.params
        k, d = p.k, p.word_bits
        mask = p.rbr.word_mask
        radix = p.radix
        if square:
            yd = xd
        t, tl, q, ql, res = self._products(xd, yd, square)
        x_val, y_val = value_of(xd, d), value_of(yd, d)
        # Exact carry of the redundant low parts: a full-width evaluation.
        tl_val = value_of(t[:k], d)
        resl_val = value_of(res[:k], d)
        low = tl_val + resl_val
        assert low % radix == 0, "tl + resl is not a multiple of R"
        carry = low // radix
        # The same carry from the top low digits alone: tl + resl is a known
        # multiple of R, so only t[k-1] + res[k-1] (d+2 bits) and whether its
        # low d bits are zero matter.
        top = t[k - 1] + res[k - 1]
        carry_from_top = ceil_div(top, 1 << d)
        assert carry_from_top == carry, "top-digit carry rule failed"
        # E and z as in Alg. 6, over every digit (the HLS listing keeps E[0..k-1]).
        n_e = len(t) - k
        e = [t[k + i] + res[k + i] for i in range(n_e)]
        e[0] += carry
        z = [0] * (n_e + 1)
        for i, ei in enumerate(e):
            z[i] += ei & mask
            z[i + 1] += ei >> d
        assert z[-1] == 0
        assert all(zi <= p.rbr.digit_max for zi in z), "z digit wider than d+1 bits"
        z_val = value_of(z, d)
        ql_val = value_of(ql, d)
        assert z_val * radix == x_val * y_val + ql_val * p.modulus, "Z*R != x*y + ql*m"
        beyond = any(z[k + 1:]) or any(e[k:])
        digits = tuple(z[: k + 1]) if not any(z[k + 1:]) else tuple(z[:-1])
        subtractions = z_val // p.modulus
        result = z_val - subtractions * p.modulus
        bound = p.redundant_bound
        events = {"hls_carry_wrong": int(carry != 1), f"low_carry_{carry}": 1,
                  "hls_dropped_digits": int(beyond),
                  "input_beyond_bound": int(x_val >= bound or y_val >= bound),
                  "final_subtractions": subtractions}
        stages = {"t_low": tl_val, "q_low": ql_val, "res_low": resl_val, "carry": carry,
                  "t_high": value_of(t[k:], d), "res_high": value_of(res[k:], d), "Z": z_val}
        return Outcome(result=result, raw=z_val, digits=digits, digit_bits=p.rbr.digit_bits,
                       digit_weight_bits=d, stages=stages, events=events)

    def monpro_hls(self, x: Any, y: Any) -> tuple[int, ...]:
        """Algorithm 6 as printed: ``E[0] = t[k] + 1``, ``E[k]`` never reaches ``z``; k+1 digits out.

        Right only when the true carry is 1 and nothing lands above digit k-1
        of E; kept to document and test the finding.
        """
        p = self.params
        k, d = p.k, p.word_bits
        mask = p.rbr.word_mask
        t, _, _, _, res = self._products(self._operand("x", x), self._operand("y", y), False)
        e = [0] * (k + 1)
        e[0] = t[k] + 1
        for i in range(k):
            e[i] += res[i + k]
            e[i + 1] += t[i + k + 1]
        z = [0] * (k + 1)
        for i in range(k):
            z[i] += e[i] & mask
            z[i + 1] += e[i] >> d
        return tuple(z)


# --------------------------------------------------------------------------
# 5. DEC PAM modular product unit (seed 004, Sec. 3.1, 3.4, 4.3)
# --------------------------------------------------------------------------
def carry_completion(s: int, c: int) -> tuple[int, int]:
    """Settle a carry-save pair: half-adder rows until no carry is left; returns (value, cycles).

    Each cycle is one row of half adders (``s ^ c``, ``(s & c) << 1``) with
    no carry propagation; the carry-completion detector stops as soon as
    ``c`` is zero.  Cycles = the longest carry chain, ``width + 1`` at worst.
    """
    cycles = 0
    while c:
        s, c = s ^ c, (s & c) << 1
        cycles += 1
    return s, cycles


@dataclass(frozen=True)
class DecMpuParams:
    """Bit-serial MPU: ``iterations = bits + extra_bits`` recurrence steps, ``beta = 2^iterations``.

    ``bits`` is the design width (default: the modulus' width).  With
    ``extra_bits >= 2``, ``beta >= 4m`` and inputs below ``2m`` give outputs
    below ``2m`` (:attr:`bound_holds`).  The 1990 PAM used 254-bit factors
    and ``beta = 2^260``: ``extra_bits = 6`` (:meth:`pam_1990`).
    """

    modulus: int
    extra_bits: int = 2
    bits: int | None = None
    carry_save: bool = True

    def __post_init__(self) -> None:
        require_bool("carry_save", self.carry_save)
        if self.bits is not None:
            require_positive("bits", self.bits)
        require_modulus(self.modulus, odd=True, max_bits=self.bits)
        require_int("extra_bits", self.extra_bits)
        if self.extra_bits < 1:
            raise ParameterError("extra_bits", f"must be at least 1 so that every bit of an operand below 2m "
                                               f"is consumed, got {self.extra_bits}")

    @classmethod
    def pam_1990(cls, modulus: int) -> "DecMpuParams":
        """The seed's configuration: 254-bit factors, ``beta = 2^260`` (6 extra bits for the pipelined form)."""
        return cls(modulus=modulus, extra_bits=6, bits=254)

    @property
    def n(self) -> int:
        return self.bits if self.bits is not None else self.modulus.bit_length()

    @property
    def iterations(self) -> int:
        return self.n + self.extra_bits

    @property
    def beta(self) -> int:
        return 1 << self.iterations

    @property
    def bound_holds(self) -> bool:
        """``beta >= 4m``: then ``A, B < 2m`` give ``P < 4m^2/beta + m <= 2m``."""
        return self.beta >= 4 * self.modulus

    @property
    def input_bound(self) -> int:
        return 2 * self.modulus

    @property
    def redundant_bound(self) -> int:
        """``2m`` when ``beta >= 4m``; otherwise the one-step bound for inputs below ``2m``."""
        if self.bound_holds:
            return 2 * self.modulus
        m = self.modulus
        return ((2 * m - 1) ** 2 + (self.beta - 1) * m) // self.beta + 1

    @property
    def datapath_bits(self) -> int:
        """Width of the carry-save registers: ``P_i < 3m < 2^(n+2)``."""
        return self.n + 2

    def cost(self) -> Cost:
        return Cost(word_products=0, product_bits=1, adder_tree_inputs=3,
                    extra={"iterations": self.iterations, "beta_bits": self.iterations,
                           "cycles_per_product": self.iterations, "datapath_bits": self.datapath_bits,
                           "full_adders_per_cycle": self.datapath_bits,
                           "carry_completion_worst_cycles": self.datapath_bits + 1,
                           "final_subtractions": 0})


class DecMpu(_MontgomeryDomain):
    """``P_{i+1} = (P_i + b_i A + q_i M)/2``, ``q_i = (P_i + b_i A) mod 2``, for every bit ``b_i`` of B.

    The carry-save form keeps ``P = S + C``; each cycle adds the selected
    operand ``X = b_i A + q_i M`` (one of ``0, A, M, A+M``, the sum ``A+M``
    formed once per product) with a row of full adders (3:2, no carry
    propagation) and shifts both vectors right.  At the end the pair is
    settled by :func:`carry_completion`, whose cycle count goes to
    ``events["carry_completion_cycles"]``.
    """

    @property
    def radix(self) -> int:
        return self.params.beta

    @property
    def redundant_bound(self) -> int:
        return self.params.redundant_bound

    def _check(self, x: int, y: int) -> tuple[int, int]:
        bound = self.params.input_bound
        x = check_operand("x", x, bound, "2*modulus")
        y = check_operand("y", y, bound, "2*modulus")
        return x, y

    def monpro(self, x: int, y: int) -> Outcome:
        if self.params.carry_save:
            return self.monpro_carry_save(x, y)
        return self.monpro_plain(x, y)

    def _outcome(self, p_val: int, q: int, stages: dict[str, int], events: dict[str, int]) -> Outcome:
        m = self.modulus
        events["bound_violation"] = int(p_val >= 2 * m)
        # Redundant: the unit never subtracts.  The canonical residue is the
        # host's job (seed 004, Sec. 4.3); Python does it here.
        stages.update({"Q": q, "P": p_val})
        return Outcome(result=p_val % m, raw=p_val, stages=stages, events=events)

    def monpro_plain(self, x: int, y: int) -> Outcome:
        """Recurrence (1) with ``P`` a plain integer."""
        a, b = self._check(x, y)
        m = self.modulus
        p = 0
        q_all = 0
        for i in range(self.params.iterations):
            v = p + a if (b >> i) & 1 else p
            if v & 1:
                v += m
                q_all |= 1 << i
            p = v >> 1
        return self._outcome(p, q_all, {}, {})

    def monpro_carry_save(self, x: int, y: int) -> Outcome:
        """Recurrence (1) with ``P = S + C`` in carry-save form and a final carry completion."""
        a, b = self._check(x, y)
        m = self.modulus
        choices = (0, m, a, a + m)  # index 2*b_i + q_i
        s = c = 0
        q_all = 0
        for i in range(self.params.iterations):
            bi = (b >> i) & 1
            qi = (s ^ c ^ (a if bi else 0)) & 1
            operand = choices[2 * bi + qi]
            total = s ^ c ^ operand
            carries = (s & c) | (s & operand) | (c & operand)
            assert total & 1 == 0, "sum vector odd: q_i chosen wrongly"
            s, c = total >> 1, carries
            q_all |= qi << i
        width = self.params.datapath_bits
        assert s >> width == 0 and c >> width == 0, "carry-save vectors wider than the datapath"
        p_val, cycles = carry_completion(s, c)
        return self._outcome(p_val, q_all, {"S": s, "C": c},
                             {"carry_completion_cycles": cycles, "carry_completions": 1})


# --------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------
def _zero_low_half_cases(model: Any) -> dict[str, tuple[int, int]]:
    """Operand pairs whose Montgomery-domain product T is a multiple of R (T0 = 0)."""
    m = model.modulus
    r_inv = pow(model.radix, -1, m)
    top = 1 << (m.bit_length() - 1)  # < m since m is odd
    cases = {"a = 0 (T = 0)": (0, m - 1)}
    # aR mod m = bR mod m = 2^(bits-1): T = 2^(2 bits - 2), a multiple of R when R is small enough.
    if (top * top) % model.radix == 0:
        a = top * r_inv % m
        cases["aR = bR = 2^(bits-1) (T0 = 0)"] = (a, a)
    return cases


def _build_textbook(modulus: int, **options: Any) -> Montgomery:
    return Montgomery(MontgomeryParams(modulus, **options))


def _build_cios(modulus: int, **options: Any) -> MontgomeryCIOS:
    return MontgomeryCIOS(CIOSParams(modulus, **options))


def _build_reduced(modulus: int, **options: Any) -> ReducedMontgomery:
    return ReducedMontgomery(ReducedParams(modulus, **options))


def _build_ozturk(modulus: int, **options: Any) -> OzturkMontgomery:
    return OzturkMontgomery(OzturkMontParams(modulus, **options))


def _build_dec(modulus: int, **options: Any) -> DecMpu:
    return DecMpu(DecMpuParams(modulus, **options))


ALGORITHMS = [
    AlgorithmInfo(
        name="montgomery", family="montgomery", seed=SEED_SAN,
        summary="Textbook Montgomery product (Alg. 1): T = AB, Q = T M' mod R, Z = (T + QM)/R, one subtraction",
        cost_formula="3 n-bit products = 3 s^2 word products of w bits (s = ceil(n/w)); 1 conditional subtraction",
        build=_build_textbook,
        options={"bits": "design width n, R = 2^n (default: modulus width)",
                 "word_bits": "word size used to state the cost (default 64)"},
        odd_modulus_only=True, edge_cases=_zero_low_half_cases),
    AlgorithmInfo(
        name="montgomery-cios", family="montgomery", seed=SEED_SAN,
        summary="Word-serial Montgomery, Coarsely Integrated Operand Scanning, one word of m0' per step",
        cost_formula="2 s^2 + s word products of w bits (s = ceil(n/w)); 1 conditional subtraction",
        build=_build_cios,
        options={"word_bits": "word size w (default 64)", "words": "fixed number of words s (design width)"},
        odd_modulus_only=True, edge_cases=_zero_low_half_cases),
    AlgorithmInfo(
        name="montgomery-reduced", family="montgomery", seed=SEED_SAN,
        summary="Reduced Montgomery (Alg. 2): only the partial products the result needs; carry = [T0 != 0]",
        cost_formula="s^2 (T) + s(s+1)/2 (Q0) + s^2 - (s-1)(s-2)/2 (S1) word products of d bits",
        build=_build_reduced,
        options={"word_bits": "word size d (default 16)", "words": "fixed number of words s (design width)"},
        heavy=True, odd_modulus_only=True, edge_cases=_zero_low_half_cases),
    AlgorithmInfo(
        name="montgomery-ozturk", family="montgomery", seed=SEED_SAN,
        summary="Low-latency Montgomery on Ozturk RBR digits (Alg. 4/6), true low carry, redundant output < 4m",
        cost_formula="(k+1)^2 (t) + k(k+1)/2 (q) + k^2 - (k-4)(k-3)/2 (res) products of d+1 bits",
        build=_build_ozturk,
        options={"word_bits": "digit weight d (16, 32, 64; default 16)",
                 "digits": "k (default: smallest k >= ceil(n/d) with R about 8m)",
                 "feedback": "require outputs < 4m to be valid inputs (default True)"},
        heavy=True, odd_modulus_only=True, edge_cases=_zero_low_half_cases),
    AlgorithmInfo(
        name="dec-mpu", family="montgomery", seed=SEED_PAM,
        summary="DEC PAM bit-serial modular product unit: carry-save, no final subtraction, results < 2m",
        cost_formula="n + extra_bits cycles per product, 3-input adder slice per bit, plus carry completion",
        build=_build_dec,
        options={"extra_bits": "beta = 2^(n + extra_bits) (default 2: beta >= 4m)",
                 "bits": "design width n (default: modulus width)",
                 "carry_save": "carry-save datapath with carry completion (default True)"},
        heavy=True, odd_modulus_only=True, edge_cases=_zero_low_half_cases),
]
