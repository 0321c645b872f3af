"""The naive O(n^2) DFT over Goldilocks, written from the definition with Python integers only (no
modforge code), and the named input cases every NTT test uses."""

from __future__ import annotations

import random

P = 2**64 - 2**32 + 1


def root(n: int) -> int:
    """The generator of order n of Plonky3's table: 7^((p - 1) / n) (7 generates F_p^*)."""
    return pow(7, (P - 1) // n, P)


def naive_dft(a: list[int], w: int | None = None) -> list[int]:
    """out[k] = sum_j a[j] * w^(j*k) mod p, by Horner at each point."""
    n = len(a)
    w = root(n) if w is None else w
    out = []
    x = 1
    for _ in range(n):
        acc = 0
        for coefficient in reversed(a):
            acc = (acc * x + coefficient) % P
        out.append(acc)
        x = x * w % P
    return out


def naive_inverse_dft(a: list[int]) -> list[int]:
    n = len(a)
    n_inv = pow(n, P - 2, P)
    return [v * n_inv % P for v in naive_dft(a, pow(root(n), P - 2, P))]


def evaluate(coefficients: list[int], x: int) -> int:
    acc = 0
    for c in reversed(coefficients):
        acc = (acc * x + c) % P
    return acc


def named_inputs(n: int, rng: random.Random) -> dict[str, list[int]]:
    """All zeros, all p - 1, a single 1 (first and a random position), values just below p, random."""
    single_at = rng.randrange(n)
    return {
        "zeros": [0] * n,
        "all-p-1": [P - 1] * n,
        "one-at-0": [1] + [0] * (n - 1),
        f"one-at-{single_at}": [int(i == single_at) for i in range(n)],
        "just-below-p": [P - 1 - (i % 4) for i in range(n)],
        "random": [rng.randrange(P) for _ in range(n)],
        "random-high": [P - 1 - rng.getrandbits(32) for _ in range(n)],
    }
