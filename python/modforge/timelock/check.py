"""Error check on the running value: Gerbicz's product check, adapted to repeated squaring.

The solver advances in *segments* of ``B`` blocks of ``L`` squarings each,
starting from a value ``u_0`` that was verified (the last checkpoint).  With
``u_j = u_0^(2^(jL)) mod N`` the value after ``j`` blocks, it keeps the
running product ``d_j = u_0 * u_1 * ... * u_j mod N`` (one multiplication per
block).  If every block is right, then for any ``m >= 1``::

    u_0 * d_(m-1)^(2^L) = u_0 * prod_{j<m} u_j^(2^L) = u_0 * prod_{1<=j<=m} u_j = d_m

so the whole segment is verified by ``L`` extra squarings and one
multiplication.  Why a wrong block cannot pass: write ``u'_j`` for the values
actually computed and ``e_j = u'_j / u'_(j-1)^(2^L)`` for the error of block
``j`` (``e_j = 1`` when block ``j`` squared its input correctly; later blocks
square the wrong value correctly, so a single fault gives exactly one
``e_j != 1``).  Then ``d_m / (u_0 * d_(m-1)^(2^L)) = e_1 * e_2 * ... * e_m``: the
identity holds if and only if the errors multiply to 1, which independent
faults do only with negligible probability.  Two more cheap conditions close
the gaps of the bare identity:

* ``gcd(d_m, N) == 1``: a fault that sends a value to 0 (or any non-unit)
  would make both sides 0 and pass; ``u_0`` is a unit, so every correct
  ``u_j`` is one, and so is their product;
* ``d_(m-1) * u'_m == d_m``: the value kept for the next segment is the one
  that went into the product (a fault that hits the final value after it was
  multiplied in would otherwise slip through).

Cost per segment of ``S = B*L`` squarings: ``L`` squarings and ``B + 2``
multiplications (a multiplication costs ``c`` squarings, ``c`` measured), so the
relative overhead is ``(L + (B + 2) c) / (B L)``, about ``2 sqrt(c / S)`` when
``L = sqrt(c S)``.  :func:`plan_segment` picks that ``L``; :func:`measure_overhead`
times it against the same squarings without the check.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

from ..arith.base import ParameterError

CHECK_NAME = "gerbicz-product"


@dataclass(frozen=True)
class SegmentPlan:
    """One checked segment: ``blocks`` blocks of ``block`` squarings."""

    block: int
    blocks: int

    def __post_init__(self) -> None:
        if self.block < 1 or self.blocks < 1:
            raise ParameterError("segment", f"block and blocks must be >= 1, got {self.block} and {self.blocks}")

    @property
    def steps(self) -> int:
        return self.block * self.blocks

    @property
    def extra_squarings(self) -> int:
        return self.block

    @property
    def extra_multiplications(self) -> int:
        return self.blocks + 2

    def overhead(self, mul_cost: float = 1.0) -> float:
        """Extra work of the check relative to the segment's squarings (``mul_cost`` in squarings)."""
        return (self.extra_squarings + self.extra_multiplications * mul_cost) / self.steps


def plan_segment(target_steps: int, remaining: int, mul_cost: float = 1.0) -> SegmentPlan:
    """The segment of at most ``min(target_steps, remaining)`` squarings with the least check overhead."""
    if remaining < 1:
        raise ParameterError("remaining", f"must be >= 1, got {remaining}")
    steps = max(1, min(int(target_steps), remaining))
    block = max(1, min(steps, round(math.sqrt(max(mul_cost, 1e-3) * steps))))
    if steps == remaining and steps % block:
        # The last segment: a block length within a factor 2 of the best that divides what is left
        # finishes in one segment (costing at most 25% more check) instead of a few small ones.
        for delta in range(1, block):
            for cand in (block - delta, block + delta):
                if block // 2 <= cand <= min(steps, 2 * block) and cand >= 1 and steps % cand == 0:
                    return SegmentPlan(block=cand, blocks=steps // cand)
    return SegmentPlan(block=block, blocks=max(1, steps // block))


@dataclass(frozen=True)
class Fault:
    """Test hook: corrupt the segment once, after block ``block`` (0-based).

    ``where``: ``"square"`` flips the low bit of the running value right after the
    block's squarings (an arithmetic fault); ``"after_mul"`` flips it after it was
    multiplied into the product; ``"product"`` flips the product instead.
    """

    block: int
    where: str = "square"


@dataclass
class SegmentOutcome:
    value: int              # the value after ``blocks_done`` blocks (verified when ``ok``)
    blocks_done: int
    block: int
    ok: bool
    reason: str = ""
    squaring_seconds: float = 0.0
    check_seconds: float = 0.0
    extra_squarings: int = 0
    extra_multiplications: int = 0
    events: list[str] = field(default_factory=list)

    @property
    def steps(self) -> int:
        return self.blocks_done * self.block


def _flip(value: int, modulus: int) -> int:
    return (value ^ 1) % modulus


def verify_segment(ring, u0: int, d_prev: int, d: int, value: int, block: int) -> str:
    """Empty string when the segment's product identity holds, else the reason it failed."""
    if math.gcd(d, ring.modulus) != 1:
        return "a value in the segment is not invertible modulo N"
    if ring.mul(u0, ring.sqr_n(d_prev, block)) != d:
        return "product identity u0 * d_prev^(2^L) == d failed"
    if ring.mul(d_prev, value) != d:
        return "the final value is not the one multiplied into the product"
    return ""


def run_segment(ring, u0: int, plan: SegmentPlan, *, fault: Fault | None = None,
                should_stop: Callable[[], bool] | None = None,
                on_block: Callable[[int], None] | None = None,
                advance: Callable[[int, int, int], int] | None = None) -> SegmentOutcome:
    """Square ``u0`` through the planned blocks, keep the product, verify it.

    ``should_stop`` is asked after each block; when it says yes the segment ends
    early and the blocks done so far are verified (the identity holds for any
    number of blocks).  ``on_block(blocks_done)`` reports progress.
    ``advance(value, offset, count)``, when given, does each block's squarings
    instead of ``ring.sqr_n(value, count)`` (``offset``: squarings done in this
    segment so far), e.g. to keep values inside the block: the check covers them
    as far as they lie on the chain it verifies.
    """
    perf = time.perf_counter
    L = plan.block
    y = u0
    d = u0
    d_prev = u0
    sq_time = 0.0
    ck_time = 0.0
    done = 0
    events: list[str] = []
    for j in range(plan.blocks):
        t0 = perf()
        y = ring.sqr_n(y, L) if advance is None else advance(y, j * L, L)
        t1 = perf()
        if fault is not None and fault.block == j and fault.where == "square":
            y = _flip(y, ring.modulus)
            events.append(f"fault injected into the running value after block {j}")
        d_prev = d
        d = ring.mul(d, y)
        if fault is not None and fault.block == j and fault.where == "after_mul":
            y = _flip(y, ring.modulus)
            events.append(f"fault injected into the running value after block {j} (after the product)")
        if fault is not None and fault.block == j and fault.where == "product":
            d = _flip(d, ring.modulus)
            events.append(f"fault injected into the product after block {j}")
        t2 = perf()
        sq_time += t1 - t0
        ck_time += t2 - t1
        done = j + 1
        if on_block is not None:
            on_block(done)
        if should_stop is not None and done < plan.blocks and should_stop():
            break
    t0 = perf()
    reason = verify_segment(ring, u0, d_prev, d, y, L)
    ck_time += perf() - t0
    return SegmentOutcome(value=y if not reason else u0, blocks_done=done, block=L, ok=not reason, reason=reason,
                          squaring_seconds=sq_time, check_seconds=ck_time, extra_squarings=L,
                          extra_multiplications=done + 2, events=events)


def open_ring(modulus: int, backend: str = "auto"):
    """``ModRing(modulus, backend)``; with ``auto``, GMP when the chosen backend cannot take this width.

    (``auto`` may pick a native backend whose width range, e.g. 256..4096 bits, excludes the modulus: the
    LCS35 toy has 8 bits.)
    """
    from ..arith.base import ParameterError as _PE
    from ..engine import ModRing

    try:
        return ModRing(modulus, backend)
    except _PE:
        if backend != "auto":
            raise
        return ModRing(modulus, "gmp")


def measure_mul_cost(ring, x: int, samples: int = 64) -> float:
    """Cost of one ``ring.mul`` in ``ring.sqr`` units (through the engine, call overhead included)."""
    perf = time.perf_counter
    z = ring.sqr_n(x, 64)          # full-width operands (x = 2 would make a product look cheap)
    k = 256
    t0 = perf()
    ring.sqr_n(z, k)
    sq = (perf() - t0) / k
    t0 = perf()
    y = z
    for _ in range(samples):
        y = ring.mul(y, z)
    mul = (perf() - t0) / samples
    return max(1.0, mul / max(sq, 1e-12))


def measure_rate(ring, x: int, seconds: float = 0.25) -> tuple[float, int, float]:
    """Squarings per second of ``ring.sqr_n`` from ``x``: (rate, squarings timed, seconds timed)."""
    perf = time.perf_counter
    k = 64
    total_k = 0
    total_s = 0.0
    y = x
    while True:
        t0 = perf()
        y = ring.sqr_n(y, k)
        dt = perf() - t0
        total_k += k
        total_s += dt
        if total_s >= seconds:
            break
        k = k * 2 if dt < seconds / 8 else k
    return total_k / total_s, total_k, total_s


def measure_overhead(ring, x: int = 3, segment_seconds: float = 5.0, repeats: int = 3) -> dict:
    """What the check costs on segments planned as the solver plans them (``segment_seconds`` each).

    Two figures: ``attributed_overhead``, the time spent in the check's own operations over the time
    spent squaring, timed around each block of the same run (both interleave every few milliseconds,
    so load from other processes affects them alike: the figure the solver reports as it runs); and
    ``ab_overhead``, CPU time of the checked segment against the same ``B`` calls of ``sqr_n(., L)``
    without the check, alternated ``repeats`` times (median; blurred by noise on a busy machine).
    """
    rate, _, _ = measure_rate(ring, x, 0.2)
    mul_cost = measure_mul_cost(ring, x)
    plan = plan_segment(int(rate * segment_seconds), 1 << 62, mul_cost)
    clock = time.process_time
    plain, checked, attributed = [], [], []
    for _ in range(repeats):
        t0 = clock()
        y = x
        for _ in range(plan.blocks):
            y = ring.sqr_n(y, plan.block)
        plain.append(clock() - t0)
        t0 = clock()
        out = run_segment(ring, x, plan)
        checked.append(clock() - t0)
        attributed.append(out.check_seconds / out.squaring_seconds)
        if not out.ok or out.value != y:
            raise RuntimeError(f"error check disagrees with plain squaring: {out.reason}")
    p, c = statistics.median(plain), statistics.median(checked)
    return {"bits": ring.bits, "backend": ring.backend, "segment_seconds": segment_seconds,
            "block": plan.block, "blocks": plan.blocks, "steps": plan.steps, "mul_cost": mul_cost,
            "predicted_overhead": plan.overhead(mul_cost), "attributed_overhead": statistics.median(attributed),
            "plain_cpu_seconds": p, "checked_cpu_seconds": c, "ab_overhead": (c - p) / p}
