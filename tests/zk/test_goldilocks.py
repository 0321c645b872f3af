"""The Goldilocks model against plain Python integers: the seed's reduction, its word widths, the roots."""

from __future__ import annotations

import random

import pytest
from modforge.arith.base import ParameterError
from modforge.zk import goldilocks as gl

P = 2**64 - 2**32 + 1           # seed 003, "NTT": the Solinas prime, written out here independently
MASK64 = 2**64 - 1
SEED = 20261127


def named_products() -> list[int]:
    """128-bit values that stress each correction of the reduction: no borrow / borrow, no carry / carry,
    results at and just past p."""
    edges = [0, 1, 2, P - 1, P, P + 1, 2**32 - 1, 2**32, 2**63, MASK64, 2**64, 2**96 - 1, 2**96, 2**128 - 1,
             (P - 1) ** 2, (P - 1) * (P - 2), MASK64 * MASK64, (2**64 - 2**32) * 2**64, 2**96 * (2**32 - 1),
             (2**32 - 1) << 64, ((2**32 - 1) << 64) | MASK64, (1 << 96) | 5]
    return [x for x in edges if 0 <= x < 2**128]


def check_reduction(x: int) -> None:
    r = gl.reduce128(x)
    assert r.result == x % P, f"x={x:#x}"
    assert 0 <= r.result < P
    # Each named value fits the width the model's docstring states.
    assert r.x_lo < 2**64 and r.x_mid < 2**32 and r.x_hi < 2**32, f"x={x:#x}"
    assert r.t0 < 2**64 and r.t1 < 2**64 and r.t2 < 2**64, f"x={x:#x}"
    assert r.t0 % P == (r.x_lo - r.x_hi) % P
    assert r.t1 == r.x_mid * (2**32 - 1)
    assert r.t2 % P == (r.t0 + r.t1) % P
    assert r.borrow == (r.x_lo < r.x_hi) and r.carry == (r.t0 + r.t1 >= 2**64)


@pytest.mark.parametrize("x", named_products())
def test_reduce128_named(x: int) -> None:
    check_reduction(x)


def test_reduce128_random() -> None:
    rng = random.Random(SEED)
    for i in range(20000):
        # Mix full-width products and products of canonical elements (what a transform feeds it).
        x = rng.getrandbits(128) if i % 2 else rng.randrange(P) * rng.randrange(P)
        try:
            check_reduction(x)
        except AssertionError:
            print(f"seed={SEED} case={i}")
            raise


def test_both_corrections_happen() -> None:
    """The named cases reach the borrow and the carry branches (else the test above proves little)."""
    results = [gl.reduce128(x) for x in named_products()]
    assert any(r.borrow for r in results) and any(r.carry for r in results)
    assert any(r.t2 >= P for r in results)


def test_reduce128_refuses_wide() -> None:
    with pytest.raises(ParameterError, match="^x: "):
        gl.reduce128(2**128)


def test_field_ops_random() -> None:
    rng = random.Random(SEED + 1)
    for _ in range(2000):
        a, b = rng.randrange(P), rng.randrange(P)
        assert gl.mul(a, b) == a * b % P
        assert gl.add(a, b) == (a + b) % P
        assert gl.sub(a, b) == (a - b) % P
    for a in (1, 2, P - 1, 2**32, rng.randrange(1, P)):
        assert gl.mul(gl.inverse(a), a) == 1
        assert gl.power(a, 12345) == pow(a, 12345, P)


def test_params_derive_the_prime() -> None:
    params = gl.GoldilocksParams()
    assert params.p == P and params.epsilon == 2**32 - 1 and params.two_adicity == 32
    # The identities the reduction stands on.
    assert 2**64 % P == 2**32 - 1 and 2**96 % P == P - 1


def test_seven_generates_the_multiplicative_group() -> None:
    """7 is a generator: 7^((p-1)/q) != 1 for every prime q | p - 1 (factored here by trial division)."""
    m, q, factors = P - 1, 2, set()
    while q * q <= m:
        while m % q == 0:
            factors.add(q)
            m //= q
        q += 1
    if m > 1:
        factors.add(m)
    assert factors == {2, 3, 5, 17, 257, 65537}
    assert all(pow(7, (P - 1) // q, P) != 1 for q in factors)


def test_roots_are_plonky3_and_zprize_table() -> None:
    """Published entries of Plonky3's TWO_ADIC_GENERATORS (= the ZPrize harness's root table):
    [1] = -1, [2] = 2^48, [32] = 0x185629dcda58878c; and each entry is the square of the next."""
    params = gl.GOLDILOCKS
    assert params.root_of_unity(0) == 1
    assert params.root_of_unity(1) == P - 1
    assert params.root_of_unity(2) == 2**48
    assert params.root_of_unity(32) == 1753635133440165772      # = 0x185629dcda58878c
    for log_n in range(32):
        assert pow(params.root_of_unity(log_n + 1), 2, P) == params.root_of_unity(log_n)
    for log_n in range(1, 33):
        w = params.root_of_unity(log_n)
        assert pow(w, 2**log_n, P) == 1 and pow(w, 2 ** (log_n - 1), P) == P - 1    # order exactly 2^log_n
    with pytest.raises(ParameterError, match="^log_n: "):
        params.root_of_unity(33)
