"""Differential tests of the native Montgomery multiplication.

``modforge._native.mont_mul(a, b, m)`` against the Python oracle
``a*b*pow(R, -1, m) % m`` with ``R = 2**(64*L)``, ``L`` the number of 64-bit
limbs of ``m``: named edge cases first, then seeded random cases (the seed is
in every assertion message: rerun one with ``random.Random(seed)``), then the
input checks and the Python face :mod:`modforge.native`.
"""

from __future__ import annotations

import functools
import random

import pytest

from modforge import _native, native
from modforge.arith.base import ParameterError

LIMB = 64


def radix(m: int) -> int:
    return 1 << (LIMB * max(1, -(-m.bit_length() // LIMB)))


@functools.lru_cache(maxsize=None)
def radix_inverse(m: int) -> int:
    return pow(radix(m), -1, m)


def oracle(a: int, b: int, m: int) -> int:
    return a * b * radix_inverse(m) % m


def check(a: int, b: int, m: int, context: str) -> None:
    got = _native.mont_mul(a, b, m)
    want = oracle(a, b, m)
    assert got == want, (
        f"{context}: mont_mul(a, b, m) wrong for m={m:#x} ({m.bit_length()} bits), a={a:#x}, b={b:#x}: "
        f"got {got:#x}, want {want:#x}"
    )


# --- named edge cases -------------------------------------------------------

def _edge_moduli() -> dict[str, int]:
    out = {"3": 3, "5": 5, "7": 7, "2^61-1": (1 << 61) - 1,
           "2^63+1": (1 << 63) + 1, "2^64-1": (1 << 64) - 1, "2^64-59": (1 << 64) - 59,
           "2^64+1": (1 << 64) + 1, "2^65-1": (1 << 65) - 1,
           "2^127-1": (1 << 127) - 1, "2^255-19": (1 << 255) - 19,
           "p521": (1 << 521) - 1}
    for k in (1, 2, 3, 4, 8, 16, 32, 64):
        w = LIMB * k
        out[f"2^{w}-1"] = (1 << w) - 1  # all-ones limbs
        out[f"2^{w}+1"] = (1 << w) + 1  # one limb more than 2^{w}-1, top limb 1
        out[f"2^{w - 1}+1"] = (1 << (w - 1)) + 1  # top bit of the top limb set
        if k > 1:
            out[f"2^{w}-2^64+1"] = (1 << w) - (1 << LIMB) + 1  # low limb 1, other limbs all ones
            out[f"2^{w - 64}+2^64-1"] = (1 << (w - 64)) + (1 << LIMB) - 1  # k limbs, top limb 1
    return out


EDGE_MODULI = _edge_moduli()


def edge_operands(m: int) -> list[int]:
    r = radix(m)
    limbs = r.bit_length() // LIMB
    ops = {0, 1, 2, 3, m - 1, m - 2, m // 2, (m + 1) // 2, r % m, r * r % m}
    for k in sorted({1, 2, limbs // 2, limbs - 1, limbs} - {0}):
        ops.add(((1 << (LIMB * k)) - 1) % m)  # k all-ones low limbs
        ops.add((1 << (LIMB * k - 1)) % m)  # top bit of limb k-1
    return sorted(x for x in ops if 0 <= x < m)


@pytest.mark.parametrize("name", sorted(EDGE_MODULI))
def test_edge_cases(name: str) -> None:
    m = EDGE_MODULI[name]
    ops = edge_operands(m)
    for a in ops:
        for b in ops:
            check(a, b, m, f"edge modulus {name}")


def test_every_operand_pair_small_moduli() -> None:
    for m in range(3, 64, 2):
        for a in range(m):
            for b in range(m):
                check(a, b, m, "exhaustive small modulus")


def test_montgomery_form_round_trip() -> None:
    rng = random.Random(2024)
    for bits in (5, 64, 65, 130, 1024, 4096):
        m = rng.getrandbits(bits) | (1 << (bits - 1)) | 1
        r = radix(m)
        for _ in range(20):
            x = rng.randrange(m)
            xm = _native.mont_mul(x, r * r % m, m)  # to Montgomery form
            assert xm == x * r % m, f"seed=2024 bits={bits}"
            assert _native.mont_mul(xm, 1, m) == x, f"seed=2024 bits={bits}"


# --- seeded random cases ----------------------------------------------------

RANDOM_BITS = [3, 4, 5, 7, 8, 13, 16, 31, 32, 33, 63, 64, 65, 96, 127, 128, 129, 191, 192, 193,
               255, 256, 257, 384, 511, 512, 513, 521, 767, 1024, 1025, 1279, 1536, 2047, 2048,
               2049, 3071, 3072, 4095, 4096]
MODULI_PER_SIZE = 8
PAIRS_PER_MODULUS = 12


@pytest.mark.parametrize("bits", RANDOM_BITS)
def test_random(bits: int) -> None:
    seed = 0x6D6F64 * 10_000 + bits
    rng = random.Random(seed)
    for i in range(MODULI_PER_SIZE):
        m = rng.getrandbits(bits) | (1 << (bits - 1)) | 1
        for j in range(PAIRS_PER_MODULUS):
            # Mostly uniform operands, sometimes with a sparse or dense bit pattern.
            kind = rng.randrange(4)
            if kind == 3:
                a = (rng.getrandbits(bits) & rng.getrandbits(bits)) % m
                b = (m - 1 - rng.getrandbits(min(bits, 8))) % m
            else:
                a, b = rng.randrange(m), rng.randrange(m)
            check(a, b, m, f"seed={seed} bits={bits} modulus #{i} pair #{j}")


# --- input checks -----------------------------------------------------------

@pytest.mark.parametrize("m", [4, 10, 1 << 64, (1 << 4096) - 2])
def test_even_modulus(m: int) -> None:
    with pytest.raises(ValueError, match=r"^modulus: must be odd for Montgomery reduction") as info:
        _native.mont_mul(1, 1, m)
    assert f"even value of {m.bit_length()} bits" in str(info.value)


@pytest.mark.parametrize("m", [1, 0, -1, -7, -(1 << 200)])
def test_too_small_modulus(m: int) -> None:
    with pytest.raises(ValueError, match=r"^modulus: must be at least 3, got "):
        _native.mont_mul(0, 0, m)


@pytest.mark.parametrize("name", ["a", "b"])
@pytest.mark.parametrize("value, got", [
    (13, "a value of 4 bits"),
    (14, "a value of 4 bits"),
    (1 << 300, "a value of 301 bits"),
    (-1, "a negative value"),
    (-(1 << 100), "a negative value"),
])
def test_operand_out_of_range(name: str, value: int, got: str) -> None:
    args = {"a": 1, "b": 1, "m": 13, name: value}
    with pytest.raises(ValueError) as info:
        _native.mont_mul(args["a"], args["b"], args["m"])
    assert str(info.value) == f"{name}: operand out of range: need 0 <= {name} < modulus, got {got}"


@pytest.mark.parametrize("bad, type_name", [(1.0, "float"), ("7", "str"), (True, "bool"), (None, "NoneType")])
@pytest.mark.parametrize("position", [0, 1, 2])
def test_non_integer(bad: object, type_name: str, position: int) -> None:
    args: list[object] = [1, 2, 13]
    args[position] = bad
    name = ("a", "b", "modulus")[position]
    with pytest.raises(ValueError) as info:
        _native.mont_mul(*args)
    assert str(info.value) == f"{name}: must be an integer, got {type_name}"


def test_modulus_checked_before_operands() -> None:
    with pytest.raises(ValueError, match=r"^modulus: "):
        _native.mont_mul(100, 100, 10)


def test_module_surface() -> None:
    assert _native.LIMB_BITS == 64
    assert _native.__version__ == "0.1.0"
    assert _native.limb_count(3) == 1
    assert _native.limb_count((1 << 64) - 1) == 1
    assert _native.limb_count((1 << 64) + 1) == 2
    assert _native.limb_count((1 << 4096) - 1) == 64


# --- the Python face --------------------------------------------------------

def test_face_calls_native() -> None:
    assert native.available()
    m = (1 << 130) + 5  # 3 limbs
    assert native.montgomery_radix(m) == 1 << 192
    assert native.limb_count(m) == 3
    assert native.mont_mul(12345, 67890, m) == oracle(12345, 67890, m)


@pytest.mark.parametrize("args, param", [((1, 1, 8), "modulus"), ((9, 1, 7), "a"), ((1, -1, 7), "b")])
def test_face_raises_parameter_error(args: tuple[int, int, int], param: str) -> None:
    with pytest.raises(ParameterError) as info:
        native.mont_mul(*args)
    assert info.value.param == param
    assert str(info.value).startswith(f"{param}: ")


def test_face_without_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "_ext", None)
    monkeypatch.setattr(native, "_import_error", ImportError("No module named 'modforge._native'"))
    assert not native.available()
    with pytest.raises(ImportError, match=r"the native engine is not built: run `make`") as info:
        native.mont_mul(1, 1, 7)
    assert isinstance(info.value, native.NativeUnavailableError)
