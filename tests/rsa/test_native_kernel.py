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


# ------------------------------------------------------------------ the key prepared once (RsaKey)


def _key(bits: int, seed: int):
    from modforge.rsa import RSAPrivateKey

    rnd = random.Random(seed)
    while True:
        p, q = _prime(bits // 2, rnd), _prime(bits - bits // 2, rnd)
        try:
            return RSAPrivateKey.from_numbers(p=p, q=q, e=65537), rnd
        except ParameterError:
            continue


@pytest.mark.parametrize("bits", [1024, 2048, 3072, 4096])
def test_prepared_key_private_equals_pow(bits: int) -> None:
    key, rnd = _key(bits, 40 + bits)
    ready = native.rsa_crt_halves.prepare(key.p, key.q, key.qinv, key.e)
    eb = max(key.p.bit_length(), key.q.bit_length()) + 64
    for c in [0, 1, 2, key.n - 1, key.p, key.q, *(rnd.randrange(key.n) for _ in range(4))]:
        r = rnd.getrandbits(64)
        dp, dq = key.dp + r * (key.p - 1), key.dq + r * (key.q - 1)
        assert ready.halves(c, dp, dq, eb) == (pow(c, key.dp, key.p), pow(c, key.dq, key.q))
        want = pow(c, key.d, key.n)
        assert ready.private(c, dp, dq, eb) == want
        assert ready.private(c, key.dp, key.dq, eb - 64) == want
        assert ready.recombine(c % key.p, c % key.q) == c
        assert ready.check(want, c)
        assert not ready.check(want, (c + 1) % key.n)


@pytest.mark.parametrize("fault", [1, 2])
def test_prepared_key_withholds_a_faulty_result(fault: int) -> None:
    """The native check: a flipped bit in either half gives ``None``, and the faulty value stays native."""
    key, rnd = _key(2048, 5)
    ready = native.rsa_crt_halves.prepare(key.p, key.q, key.qinv, key.e)
    eb = key.p.bit_length()
    for c in (1, rnd.randrange(key.n)):
        assert ready.private(c, key.dp, key.dq, eb, _fault=fault) is None
        assert ready.private(c, key.dp, key.dq, eb) == pow(c, key.d, key.n)


def test_unequal_primes_prepared() -> None:
    rnd = random.Random(9)
    for pb, qb in [(512, 700), (700, 512), (300, 1100)]:
        p, q = _prime(pb, rnd), _prime(qb, rnd)
        from modforge.rsa import RSAPrivateKey

        try:
            key = RSAPrivateKey.from_numbers(p=p, q=q, e=65537)
        except ParameterError:
            continue
        ready = native.rsa_crt_halves.prepare(key.p, key.q, key.qinv, key.e)
        eb = max(pb, qb)
        for c in (0, 1, key.n - 1, rnd.randrange(key.n)):
            assert ready.private(c, key.dp, key.dq, eb) == pow(c, key.d, key.n), (pb, qb)


@pytest.mark.parametrize(
    "args, param",
    [
        ((4, 7, 1, 65537), "p"),
        ((11, 11, 1, 65537), "q"),
        ((11, 7, 3, 65537), "qinv"),          # 3 * 7 % 11 != 1
        ((11, 7, 8, 1), "e"),                 # 8 * 7 = 56 = 1 mod 11; e < 3
        ((11, 7, 8, 77), "e"),                # e >= n
    ],
)
def test_prepare_errors_name_the_parameter(args: tuple, param: str) -> None:
    with pytest.raises(ParameterError) as info:
        native.rsa_crt_halves.prepare(*args)
    assert info.value.param == param


def test_prepared_operand_errors() -> None:
    key, _ = _key(1024, 1)
    ready = native.rsa_crt_halves.prepare(key.p, key.q, key.qinv, key.e)
    eb = 512
    for args, param in [((key.n, 1, 1, eb), "c"), ((-1, 1, 1, eb), "c"), ((5, 1 << eb, 1, eb), "dp"),
                        ((5, 1, -1, eb), "dq"), ((5, 1, 1, eb + 257), "exp_bits")]:
        with pytest.raises(ParameterError) as info:
            ready.private(*args)
        assert info.value.param == param


def test_prepared_key_is_cached_and_never_pickled() -> None:
    import pickle

    from modforge.rsa import exp, rsasp1

    key, _ = _key(1024, 2)
    assert rsasp1(key, 12345) == pow(12345, key.d, key.n)
    first = exp.prepared(key, "native")
    assert first is not None and exp.prepared(key, "native") is first
    clone = pickle.loads(pickle.dumps(key))
    assert clone == key and "_prepared" not in clone.__dict__
    assert rsasp1(clone, 12345) == pow(12345, key.d, key.n)


def test_a_prepared_fault_raises_fault_error() -> None:
    """The Python side of the native check: ``private`` returning ``None`` becomes FaultError."""
    from modforge.rsa import FaultError, exp, rsasp1

    class FaultyNative:
        def __call__(self, *args):
            return native.rsa_crt_halves(*args)

        def prepare(self, p, q, qinv, e):
            ready = native.rsa_crt_halves.prepare(p, q, qinv, e)

            class Faulty:
                halves = ready.halves

                @staticmethod
                def private(c, dp, dq, bits):
                    return ready.private(c, dp, dq, bits, _fault=1)

            return Faulty()

    key, _ = _key(1024, 3)
    exp.register_backend("faulty-native", FaultyNative())
    try:
        with pytest.raises(FaultError):
            rsasp1(key, 99, backend="faulty-native")
    finally:
        exp.unregister_backend("faulty-native")


def test_valgrind_constant_time() -> None:
    """native/ct/valgrind_ct.sh: no secret-dependent branch or address in the kernel, and both deliberate
    leaks (a branch on an exponent digit, ``ct-leak-test``; a table read at the secret index, ``ct-leak-index``)
    are caught.  Runs wherever valgrind and cargo are installed (.ci/run installs valgrind from Debian's
    packages); CI fails without them rather than skip the only check of the kernel's memory addresses."""
    import os
    import pathlib
    import shutil
    import subprocess

    missing = [tool for tool in ("valgrind", "cargo") if shutil.which(tool) is None]
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the constant-time check needs {' and '.join(missing)} in CI (see .ci/run)")
        pytest.skip(f"needs {' and '.join(missing)} (Debian: apt-get install valgrind)")
    script = pathlib.Path(__file__).resolve().parents[2] / "native" / "ct" / "valgrind_ct.sh"
    run = subprocess.run([str(script)], capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert "normal build 0," in run.stdout
    assert "OK" in run.stdout.splitlines()[-1]
