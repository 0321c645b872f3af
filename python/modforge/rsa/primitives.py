"""RSA primitives (RFC 8017 Sec. 5): the public operation and the checked CRT private operation.

The private operation follows seed 004 (Shand, Bertin, Vuillemin, DEC PAM),
Sec. 3.1: split over the prime factors by the Chinese remainder theorem (the
two half-size exponentiations, :func:`modforge.rsa.exp.crt_halves`, are
independent and may run in parallel), then recombine by Garner's formula

    x = xq + q * ((xp - xq) * qinv mod p),        qinv = q^-1 mod p,

and check ``x^e == c (mod n)`` with the public exponent before anything is
returned.  A fault in one half (say ``xp`` wrong, ``xq`` right) makes
``x^e - c`` a multiple of ``q`` but not of ``p``, so one faulty signature of
a known message factors ``n`` by a gcd (Boneh, DeMillo, Lipton: the Bellcore
attack).  On a mismatch :class:`~modforge.rsa.errors.FaultError` is raised
and the value never leaves :func:`_checked_private`: its frame has returned
before the error is raised, so not even the traceback holds it.
"""

from __future__ import annotations

import gmpy2

from ..arith.base import ParameterError, require_int
from .errors import FaultError
from .exp import DEFAULT_BLIND_BITS, blinded_exponents, crt_halves, crt_residues, prepared
from .keys import RSAPrivateKey, RSAPublicKey


def _check_representative(name: str, x: int, n: int) -> int:
    x = require_int(name, x)
    if not 0 <= x < n:
        raise ParameterError(name, "representative out of range: need 0 <= value < n (the modulus)")
    return x


def rsaep(key: RSAPublicKey | RSAPrivateKey, m: int) -> int:
    """RSAEP: ``m^e mod n`` (public data only)."""
    return pow(_check_representative("message", m, key.n), key.e, key.n)


def rsavp1(key: RSAPublicKey | RSAPrivateKey, s: int) -> int:
    """RSAVP1: ``s^e mod n`` (public data only)."""
    return pow(_check_representative("signature", s, key.n), key.e, key.n)


def garner(xp: int, xq: int, key: RSAPrivateKey) -> int:
    """CRT recombination: the ``x < n`` with ``x = xp (mod p)`` and ``x = xq (mod q)``."""
    return xq + key.q * ((xp - xq) * key.qinv % key.p)


def recombine(residues: list[int], key: RSAPrivateKey) -> int:
    """RFC 8017 Sec. 5.1.2 step 2.b: Garner for ``p, q``, then each further prime ``r_i`` with its ``t_i``."""
    x = garner(residues[0], residues[1], key)
    product = key.p * key.q
    for x_i, (r, _, t) in zip(residues[2:], key.other_primes):
        x += product * ((x_i - x) * t % r)
        product *= r
    return x


def _checked_private(c: int, key: RSAPrivateKey, backend: str, blind_bits: int) -> int | None:
    """The CRT result when it passes the public-exponent check, else None (the faulty value dies here).

    A kernel prepared per key (the native one) does all of it in native code,
    Garner and check included, in constant time up to the check on the result.
    """
    if key.other_primes:
        # A multi-prime key: the kernels' halves per prime, recombined here (the prepared native kernel
        # recombines two primes only).
        x = recombine(crt_residues(c, key, backend=backend, blind_bits=blind_bits), key)
    else:
        ready = prepared(key, backend)
        if ready is not None:
            dp, dq, bits = blinded_exponents(key, blind_bits)
            return ready.private(c, dp, dq, bits)
        xp, xq = crt_halves(c, key, backend=backend, blind_bits=blind_bits)
        x = garner(xp, xq, key)
    # gmpy2's powmod: ~7x CPython's pow for e = 65537 at 2048 bits.  Neither is
    # constant-time in x; the constant-time requirement covers d, p and q (docs/rsa.md).
    if 0 <= x < key.n and gmpy2.powmod(x, key.e, key.n) == c:
        return x
    return None


def private_op(key: RSAPrivateKey, x: int, *, backend: str = "auto", blind_bits: int = DEFAULT_BLIND_BITS,
               name: str = "input") -> int:
    """``x^d mod n`` by CRT, verified with ``e`` before release (FaultError otherwise)."""
    if not isinstance(key, RSAPrivateKey):
        raise ParameterError("key", f"a private key is needed, got {type(key).__name__}")
    _check_representative(name, x, key.n)
    y = _checked_private(x, key, backend, blind_bits)
    if y is None:
        raise FaultError()
    return y


def rsadp(key: RSAPrivateKey, c: int, *, backend: str = "auto", blind_bits: int = DEFAULT_BLIND_BITS) -> int:
    """RSADP: the checked CRT private operation on a ciphertext representative."""
    return private_op(key, c, backend=backend, blind_bits=blind_bits, name="ciphertext")


def rsasp1(key: RSAPrivateKey, m: int, *, backend: str = "auto", blind_bits: int = DEFAULT_BLIND_BITS) -> int:
    """RSASP1: the checked CRT private operation on a message representative."""
    return private_op(key, m, backend=backend, blind_bits=blind_bits, name="message")
