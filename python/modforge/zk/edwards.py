"""The seed's scaled twisted Edwards form of BLS12-377 G1, with a = -1, and its 7-multiplication adder.

Seed 003 (003_5c7e6dc92c5cc8aa.txt, "MSM"; the authors' write-up describes the adder): the FPGA adds
points into buckets with "a fully pipelined ... point adder" in twisted Edwards coordinates.  This
module derives that form from the Weierstrass curve y^2 = x^3 + b instead of typing its constants:

1. Weierstrass -> Montgomery  B v^2 = u^3 + A u^2 + u: needs a root alpha of x^3 + b (a point of
   order 2) and s = 1/sqrt(3 alpha^2); then A = 3 alpha s, B = s, u = s (x - alpha), v = s y.
2. Montgomery -> twisted Edwards  a' x^2 + y^2 = 1 + d' x^2 y^2: a' = (A + 2)/B, d' = (A - 2)/B,
   x = u/v, y = (u - 1)/(u + 1).
3. Scaling to a = -1 (the cheaper Hisil-Wong-Carter-Dawson formulas): x -> c x with c = sqrt(-a'),
   which gives -x^2 + y^2 = 1 + d x^2 y^2 with d = -d'/a'.

Of the two square roots at steps 1 and 3 the smaller representative is taken that makes step 3
possible; the choice changes the map, not the curve's arithmetic.

Points in this module:

* affine Edwards: ``(x, y)``; the neutral element is (0, 1);
* extended: ``(X, Y, Z, T)`` with x = X/Z, y = Y/Z, T = XY/Z;
* the precomputed form of an input point, ``((y - x)/2, (y + x)/2, 4 d x y)``;
* the bucket form of a bucket value, ``(2(Y - X), 2(Y + X), 4Z, T)``.

The two scalings (halves in the point, doubles in the bucket) cancel, so the mixed addition
:func:`bucket_add` is 7 multiplications and 6 additions and its outputs are already in bucket form.

The map has no affine image for a few Weierstrass points (Montgomery v = 0 or u = -1, which land on
the Edwards curve's points at infinity): :attr:`EdwardsForm.exceptional_points` names them.  None is
in G1; the MSM model sends them (and the point at infinity, which has no affine input encoding) to the
host.  On G1, whose order r is odd, the unified formulas never hit their exceptional case: that
needs P1 - P2 to have even order.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .bls12_377 import BLS12_377, Affine, Bls12Params, inv, is_square, sqrt_fq

EdwardsAffine = tuple[int, int]
Extended = tuple[int, int, int, int]
Precomputed = tuple[int, int, int]
Bucket = tuple[int, int, int, int]


class NoEdwardsImage(ValueError):
    """A Weierstrass point whose image is one of the Edwards curve's points at infinity."""


@dataclass(frozen=True)
class EdwardsForm:
    """The a = -1 twisted Edwards model of ``curve`` and the maps both ways; every constant derived."""

    curve: Bls12Params = BLS12_377
    seed: str = "003_5c7e6dc92c5cc8aa.txt MSM (the pipelined twisted Edwards point adder)"

    @property
    def q(self) -> int:
        return self.curve.q

    @cached_property
    def alpha(self) -> int:
        """A root of x^3 + b in Fq: (alpha, 0) is the point of order 2 the Montgomery form is built on."""
        q, b = self.q, self.curve.b
        # x^3 = -b: with b = 1 the root -1 is immediate; other b would need a cube root in Fq.
        candidates = [-1 % q] if b == 1 else []
        for root in candidates:
            if (root * root * root + b) % q == 0:
                return root
        raise NotImplementedError("only b = 1 (alpha = -1) is derived here")

    @cached_property
    def _roots(self) -> tuple[int, int]:
        """(s, c): the two square roots, chosen as the module docstring says."""
        q = self.q
        three_alpha2 = 3 * self.alpha * self.alpha % q
        root3 = sqrt_fq(self.curve, three_alpha2)
        if root3 is None:
            raise ValueError("3 alpha^2 is not a square: no Montgomery form")
        for r3 in sorted((root3, q - root3)):
            s = inv(r3, q)
            a_te = (3 * self.alpha * s + 2) * inv(s, q) % q
            if is_square(self.curve, -a_te):
                c = sqrt_fq(self.curve, -a_te)
                assert c is not None
                return s, min(c, q - c)
        raise ValueError("-a' is not a square for either root: no a = -1 form")

    @property
    def s(self) -> int:
        return self._roots[0]

    @property
    def c(self) -> int:
        return self._roots[1]

    @cached_property
    def montgomery_a(self) -> int:
        return 3 * self.alpha * self.s % self.q

    @cached_property
    def montgomery_b(self) -> int:
        return self.s

    @cached_property
    def a_unscaled(self) -> int:
        return (self.montgomery_a + 2) * inv(self.montgomery_b, self.q) % self.q

    @cached_property
    def d_unscaled(self) -> int:
        return (self.montgomery_a - 2) * inv(self.montgomery_b, self.q) % self.q

    @cached_property
    def d(self) -> int:
        """d of -x^2 + y^2 = 1 + d x^2 y^2."""
        return -self.d_unscaled * inv(self.a_unscaled, self.q) % self.q

    @cached_property
    def k(self) -> int:
        """4d, the constant folded into each precomputed point's third coordinate."""
        return 4 * self.d % self.q

    @cached_property
    def half(self) -> int:
        return inv(2, self.q)

    @cached_property
    def exceptional_points(self) -> tuple[tuple[int, int], ...]:
        """Every Weierstrass point with no affine Edwards image, sorted.

        Montgomery v = 0 with u != 0: the two other points of order 2, x^2 + alpha x + alpha^2 = 0.
        Montgomery u = -1: x = alpha - 1/s, when x^3 + b is a square (both signs of y).
        """
        q, alpha = self.q, self.alpha
        found: set[tuple[int, int]] = set()
        disc = sqrt_fq(self.curve, -3 * alpha * alpha)
        if disc is not None:
            for sign in (1, -1):
                found.add(((-alpha + sign * disc) * self.half % q, 0))
        x = (alpha - inv(self.s, q)) % q
        y = sqrt_fq(self.curve, x * x * x + self.curve.b)
        if y is not None:
            found.update({(x, y), (x, -y % q)})
        return tuple(sorted(found))

    # ------------------------------------------------------------------------------------------------
    # maps

    def to_edwards(self, point: Affine) -> EdwardsAffine:
        """Weierstrass affine -> Edwards affine; raises :class:`NoEdwardsImage` for the exceptional points."""
        q = self.q
        if point is None:
            return (0, 1)
        x, y = point
        u = self.s * (x - self.alpha) % q
        v = self.s * y % q
        if u == 0 and v == 0:
            return (0, q - 1)  # (alpha, 0), of order 2, goes to (0, -1)
        if v == 0 or (u + 1) % q == 0:
            raise NoEdwardsImage(f"({x:#x}, {y:#x}) maps to a point at infinity of the Edwards curve")
        x_te = u * inv(v, q) % q
        y_te = (u - 1) * inv(u + 1, q) % q
        return self.c * x_te % q, y_te

    def from_edwards(self, point: EdwardsAffine) -> Affine:
        """Edwards affine -> Weierstrass affine (None for the neutral element (0, 1))."""
        q = self.q
        x_e, y_e = point
        if x_e == 0:
            if y_e == 1:
                return None
            if y_e == q - 1:
                return (self.alpha, 0)
            raise ValueError("not on the Edwards curve")
        u = (1 + y_e) * inv(1 - y_e, q) % q
        x_te = x_e * inv(self.c, q) % q
        v = u * inv(x_te, q) % q
        s_inv = inv(self.s, q)
        return (u * s_inv + self.alpha) % q, v * s_inv % q

    def is_on_edwards(self, point: EdwardsAffine) -> bool:
        x, y = point
        q = self.q
        return (-x * x + y * y - 1 - self.d * x * x % q * y * y) % q == 0

    # ------------------------------------------------------------------------------------------------
    # arithmetic

    def affine_add(self, p1: EdwardsAffine, p2: EdwardsAffine) -> EdwardsAffine:
        """The Edwards addition law for a = -1 (the affine oracle for the projective formulas)."""
        q = self.q
        (x1, y1), (x2, y2) = p1, p2
        t = self.d * x1 * x2 % q * y1 * y2 % q
        return (x1 * y2 + y1 * x2) * inv(1 + t, q) % q, (y1 * y2 + x1 * x2) * inv(1 - t, q) % q

    def to_extended(self, point: EdwardsAffine) -> Extended:
        return point[0], point[1], 1, point[0] * point[1] % self.q

    def extended_to_affine(self, e: Extended) -> EdwardsAffine:
        zi = inv(e[2], self.q)
        return e[0] * zi % self.q, e[1] * zi % self.q

    def extended_add(self, e1: Extended, e2: Extended) -> Extended:
        """add-2008-hwcd-3 (a = -1), unified: also doubles.  9M; the host's formula."""
        q = self.q
        x1, y1, z1, t1 = e1
        x2, y2, z2, t2 = e2
        a = (y1 - x1) * (y2 - x2) % q
        b = (y1 + x1) * (y2 + x2) % q
        c = 2 * self.d * t1 % q * t2 % q
        d = 2 * z1 * z2 % q
        e, f, g, h = b - a, d - c, d + c, b + a
        return e * f % q, g * h % q, f * g % q, e * h % q

    def extended_neg(self, e: Extended) -> Extended:
        return -e[0] % self.q, e[1], e[2], -e[3] % self.q

    def precompute(self, point: EdwardsAffine) -> Precomputed:
        """((y - x)/2, (y + x)/2, 4 d x y): what the host streams to the adder for each input point."""
        q = self.q
        x, y = point
        return (y - x) * self.half % q, (y + x) * self.half % q, self.k * x % q * y % q

    def precomputed_neg(self, p: Precomputed) -> Precomputed:
        """-(x, y) = (-x, y): swap the halves and negate 4dt (no multiplication)."""
        return p[1], p[0], -p[2] % self.q

    @cached_property
    def bucket_identity(self) -> Bucket:
        """The neutral element (0 : 1 : 1 : 0) in bucket form."""
        return self.to_bucket((0, 1, 1, 0))

    def to_bucket(self, e: Extended) -> Bucket:
        q = self.q
        x, y, z, t = e
        return 2 * (y - x) % q, 2 * (y + x) % q, 4 * z % q, t

    def bucket_to_extended(self, b: Bucket) -> Extended:
        """(2(Y-X), 2(Y+X), 4Z, T) -> (4X, 4Y, 4Z, 4T): the same point, scaled, without an inversion."""
        q = self.q
        u, v, w, t = b
        return (v - u) % q, (u + v) % q, w, 4 * t % q

    def bucket_add(self, b: Bucket, p: Precomputed) -> Bucket:
        """The seed's mixed addition: bucket + point -> bucket, 7 multiplications and 6 additions.

        With U = 2(Y1-X1), V = 2(Y1+X1), W = 4Z1 and the point's (y2-x2)/2, (y2+x2)/2, 4d t2, the
        products A, B are HWCD's, C and W are twice HWCD's C, D, so E F', G' H, F' G', E H are
        (2X3, 2Y3, 4Z3, T3) and two additions give the bucket form of the sum.
        """
        q = self.q
        u1, v1, w1, t1 = b
        ym, yp, k2 = p
        a = u1 * ym % q  # 1
        bb = v1 * yp % q  # 2
        c = t1 * k2 % q  # 3
        e = bb - a  # add 1
        h = bb + a  # add 2
        f = w1 - c  # add 3
        g = w1 + c  # add 4
        x3 = e * f % q  # 4: 2 X3
        y3 = g * h % q  # 5: 2 Y3
        z3 = f * g % q  # 6: 4 Z3
        t3 = e * h % q  # 7: T3
        return (y3 - x3) % q, (y3 + x3) % q, z3, t3  # adds 5, 6


EDWARDS = EdwardsForm()


@dataclass(frozen=True)
class ToyEdwards(EdwardsForm):
    """-x^2 + y^2 = 1 + d x^2 y^2 over a small prime p = 3 mod 4 (d the least non-square from 2): the
    adder's test curve below 377 bits.  Only the arithmetic of :class:`EdwardsForm` is used (no map from a
    Weierstrass curve); points come from :meth:`random_point`."""

    prime: int = 0

    @property
    def q(self) -> int:
        return self.prime

    @cached_property
    def d(self) -> int:
        return next(v for v in range(2, self.prime) if pow(v, (self.prime - 1) // 2, self.prime) == self.prime - 1)

    def random_point(self, rng) -> tuple[int, int]:
        p = self.prime
        while True:
            y = rng.randrange(p)
            den = (self.d * y * y + 1) % p
            if den == 0:
                continue
            rhs = (y * y - 1) * pow(den, -1, p) % p
            x = pow(rhs, (p + 1) // 4, p)
            if x * x % p == rhs:
                return x, y
