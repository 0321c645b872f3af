"""BLS12-377 fields, G1 forms and the seed's twisted Edwards form against independent oracles.

The oracles: the published constants of the curve (typed here from the specification, never from the
model), affine chord-and-tangent addition, [r]P == O for membership, and the curve equations.
"""

from __future__ import annotations

import random

import pytest

from modforge.zk import bls12_377 as g
from modforge.zk.edwards import EDWARDS, EdwardsForm, NoEdwardsImage

P = g.BLS12_377
SEED = 20261127

# Published values (the BLS12-377 specification as arkworks and gnark-crypto state them).
PUBLISHED_Q = int(
    "0x01ae3a4617c510eac63b05c06ca1493b1a22d9f300f5138f1ef3622fba094800170b5d44300000008508c00000000001", 16
)
PUBLISHED_R = 0x12AB655E9A2CA55660B44D1E5C37B00159AA76FED00000010A11800000000001
PUBLISHED_COFACTOR = 0x170B5D44300000000000000000000000


def _probably_prime(n: int) -> bool:
    """Miller-Rabin with fixed bases: an oracle independent of the model's derivation."""
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> random.Random:
    seed = SEED + sum(map(ord, request.node.name))
    print(f"seed={seed}")
    return random.Random(seed)


# --------------------------------------------------------------------------------------------- params


def test_derived_moduli_match_the_published_ones() -> None:
    assert P.q == PUBLISHED_Q
    assert P.r == PUBLISHED_R
    assert P.cofactor == PUBLISHED_COFACTOR
    assert (P.q_bits, P.r_bits) == (377, 253)


def test_moduli_are_prime_and_the_group_order_splits() -> None:
    assert _probably_prime(P.q) and _probably_prime(P.r)
    assert P.curve_order == P.cofactor * P.r
    assert (P.q - 1) % (1 << P.q_two_adicity) == 0 and ((P.q - 1) >> P.q_two_adicity) % 2 == 1


def test_generator_is_on_the_curve_and_of_order_r() -> None:
    gen = P.generator
    assert g.is_on_curve(P, gen)
    assert g.affine_mul(P, gen, P.r) is None  # affine double-and-add: the oracle
    assert g.affine_mul(P, gen, P.r - 1) == g.affine_neg(P, gen)


def test_endomorphism_constants() -> None:
    assert pow(P.beta, 3, P.q) == 1 and P.beta != 1
    lam = P.endomorphism_eigenvalue
    assert (lam * lam + lam + 1) % P.r == 0
    gen = P.generator
    assert g.affine_mul(P, gen, lam) == (P.beta * gen[0] % P.q, gen[1])


def test_montgomery_constants_and_product(rng: random.Random) -> None:
    for modulus, limbs in ((P.q, 6), (P.r, 4)):
        m = g.Montgomery(modulus)
        assert m.limbs == limbs and m.r == 1 << (64 * limbs)
        assert (m.n0 * modulus) % (1 << 64) == (1 << 64) - 1
        assert m.r2 == pow(2, 128 * limbs, modulus)
        cases = [0, 1, modulus - 1, modulus // 2, (1 << 64) - 1] + [rng.randrange(modulus) for _ in range(50)]
        for a in cases:
            for b in cases[:8]:
                assert m.mul(a, b) == a * b * pow(m.r, -1, modulus) % modulus, (a, b)
            assert m.from_mont(m.to_mont(a)) == a


def test_sqrt(rng: random.Random) -> None:
    assert g.sqrt_fq(P, 0) == 0
    for _ in range(20):
        a = rng.randrange(P.q)
        root = g.sqrt_fq(P, a * a)
        assert root is not None and root * root % P.q == a * a % P.q
    assert g.sqrt_fq(P, P.q_nonresidue) is None


# --------------------------------------------------------------------------------------------- G1 forms


def _pairs(rng: random.Random) -> list[tuple[g.Affine, g.Affine]]:
    a = g.random_g1(P, rng)
    b = g.random_g1(P, rng)
    off = g.random_curve_point(P, rng)  # formulas hold on all of E(Fq), not only G1
    return [
        (None, None), (a, None), (None, a), (a, a), (a, g.affine_neg(P, a)), (a, b), (off, a), (off, off),
        (EDWARDS.exceptional_points[0], EDWARDS.exceptional_points[0]),  # order 2: doubles to O
    ]


def test_jacobian_formulas_match_affine(rng: random.Random) -> None:
    for a, b in _pairs(rng):
        expect = g.affine_add(P, a, b)
        ja, jb = g.to_jacobian(a), g.to_jacobian(b)
        assert g.to_affine_jacobian(P, g.jacobian_add(P, ja, jb)) == expect, (a, b)
        assert g.to_affine_jacobian(P, g.jacobian_add_affine(P, ja, b)) == expect, (a, b)
        # a non-trivial Z: the formulas must not assume Z = 1
        ja2 = g.jacobian_add(P, g.jacobian_double(P, ja), g.to_jacobian(g.affine_neg(P, a)))
        assert g.to_affine_jacobian(P, g.jacobian_add_affine(P, ja2, b)) == expect, (a, b)
        assert g.to_affine_jacobian(P, g.jacobian_double(P, ja)) == g.affine_add(P, a, a)


def test_xyzz_formulas_match_affine(rng: random.Random) -> None:
    for a, b in _pairs(rng):
        expect = g.affine_add(P, a, b)
        ea, eb = g.to_xyzz(a), g.to_xyzz(b)
        assert g.to_affine_xyzz(P, g.xyzz_add(P, ea, eb)) == expect, (a, b)
        assert g.to_affine_xyzz(P, g.xyzz_add_affine(P, ea, b)) == expect, (a, b)
        ea2 = g.xyzz_add(P, g.xyzz_double(P, ea), g.to_xyzz(g.affine_neg(P, a)))
        assert g.to_affine_xyzz(P, g.xyzz_add_affine(P, ea2, b)) == expect, (a, b)
        assert g.to_affine_xyzz(P, g.xyzz_double(P, ea)) == g.affine_add(P, a, a)


def test_scalar_multiplication_matches_affine(rng: random.Random) -> None:
    a = g.random_curve_point(P, rng)
    for k in (0, 1, 2, 3, -1, P.r - 1, P.r, rng.randrange(1 << 40)):
        assert g.mul(P, a, k) == g.affine_mul(P, a, k), k


def test_fast_subgroup_check_agrees_with_the_definition(rng: random.Random) -> None:
    cases: list[g.Affine] = [None, P.generator, g.random_g1(P, rng), *EDWARDS.exceptional_points]
    for _ in range(6):
        off = g.random_curve_point(P, rng)
        cases += [off, g.mul(P, off, P.cofactor), g.mul(P, off, P.r)]  # outside, cleared, pure cofactor part
    verdicts = [g.in_subgroup(P, c) for c in cases]
    assert verdicts == [g.in_subgroup_naive(P, c) for c in cases]
    assert True in verdicts and False in verdicts
    assert not g.in_subgroup(P, (P.generator[0], P.generator[1] + 1))  # off the curve


# --------------------------------------------------------------------------------------------- Edwards


def test_edwards_constants_are_consistent() -> None:
    e = EDWARDS
    q = P.q
    assert e.alpha == q - 1
    assert 3 * e.alpha * e.alpha % q * e.s % q * e.s % q == 1  # s = 1/sqrt(3 alpha^2)
    x, y = P.generator  # the Montgomery image satisfies B v^2 = u^3 + A u^2 + u
    u, v = e.s * (x - e.alpha) % q, e.s * y % q
    assert (e.montgomery_b * v * v - u**3 - e.montgomery_a * u * u - u) % q == 0
    assert (e.c * e.c + e.a_unscaled) % q == 0  # c^2 = -a'
    assert e.d == -e.d_unscaled * g.inv(e.a_unscaled, q) % q
    # d is a square here (the full 2-torsion is rational), so the formulas are complete only on odd-order
    # subgroups such as G1: the reason the seed sends the exceptional points to the host.
    assert g.is_square(P, e.d)
    assert e.k == 4 * e.d % q


def test_exceptional_points_are_named_and_outside_g1() -> None:
    e = EDWARDS
    assert len(e.exceptional_points) == 4
    for point in e.exceptional_points:
        assert g.is_on_curve(P, point) and not g.in_subgroup_naive(P, point)
        with pytest.raises(NoEdwardsImage):
            e.to_edwards(point)
        assert g.mul(P, point, 4) is None  # orders 2 and 4
    assert e.to_edwards((e.alpha, 0)) == (0, P.q - 1)
    assert e.from_edwards((0, P.q - 1)) == (e.alpha, 0)
    assert e.to_edwards(None) == (0, 1) and e.from_edwards((0, 1)) is None


def test_map_round_trips_and_is_a_homomorphism(rng: random.Random) -> None:
    e = EDWARDS
    points = [P.generator, g.random_g1(P, rng), g.random_curve_point(P, rng), g.random_curve_point(P, rng)]
    for a in points:
        ea = e.to_edwards(a)
        assert e.is_on_edwards(ea)
        assert e.from_edwards(ea) == a
    for a in points:
        for b in points[:2]:
            assert e.from_edwards(e.affine_add(e.to_edwards(a), e.to_edwards(b))) == g.affine_add(P, a, b)


def test_extended_and_bucket_formulas_match_affine(rng: random.Random) -> None:
    e = EDWARDS
    a, b = g.random_g1(P, rng), g.random_g1(P, rng)
    neutral = (0, 1)
    cases = [(a, b), (a, a), (a, g.affine_neg(P, a)), (None, a), (a, None), (None, None)]
    for wa, wb in cases:
        expect = g.affine_add(P, wa, wb)
        ea, eb = e.to_edwards(wa), e.to_edwards(wb)
        ext = e.extended_add(e.to_extended(ea), e.to_extended(eb))
        assert e.from_edwards(e.extended_to_affine(ext)) == expect
        # the seed's adder, from a bucket that has already absorbed one addition (Z != 1)
        bucket = e.bucket_add(e.bucket_add(e.bucket_identity, e.precompute(ea)), e.precompute(neutral))
        bucket = e.bucket_add(bucket, e.precompute(eb))
        assert e.from_edwards(e.extended_to_affine(e.bucket_to_extended(bucket))) == expect
        assert e.precomputed_neg(e.precompute(eb)) == e.precompute((-eb[0] % P.q, eb[1]))


def test_edwards_form_is_a_value() -> None:
    assert EdwardsForm() == EDWARDS and hash(EdwardsForm()) == hash(EDWARDS)
