"""Reference backends: GMP through gmpy2, and plain Python integers.

They are the oracles the fast backends are tested against, and the fallback
``auto`` picks when nothing faster runs here.
"""

from __future__ import annotations

import gmpy2

# Squarings per powmod call in GmpBackend.sqr_n: the exponent 2^k would otherwise be k bits (2^40 squarings,
# a 128 GiB exponent, abort GMP), and Python checks for Ctrl-C only between calls.  2^16 squarings take
# 2-250 ms from 256 to 4096 bits; a call costs about a microsecond, so the chunks cost nothing measurable.
SQR_CHUNK = 1 << 16


class GmpBackend:
    name = "gmp"

    def __init__(self, modulus: int):
        self.modulus = modulus
        self._m = gmpy2.mpz(modulus)

    def sqr(self, x: int) -> int:
        return int(gmpy2.powmod(x, 2, self._m))

    def mul(self, x: int, y: int) -> int:
        return int(gmpy2.mpz(x) * y % self._m)

    def sqr_n(self, x: int, k: int) -> int:
        # mpz_powm with exponent 2^c: the fastest way to square c times through GMP, in chunks.
        v = gmpy2.mpz(x) % self._m
        chunk = gmpy2.mpz(1) << SQR_CHUNK
        for _ in range(k // SQR_CHUNK):
            v = gmpy2.powmod(v, chunk, self._m)
        if k % SQR_CHUNK:
            v = gmpy2.powmod(v, gmpy2.mpz(1) << (k % SQR_CHUNK), self._m)
        return int(v)

    def pow(self, x: int, e: int) -> int:
        return int(gmpy2.powmod(x, e, self._m))


class PythonBackend:
    name = "python"

    def __init__(self, modulus: int):
        self.modulus = modulus

    def sqr(self, x: int) -> int:
        return x * x % self.modulus

    def mul(self, x: int, y: int) -> int:
        return x * y % self.modulus

    def sqr_n(self, x: int, k: int) -> int:
        m = self.modulus
        for _ in range(k):
            x = x * x % m
        return x % m

    def pow(self, x: int, e: int) -> int:
        return pow(x, e, self.modulus)
