"""The seed's MSM, bit-exact: signed-digit windows, Edwards buckets, running sums, window combination.

Seed 003 (003_5c7e6dc92c5cc8aa.txt, "MSM"): sum s_i P_i over BLS12-377 G1 by Pippenger's algorithm,
with the bucket accumulation on the FPGA and the rest on the host.  The design, as the issue and the
authors' write-up describe it, and as this model runs it:

1. each scalar (reduced mod r) is cut into ``windows`` signed digits; the widths are derived from the
   scalar size: 253 bits in 20 windows gives 13 windows of 13 bits and 7 of 12 (:attr:`MsmParams.widths`);
   a window of b bits has 2^(b-1) buckets, for digit magnitudes 1 .. 2^(b-1);
2. the top window's digit must not carry out.  Our choice (the seed does not say how it avoids it): a
   scalar above (r-1)/2 is replaced by r - s and its point negated (free in Edwards form), so scalars are
   below 2^252 and the top digit stays at most 2^(b-1); :attr:`MsmParams.top_digit_bound` checks it;
3. each point is mapped to the a = -1 twisted Edwards form and precomputed (``edwards.py``); the adder
   adds it (or its negation, for a negative digit) into bucket |d| - 1 of every window;
4. points with no Edwards image (``EdwardsForm.exceptional_points``) and the point at infinity go to the
   host, which multiplies them in Jacobian coordinates and adds the results at the end;
5. the host turns each window's buckets into sum_k k B_k with two running sums (from the top bucket
   down), combines the windows by Horner's rule (doublings by each window's width), converts the result
   to Weierstrass affine coordinates and adds the exceptional contributions.

:func:`msm` returns the result and a :class:`MsmTrace` of the named intermediate values (digits,
buckets, window sums) so that an RTL simulation can be compared stage by stage.  :func:`naive_msm` is
the independent oracle: each s_i P_i by double-and-add in Jacobian coordinates, summed.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from . import bls12_377 as g
from .bls12_377 import BLS12_377, Affine, Bls12Params
from .edwards import EdwardsForm

Bucket = tuple[int, int, int, int]


@dataclass(frozen=True)
class MsmParams:
    """The seed's MSM layout; the widths, offsets and bucket counts are derived from it."""

    curve: Bls12Params = BLS12_377
    windows: int = 20
    seed: str = "003_5c7e6dc92c5cc8aa.txt MSM (20 signed-digit windows: 13 of 13 bits, 7 of 12 bits)"

    @cached_property
    def scalar_bits(self) -> int:
        return self.curve.r_bits

    @cached_property
    def widths(self) -> tuple[int, ...]:
        """Window widths from the least significant up: the wider windows first, all within one bit."""
        base, wider = divmod(self.scalar_bits, self.windows)
        if base < 2:
            raise ValueError(f"{self.windows} windows leave fewer than 2 bits per window")
        return (base + 1,) * wider + (base,) * (self.windows - wider)

    @cached_property
    def offsets(self) -> tuple[int, ...]:
        out, at = [], 0
        for width in self.widths:
            out.append(at)
            at += width
        return tuple(out)

    @cached_property
    def bucket_counts(self) -> tuple[int, ...]:
        """2^(b-1) buckets for a b-bit signed window (digit magnitudes 1 .. 2^(b-1))."""
        return tuple(1 << (width - 1) for width in self.widths)

    @cached_property
    def half_r(self) -> int:
        """Scalars above this are replaced by r - s, with the point negated."""
        return (self.curve.r - 1) // 2

    @cached_property
    def top_digit_bound(self) -> int:
        """The largest top-window digit a reduced scalar can produce (the top digit plus a carry)."""
        top = self.half_r >> self.offsets[-1]
        bound = top + 1
        if bound > self.bucket_counts[-1]:
            raise ValueError("the top window would overflow its buckets")
        return bound


SEED_LAYOUT = MsmParams()


def reduce_scalar(params: MsmParams, s: int) -> tuple[int, bool]:
    """(s', negate): s mod r, or r - (s mod r) with the point to be negated, so that s' <= (r-1)/2."""
    s %= params.curve.r
    if s > params.half_r:
        return params.curve.r - s, True
    return s, False


def signed_digits(params: MsmParams, s: int) -> tuple[int, ...]:
    """The digits d_w with s = sum d_w 2^offset_w, |d_w| <= 2^(width_w - 1); s must be reduced."""
    assert 0 <= s <= params.half_r
    digits = []
    carry = 0
    last = params.windows - 1
    for w, (offset, width) in enumerate(zip(params.offsets, params.widths, strict=True)):
        d = ((s >> offset) & ((1 << width) - 1)) + carry
        half = 1 << (width - 1)
        if d > half and w != last:
            d -= 1 << width
            carry = 1
        else:
            carry = 0
        digits.append(d)
    assert digits[-1] <= params.top_digit_bound
    return tuple(digits)


def bucket_of(digit: int) -> int:
    """Bucket index for a non-zero digit (-1 for zero: no bucket)."""
    return abs(digit) - 1


@dataclass
class MsmTrace:
    """The named intermediate values of one run (for stage-by-stage comparison with hardware)."""

    digits: list[tuple[int, ...]] = field(default_factory=list)
    negated: list[bool] = field(default_factory=list)
    host_points: list[int] = field(default_factory=list)
    buckets: list[list[Bucket]] = field(default_factory=list)
    window_sums: list[Affine] = field(default_factory=list)
    bucket_additions: int = 0


def msm(
    points: Sequence[Affine],
    scalars: Sequence[int],
    params: MsmParams = SEED_LAYOUT,
    edwards: EdwardsForm | None = None,
    schedule: Iterable[tuple[int, int]] | None = None,
) -> tuple[Affine, MsmTrace]:
    """sum s_i P_i the seed's way; points must be in G1 or be exceptional (host) points.

    ``schedule`` is an order of (point index, window) additions, as the controller model issues them
    (the last two fields of ``msm_controller.simulate(..., record=True).schedule``); the default is point by point, window by window.
    Any order gives the same affine result; the buckets' projective values follow the order.
    """
    if len(points) != len(scalars):
        raise ValueError(f"{len(points)} points but {len(scalars)} scalars")
    curve = params.curve
    ed = edwards or EdwardsForm(curve)
    exceptional = set(ed.exceptional_points)
    trace = MsmTrace()
    trace.buckets = [[ed.bucket_identity] * count for count in params.bucket_counts]
    precomputed: dict[int, tuple[int, int, int]] = {}
    host_sum = g.JACOBIAN_INFINITY
    for i, (point, scalar) in enumerate(zip(points, scalars, strict=True)):
        reduced, negate = reduce_scalar(params, scalar)
        trace.negated.append(negate)
        if point is None or point in exceptional:
            trace.host_points.append(i)
            trace.digits.append((0,) * params.windows)
            host_sum = g.jacobian_add(curve, host_sum, g.jacobian_mul(curve, g.to_jacobian(point), scalar))
            continue
        trace.digits.append(signed_digits(params, reduced))
        x_e, y_e = ed.to_edwards(point)
        if negate:
            x_e = -x_e % curve.q
        precomputed[i] = ed.precompute((x_e, y_e))

    order = schedule if schedule is not None else ((i, w) for i in precomputed for w in range(params.windows))
    for i, w in order:
        d = trace.digits[i][w]
        if d == 0 or i not in precomputed:
            continue
        addend = precomputed[i] if d > 0 else ed.precomputed_neg(precomputed[i])
        row = trace.buckets[w]
        row[bucket_of(d)] = ed.bucket_add(row[bucket_of(d)], addend)
        trace.bucket_additions += 1

    # host: running sums per window, then Horner over the windows (all in extended coordinates)
    identity = (0, 1, 1, 0)
    window_sums = []
    for row in trace.buckets:
        running, total = identity, identity
        for bucket in reversed(row):
            running = ed.extended_add(running, ed.bucket_to_extended(bucket))
            total = ed.extended_add(total, running)
        window_sums.append(total)
    trace.window_sums = [ed.from_edwards(ed.extended_to_affine(ws)) for ws in window_sums]
    acc = window_sums[-1]
    for w in range(params.windows - 2, -1, -1):
        for _ in range(params.widths[w]):
            acc = ed.extended_add(acc, acc)
        acc = ed.extended_add(acc, window_sums[w])
    result = g.jacobian_add_affine(curve, host_sum, ed.from_edwards(ed.extended_to_affine(acc)))
    return g.to_affine_jacobian(curve, result), trace


def naive_msm(points: Sequence[Affine], scalars: Sequence[int], curve: Bls12Params = BLS12_377) -> Affine:
    """The oracle: sum of [s_i] P_i, each by double-and-add, in Jacobian coordinates."""
    acc = g.JACOBIAN_INFINITY
    for point, scalar in zip(points, scalars, strict=True):
        acc = g.jacobian_add(curve, acc, g.jacobian_mul(curve, g.to_jacobian(point), scalar % curve.r))
    return g.to_affine_jacobian(curve, acc)


def sample_points(n: int, rng: random.Random, curve: Bls12Params = BLS12_377) -> list[tuple[int, int]]:
    """n distinct-looking G1 points cheaply: two random multiples of G, then each the sum of the two
    before it (one affine addition per point instead of a scalar multiplication)."""
    out: list[tuple[int, int]] = []
    a, b = g.random_g1(curve, rng), g.random_g1(curve, rng)
    for _ in range(n):
        out.append(a)
        nxt = g.affine_add(curve, a, b)
        assert nxt is not None
        a, b = b, nxt
    return out
