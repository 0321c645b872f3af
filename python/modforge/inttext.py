"""Integers to and from text: the one syntax every number modforge reads is in, and decimal of any length.

Python refuses ``int(text)`` and ``str(value)`` past ``sys.get_int_max_str_digits()`` decimal digits
(4300 unless changed, for the whole process); a 16384-bit modulus has up to 4933.  gmpy2 converts
without that limit, so what modforge reads and writes does not depend on it, and modforge leaves the
setting alone (it belongs to the program that imports us).
"""

from __future__ import annotations

import re
from typing import Any

import gmpy2

from .arith.base import ParameterError

# [0-9], not \d: \d also takes the digits of every other script ('١٠' would be read as 10).
_DECIMAL = re.compile(r"-?[0-9]+")


def decimal_to_int(text: str) -> int:
    """ASCII decimal (an optional '-', then digits) -> int; ValueError otherwise.

    Also usable as ``json.loads(..., parse_int=decimal_to_int)``: JSON integers are this syntax."""
    if not _DECIMAL.fullmatch(text):
        raise ValueError(f"not an ASCII decimal integer: {brief_text(text)}")
    return int(gmpy2.mpz(text, 10))


def int_to_decimal(value: int) -> str:
    """``str(value)`` without the interpreter's digit limit."""
    return gmpy2.mpz(value).digits(10)


# A number in a message is written out up to this many digits; past it, its width says more.
_BRIEF_DIGITS = 30


def brief(value: Any, limit: int = 40) -> str:
    """``value`` for a message: an int in decimal when short, else its width (``a 16610-bit number``);
    anything else as its repr, cut to about ``limit`` characters (a 5000-digit argument or JSON field,
    repeated in full, helps nobody, and ``str()`` of one raises)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) < 10 ** _BRIEF_DIGITS:
            return str(value)
        return f"{'a negative' if value < 0 else 'a'} {abs(value).bit_length()}-bit number"
    try:
        text = repr(value)
    except ValueError:                  # a list or dict holding such an int
        return f"a JSON {type(value).__name__}"
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def brief_text(text: str, limit: int = 40) -> str:
    """``repr(text)``, cut to about ``limit`` characters."""
    return brief(text, limit)


# The widest number any command takes is a 16384-bit modulus (or a residue below one).  Text for more
# than twice that is refused by its length, before it is converted; below that, each command's own range
# check names the problem ("is 16385 bits wide").
MAX_NUMBER_BITS = 2 * 16384
MAX_DECIMAL_DIGITS = len(int_to_decimal(1 << MAX_NUMBER_BITS))
MAX_HEX_DIGITS = MAX_NUMBER_BITS // 4

# ASCII only ([0-9], not \d), no '+', no '_' separators: the one syntax every number is read in.
_NUMBER = re.compile(r"-?(?:0[xX](?P<hex>[0-9a-fA-F]+)|(?P<dec>[0-9]+))")


def _syntax_hint(text: str) -> str:
    """What is wrong with a number that is not one, where it is a near miss."""
    if text.startswith("+"):
        return "no '+' sign"
    if "_" in text:
        return "no '_' separators"
    if not text.isascii():
        return "ASCII digits only"
    return ""


def parse_int(text: str, what: str, *, expected: str = "a decimal or 0x-hex integer", forms: str = "") -> int:
    """ASCII decimal or 0x-hex, optionally negative -> int; ParameterError naming ``what`` otherwise.

    Not Python's ``int()``: that also takes '+', '_' and the digits of every script, and stops at
    4300 decimal digits (a 16384-bit modulus has up to 4933)."""
    t = text.strip()
    m = _NUMBER.fullmatch(t)
    if m is None:
        notes = "; ".join(n for n in (forms, _syntax_hint(t)) if n)
        raise ParameterError(what, f"not {expected}: {brief_text(text)}" + (f" ({notes})" if notes else ""))
    digits, base, limit = (m["hex"], "hex", MAX_HEX_DIGITS) if m["hex"] is not None else \
        (m["dec"], "decimal", MAX_DECIMAL_DIGITS)
    if len(digits) > limit:
        raise ParameterError(what, f"too long: {len(digits)} {base} digits, at most {limit} are read (no modforge "
                                   f"input is wider than 16384 bits)")
    if m["hex"] is not None:
        value = int(digits, 16)           # a power-of-two base: no digit limit
        return -value if t.startswith("-") else value
    return decimal_to_int(t)
