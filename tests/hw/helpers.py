"""Shared designs of the hardware tests.

Every (architecture, width) is built once per machine: :func:`modforge.hw.flow.ensure_built`
caches the Verilator build by parameter hash under ``.cache/modforge-hw`` and serialises
concurrent builds of the same design with a lock, so the pytest workers share them.  The
moduli are products of two primes (valid VDF moduli), so the 256-bit builds also serve the
``sim:`` engine backend test.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import gmpy2

ARCHS = ("ozturk", "predictive-montgomery", "san-montgomery")
WIDTHS = (64, 128, 256)
CASES = [(a, b) for b in WIDTHS for a in ARCHS]


def _prime(bits: int, tag: str) -> int:
    stream = b"".join(hashlib.sha256(f"modforge-hw-test:{tag}:{i}".encode()).digest() for i in range(bits // 256 + 1))
    v = int.from_bytes(stream, "big") >> (len(stream) * 8 - bits)
    v |= (3 << (bits - 2)) | 1
    return int(gmpy2.next_prime(v))


@lru_cache(maxsize=None)
def hw_modulus(bits: int) -> int:
    """A reproducible ``bits``-bit product of two primes (top bits set, so exactly ``bits`` wide)."""
    n = _prime(bits // 2, f"{bits}p") * _prime(bits - bits // 2, f"{bits}q")
    assert n.bit_length() == bits
    return n


@lru_cache(maxsize=None)
def design(arch: str, bits: int, **options):
    from modforge.hw.flow import make_design

    return make_design(arch, bits=bits, modulus=hw_modulus(bits), options=options)

