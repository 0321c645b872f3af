"""The native constant-time RSA kernel (``modforge.native.rsa_crt_halves``) against ``pow``.

The generic kernel tests in ``test_rsa_exp.py`` / ``test_rsa_private.py`` already run over it (``KERNELS``);
these add the kernel's own edges: every size 1024..4096, messages 0, 1, n-1 and multiples of a prime,
exponents 0, 1 and all ones at the full public length, unequal and small primes, and its input checks.
"""

from __future__ import annotations

import random

import gmpy2
import pytest

from modforge import native
from modforge.arith.base import ParameterError

pytestmark = pytest.mark.skipif(not native.available(), reason="native engine not built")


def _prime(bits: int, rnd: random.Random) -> int:
    while True:
        c = rnd.getrandbits(bits) | (1 << (bits - 1)) | 1
        if gmpy2.is_prime(c):
            return c


def _check(c: int, p: int, dp: int, q: int, dq: int, eb: int) -> None:
    xp, xq = native.rsa_crt_halves(c, p, dp, q, dq, eb)
    assert xp == pow(c, dp, p)
    assert xq == pow(c, dq, q)


@pytest.mark.parametrize("bits", [1024, 1536, 2048, 3072, 4096])
def test_equals_pow(bits: int) -> None:
    rnd = random.Random(bits)
    p, q = _prime(bits // 2, rnd), _prime(bits - bits // 2, rnd)
    n = p * q
    eb = max(p.bit_length(), q.bit_length()) + 64
    msgs = [0, 1, 2, n - 1, n - 2, p, q, 2 * p, p * (q - 1)] + [rnd.randrange(n) for _ in range(4)]
    for c in msgs:
        dp, dq = rnd.getrandbits(eb), rnd.getrandbits(eb)
        _check(c, p, dp, q, dq, eb)
    top = (1 << eb) - 1
    c = rnd.randrange(n)
    for dp, dq in [(0, 0), (1, 1), (top, top), (0, top), (top, 1)]:
        _check(c, p, dp, q, dq, eb)


def test_unequal_and_small_primes() -> None:
    rnd = random.Random(7)
    for pb, qb in [(512, 700), (700, 512), (64, 65), (3, 5), (130, 300), (2048, 1024), (255, 257)]:
        p = _prime(pb, rnd) if pb > 3 else 5
        q = _prime(qb, rnd) if qb > 5 else 7
        if p == q:
            continue
        eb = max(p.bit_length(), q.bit_length()) + rnd.choice([0, 1, 64, 256])
        for c in (0, 1, p * q - 1, rnd.randrange(p * q)):
            _check(c, p, rnd.getrandbits(eb), q, rnd.getrandbits(eb), eb)


def test_exp_bits_zero_and_short() -> None:
    rnd = random.Random(3)
    p, q = _prime(512, rnd), _prime(512, rnd)
    c = rnd.randrange(p * q)
    assert native.rsa_crt_halves(c, p, 0, q, 0, 0) == (1, 1)
    _check(c, p, 5, q, 6, 3)


@pytest.mark.parametrize(
    "args, param",
    [
        ((5, 4, 1, 7, 1, 8), "p"),            # even
        ((5, 11, 1, 1, 1, 8), "q"),           # < 3
        ((77, 11, 1, 7, 1, 8), "c"),          # c >= p*q
        ((-1, 11, 1, 7, 1, 8), "c"),
        ((5, 11, 256, 7, 1, 8), "dp"),        # >= 2**exp_bits
        ((5, 11, 1, 7, -1, 8), "dq"),
        ((5, 11, 1, 7, 1, 4 + 257), "exp_bits"),
        ((5, 1 << 2049 | 1, 1, 7, 1, 8), "p"),
        ((5, 11, 1, 7, 1, -1), "exp_bits"),
        ((5.0, 11, 1, 7, 1, 8), "c"),
        ((True, 11, 1, 7, 1, 8), "c"),
    ],
)
def test_errors_name_the_parameter(args: tuple, param: str) -> None:
    with pytest.raises(ParameterError) as info:
        native.rsa_crt_halves(*args)
    assert info.value.param == param


def test_registered_as_native_and_auto() -> None:
    from modforge.rsa.exp import backend_name, resolve_backend

    assert resolve_backend("native") is native.rsa_crt_halves
    assert backend_name("auto") == "native"


@pytest.mark.skipif(
    __import__("os").environ.get("MODFORGE_CT_VALGRIND") != "1" or __import__("shutil").which("valgrind") is None,
    reason="set MODFORGE_CT_VALGRIND=1 (needs valgrind and cargo; builds the kernel twice, about a minute)",
)
def test_valgrind_constant_time() -> None:
    """native/ct/valgrind_ct.sh: no secret-dependent branch or address in the kernel, and the deliberate
    leak of the ``ct-leak-test`` build is caught."""
    import pathlib
    import subprocess

    script = pathlib.Path(__file__).resolve().parents[2] / "native" / "ct" / "valgrind_ct.sh"
    run = subprocess.run([str(script)], capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert "normal build 0," in run.stdout
