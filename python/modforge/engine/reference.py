"""Reference backends: GMP through gmpy2, and plain Python integers.

They are the oracles the fast backends are tested against, and the fallback
``auto`` picks when nothing faster runs here.
"""

from __future__ import annotations

import gmpy2


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
        # mpz_powm with exponent 2^k: the fastest way to square k times through GMP.
        return int(gmpy2.powmod(x, gmpy2.mpz(1) << k, self._m)) if k else x % self.modulus

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
