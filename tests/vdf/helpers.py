"""Shared helpers for the VDF tests: seeded RSA moduli with known factors, oracles, a trapdoor."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

import gmpy2
from modforge.vdf import Group


@dataclass(frozen=True)
class Rsa:
    n: int
    p: int
    q: int

    @property
    def group(self) -> Group:
        return Group(self.n)

    @property
    def lam(self) -> int:
        """Carmichael's lambda(N): x^(2^t) = x^(2^t mod lambda) for x coprime to N."""
        return int(gmpy2.lcm(self.p - 1, self.q - 1))

    def power(self, x: int, k: int) -> int:
        """``x^(2^k) mod N`` by the trapdoor, for any ``k`` (t = 2^40 in microseconds)."""
        return pow(x, pow(2, k, self.lam), self.n)

    def order_two(self) -> int:
        """``w = 1 mod p, -1 mod q``: an element of order 2 other than -1 (needs the factors)."""
        w = (1 + self.p * ((-2 * pow(self.p, -1, self.q)) % self.q)) % self.n
        assert w * w % self.n == 1 and w not in (1, self.n - 1)
        return w


@lru_cache(maxsize=None)
def rsa(bits: int, seed: int = 0, blum: bool = True) -> Rsa:
    """A ``bits``-bit N = p*q from seeded random primes (p = q = 3 mod 4 when ``blum``)."""
    rng = random.Random(f"modforge-vdf-test:{bits}:{seed}:{blum}")

    def prime(width: int) -> int:
        p = gmpy2.mpz(rng.getrandbits(width) | (3 << (width - 2)))
        while True:
            p = gmpy2.next_prime(p)
            if not blum or p % 4 == 3:
                return int(p)

    while True:
        p, q = prime(bits // 2), prime(bits - bits // 2)
        if p != q and (p * q).bit_length() == bits:
            return Rsa(p * q, p, q)


def oracle(group: Group, x: int, t: int) -> int:
    """The dumb reference: |x^(2^t) mod N| with Python's pow."""
    return group.canon(pow(x, 1 << t, group.modulus))


def seeded(name: str) -> random.Random:
    return random.Random(f"modforge-vdf-test:{name}")
