"""Shared vocabulary of the bit-exact models.

Every model in :mod:`modforge.arith` is built from one frozen parameter
value and answers three questions the same way:

* ``modmul(a, b) -> Outcome``: the canonical residue, the raw (possibly
  redundant) value the algorithm itself produced, its digit form and the
  named intermediate values a simulation can be compared against stage by
  stage;
* ``cost() -> Cost``: what one operation costs in the seeds' own units
  (word-sized products, i.e. DSP blocks; table entries and bits; adder-tree
  height), every number derived from the parameters;
* ``redundant_bound``: an exclusive upper bound on every raw output, the
  number that makes long chains of squarings safe.

Bad parameters raise :class:`ParameterError`, whose message starts with the
name of the offending parameter so a user (and a test) can tell which one.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import gmpy2


class ParameterError(ValueError):
    """A parameter or operand is invalid; ``param`` names it."""

    def __init__(self, param: str, problem: str):
        super().__init__(f"{param}: {problem}")
        self.param = param
        self.problem = problem


_MPZ = type(gmpy2.mpz(0))


def exact_int(value: Any) -> int | None:
    """``value`` as a Python int when it is an int or a ``gmpy2.mpz`` (what this field's code hands
    around), else None.  bool is not a number here.  Other types with ``__index__`` (numpy's fixed-width
    integers) are refused: they wrap silently (``1 << np.int64(64)`` is 0) and lack ``int``'s methods."""
    if isinstance(value, bool):
        return None
    if type(value) is int:
        return value
    if isinstance(value, (int, _MPZ)):
        return operator.index(value)
    return None


def require_int(name: str, value: Any) -> int:
    """An integer parameter as a Python int (``gmpy2.mpz`` and other exact integer types accepted)."""
    out = exact_int(value)
    if out is None:
        raise ParameterError(name, f"must be an integer, got {type(value).__name__}")
    return out


def require_seconds(name: str, value: Any) -> float:
    """A positive, finite number of seconds (a duration, an interval): nan, inf, bool and <= 0 refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
        raise ParameterError(name, f"must be a positive number of seconds, got {value!r}")
    return float(value)


def require_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ParameterError(name, f"must be true or false, got {value!r}")
    return value


def require_positive(name: str, value: Any) -> int:
    value = require_int(name, value)
    if value <= 0:
        raise ParameterError(name, f"must be positive, got {value}")
    return value


def require_modulus(value: Any, *, name: str = "modulus", odd: bool = False,
                    max_bits: int | None = None) -> int:
    """Check a modulus: an integer > 2 (odd when ``odd``), at most ``max_bits`` wide."""
    value = require_int(name, value)
    if value < 3:
        raise ParameterError(name, f"must be at least 3, got {value}")
    if odd and value % 2 == 0:
        raise ParameterError(name, "must be odd for Montgomery reduction (it needs an inverse modulo a power of two), "
                                   f"got an even value of {value.bit_length()} bits")
    if max_bits is not None and value.bit_length() > max_bits:
        raise ParameterError(name, f"is {value.bit_length()} bits wide, wider than the design's {max_bits} bits")
    return value


def check_operand(name: str, value: Any, bound: int, bound_text: str = "modulus") -> int:
    """Check ``0 <= value < bound``; ``bound_text`` says what the bound is."""
    value = require_int(name, value)
    if not 0 <= value < bound:
        got = "a negative value" if value < 0 else f"a value of {value.bit_length()} bits"
        raise ParameterError(name, f"operand out of range: need 0 <= {name} < {bound_text}, got {got}")
    return value


@dataclass(frozen=True)
class Cost:
    """Cost of one operation, in the units the seed documents use.

    ``word_products`` counts multiplications of ``product_bits`` x
    ``product_bits`` (one DSP block each in the FPGA designs).  Tables are
    ``table_count`` tables of ``table_entries`` entries of ``table_entry_bits``
    bits.  ``adder_tree_inputs`` is the height of the tallest column that an
    adder/compressor tree has to sum.  ``extra`` holds family-specific counts
    (folding-stage widths, iteration counts...), each documented by the model.
    """

    word_products: int
    product_bits: int
    adder_tree_inputs: int = 0
    table_count: int = 0
    table_entries: int = 0
    table_entry_bits: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def table_bits(self) -> int:
        return self.table_count * self.table_entries * self.table_entry_bits

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "word_products": self.word_products,
            "product_bits": self.product_bits,
            "adder_tree_inputs": self.adder_tree_inputs,
            "table_count": self.table_count,
            "table_entries": self.table_entries,
            "table_entry_bits": self.table_entry_bits,
            "table_bits": self.table_bits,
        }
        out.update(self.extra)
        return out


@dataclass(frozen=True)
class Outcome:
    """What one modular multiplication produced.

    ``result`` is the canonical residue in ``[0, m)``; ``raw`` is the value
    the algorithm outputs before any final conversion (redundant, possibly
    ``>= m``; equal to ``result`` for algorithms with canonical output);
    ``digits`` is the raw value's digit vector, least significant first, when
    the algorithm keeps one (``digit_bits`` wide digits at weight
    ``2**(digit_weight_bits*i)``).  ``stages`` names intermediate values;
    ``events`` counts rare paths taken (fallbacks, extra subtractions).
    """

    result: int
    raw: int
    digits: tuple[int, ...] | None = None
    digit_bits: int | None = None
    digit_weight_bits: int | None = None
    stages: dict[str, int] = field(default_factory=dict)
    events: dict[str, int] = field(default_factory=dict)


@runtime_checkable
class ModMulModel(Protocol):
    """What every registered model offers (see :mod:`modforge.arith.registry`)."""

    modulus: int

    def modmul(self, a: int, b: int) -> Outcome: ...

    def cost(self) -> Cost: ...

    @property
    def redundant_bound(self) -> int: ...


def digits_of(value: int, digit_bits: int, count: int) -> tuple[int, ...]:
    """Split a non-negative ``value`` into ``count`` canonical digits (LSB first)."""
    if value < 0:
        raise ParameterError("value", "must be non-negative")
    mask = (1 << digit_bits) - 1
    out = tuple((value >> (digit_bits * i)) & mask for i in range(count))
    if value >> (digit_bits * count):
        raise ParameterError("value", f"does not fit in {count} digits of {digit_bits} bits")
    return out


def value_of(digits: tuple[int, ...] | list[int], weight_bits: int) -> int:
    """Value of a digit vector (LSB first) whose digit i has weight ``2**(weight_bits*i)``."""
    total = 0
    for i in range(len(digits) - 1, -1, -1):
        total = (total << weight_bits) + digits[i]
    return total
