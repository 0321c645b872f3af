"""The CRT private operation: equal to ``pow(m, d, n)`` at every size, and a faulty half never leaks a factor."""

from __future__ import annotations

import math

import gmpy2

import pytest

from modforge.arith.base import ParameterError
from modforge.rsa import FaultError, garner, private_op, rsadp, rsaep, rsasp1, rsavp1
from modforge.rsa import exp
from modforge.rsa.exp import python_halves

from .helpers import KERNELS, MESSAGES, POW_ORACLE, SIZES, rng


@pytest.mark.parametrize("backend", KERNELS)
@pytest.mark.parametrize("bits", SIZES)
def test_raw_private_op_equals_pow(keyring, bits: int, backend: str) -> None:
    pair = keyring.get(bits)
    key = pair.key
    seed = 1000 + bits
    r = rng(seed)
    named = {"0": 0, "1": 1, "2": 2, "n-1": key.n - 1, "n-2": key.n - 2, "p": key.p, "q": key.q,
             "2p": 2 * key.p, "p*(q-1)": key.p * (key.q - 1)}
    randoms = {f"random #{i} (seed {seed})": r.randrange(key.n) for i in range(MESSAGES[backend][bits])}
    n, e, d = gmpy2.mpz(key.n), key.e, gmpy2.mpz(key.d)
    for i, (what, m) in enumerate({**named, **randoms}.items()):
        s = rsasp1(key, m, backend=backend)
        # Two oracles by GMP: s^e == m (0 <= s < n), which fixes s = m^d mod n since RSA permutes Z_n, for
        # every message; and m^d mod n itself for the first ones (CPython's pow agrees, below).
        assert 0 <= s < key.n and gmpy2.powmod(s, e, n) == m, f"{bits}-bit key, message {what}"
        if i < len(named) + POW_ORACLE:
            assert s == int(gmpy2.powmod(m, d, n)), f"{bits}-bit key, message {what}"
    m = randoms[f"random #0 (seed {seed})"]
    assert rsasp1(key, m) == pow(m, pair.ck.private_numbers().d, key.n)


def test_small_public_exponent(keyring) -> None:
    key = keyring.get(1024, e=3).key
    r = rng(3)
    for m in (0, 1, key.n - 1, *(r.randrange(key.n) for _ in range(20))):
        assert rsadp(key, rsaep(key, m)) == m


def test_blinding_off_gives_the_same_result(k1024) -> None:
    key = k1024.key
    r = rng(11)
    for m in (0, 1, key.n - 1, *(r.randrange(key.n) for _ in range(10))):
        assert private_op(key, m, blind_bits=0) == private_op(key, m, blind_bits=64) == pow(m, key.d, key.n)


def test_representative_out_of_range(k1024) -> None:
    key = k1024.key
    with pytest.raises(ParameterError, match=r"^message: representative out of range: need 0 <= value < n"):
        rsasp1(key, key.n)
    with pytest.raises(ParameterError, match=r"^ciphertext: representative out of range"):
        rsadp(key, -1)
    with pytest.raises(ParameterError, match=r"^signature: representative out of range"):
        rsavp1(key.public, key.n + 5)
    with pytest.raises(ParameterError, match="^message: must be an integer, got str$"):
        rsasp1(key, "5")


# ------------------------------------------------------------------------------------- Bellcore


def _faulty(half: str):
    """A kernel that computes correctly, then flips one bit of one CRT half (a transient fault)."""

    def kernel(c, p, dp, q, dq, bits):
        xp, xq = python_halves(c, p, dp, q, dq, bits)
        if half == "p":
            xp ^= 1 << 17
        else:
            xq ^= 1 << 17
        return xp, xq

    return kernel


@pytest.fixture
def faulty_backends():
    exp.register_backend("fault-p", _faulty("p"))
    exp.register_backend("fault-q", _faulty("q"))
    yield
    exp.unregister_backend("fault-p")
    exp.unregister_backend("fault-q")


@pytest.mark.parametrize("half,revealed", [("q", "p"), ("p", "q")])
def test_a_faulty_half_would_factor_n(k1024, faulty_backends, half: str, revealed: str) -> None:
    """The test is meaningful: recombined without the check, the faulty result gives a factor by one gcd."""
    key = k1024.key
    m = 0x1234567890ABCDEF
    xp, xq = exp.crt_halves(m, key, backend=f"fault-{half}")
    faulty_sig = garner(xp, xq, key)
    assert faulty_sig != pow(m, key.d, key.n)
    assert math.gcd(pow(faulty_sig, key.e, key.n) - m, key.n) == getattr(key, revealed)


def _ints_reachable_from(tb) -> list[int]:
    """Every integer held by a local variable of every frame of a traceback (what a debugger could show)."""
    out = []
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            if isinstance(value, int) and not isinstance(value, bool):
                out.append(value)
            elif isinstance(value, (tuple, list)):
                out += [v for v in value if isinstance(v, int) and not isinstance(v, bool)]
        tb = tb.tb_next
    return out


@pytest.mark.parametrize("half", ["p", "q"])
def test_the_fault_check_refuses_and_releases_nothing(k1024, faulty_backends, half: str) -> None:
    key = k1024.key
    m = 0x1234567890ABCDEF
    with pytest.raises(FaultError) as info:
        rsasp1(key, m, backend=f"fault-{half}")
    err = info.value
    assert str(err) == ("private-key operation failed its public-exponent check (a fault in the computation); "
                        "the result was withheld")
    assert err.args == (str(err),) and err.__cause__ is None and err.__context__ is None
    # No value reachable from the exception - its arguments, any local of any frame of its traceback -
    # factors n.  The detector is sound: it flags the faulty signature itself.
    def leaks(values: list[int]) -> list[int]:
        return [v for v in values if 1 < math.gcd(pow(v % key.n, key.e, key.n) - m, key.n) < key.n]

    faulty_sig = garner(*exp.crt_halves(m, key, backend=f"fault-{half}"), key)
    assert leaks([faulty_sig]) == [faulty_sig]
    reachable = _ints_reachable_from(err.__traceback__.tb_next)    # the library's frames, not this test's
    assert m in reachable                      # the frames were searched ...
    assert leaks(reachable) == []              # ... and hold nothing that factors n


def test_the_frame_search_catches_a_naive_check(k1024, faulty_backends, monkeypatch) -> None:
    """Had the check raised where the faulty value lives, the search above would find a factor."""
    from modforge.rsa import primitives

    def naive(c, key, backend, blind_bits):
        x = garner(*exp.crt_halves(c, key, backend=backend, blind_bits=blind_bits), key)
        if pow(x, key.e, key.n) != c:
            raise FaultError()
        return x

    monkeypatch.setattr(primitives, "_checked_private", naive)
    key, m = k1024.key, 0x1234567890ABCDEF
    with pytest.raises(FaultError) as info:
        rsasp1(key, m, backend="fault-p")
    reachable = _ints_reachable_from(info.value.__traceback__.tb_next)
    assert any(math.gcd(pow(v % key.n, key.e, key.n) - m, key.n) == key.q for v in reachable)
