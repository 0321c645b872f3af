"""The single-operation fast paths of the native rings against gmpy2.

``mul``/``sqr`` are two scalar Montgomery products with ``R^2 mod N``
precomputed; ``sqr_n`` with ``k < 64`` keeps the GIL and leaves the IFMA
fold's digits through one REDC and one product; integers come in and out
through ``_PyLong_AsByteArray`` / ``_PyLong_FromByteArray``.  These check the
paths on every backend, small moduli included, and that the slow, checked
conversion still handles what the fast one declines (int subclasses, bools,
out-of-range values).
"""

from __future__ import annotations

import random

import gmpy2
import pytest

from modforge import native
from modforge.arith.base import ParameterError
from modforge.engine import native_backend

pytestmark = pytest.mark.skipif(not native.available(), reason="native engine not built")

ALL = native.supported_backends() if native.available() else []


def _moduli() -> list[int]:
    rnd = random.Random(11)
    out = [3, 5, (1 << 64) - 59, (1 << 127) - 1]
    for bits in (255, 256, 257, 511, 1024, 2048, 3071, 4096):
        out.append(rnd.getrandbits(bits) | (1 << (bits - 1)) | 1)
    out.append((1 << 4096) - 1)  # all-ones 4096-bit modulus
    return out


@pytest.mark.parametrize("backend", ALL)
def test_mul_sqr_sqr_n_small_k(backend: str) -> None:
    rnd = random.Random(backend)
    for n in _moduli():
        if backend not in ("portable", "fold-portable", "fold32-portable") and n.bit_length() < 256:
            continue
        if backend in ("fold-portable", "fold32-portable") and n.bit_length() > 1100:
            continue
        ring = native.Ring(n, backend)
        ops = [0, 1, n - 1, n - 2, (n - 1) // 2] + [rnd.randrange(n) for _ in range(3)]
        for x in ops:
            y = rnd.randrange(n)
            assert ring.mul(x, y) == x * y % n
            assert ring.mul(x, x) == x * x % n
            assert ring.sqr(x) == x * x % n
            for k in (0, 1, 2, 3, 5, 63, 64, 65):
                assert ring.sqr_n(x, k) == int(gmpy2.powmod(x, 1 << k, n)), (n.bit_length(), x, k)


class MyInt(int):
    pass


@pytest.mark.parametrize("backend", [b for b in ALL if b not in ("fold-portable", "fold32-portable")])
def test_slow_path_inputs(backend: str) -> None:
    n = random.Random(5).getrandbits(1024) | (1 << 1023) | 1
    ring = native.Ring(n, backend)
    x, y = 12345678901234567890123, n - 3
    assert ring.mul(MyInt(x), y) == x * y % n
    assert ring.sqr_n(MyInt(x), 2) == pow(x, 4, n)
    for bad, what in [(True, "must be an integer"), (n, "operand out of range"), (-1, "operand out of range"),
                      (1 << 5000, "operand out of range"), (2.0, "must be an integer")]:
        with pytest.raises(ParameterError) as info:
            ring.mul(bad, 1)
        assert info.value.param == "x" and what in str(info.value)
        with pytest.raises(ParameterError) as info:
            ring.mul(1, bad)
        assert info.value.param == "y"


def test_backend_class_calls() -> None:
    n = random.Random(9).getrandbits(2048) | (1 << 2047) | 1
    for cls in (native_backend.PortableBackend, native_backend.AdxBackend, native_backend.IfmaBackend,
                native_backend.Avx512fBackend):
        if not cls.supported():
            continue
        b = cls(n)
        x, y = 3**1000 % n, 7**900 % n
        assert b.mul(x, y) == x * y % n
        assert b.sqr_n(x, 1) == x * x % n
        assert b.sqr(y) == y * y % n


@pytest.mark.parametrize("backend", [b for b in ALL if b not in ("fold-portable", "fold32-portable")])
def test_multiexp_against_gmpy2(backend: str) -> None:
    """Lively bases (2..n-2: a 0 among them made most expected products 0 before) against gmpy2 on every
    case, on both sides of the 64-base switch from per-base tables to buckets; 0, 1 and n-1 are added one at
    a time with exponents that leave the product lively (0^0, 1^e, (n-1)^even)."""
    seed = "multiexp" + backend
    rnd = random.Random(seed)
    for bits in (256, 1024, 2048, 4096):
        n = rnd.getrandbits(bits) | (1 << (bits - 1)) | 1
        ring = native.Ring(n, backend)
        cases = [(count, ebits) for count in (1, 2, 3, 8) for ebits in (1, 5, 64, 128, 700)] + [(1, 2100), (3, 2100)]
        cases += [(count, ebits) for count in (63, 64, 65, 130) for ebits in (64, 300)]
        for count, ebits in cases:
            xs = [rnd.randrange(2, n - 1) for _ in range(count)]
            es = [rnd.getrandbits(ebits) | 1 for _ in range(count)]
            if count >= 3:
                for x, e in ((0, 0), (1, rnd.getrandbits(ebits)), (n - 1, 2 * rnd.getrandbits(ebits))):
                    at = rnd.randrange(len(xs) + 1)
                    xs.insert(at, x)
                    es.insert(at, e)
            want = gmpy2.mpz(1)
            for x, e in zip(xs, es):
                want = want * gmpy2.powmod(x, e, n) % n
            assert int(want) not in (0, 1, n - 1), (seed, bits, count, ebits)
            assert ring.multiexp(xs, es) == int(want), (seed, bits, count, ebits)
        assert ring.multiexp([], []) == 1 % n


def test_multiexp_errors_and_backend() -> None:
    n = (1 << 521) - 1
    ring = native.Ring(n, "portable")
    with pytest.raises(ParameterError) as info:
        ring.multiexp([1, 2], [3])
    assert info.value.param == "exponents"
    with pytest.raises(ParameterError) as info:
        ring.multiexp([n], [3])
    assert info.value.param == "bases"
    with pytest.raises(ParameterError) as info:
        ring.multiexp([2], [-1])
    assert info.value.param == "exponents"
    assert ring.multiexp(iter([2, 3]), (x for x in [10, 20])) == 2**10 * 3**20 % n
    b = native_backend.PortableBackend(n)
    assert b.multiexp([5], [n]) == pow(5, n, n)
