"""Registry face of the RBR family: Ozturk's redundant polynomial multiplication.

Seed: 002_abd2559fcdba976b.txt, Alg. 3 (the product itself lives in
:mod:`modforge.arith.rbr`).  This is a plain integer multiplier: the operands
are cut into ``words`` RBR digits, multiplied with every carry kept local, and
the product's digits are reported; the residue shown by ``modforge modmul``
is the Python oracle's reduction of that product.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Cost, Outcome, check_operand, require_modulus, require_positive
from .rbr import RBRParams, polmul, polsqr
from .registry import AlgorithmInfo


@dataclass(frozen=True)
class PolMulParams:
    modulus: int
    word_bits: int = 16
    redundant_bits: int = 1

    def __post_init__(self) -> None:
        require_modulus(self.modulus)
        require_positive("word_bits", self.word_bits)

    @property
    def rbr(self) -> RBRParams:
        words = -(-self.modulus.bit_length() // self.word_bits)
        return RBRParams(word_bits=self.word_bits, redundant_bits=self.redundant_bits, words=words)


class OzturkPolMul:
    def __init__(self, params: PolMulParams):
        self.params = params
        self.modulus = params.modulus
        self.rbr = params.rbr

    def modmul(self, a: int, b: int) -> Outcome:
        check_operand("a", a, self.modulus)
        check_operand("b", b, self.modulus)
        da, db = self.rbr.to_digits(a), self.rbr.to_digits(b)
        digits = polsqr(self.rbr, da) if a == b else polmul(self.rbr, da, db)
        product = self.rbr.value(digits)
        if product != a * b:
            raise AssertionError("RBR product disagrees with a*b")  # cannot happen: Alg. 3 is exact
        return Outcome(result=product % self.modulus, raw=product, digits=digits,
                       digit_bits=self.rbr.digit_bits, digit_weight_bits=self.rbr.word_bits,
                       stages={"product": product})

    @property
    def redundant_bound(self) -> int:
        return self.rbr.value_bound ** 2

    def cost(self) -> Cost:
        return self.rbr.cost()


ALGORITHMS = [
    AlgorithmInfo(
        name="ozturk-polmul",
        family="rbr",
        seed="002_abd2559fcdba976b.txt Alg. 3 (Ozturk, ePrint 2019/826 Alg. 7)",
        summary="Redundant-representation polynomial multiplication: (k+1)-digit operands, 2k+3 product digits < 2^(d+1)",
        cost_formula="(k+1)^2 word products of (d+r) bits ((k+1)(k+2)/2 squaring); column height <= 3(k+1); "
                     "one split at d bits, no carry beyond the next digit",
        build=lambda modulus, **options: OzturkPolMul(PolMulParams(modulus=modulus, **options)),
        kind="multiplier",
        options={"word_bits": "d (16)", "redundant_bits": "r (1)"},
        heavy=True,
    ),
]
