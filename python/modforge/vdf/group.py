"""The group the VDF works in: signed quadratic residues modulo an RSA modulus.

Elements are classes ``{x, N - x}`` of ``Z_N^*`` modulo ``+-1``, each written
as its *absolute value* ``|x| = min(x, N - x)``: an integer with
``1 <= |x| <= (N - 1) / 2`` and ``gcd(|x|, N) = 1``.  The product of two
elements is ``|x * y mod N|``.  Taking the absolute value is a homomorphism
from ``Z_N^*`` onto this quotient, so the code computes in ``Z_N^*`` (through
the engine) and takes the absolute value once at the end of each step; the
result is the same as taking it after every operation.

Why: ``-1`` is an element of order 2 that everybody knows.  In ``Z_N^*`` it
lets a prover turn a correct proof for ``y`` into one for ``-y`` (multiply the
output and the proof by ``-1``); in the quotient ``-1`` *is* the identity, so
that forgery does not exist, and any other representative than the canonical
one is rejected as malformed.

The outputs of squaring (``y`` and Pietrzak's midpoints ``mu_i``) are squares,
i.e. members of ``QR+_N = {|x| : x in QR_N}``.  When ``N = 1 (mod 4)`` the
Jacobi symbol is well defined on the classes (``(-1/N) = +1``) and every
square has symbol ``+1``, so the verifier requires it.  For a Blum modulus
(``p = q = 3 mod 4``, the standard choice) this test is exact: ``QR+_N`` is
precisely the set of canonical elements with Jacobi symbol ``+1``, and the
elements of order 2 that a party knowing the factors could build (``w`` with
``w = 1 mod p``, ``w = -1 mod q``) have symbol ``-1`` and are rejected.  For
``N = 3 (mod 4)`` (the VDF Alliance modulus is one) no such test exists, as
``x`` and ``-x`` have opposite symbols; only the quotient by ``+-1`` applies.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
import gmpy2

from ..arith.base import ParameterError, exact_int, require_int

# Wider moduli are accepted by this layer but not by the engine's native paths.
MIN_MODULUS_BITS = 256
MAX_MODULUS_BITS = 16384
# No honest RSA modulus has a prime factor this small; one that does is a typo or a toy.
SMALL_FACTOR_BOUND = 1 << 16

DST_HASH_TO_GROUP = b"modforge-vdf/v1/hash-to-group"


class Reject(Exception):
    """A proof or one of its fields is invalid; ``reason`` says why (one line)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _small_primes_product(bound: int) -> int:
    product = 1
    p = gmpy2.mpz(3)
    while p < bound:
        product *= p
        p = gmpy2.next_prime(p)
    return int(product)


_SMALL_PRIMES_PRODUCT = _small_primes_product(SMALL_FACTOR_BOUND)


def modulus_problem(modulus: int) -> str | None:
    """Why ``modulus`` cannot be a VDF modulus, or None.

    These checks catch accidents (a prime, a square, a typo with a small
    factor); they cannot tell whether somebody knows the factorisation.
    """
    value = exact_int(modulus)
    if value is None:
        return f"must be an integer, got {type(modulus).__name__}"
    modulus = value
    bits = modulus.bit_length()
    if modulus < 0:
        return "must be positive"
    if not MIN_MODULUS_BITS <= bits <= MAX_MODULUS_BITS:
        return f"must have {MIN_MODULUS_BITS} to {MAX_MODULUS_BITS} bits, got {bits}"
    if modulus % 2 == 0:
        return "must be odd"
    if gmpy2.is_strong_bpsw_prp(modulus):
        return "is prime (the group order would be known)"
    if gmpy2.is_power(modulus):
        return "is a perfect power"
    if gmpy2.gcd(modulus, _SMALL_PRIMES_PRODUCT) != 1:
        return f"has a prime factor below {SMALL_FACTOR_BOUND}"
    return None


@dataclass(frozen=True)
class Group:
    """``QR+_N``: the signed quadratic residues modulo ``modulus`` (see the module docstring)."""

    modulus: int

    def __post_init__(self) -> None:
        problem = modulus_problem(self.modulus)
        if problem is not None:
            raise ParameterError("modulus", problem)
        # A gmpy2.mpz becomes an int: the group hands it to native code.
        object.__setattr__(self, "modulus", exact_int(self.modulus))

    @property
    def bits(self) -> int:
        return self.modulus.bit_length()

    @property
    def nbytes(self) -> int:
        """Width of every encoded element: ``ceil(bits / 8)`` bytes."""
        return (self.bits + 7) // 8

    @property
    def half(self) -> int:
        """The largest canonical element, ``(N - 1) / 2``."""
        return (self.modulus - 1) // 2

    @property
    def jacobi_applies(self) -> bool:
        """True when ``N = 1 (mod 4)``: the Jacobi symbol is defined on classes modulo +-1."""
        return self.modulus % 4 == 1

    def canon(self, x: int) -> int:
        """The canonical representative ``min(x mod N, N - x mod N)``."""
        x = int(x % self.modulus)
        return x if x <= self.half else self.modulus - x

    # -- membership --------------------------------------------------------------------------------------

    def element_problem(self, x: int, *, square: bool = False, base: bool = False) -> str | None:
        """Why ``x`` is not a canonical group element (a square, when ``square``; not the identity, when
        ``base``: the input of an evaluation), or None."""
        value = exact_int(x)
        if value is None:
            return f"is not an integer ({type(x).__name__})"
        x = value
        if x <= 0:
            return "is zero" if x == 0 else "is negative"
        if base and x < self.modulus and self.canon(x) == 1:
            # |1^(2^t)| = 1 for every t: a "proof" for it shows no sequential work at all.
            return (f"is {'1' if x == 1 else 'N - 1'}, the identity of the group (its class is +-1): every "
                    f"power of it is 1, so it proves no sequential work")
        if x >= self.modulus:
            return "is not reduced: it is >= N"
        if x > self.half:
            return "is not in canonical signed form: it is > (N-1)/2 (the class is written as min(x, N-x))"
        if gmpy2.gcd(x, self.modulus) != 1:
            return "shares a factor with N (not in the group)"
        if square and self.jacobi_applies and gmpy2.jacobi(x, self.modulus) != 1:
            return "is not in QR+_N: its Jacobi symbol is -1, so it is no square (e.g. a square times an element of order 2)"
        return None

    def check(self, name: str, x: int, *, square: bool = False, base: bool = False) -> int:
        """Return ``x`` if it is a canonical element (a square, when ``square``; not the identity, when ``base``);
        raise Reject naming it otherwise."""
        problem = self.element_problem(x, square=square, base=base)
        if problem is not None:
            raise Reject(f"{name} {problem}")
        return exact_int(x)

    def require(self, name: str, x: int, *, square: bool = False, base: bool = False) -> int:
        """As :meth:`check` for caller-supplied inputs: ParameterError (exit 2 at the command line)."""
        x = require_int(name, x)
        problem = self.element_problem(x, square=square, base=base)
        if problem is not None:
            hint = "; use N - x for the same class" if problem.startswith("is not in canonical") else ""
            raise ParameterError(name, problem + hint)
        return x

    # -- encodings ---------------------------------------------------------------------------------------

    def encode(self, x: int) -> bytes:
        """Fixed-width big-endian bytes (``nbytes`` long) of a residue or of the modulus itself."""
        return x.to_bytes(self.nbytes, "big")

    def to_hex(self, x: int) -> str:
        """``0x`` and exactly ``2 * nbytes`` lowercase hex digits."""
        return "0x" + self.encode(x).hex()

    def hash_to_group(self, seed: bytes) -> int:
        """A square in ``QR+_N`` derived from ``seed``; nobody knows its discrete log or a root of it.

        ``u = SHAKE-256(frame(DST) || frame(N) || frame(seed) || counter_u32)`` read to ``2 * nbytes``
        bytes (at least twice the modulus width, so ``u mod N`` is within ``2^-bits`` of uniform), then
        ``x = |u^2 mod N|``.  ``frame(b)`` is ``len(b)`` as 8 big-endian bytes followed by ``b``.  The
        counter (from 0) moves on only if ``x`` is not in the group, which would expose a factor of N.
        """
        if isinstance(seed, str):
            seed = seed.encode("utf-8")
        for counter in range(1 << 8):
            data = frame(DST_HASH_TO_GROUP) + frame(self.encode(self.modulus)) + frame(bytes(seed)) \
                + counter.to_bytes(4, "big")
            u = int.from_bytes(hashlib.shake_256(data).digest(2 * self.nbytes), "big") % self.modulus
            x = self.canon(u * u)
            if self.element_problem(x, square=True, base=True) is None:
                return x
        raise ParameterError("x", "hash-to-group found no group element (the modulus is broken)")


def frame(data: bytes) -> bytes:
    """Length-prefixed bytes: 8-byte big-endian length, then the data (unambiguous concatenation)."""
    return len(data).to_bytes(8, "big") + data


def u64(value: int) -> bytes:
    return value.to_bytes(8, "big")
