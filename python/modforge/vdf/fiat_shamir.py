"""Fiat-Shamir challenges: the Wesolowski prime ``l`` and Pietrzak's round challenges ``r_i``.

Both hash the *whole statement* - the modulus ``N``, the input ``x``, the
claimed output ``y``, the delay ``t`` - together with the proof type and a
versioned domain-separation tag, so a challenge computed for one statement
or one proof system is useless for any other (the "weak Fiat-Shamir" attacks
on published VDF code come from leaving ``N`` or ``t`` out).

Encoding (all of it normative; ``frame(b)`` = 8-byte big-endian ``len(b)`` then ``b``;
group elements and ``N`` are ``ceil(bits/8)``-byte big-endian; integers are
8-byte big-endian)::

    statement = frame(DST) || frame(type) || frame(N) || frame(x) || frame(y) || u64(t)

* **Wesolowski**, ``DST = "modforge-vdf/v1/fiat-shamir/challenge-prime"``:
  for ``j = 0, 1, 2, ...`` take ``c_j = SHAKE-256(statement || u64(j))`` read to
  ``2 * LAMBDA / 8 = 32`` bytes, as a big-endian integer with its top and bottom
  bits set (an odd 256-bit number); ``l`` is the first ``c_j`` that passes
  ``gmpy2.is_strong_bpsw_prp`` - the strong Baillie-PSW test (strong
  Miller-Rabin to base 2 plus a strong Lucas test with Selfridge's
  parameters), deterministic and without a known counterexample.
* **Pietrzak**, ``DST = "modforge-vdf/v1/fiat-shamir/pietrzak-round"``: round
  ``i`` hashes the statement, the round number and everything the round
  depends on - its claim ``(x_i, T_i, y_i)`` after the odd-``T`` step, and the
  prover's midpoint ``mu_i``::

      r_i = SHAKE-256(statement || u64(i) || frame(x_i) || u64(T_i) || frame(y_i) || frame(mu_i))  read to 16 bytes

  a 128-bit integer.  ``x_i`` and ``y_i`` depend on every earlier ``mu_j`` and
  ``r_j``, so the challenges chain the whole transcript.
"""

from __future__ import annotations

import hashlib

import gmpy2

from .group import Group, frame, u64

LAMBDA = 128                        # security parameter, bits
PRIME_BITS = 2 * LAMBDA             # the challenge prime has exactly this many bits
ROUND_CHALLENGE_BITS = LAMBDA       # Pietrzak's r_i
MAX_PRIME_CANDIDATES = 1 << 20      # ~ 2^20 * 2/177 expected primes: never reached

DST_CHALLENGE_PRIME = b"modforge-vdf/v1/fiat-shamir/challenge-prime"
DST_PIETRZAK_ROUND = b"modforge-vdf/v1/fiat-shamir/pietrzak-round"

PROOF_TYPES = ("wesolowski", "pietrzak")


def statement(dst: bytes, group: Group, x: int, y: int, t: int, proof_type: str) -> bytes:
    return (frame(dst) + frame(proof_type.encode("ascii")) + frame(group.encode(group.modulus))
            + frame(group.encode(x)) + frame(group.encode(y)) + u64(t))


def hash_to_prime(seed: bytes, bits: int = PRIME_BITS) -> int:
    """The first ``SHAKE-256(seed || u64(j))`` candidate (top and low bit set) passing strong BPSW."""
    nbytes = (bits + 7) // 8
    top = 1 << (bits - 1)
    for j in range(MAX_PRIME_CANDIDATES):
        c = int.from_bytes(hashlib.shake_256(seed + u64(j)).digest(nbytes), "big")
        c = (c >> (8 * nbytes - bits)) | top | 1
        if gmpy2.is_strong_bpsw_prp(c):
            return c
    raise RuntimeError("hash_to_prime: no prime among the candidates")  # probability ~ 2^-16000


def challenge_prime(group: Group, x: int, y: int, t: int, proof_type: str = "wesolowski") -> int:
    """Wesolowski's ``l``: a 256-bit prime bound to ``(N, x, y, t, proof_type)``."""
    return hash_to_prime(statement(DST_CHALLENGE_PRIME, group, x, y, t, proof_type))


def round_challenge(group: Group, x: int, y: int, t: int, index: int, x_i: int, t_i: int, y_i: int,
                    mu_i: int, proof_type: str = "pietrzak") -> int:
    """Pietrzak's ``r_i`` (128 bits) for round ``index`` with claim ``x_i^(2^t_i) = y_i`` and midpoint ``mu_i``."""
    data = (statement(DST_PIETRZAK_ROUND, group, x, y, t, proof_type) + u64(index)
            + frame(group.encode(x_i)) + u64(t_i) + frame(group.encode(y_i)) + frame(group.encode(mu_i)))
    return int.from_bytes(hashlib.shake_256(data).digest(ROUND_CHALLENGE_BITS // 8), "big")
