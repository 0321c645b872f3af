"""The Python fixed-window kernel: equal to ``pow`` on edge and random cases, and fixed in structure."""

from __future__ import annotations

import dataclasses

import pytest

from modforge.arith.base import ParameterError
from modforge.rsa import exp
from modforge.rsa.exp import (MontContext, _inverse_pow2, crt_halves, ct_select, default_window, python_halves,
                              resolve_backend, window_cost, window_exp)

from .helpers import KERNELS, rng


def test_newton_inverse() -> None:
    r = rng(1)
    for bits in (8, 64, 515, 2050):
        for _ in range(20):
            m = r.getrandbits(bits) | 1
            assert m * _inverse_pow2(m, bits) % (1 << bits) == 1


def test_ct_select_every_index() -> None:
    for w in (1, 3, 5):
        table = [7 * i + (i << 100) for i in range(1 << w)]
        assert [ct_select(table, i, w) for i in range(1 << w)] == table


def test_default_window_minimises_the_cost_model() -> None:
    for bits in (64, 512, 576, 1088, 1600, 2112):
        w = default_window(bits)
        assert all(window_cost(bits, w) <= window_cost(bits, v) for v in range(1, 9))
    assert [default_window(b) for b in (576, 1088, 2112)] == [5, 6, 6]


MODULI = {
    "small": 0xF123456789ABCDEF1,
    "all ones": (1 << 521) - 1,
    "top bit only": (1 << 767) + 1,
    "runs": int("1" * 200 + "0" * 200 + "1" * 111 + "1", 2),
}


@pytest.mark.parametrize("name", sorted(MODULI))
@pytest.mark.parametrize("w", [1, 2, 4, 5, 6])
def test_window_exp_equals_pow(name: str, w: int) -> None:
    m = MODULI[name]
    ctx = MontContext.of(m)
    bits = m.bit_length() + 16
    r = rng(m.bit_length() * 10 + w)
    bases = [0, 1, 2, m - 1, m - 2, *(r.randrange(m) for _ in range(4))]
    exps = [0, 1, 2, (1 << bits) - 1, 1 << (bits - 1), int("10" * (bits // 2), 2), *(r.getrandbits(bits) for _ in range(3))]
    for b in bases:
        for e in exps:
            assert window_exp(ctx, b, e, bits, w) == pow(b, e, m), (hex(m), b, e, w)


def test_redundant_products_stay_below_2m() -> None:
    """Walter's bound: with R > 4m and inputs below 2m, every REDC result is below 2m (no subtraction needed)."""
    r = rng(3)
    for m in MODULI.values():
        ctx = MontContext.of(m)
        assert (1 << ctx.rbits) > 4 * m
        for a, b in [(2 * m - 1, 2 * m - 1), (0, 2 * m - 1), *((r.randrange(2 * m), r.randrange(2 * m)) for _ in range(50))]:
            out = ctx.redc(a * b)
            assert 0 <= out < 2 * m and (out - a * b * pow(1 << ctx.rbits, -1, m)) % m == 0


def test_operation_sequence_does_not_depend_on_the_exponent() -> None:
    """Constant time in structure: the same number of products, in the same order, for every exponent."""
    m = MODULI["runs"]
    base = MontContext.of(m)

    def products(e: int) -> int:
        calls: list[int] = []

        class Counting(MontContext):
            def redc(self, t: int) -> int:
                calls.append(1)
                return super().redc(t)

        window_exp(Counting(**dataclasses.asdict(base)), 12345, e, 600, 5)
        return len(calls)

    counts = {products(e) for e in (0, 1, (1 << 600) - 1, 1 << 599, 0xDEADBEEF << 300)}
    # into the domain, the table's 2^w - 2 further entries, 120 windows of 5 squarings and 1 product, out
    assert counts == {1 + (1 << 5) - 2 + 120 * 6 + 1}


@pytest.mark.parametrize("backend", KERNELS)
def test_crt_halves_with_and_without_blinding(k1024, backend: str) -> None:
    key = k1024.key
    r = rng(7)
    for c in (0, 1, 2, key.n - 1, key.p, key.q, key.p * 2, key.q * (key.p - 1),
              *(r.randrange(key.n) for _ in range(10))):
        want = (pow(c, key.dp, key.p), pow(c, key.dq, key.q))
        assert crt_halves(c, key, backend=backend) == want
        assert crt_halves(c, key, backend=backend, blind_bits=0) == want
        assert crt_halves(c, key, backend=backend, blind_bits=128) == want


@pytest.mark.parametrize("backend", KERNELS)
def test_kernel_contract_on_unequal_primes_and_extreme_exponents(backend: str) -> None:
    """Primes of different lengths, exponents 0, 1 and all ones at the stated exp_bits."""
    import gmpy2

    kernel = resolve_backend(backend)
    r = rng(13)
    p = int(gmpy2.next_prime(r.getrandbits(700) | 1 << 699))
    q = int(gmpy2.next_prime(r.getrandbits(400) | 1 << 399))
    bits = 700 + 64
    for c in (0, 1, p * q - 1, p, q, r.randrange(p * q)):
        for dp, dq in ((0, 0), (1, 1), ((1 << bits) - 1, (1 << bits) - 1), (r.getrandbits(bits), r.getrandbits(400))):
            assert kernel(c, p, dp, q, dq, bits) == (pow(c, dp, p), pow(c, dq, q))


def test_blinding_changes_the_exponent_the_kernel_sees(k1024) -> None:
    key = k1024.key
    seen: list[tuple[int, int, int]] = []

    def spy(c, p, dp, q, dq, bits):
        seen.append((dp, dq, bits))
        return python_halves(c, p, dp, q, dq, bits)

    exp.register_backend("spy", spy)
    try:
        crt_halves(5, key, backend="spy")
        crt_halves(5, key, backend="spy")
        crt_halves(5, key, backend="spy", blind_bits=0)
    finally:
        exp.unregister_backend("spy")
    (dp1, dq1, b1), (dp2, dq2, b2), (dp0, dq0, b0) = seen
    assert b1 == b2 == 512 + 64 and b0 == 512
    assert dp1 != dp2 and dq1 != dq2 and (dp0, dq0) == (key.dp, key.dq)
    assert dp1 % (key.p - 1) == key.dp and dq2 % (key.q - 1) == key.dq
    assert max(dp1, dq1, dp2, dq2) < 1 << b1


def test_backend_errors(k1024) -> None:
    with pytest.raises(ParameterError, match="^backend: unknown backend 'gpu'; choose one of: auto, python, native"):
        crt_halves(2, k1024.key, backend="gpu")
    with pytest.raises(ParameterError, match=r"^c: out of range: need 0 <= c < n$"):
        crt_halves(k1024.key.n, k1024.key)
    with pytest.raises(ParameterError, match="^blind_bits: must be between 0 and 256, got -1$"):
        crt_halves(2, k1024.key, blind_bits=-1)
    with pytest.raises(ParameterError, match="^backend: 'auto' is reserved$"):
        exp.register_backend("auto", python_halves)


def test_auto_falls_back_to_python_until_native_provides_the_kernel() -> None:
    import modforge.native as native

    if native.available() and hasattr(native, "rsa_crt_halves"):
        assert resolve_backend("auto") is native.rsa_crt_halves
    else:
        assert resolve_backend("auto") is python_halves
        with pytest.raises(ParameterError, match="^backend: the native RSA kernel is not available"):
            resolve_backend("native")
