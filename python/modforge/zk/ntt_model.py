"""Bit-exact models of the number theoretic transforms over Goldilocks (seed 003, "NTT").

Conventions (docs/zk-ntt.md says the same):

* The **forward** transform evaluates a polynomial at the powers of w_n in natural order:
  ``out[k] = sum_j a[j] * w_n^(j*k)``, w_n = ``GoldilocksParams.root_of_unity(log n)`` (Plonky3's
  ``TWO_ADIC_GENERATORS[log n]``).
* The **inverse** is its exact inverse: the same transform with w_n^-1, times n^-1.
* The **ZPrize** transform (the competition's reference, which the seed's design computes) is a bit
  reversal followed by an in-place radix-2 DIT pass with the roots of the table the harness calls
  "inverse", which is Plonky3's ``TWO_ADIC_GENERATORS``: it is therefore the forward transform above, with
  no scaling.  :func:`zprize_reference` models it step by step; the tests check it equals
  :func:`forward`.

The building blocks, each the textbook in-place form, operate on Python lists of canonical elements
through :mod:`.goldilocks`'s bit-exact ``mul``/``add``/``sub``:

* :func:`dit_bitrev_to_natural` (radix-2 Cooley-Tukey decimation in time: bit-reversed in, natural out),
* :func:`dif_natural_to_bitrev` (radix-2 Gentleman-Sande decimation in frequency: natural in,
  bit-reversed out),
* :func:`four_step` for any n = n1 * n2 (the seed's design uses 2^24 = 2^12 x 2^12),
* :func:`coset_forward` and :func:`lde` (low-degree extension onto a coset).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from ..arith.base import ParameterError
from .goldilocks import GOLDILOCKS, GoldilocksParams, add, inverse, mul, power, sub


def log2_exact(n: int, what: str = "n", params: GoldilocksParams = GOLDILOCKS) -> int:
    """log2(n) for a power of two 1 <= n <= 2^two_adicity; ParameterError otherwise."""
    if not isinstance(n, int) or n < 1 or n & (n - 1):
        raise ParameterError(what, f"must be a power of two, got {n}")
    log_n = n.bit_length() - 1
    if log_n > params.two_adicity:
        raise ParameterError(what, f"must be at most 2^{params.two_adicity} (the largest power-of-two "
                                   f"subgroup of Goldilocks), got 2^{log_n}")
    return log_n


def bit_reverse_index(i: int, bits: int) -> int:
    """i with its low ``bits`` bits in reverse order."""
    return int(format(i, f"0{bits}b")[::-1], 2) if bits else 0


def bit_reverse(a: Sequence[int]) -> list[int]:
    """The permutation a[i] -> a[bitrev(i)] (an involution)."""
    bits = log2_exact(len(a))
    return [a[bit_reverse_index(i, bits)] for i in range(len(a))]


def powers(w: int, count: int, params: GoldilocksParams = GOLDILOCKS) -> list[int]:
    """[1, w, w^2, ..., w^(count-1)]."""
    out, x = [], 1
    for _ in range(count):
        out.append(x)
        x = mul(x, w, params)
    return out


def dit_bitrev_to_natural(a: Sequence[int], w: int, params: GoldilocksParams = GOLDILOCKS) -> list[int]:
    """Radix-2 DIT: ``a`` in bit-reversed order, result ``sum_j x[j] w^(jk)`` in natural order, where
    x = bit_reverse(a) and w has order len(a).  Stage s joins halves of size m = 2^s with the butterfly
    (u, v) -> (u + t, u - t), t = v * w_(2m)^j, as the ZPrize reference does."""
    out = list(a)
    n = len(out)
    log_n = log2_exact(n)
    m = 1
    for stage in range(log_n):
        w_stage = power(w, n >> (stage + 1), params)     # order 2m
        twiddles = powers(w_stage, m, params)
        for k in range(0, n, 2 * m):
            for j in range(m):
                u, t = out[k + j], mul(out[k + j + m], twiddles[j], params)
                out[k + j], out[k + j + m] = add(u, t, params), sub(u, t, params)
        m *= 2
    return out


def dif_natural_to_bitrev(a: Sequence[int], w: int, params: GoldilocksParams = GOLDILOCKS) -> list[int]:
    """Radix-2 DIF: ``a`` in natural order, result ``sum_j a[j] w^(jk)`` in bit-reversed order.  Stage
    with half-size m (n/2 down to 1) uses the butterfly (u, v) -> (u + v, (u - v) * w_(2m)^j)."""
    out = list(a)
    n = len(out)
    log_n = log2_exact(n)
    m = n >> 1
    for stage in range(log_n):
        w_stage = power(w, n // (2 * m), params)
        twiddles = powers(w_stage, m, params)
        for k in range(0, n, 2 * m):
            for j in range(m):
                u, v = out[k + j], out[k + j + m]
                out[k + j], out[k + j + m] = add(u, v, params), mul(sub(u, v, params), twiddles[j], params)
        m >>= 1
    return out


@dataclass(frozen=True)
class Transform:
    """One transform size: n = 2^log_n over the field of ``params``; every root derived from them."""

    log_n: int
    params: GoldilocksParams = GOLDILOCKS

    def __post_init__(self) -> None:
        if not 0 <= self.log_n <= self.params.two_adicity:
            raise ParameterError("log_n", f"must be in 0..{self.params.two_adicity}, got {self.log_n}")

    @property
    def n(self) -> int:
        return 1 << self.log_n

    @cached_property
    def root(self) -> int:
        return self.params.root_of_unity(self.log_n)

    @cached_property
    def inverse_root(self) -> int:
        return inverse(self.root, self.params)

    @cached_property
    def n_inverse(self) -> int:
        return inverse(self.n % self.params.p, self.params)


def _check_elements(a: Sequence[int], params: GoldilocksParams) -> Transform:
    t = Transform(log2_exact(len(a), "length", params), params)
    for i, x in enumerate(a):
        if not 0 <= x < params.p:
            raise ParameterError("a", f"element {i} is not a canonical field element (0 <= x < p): {x}")
    return t


def forward(a: Sequence[int], params: GoldilocksParams = GOLDILOCKS) -> list[int]:
    """out[k] = sum_j a[j] w_n^(jk), natural order in and out (DIF, then the bit reversal)."""
    t = _check_elements(a, params)
    return bit_reverse(dif_natural_to_bitrev(a, t.root, params))


def forward_dit(a: Sequence[int], params: GoldilocksParams = GOLDILOCKS) -> list[int]:
    """The same transform as :func:`forward`, by the other route: bit reversal, then DIT."""
    t = _check_elements(a, params)
    return dit_bitrev_to_natural(bit_reverse(a), t.root, params)


def inverse_transform(a: Sequence[int], params: GoldilocksParams = GOLDILOCKS) -> list[int]:
    """The exact inverse of :func:`forward`: w_n^-1 in place of w_n, then the 1/n scaling."""
    t = _check_elements(a, params)
    unscaled = bit_reverse(dif_natural_to_bitrev(a, t.inverse_root, params))
    return [mul(x, t.n_inverse, params) for x in unscaled]


def zprize_reference(a: Sequence[int], params: GoldilocksParams = GOLDILOCKS) -> list[int]:
    """The ZPrize competition's reference transform, as the seed's design computes it: bit-reversed
    addressing, then DIT stages i = 1..log n with the root ``TWO_ADIC_GENERATORS[i]`` of order 2^i, no
    scaling.  Each stage's root is taken from the table, not as a power of the largest, as the
    reference does; it is the same number."""
    t = _check_elements(a, params)
    out = bit_reverse(a)
    m = 1
    for i in range(1, t.log_n + 1):
        w_m = params.root_of_unity(i)
        for k in range(0, t.n, 2 * m):
            w = 1
            for j in range(m):
                u, v = out[k + j], mul(out[k + j + m], w, params)
                out[k + j], out[k + j + m] = add(u, v, params), sub(u, v, params)
                w = mul(w, w_m, params)
        m *= 2
    return out


def four_step(a: Sequence[int], n1: int, n2: int, params: GoldilocksParams = GOLDILOCKS,
              inverse_direction: bool = False) -> list[int]:
    """The forward transform of ``a`` (n = n1 * n2 points) by the 4-step decomposition.

    Index j = n2 * j1 + j2 (row j1 < n1, column j2 < n2 of a row-major n1 x n2 matrix) and
    k = k1 + n1 * k2; then w_n^(jk) = w_n1^(j1 k1) * w_n^(j2 k1) * w_n2^(j2 k2), so:

    1. n2 transforms of size n1 down the columns (j1 -> k1),
    2. multiply entry (k1, j2) by the twiddle w_n^(j2 * k1),
    3. n1 transforms of size n2 along the rows (j2 -> k2),
    4. read the result out transposed: out[k1 + n1 * k2] = entry (k1, k2).

    The seed's hardware does step 4 by the order in which it writes memory; this model does it by
    indexing.  ``inverse_direction`` uses w_n^-1 (no scaling), for the inverse transform."""
    t = _check_elements(a, params)
    log_n1, log_n2 = log2_exact(n1, "n1", params), log2_exact(n2, "n2", params)
    if log_n1 + log_n2 != t.log_n:
        raise ParameterError("n1", f"n1 * n2 = {n1 * n2} is not the length {t.n}")
    w = t.inverse_root if inverse_direction else t.root
    w1, w2 = power(w, n2, params), power(w, n1, params)      # orders n1 and n2
    matrix = [list(a[r * n2:(r + 1) * n2]) for r in range(n1)]
    for j2 in range(n2):                                      # step 1: columns
        column = bit_reverse(dif_natural_to_bitrev([matrix[j1][j2] for j1 in range(n1)], w1, params))
        for k1 in range(n1):                                  # step 2: twiddles
            matrix[k1][j2] = mul(column[k1], power(w, j2 * k1, params), params)
    for k1 in range(n1):                                      # step 3: rows
        matrix[k1] = bit_reverse(dif_natural_to_bitrev(matrix[k1], w2, params))
    return [matrix[k % n1][k // n1] for k in range(t.n)]      # step 4: the transposed read


def coset_forward(a: Sequence[int], shift: int, params: GoldilocksParams = GOLDILOCKS) -> list[int]:
    """Evaluations on the coset shift * <w_n>: out[k] = sum_j a[j] (shift * w_n^k)^j."""
    _check_elements(a, params)
    if not 0 < shift < params.p:
        raise ParameterError("shift", "must be a nonzero canonical field element")
    return forward([mul(x, s, params) for x, s in zip(a, powers(shift, len(a), params))], params)


def coset_inverse(a: Sequence[int], shift: int, params: GoldilocksParams = GOLDILOCKS) -> list[int]:
    """The exact inverse of :func:`coset_forward`: coefficients from evaluations on shift * <w_n>."""
    coefficients = inverse_transform(a, params)
    if not 0 < shift < params.p:
        raise ParameterError("shift", "must be a nonzero canonical field element")
    return [mul(c, s, params) for c, s in zip(coefficients, powers(inverse(shift, params), len(a), params))]


def lde(evaluations: Sequence[int], blowup: int, shift: int, params: GoldilocksParams = GOLDILOCKS) -> list[int]:
    """Low-degree extension: from the evaluations of a polynomial of degree < n on <w_n> (natural
    order), its evaluations on the coset shift * <w_(n*blowup)> (natural order) - interpolate, pad the
    coefficients with zeros, evaluate on the coset (as Plonky3's ``coset_lde_batch``)."""
    log2_exact(blowup, "blowup", params)
    coefficients = inverse_transform(evaluations, params)
    padded = coefficients + [0] * (len(coefficients) * (blowup - 1))
    log2_exact(len(padded), "n * blowup", params)
    return coset_forward(padded, shift, params)
