"""BLS12-377: the base field Fq, the scalar field Fr and G1 in short Weierstrass form (seed 003).

Seed 003 (003_5c7e6dc92c5cc8aa.txt, "MSM"): the ZPrize MSM track is over "the BLS 12-377 G1 curve",
y^2 = x^3 + 1 over Fq, with scalars in Fr, the order of the prime-order subgroup G1.

Everything is derived from one value, :class:`Bls12Params`: the BLS12 family writes q, r and the G1
cofactor as polynomials in the curve's seed ``x`` (Barreto-Lynn-Scott 2002), so only ``x`` and the
curve coefficient ``b`` are parameters.  The one constant that cannot be derived is the generator,
which is a published choice (the one arkworks and gnark-crypto use); the tests check it is on the curve
and of order r.

Field elements are plain Python ints in [0, q).  Points:

* affine: a tuple ``(x, y)``, or ``None`` for the point at infinity;
* Jacobian: ``(X, Y, Z)`` with x = X/Z^2, y = Y/Z^3, infinity when Z = 0;
* XYZZ: ``(X, Y, ZZ, ZZZ)`` with x = X/ZZ, y = Y/ZZZ and ZZ^3 = ZZZ^2, infinity when ZZ = 0 (the bucket
  representation of arkworks and gnark-crypto: the cheapest mixed addition without inversion).

The formulas are the Explicit-Formulas Database ones for a = 0 (named at each function); each is
checked in tests/zk/test_bls12_377.py against affine addition, the independent oracle.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property

Affine = tuple[int, int] | None
Jacobian = tuple[int, int, int]
Xyzz = tuple[int, int, int, int]


@dataclass(frozen=True)
class Bls12Params:
    """One member of the BLS12 family: the curve y^2 = x^3 + b and its fields, all from the seed ``x``."""

    x: int = 0x8508C00000000001
    b: int = 1
    name: str = "BLS12-377"
    seed: str = "003_5c7e6dc92c5cc8aa.txt MSM (BLS12-377 G1)"

    @cached_property
    def r(self) -> int:
        """The order of G1 (and the scalar field modulus): x^4 - x^2 + 1."""
        return self.x**4 - self.x**2 + 1

    @cached_property
    def q(self) -> int:
        """The base field modulus: (x - 1)^2 r / 3 + x."""
        numerator = (self.x - 1) ** 2 * self.r
        assert numerator % 3 == 0
        return numerator // 3 + self.x

    @cached_property
    def cofactor(self) -> int:
        """#E(Fq) / r = (x - 1)^2 / 3."""
        assert (self.x - 1) ** 2 % 3 == 0
        return (self.x - 1) ** 2 // 3

    @cached_property
    def curve_order(self) -> int:
        """#E(Fq) = q + 1 - t with the BLS12 trace t = x + 1."""
        return self.q + 1 - (self.x + 1)

    @cached_property
    def q_bits(self) -> int:
        return self.q.bit_length()

    @cached_property
    def r_bits(self) -> int:
        return self.r.bit_length()

    @cached_property
    def q_two_adicity(self) -> int:
        return ((self.q - 1) & -(self.q - 1)).bit_length() - 1

    @cached_property
    def q_nonresidue(self) -> int:
        """The smallest quadratic non-residue of Fq (Tonelli-Shanks needs one)."""
        z = 2
        while pow(z, (self.q - 1) // 2, self.q) != self.q - 1:
            z += 1
        return z

    @cached_property
    def beta(self) -> int:
        """The cube root of unity in Fq for which (x, y) -> (beta x, y) acts on G1 as [-x^2]: the GLV
        endomorphism whose eigenvalue gives the fast subgroup check (Scott, ePrint 2021/1130)."""
        assert (self.q - 1) % 3 == 0
        z = 2
        while pow(z, (self.q - 1) // 3, self.q) == 1:
            z += 1
        root = pow(z, (self.q - 1) // 3, self.q)
        g = self.generator
        target = to_affine_jacobian(self, jacobian_mul(self, to_jacobian(g), self.endomorphism_eigenvalue))
        for candidate in (root, root * root % self.q):
            if (candidate * g[0] % self.q, g[1]) == target:
                return candidate
        raise AssertionError("no cube root of unity matches the eigenvalue -x^2")

    @cached_property
    def endomorphism_eigenvalue(self) -> int:
        """-x^2 mod r, a root of l^2 + l + 1 mod r (as r = x^4 - x^2 + 1)."""
        return -(self.x**2) % self.r

    @cached_property
    def generator(self) -> tuple[int, int]:
        """The published G1 generator (arkworks ``G1_GENERATOR_X/Y``, gnark-crypto ``g1GenAff``)."""
        return PUBLISHED_GENERATORS[(self.x, self.b)]


# The chosen generator cannot be derived; it is keyed by the curve it belongs to and checked in tests.
PUBLISHED_GENERATORS = {
    (0x8508C00000000001, 1): (
        0x008848DEFE740A67C8FC6225BF87FF5485951E2CAA9D41BB188282C8BD37CB5CD5481512FFCD394EEAB9B16EB21BE9EF,
        0x01914A69C5102EFF1F674F5D30AFEEC4BD7FB348CA3E52D96D182AD44FB82305C2FE3D3634A9591AFD82DE55559C8EA6,
    ),
}

BLS12_377 = Bls12Params()


# ---------------------------------------------------------------------------------------------------
# Fields


def inv(a: int, m: int) -> int:
    """a^-1 mod m; a must be non-zero mod m."""
    if a % m == 0:
        raise ZeroDivisionError("inverse of zero")
    return pow(a, -1, m)


def sqrt_fq(p: Bls12Params, a: int) -> int | None:
    """A square root of a in Fq (Tonelli-Shanks; q - 1 has a large power of two), or None."""
    q = p.q
    a %= q
    if a == 0:
        return 0
    if pow(a, (q - 1) // 2, q) != 1:
        return None
    s = p.q_two_adicity
    odd = (q - 1) >> s
    c = pow(p.q_nonresidue, odd, q)
    x = pow(a, (odd + 1) // 2, q)
    t = pow(a, odd, q)
    m = s
    while t != 1:
        i, t2 = 0, t
        while t2 != 1:
            t2 = t2 * t2 % q
            i += 1
        b = pow(c, 1 << (m - i - 1), q)
        x, c = x * b % q, b * b % q
        t, m = t * c % q, i
    return x


def is_square(p: Bls12Params, a: int) -> bool:
    return a % p.q == 0 or pow(a, (p.q - 1) // 2, p.q) == 1


@dataclass(frozen=True)
class Montgomery:
    """Montgomery form with R = 2^(64 limbs) (the native engine's representation); derived constants."""

    modulus: int

    @cached_property
    def limbs(self) -> int:
        return (self.modulus.bit_length() + 63) // 64

    @cached_property
    def r(self) -> int:
        return 1 << (64 * self.limbs)

    @cached_property
    def r2(self) -> int:
        return self.r * self.r % self.modulus

    @cached_property
    def n0(self) -> int:
        """-m^-1 mod 2^64: the per-word reduction factor."""
        return -pow(self.modulus, -1, 1 << 64) % (1 << 64)

    def to_mont(self, a: int) -> int:
        return a * self.r % self.modulus

    def from_mont(self, a: int) -> int:
        return a * inv(self.r, self.modulus) % self.modulus

    def mul(self, a: int, b: int) -> int:
        """Word-serial CIOS Montgomery product a b R^-1 mod m, as the native code computes it."""
        m, mask = self.modulus, (1 << 64) - 1
        t = 0
        for i in range(self.limbs):
            t += ((b >> (64 * i)) & mask) * a
            u = (t * self.n0) & mask
            t = (t + u * m) >> 64
        return t - m if t >= m else t


# ---------------------------------------------------------------------------------------------------
# Affine


def is_on_curve(p: Bls12Params, point: Affine) -> bool:
    if point is None:
        return True
    x, y = point
    q = p.q
    return 0 <= x < q and 0 <= y < q and (y * y - x * x * x - p.b) % q == 0


def affine_neg(p: Bls12Params, point: Affine) -> Affine:
    return None if point is None else (point[0], -point[1] % p.q)


def affine_add(p: Bls12Params, a: Affine, b: Affine) -> Affine:
    """The chord-and-tangent law, every case spelled out: the oracle the other forms are tested against."""
    if a is None:
        return b
    if b is None:
        return a
    q = p.q
    (x1, y1), (x2, y2) = a, b
    if x1 == x2:
        if (y1 + y2) % q == 0:
            return None
        slope = 3 * x1 * x1 * inv(2 * y1, q) % q
    else:
        slope = (y2 - y1) * inv(x2 - x1, q) % q
    x3 = (slope * slope - x1 - x2) % q
    return x3, (slope * (x1 - x3) - y1) % q


def affine_mul(p: Bls12Params, point: Affine, k: int) -> Affine:
    """[k] point by affine double-and-add (slow; an oracle for small tests)."""
    if k < 0:
        return affine_mul(p, affine_neg(p, point), -k)
    acc: Affine = None
    for bit in bin(k)[2:] if k else "":
        acc = affine_add(p, acc, acc)
        if bit == "1":
            acc = affine_add(p, acc, point)
    return acc


# ---------------------------------------------------------------------------------------------------
# Jacobian


JACOBIAN_INFINITY: Jacobian = (1, 1, 0)


def to_jacobian(point: Affine) -> Jacobian:
    return JACOBIAN_INFINITY if point is None else (point[0], point[1], 1)


def to_affine_jacobian(p: Bls12Params, j: Jacobian) -> Affine:
    x, y, z = j
    if z % p.q == 0:
        return None
    zi = inv(z, p.q)
    zi2 = zi * zi % p.q
    return x * zi2 % p.q, y * zi2 * zi % p.q


def jacobian_double(p: Bls12Params, j: Jacobian) -> Jacobian:
    """dbl-2009-l (a = 0): 2M + 5S."""
    q = p.q
    x1, y1, z1 = j
    if z1 == 0 or y1 == 0:
        return JACOBIAN_INFINITY
    a = x1 * x1 % q
    b = y1 * y1 % q
    c = b * b % q
    d = 2 * ((x1 + b) * (x1 + b) - a - c) % q
    e = 3 * a % q
    f = e * e % q
    x3 = (f - 2 * d) % q
    y3 = (e * (d - x3) - 8 * c) % q
    z3 = 2 * y1 * z1 % q
    return x3, y3, z3


def jacobian_add(p: Bls12Params, j1: Jacobian, j2: Jacobian) -> Jacobian:
    """add-2007-bl: 11M + 5S; falls back to doubling when the inputs are equal."""
    q = p.q
    x1, y1, z1 = j1
    x2, y2, z2 = j2
    if z1 == 0:
        return j2
    if z2 == 0:
        return j1
    z1z1 = z1 * z1 % q
    z2z2 = z2 * z2 % q
    u1 = x1 * z2z2 % q
    u2 = x2 * z1z1 % q
    s1 = y1 * z2 * z2z2 % q
    s2 = y2 * z1 * z1z1 % q
    h = (u2 - u1) % q
    rr = 2 * (s2 - s1) % q
    if h == 0:
        return jacobian_double(p, j1) if rr == 0 else JACOBIAN_INFINITY
    i = 4 * h * h % q
    jj = h * i % q
    v = u1 * i % q
    x3 = (rr * rr - jj - 2 * v) % q
    y3 = (rr * (v - x3) - 2 * s1 * jj) % q
    z3 = ((z1 + z2) * (z1 + z2) - z1z1 - z2z2) * h % q
    return x3, y3, z3


def jacobian_add_affine(p: Bls12Params, j1: Jacobian, a: Affine) -> Jacobian:
    """madd-2007-bl (Z2 = 1): 7M + 4S."""
    if a is None:
        return j1
    x1, y1, z1 = j1
    if z1 == 0:
        return to_jacobian(a)
    q = p.q
    x2, y2 = a
    z1z1 = z1 * z1 % q
    u2 = x2 * z1z1 % q
    s2 = y2 * z1 * z1z1 % q
    h = (u2 - x1) % q
    rr = 2 * (s2 - y1) % q
    if h == 0:
        return jacobian_double(p, j1) if rr == 0 else JACOBIAN_INFINITY
    hh = h * h % q
    i = 4 * hh % q
    jj = h * i % q
    v = x1 * i % q
    x3 = (rr * rr - jj - 2 * v) % q
    y3 = (rr * (v - x3) - 2 * y1 * jj) % q
    z3 = ((z1 + h) * (z1 + h) - z1z1 - hh) % q
    return x3, y3, z3


def jacobian_neg(p: Bls12Params, j: Jacobian) -> Jacobian:
    return j[0], -j[1] % p.q, j[2]


def jacobian_mul(p: Bls12Params, j: Jacobian, k: int) -> Jacobian:
    """[k] j by double-and-add from the top bit (variable time: for public scalars and tests)."""
    if k < 0:
        return jacobian_mul(p, jacobian_neg(p, j), -k)
    acc = JACOBIAN_INFINITY
    for bit in bin(k)[2:] if k else "":
        acc = jacobian_double(p, acc)
        if bit == "1":
            acc = jacobian_add(p, acc, j)
    return acc


def mul(p: Bls12Params, point: Affine, k: int) -> Affine:
    """[k] point in affine form, through Jacobian coordinates."""
    return to_affine_jacobian(p, jacobian_mul(p, to_jacobian(point), k))


# ---------------------------------------------------------------------------------------------------
# XYZZ


XYZZ_INFINITY: Xyzz = (1, 1, 0, 0)


def to_xyzz(point: Affine) -> Xyzz:
    return XYZZ_INFINITY if point is None else (point[0], point[1], 1, 1)


def to_affine_xyzz(p: Bls12Params, e: Xyzz) -> Affine:
    x, y, zz, zzz = e
    if zz % p.q == 0:
        return None
    return x * inv(zz, p.q) % p.q, y * inv(zzz, p.q) % p.q


def xyzz_double(p: Bls12Params, e: Xyzz) -> Xyzz:
    """dbl-2008-s-1 (a = 0): 6M + 3S."""
    q = p.q
    x1, y1, zz1, zzz1 = e
    if zz1 == 0 or y1 == 0:
        return XYZZ_INFINITY
    u = 2 * y1 % q
    v = u * u % q
    w = u * v % q
    s = x1 * v % q
    m = 3 * x1 * x1 % q
    x3 = (m * m - 2 * s) % q
    y3 = (m * (s - x3) - w * y1) % q
    return x3, y3, v * zz1 % q, w * zzz1 % q


def xyzz_add(p: Bls12Params, e1: Xyzz, e2: Xyzz) -> Xyzz:
    """add-2008-s: 12M + 2S; doubles when the inputs are equal."""
    q = p.q
    x1, y1, zz1, zzz1 = e1
    x2, y2, zz2, zzz2 = e2
    if zz1 == 0:
        return e2
    if zz2 == 0:
        return e1
    u1 = x1 * zz2 % q
    u2 = x2 * zz1 % q
    s1 = y1 * zzz2 % q
    s2 = y2 * zzz1 % q
    pp_ = (u2 - u1) % q
    rr = (s2 - s1) % q
    if pp_ == 0:
        return xyzz_double(p, e1) if rr == 0 else XYZZ_INFINITY
    pp = pp_ * pp_ % q
    ppp = pp_ * pp % q
    qq = u1 * pp % q
    x3 = (rr * rr - ppp - 2 * qq) % q
    y3 = (rr * (qq - x3) - s1 * ppp) % q
    return x3, y3, zz1 * zz2 * pp % q, zzz1 * zzz2 * ppp % q


def xyzz_add_affine(p: Bls12Params, e1: Xyzz, a: Affine) -> Xyzz:
    """madd-2008-s (ZZ2 = ZZZ2 = 1): 8M + 2S, the bucket accumulation step of arkworks."""
    if a is None:
        return e1
    x1, y1, zz1, zzz1 = e1
    if zz1 == 0:
        return to_xyzz(a)
    q = p.q
    x2, y2 = a
    u2 = x2 * zz1 % q
    s2 = y2 * zzz1 % q
    pp_ = (u2 - x1) % q
    rr = (s2 - y1) % q
    if pp_ == 0:
        return xyzz_double(p, e1) if rr == 0 else XYZZ_INFINITY
    pp = pp_ * pp_ % q
    ppp = pp_ * pp % q
    qq = x1 * pp % q
    x3 = (rr * rr - ppp - 2 * qq) % q
    y3 = (rr * (qq - x3) - y1 * ppp) % q
    return x3, y3, zz1 * pp % q, zzz1 * ppp % q


# ---------------------------------------------------------------------------------------------------
# Subgroup, sampling


def in_subgroup_naive(p: Bls12Params, point: Affine) -> bool:
    """[r] P == O: the definition, a full scalar multiplication (the oracle)."""
    return is_on_curve(p, point) and mul(p, point, p.r) is None


def in_subgroup(p: Bls12Params, point: Affine) -> bool:
    """The fast G1 membership test: phi(P) == [-x^2] P with phi(x, y) = (beta x, y) (Scott 2021, for
    BLS12 G1); a 128-bit scalar multiplication instead of a 253-bit one."""
    if point is None:
        return True
    if not is_on_curve(p, point):
        return False
    phi = (p.beta * point[0] % p.q, point[1])
    return mul(p, point, -(p.x**2)) == phi


def lift_x(p: Bls12Params, x: int) -> Affine:
    """A point with abscissa x (the root Tonelli-Shanks returns), or None if x^3 + b is not a square."""
    y = sqrt_fq(p, x * x * x + p.b)
    return None if y is None else (x % p.q, y)


def random_curve_point(p: Bls12Params, rng: random.Random) -> tuple[int, int]:
    """A uniformly random x with a point on E(Fq) (usually not in G1)."""
    while True:
        point = lift_x(p, rng.randrange(p.q))
        if point is not None:
            return point if rng.getrandbits(1) else (point[0], -point[1] % p.q)


def random_g1(p: Bls12Params, rng: random.Random) -> tuple[int, int]:
    """A random point of G1 as [k] G for a random non-zero k."""
    point = mul(p, p.generator, rng.randrange(1, p.r))
    assert point is not None
    return point
