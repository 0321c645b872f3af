"""QR+_N: canonical form, membership, hash-to-group, modulus sanity checks."""

from __future__ import annotations

import gmpy2
import pytest

from modforge.arith.base import ParameterError
from modforge.data import vdf_alliance_modulus
from modforge.vdf import Group, Reject

from .helpers import rsa, seeded


def test_canon_is_the_smaller_of_x_and_minus_x(rsa512) -> None:
    g = rsa512.group
    n = rsa512.n
    for x in (1, 2, g.half, g.half + 1, n - 2, n - 1, n + 5, -3):
        c = g.canon(x)
        assert 0 <= c <= g.half
        assert c in (x % n, (-x) % n)
    rng = seeded("canon")
    for _ in range(50):
        x, y = rng.randrange(1, n), rng.randrange(1, n)
        # |.| is a homomorphism onto Z_N^*/{+-1}: taking it once at the end equals taking it every step.
        assert g.canon(x * y) == g.canon(g.canon(x) * g.canon(y))


@pytest.mark.parametrize("value, problem", [
    (0, "is zero"), (-1, "is negative"), ("N", "is not reduced"), ("N+1", "is not reduced"),
    ("N-1", "canonical signed form"), ("half+1", "canonical signed form"), ("p", "shares a factor"),
    (1.0, "not an integer"), (True, "not an integer"),
])
def test_membership_rejects(rsa512, value, problem: str) -> None:
    g = rsa512.group
    x = {"N": rsa512.n, "N+1": rsa512.n + 1, "N-1": rsa512.n - 1, "half+1": g.half + 1, "p": rsa512.p}.get(value, value)
    assert problem in g.element_problem(x)
    with pytest.raises(Reject, match="^y "):
        g.check("y", x)


def test_membership_accepts_the_canonical_range(rsa512) -> None:
    g = rsa512.group
    for x in (1, 2, g.half):
        assert g.check("x", x) == x


def test_jacobi_test_is_exact_for_a_blum_modulus(rsa512) -> None:
    g = rsa512.group
    assert g.jacobi_applies                        # p = q = 3 mod 4 -> N = 1 mod 4
    w = g.canon(rsa512.order_two())
    assert gmpy2.jacobi(w, rsa512.n) == -1
    assert "Jacobi" in g.element_problem(w, square=True)
    assert g.element_problem(w) is None            # a group element, but no square
    rng = seeded("jacobi")
    for _ in range(40):
        s = g.canon(rng.randrange(2, rsa512.n) ** 2)
        assert g.element_problem(s, square=True) is None
        assert "Jacobi" in g.element_problem(g.canon(s * w), square=True)


def test_no_jacobi_test_when_n_is_3_mod_4() -> None:
    g = Group(vdf_alliance_modulus())
    assert g.modulus % 4 == 3 and not g.jacobi_applies
    assert g.element_problem(2, square=True) is None


def test_require_names_the_parameter_and_hints_at_the_class(rsa512) -> None:
    g = rsa512.group
    with pytest.raises(ParameterError, match=r"^x: .*canonical.*use N - x"):
        g.require("x", rsa512.n - 2)


def test_hash_to_group_lands_in_qr_plus_deterministically(rsa512, rsa1024) -> None:
    g = rsa512.group
    a = g.hash_to_group(b"seed")
    assert a == g.hash_to_group("seed") == g.hash_to_group(b"seed")
    assert g.element_problem(a, square=True) is None
    # A square modulo both primes: in QR_N, hence |a| in QR+_N.
    p, q = rsa512.p, rsa512.q
    assert gmpy2.legendre(a, p) * gmpy2.legendre(a, q) == 1
    assert (gmpy2.legendre(a, p), gmpy2.legendre(a, q)) in ((1, 1), (-1, -1))
    assert g.hash_to_group(b"seed2") != a
    assert rsa1024.group.hash_to_group(b"seed") != a
    values = {g.hash_to_group(bytes([i])) for i in range(64)}
    assert len(values) == 64


def test_fixed_width_encoding(rsa512) -> None:
    g = rsa512.group
    assert g.nbytes == 64
    assert g.to_hex(2) == "0x" + "00" * 63 + "02"
    assert len(g.encode(g.half)) == 64
    odd = rsa(1023, 5).group                      # ceil(1023/8) = 128 bytes
    assert odd.bits == 1023 and odd.nbytes == 128 and len(odd.to_hex(odd.modulus)) == 2 + 256


MODULI = {
    "prime": (int(gmpy2.next_prime(1 << 511)), "is prime"),
    "even": (2 * 3 ** 200, "must be odd"),
    "small": (101 * 103, "must have 256"),
    "small factor": (3 * int(gmpy2.next_prime(1 << 510)), "prime factor below 65536"),
    "square": (int(gmpy2.next_prime(1 << 200)) ** 2, "perfect power"),
}


@pytest.mark.parametrize("case", MODULI)
def test_modulus_sanity(case: str) -> None:
    modulus, problem = MODULI[case]
    with pytest.raises(ParameterError, match=f"^modulus: .*{problem}"):
        Group(modulus)
