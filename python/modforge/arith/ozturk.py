"""Ozturk's modular squarer/multiplier for a fixed modulus, with table reduction.

Seeds: 000_e97926a82e6a65ea.txt ("Ozturk multiplier": redundant words and
"modulo reduction using lookup tables"), 002_abd2559fcdba976b.txt Sec. I
(the method needs a fixed modulus and tables precomputed from it) and Alg. 3
(the redundant polynomial product, :mod:`modforge.arith.rbr`).

How one operation goes, bit for bit:

1. The operands are ``words`` RBR digits of ``d + r`` bits at weight
   ``2**(d*i)`` (the competition design: 64 words for 1024 bits plus 2
   redundant words, 16 + 1 bits each).  Their product (``polmul``; or
   ``polsqr`` for a squaring, cross terms doubled) has digits
   ``C_0 .. C_{2*words}``, each ``< 2**(d+r)``.
2. The low ``base_words = ceil(n/d)`` digits stay where they are.  Every
   digit ``C_j`` at or above ``base_words`` is cut into chunks of
   ``lut_bits`` bits; the chunk ``v`` at bit offset ``o`` of digit ``j``
   looks up ``T[j, o][v] = v * 2**(d*j + o) mod M``, an ``n``-bit constant.
   These tables are what "precalculated as a modulo p value" means in the
   seed; their address width is a parameter because it is the knob the
   competition entries turned (LUT6-sized addresses map to LUT RAM).
3. The base digits and all looked-up entries (each cut into ``d``-bit words)
   are summed column by column - an adder tree of ``1 + tables`` inputs per
   column - and one split at ``d`` bits turns the column sums back into RBR
   digits.  No carry travels further than one digit.

The output is congruent to ``a*b`` modulo ``M`` and below
:attr:`OzturkModel.redundant_bound`, which does not depend on the input
(every upper digit of any valid input is reduced), so outputs can be fed back
forever: the bound is a fixed point.  The canonical residue is obtained once,
at the end, by conditional subtractions of ``M * 2**i`` (the quotient is
below ``2**quotient_bits``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .base import (Cost, Outcome, ParameterError, check_operand, require_modulus,
                   require_positive, value_of)
from .rbr import RBRParams, equalize, polmul, polsqr
from .registry import AlgorithmInfo


# The model's tables are Python integers, built as they are used: past this payload (512 MiB, about twice
# that in objects) one command would take the machine's memory (lut_bits = 20 at 1024 bits asked for 8.6 GiB).
MAX_TABLE_BITS = 1 << 32


@dataclass(frozen=True)
class OzturkParams:
    """A fixed modulus and the word layout.

    ``bits`` is the design width ``n`` (defaults to the modulus width); a
    modulus wider than ``bits`` is rejected.  ``redundant_words`` extra digits
    above ``ceil(n/d)`` hold the excess of the redundant result.
    """

    modulus: int
    bits: int | None = None
    word_bits: int = 16
    redundant_bits: int = 1
    redundant_words: int = 2
    lut_bits: int = 6

    def __post_init__(self) -> None:
        require_positive("bits", self.design_bits)
        require_modulus(self.modulus, max_bits=self.design_bits)
        require_positive("word_bits", self.word_bits)
        require_positive("redundant_bits", self.redundant_bits)
        require_positive("redundant_words", self.redundant_words)
        require_positive("lut_bits", self.lut_bits)
        if self.lut_bits > 20:
            raise ParameterError("lut_bits", f"{self.lut_bits}-bit table addresses mean 2^{self.lut_bits} "
                                             "entries per table; at most 20 is supported")
        self.rbr  # builds RBRParams, which checks the carries fit
        table_bits = self.table_count * self.table_entries * self.design_bits
        if table_bits > MAX_TABLE_BITS:
            raise ParameterError("lut_bits", f"{self.table_count} tables of 2^{self.lut_bits} entries of "
                                             f"{self.design_bits} bits hold {table_bits >> 23} MiB; the model "
                                             f"builds at most {MAX_TABLE_BITS >> 23} MiB of tables (fewer "
                                             f"lut_bits)")
        if self.quotient_bound_words() > self.redundant_words:
            raise ParameterError(
                "redundant_words",
                f"{self.redundant_words} redundant word(s) cannot hold the reduced result "
                f"(its excess over {self.base_words} words needs {self.quotient_bound_words()})")

    # -- derived layout ---------------------------------------------------
    @property
    def design_bits(self) -> int:
        return self.bits if self.bits is not None else self.modulus.bit_length()

    @property
    def base_words(self) -> int:
        """``ceil(n / d)``: the non-redundant words (64 for 1024 bits, d = 16)."""
        return -(-self.design_bits // self.word_bits)

    @property
    def words(self) -> int:
        return self.base_words + self.redundant_words

    @cached_property
    def rbr(self) -> RBRParams:
        return RBRParams(word_bits=self.word_bits, redundant_bits=self.redundant_bits, words=self.words)

    @property
    def digit_bits(self) -> int:
        return self.word_bits + self.redundant_bits

    @property
    def reduced_digits(self) -> range:
        """Product digit positions that go through the tables."""
        return range(self.base_words, self.rbr.product_digits)

    @property
    def chunks_per_digit(self) -> int:
        return -(-self.digit_bits // self.lut_bits)

    def chunk_widths(self) -> list[int]:
        widths = []
        left = self.digit_bits
        while left > 0:
            widths.append(min(self.lut_bits, left))
            left -= self.lut_bits
        return widths

    @property
    def table_count(self) -> int:
        return len(self.reduced_digits) * self.chunks_per_digit

    @property
    def table_entries(self) -> int:
        return 1 << self.lut_bits

    @property
    def column_inputs(self) -> int:
        """Adder-tree inputs per result column: the base digit plus one word per table."""
        return 1 + self.table_count

    def result_bound(self) -> int:
        """Exclusive bound on the value of every reduced result."""
        base_max = value_of([self.rbr.digit_max] * self.base_words, self.word_bits)
        return base_max + self.table_count * (self.modulus - 1) + 1

    def quotient_bound_words(self) -> int:
        """Digits above ``base_words`` the reduced result needs (excess over 2^(d*base_words))."""
        excess = (self.result_bound() - 1) >> (self.word_bits * self.base_words)
        words = 0
        while excess:
            words += 1
            excess >>= self.word_bits
        return max(words, 1)

    @property
    def quotient_bits(self) -> int:
        """Bits of ``floor(result / M)``: conditional subtractions in the final conversion."""
        return ((self.result_bound() - 1) // self.modulus).bit_length()


class OzturkModel:
    """Bit-exact Ozturk multiplier for the modulus in ``params``."""

    def __init__(self, params: OzturkParams):
        self.params = params
        self.modulus = params.modulus
        self._tables: dict[tuple[int, int], tuple[int, ...]] = {}

    # -- tables -------------------------------------------------------------
    def table(self, digit: int, offset: int) -> tuple[int, ...]:
        """``T[digit, offset][v] = v * 2**(d*digit + offset) mod M`` for every address ``v``.

        Built from the modulus on first use (the generator's job in hardware).
        """
        key = (digit, offset)
        tab = self._tables.get(key)
        if tab is None:
            if digit not in self.params.reduced_digits or offset % self.params.lut_bits or offset >= self.params.digit_bits:
                raise ParameterError("digit", f"no table for digit {digit} at bit offset {offset}")
            weight = pow(2, self.params.word_bits * digit + offset, self.modulus)
            entries = [0] * self.params.table_entries
            acc = 0
            for v in range(1, self.params.table_entries):
                acc += weight
                if acc >= self.modulus:
                    acc -= self.modulus
                entries[v] = acc
            tab = tuple(entries)
            self._tables[key] = tab
        return tab

    def tables(self) -> dict[tuple[int, int], tuple[int, ...]]:
        """Every table, keyed by (product digit, bit offset)."""
        out = {}
        for j in self.params.reduced_digits:
            for o in range(0, self.params.digit_bits, self.params.lut_bits):
                out[(j, o)] = self.table(j, o)
        return out

    # -- one operation ------------------------------------------------------
    def reduce(self, product: tuple[int, ...]) -> tuple[tuple[int, ...], dict[str, int]]:
        """Table reduction of product digits to ``words`` RBR digits."""
        p = self.params
        d = p.word_bits
        mask = (1 << d) - 1
        columns = [0] * (p.base_words + 1)
        for i in range(p.base_words):
            columns[i] = product[i]
        lookups = 0
        looked_up_sum = 0
        for j in p.reduced_digits:
            digit = product[j]
            for o in range(0, p.digit_bits, p.lut_bits):
                v = (digit >> o) & ((1 << p.lut_bits) - 1)
                entry = self.table(j, o)[v]
                lookups += 1
                looked_up_sum += entry
                for i in range(p.base_words):
                    columns[i] += (entry >> (d * i)) & mask
        # One split at d bits: RBR digits again.
        out = [0] * p.words
        for i in range(p.base_words):
            out[i] += columns[i] & mask
            out[i + 1] += columns[i] >> d
        for i, x in enumerate(out):
            if x > p.rbr.digit_max:
                raise AssertionError(f"digit {i} overflowed its {p.digit_bits} bits")  # ruled out by construction
        stages = {"product": value_of(product, d), "base": value_of(product[:p.base_words], d),
                  "looked_up_sum": looked_up_sum, "lookups": lookups}
        return tuple(out), stages

    def multiply_digits(self, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], dict[str, int]]:
        product = polsqr(self.params.rbr, a) if a == b else polmul(self.params.rbr, a, b)
        return self.reduce(product)

    def to_digits(self, value: int) -> tuple[int, ...]:
        return self.params.rbr.to_digits(value)

    def canonical(self, value: int) -> tuple[int, int]:
        """Final conversion: conditional subtractions of ``M * 2**i``; returns (residue, subtractions)."""
        subtractions = 0
        for i in range(self.params.quotient_bits, -1, -1):
            candidate = self.modulus << i
            if value >= candidate:
                value -= candidate
                subtractions += 1
        return value, subtractions

    def modmul(self, a: int, b: int) -> Outcome:
        check_operand("a", a, self.modulus)
        check_operand("b", b, self.modulus)
        digits, stages = self.multiply_digits(self.to_digits(a), self.to_digits(b))
        raw = value_of(digits, self.params.word_bits)
        result, subs = self.canonical(raw)
        return Outcome(result=result, raw=raw, digits=digits, digit_bits=self.params.digit_bits,
                       digit_weight_bits=self.params.word_bits, stages=stages,
                       events={"final_subtractions": subs})

    def square_chain(self, x: int, t: int) -> tuple[int, list[tuple[int, ...]]]:
        """``x**(2**t) mod M`` by ``t`` redundant squarings; returns (residue, every raw output)."""
        check_operand("x", x, self.modulus)
        digits = self.to_digits(x)
        trace = []
        for _ in range(t):
            digits, _ = self.multiply_digits(digits, digits)
            trace.append(digits)
        return self.canonical(value_of(digits, self.params.word_bits))[0], trace

    @property
    def redundant_bound(self) -> int:
        return self.params.result_bound()

    def cost(self, square: bool = False) -> Cost:
        p = self.params
        mult = p.rbr.cost(square=square)
        return Cost(
            word_products=mult.word_products, product_bits=p.digit_bits,
            adder_tree_inputs=max(mult.adder_tree_inputs, p.column_inputs),
            table_count=p.table_count, table_entries=p.table_entries, table_entry_bits=p.design_bits,
            extra={"words": p.words, "base_words": p.base_words, "square_word_products": p.rbr.cost(square=True).word_products,
                   "product_tree_inputs": mult.adder_tree_inputs, "reduction_tree_inputs": p.column_inputs,
                   "result_bound_bits": (p.result_bound() - 1).bit_length(),
                   "final_subtractions_max": p.quotient_bits + 1})


def _edge_cases(model: OzturkModel) -> dict[str, tuple[int, int]]:
    m = model.modulus
    top = (1 << model.params.design_bits) - 1
    return {"near_width": (min(top, m - 1), m - 2), "half": (m >> 1, (m >> 1) + 1)}


def build(modulus: int, **options) -> OzturkModel:
    return OzturkModel(OzturkParams(modulus=modulus, **options))


ALGORITHMS = [
    AlgorithmInfo(
        name="ozturk",
        family="ozturk",
        seed="000_e97926a82e6a65ea.txt (Ozturk multiplier); 002_abd2559fcdba976b.txt Sec. I, Alg. 3",
        summary="Fixed-modulus RBR multiplier/squarer; upper digits reduced by lookup tables, result redundant",
        cost_formula="words=ceil(n/d)+rw; products words^2 (square words(words+1)/2) of (d+r)-bit; "
                     "tables (2*words+1-ceil(n/d))*ceil((d+r)/lut) of 2^lut entries x n bits; "
                     "reduction tree 1+tables inputs per column",
        build=build,
        options={"bits": "design width n (default: modulus width)", "word_bits": "d (16)",
                 "redundant_bits": "r (1)", "redundant_words": "extra digits (2)",
                 "lut_bits": "table address bits (6)"},
        heavy=True,
        edge_cases=_edge_cases,
    ),
]
