"""Where to store checkpoints and how to compute proofs from them: every number derived here.

Costs are counted in *squarings* (one step of ``ring.sqr_n``) so that the
plan adapts to the backend: ``CostModel`` holds what one ``ring.mul``, one
``ring.sqr_n`` call and one 128-bit ``ring.pow`` cost relative to a squaring,
either measured on the ring (``CostModel.measure``) or the defaults below
(measured with the gmp backend at 2048 bits).

**Wesolowski** (``WesolowskiPlan``): the evaluation stores ``C_c = x^(2^(kappa*c))``
for ``c = 0 .. ceil(t/kappa) - 1``.  With ``q = floor(2^t / l)`` cut into
``kappa``-bit blocks ``D_c`` (``q = sum D_c 2^(kappa*c)``), the proof is
``pi = prod C_c^(D_c)``: a multi-exponentiation computed by the bucket method
with windows of ``k`` bits, split over ``P`` processes by blocks of ``c``.
Per process it costs::

    mul * ceil(kappa/k) * (ceil(n/P) + 2^(k+1))  +  kappa      (n = ceil(t/kappa) checkpoints)

(``n/P`` bucket multiplications and ``2^(k+1)`` to sum the buckets per window,
``kappa`` squarings for the windows' shifts), plus ``call * n`` for stopping the
evaluation at every checkpoint.  ``kappa`` (a power of two) and ``k`` minimise
that sum subject to ``n`` checkpoints fitting the memory budget.

**Pietrzak** (``PietrzakPlan``): rounds ``i = 0 .. R-1`` halve the claim
``x_i^(2^T_i) = y_i`` with ``T_0 = t``, ``T_(i+1) = h_i = ceil(T_i / 2)``.  The
midpoint ``mu_i`` is a product of ``2^i`` powers ``x^(2^p)`` at positions ``p`` that
depend on ``t`` only, so the evaluation stores exactly those for the first
``depth`` rounds (``2^depth - 1`` values); ``mu_i`` is then combined with
``2^i - 1`` exponentiations by 128-bit challenges.  Later rounds compute
``mu_i = x_i^(2^h_i)`` directly, ``sum_(i >= depth) h_i ~ t / 2^depth`` squarings
in all.  ``depth`` minimises ``sum_(i >= depth) h_i + (pow128 + mul) * 2^depth / P``.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from functools import cached_property

DEFAULT_MEMORY_BYTES = 64 << 20     # checkpoint storage budget (values only, Python ints)
INT_OVERHEAD_BYTES = 160            # per stored value beyond its digits: int header, dict slot, key
MAX_WINDOW_BITS = 22


def element_cost_bytes(bits: int) -> int:
    return (bits + 7) // 8 + INT_OVERHEAD_BYTES


def max_checkpoints(bits: int, memory_bytes: int = DEFAULT_MEMORY_BYTES) -> int:
    """How many values of ``bits`` bits fit the budget (at least 1)."""
    return max(1, memory_bytes // element_cost_bytes(bits))


def physical_memory_bytes() -> int | None:
    """This machine's physical memory, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return None


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# Per checkpoint, evaluate() took about 2.5 us more than the plain loop (2026-11-22, 2048 bits, ifma:
# evaluate with and without WesolowskiPlan(2^22, 512, ...), medians of 7), against 0.8 us per value for
# the 256-value trace CostModel.measure times.  With the factor the plan for t = 2^24 keeps 16,384
# checkpoints instead of 32,768: eval + proof 1.133x against 1.161x, alternating, 3 runs each.
EVALUATION_CHECKPOINT_SCALE = 3.0


@dataclass(frozen=True)
class CostModel:
    """Cost of ring operations, in squarings."""

    mul: float = 3.0        # one ring.mul call
    call: float = 5.0       # fixed cost of one ring.sqr_n call (conversion, setup)
    pow128: float = 130.0   # one ring.pow with a 128-bit exponent
    checkpoint: float = 5.0  # extra cost of one evenly spaced checkpoint (ring.sqr_n_trace)
    native_multiexp: bool = False  # the ring multiplies out a Wesolowski proof itself (threads split bits)

    @classmethod
    def measure(cls, ring, repeats: int = 3) -> "CostModel":
        """Time the ring's operations (some milliseconds) and express them in squarings."""
        n = ring.modulus
        x = (n // 3) | 1
        y = (n // 5) | 1
        r = (1 << 128) - 159

        def best(fn, reps: int) -> float:
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                for _ in range(reps):
                    fn()
                times.append((time.perf_counter() - t0) / reps)
            return min(times)

        steps = 2048
        per_sqr = best(lambda: ring.sqr_n(x, steps), 1) / steps
        call = best(lambda: ring.sqr_n(x, 1), 32) / per_sqr - 1.0
        # Evenly spaced checkpoints come from one sqr_n_trace call per progress chunk, then each is
        # put in the group's canonical form and stored (as evaluation.evaluate does).
        def trace() -> dict[int, int]:
            return {i: min(v, n - v) for i, v in enumerate(ring.sqr_n_trace(x, 1, 256))}

        # A short trace misses what a long evaluation adds per checkpoint (its bookkeeping, a dict of
        # tens of thousands of values growing): scaled by the ratio measured end to end.
        checkpoint = (best(trace, 1) / 256 / per_sqr - 1.0) * EVALUATION_CHECKPOINT_SCALE
        mul = best(lambda: ring.mul(x, y), 64) / per_sqr
        if getattr(ring, "has_native_multiexp", False):
            # The proof's products then run inside the native bucket multi-exponentiation, not through
            # one Python call each: price a product as it costs there.
            count = 512
            bases = [(x * (i + 2)) % n or 1 for i in range(count)]
            w = min(range(1, 17), key=lambda w: -(-128 // w) * (count + (2 << w)))
            products = -(-128 // w) * (count + (2 << w))
            spent = best(lambda: ring.multiexp(bases, [r] * count), 1) / per_sqr
            mul = min(mul, max((spent - 128) / products, 0.3))
        pw = best(lambda: ring.pow(x, r), 4) / per_sqr
        return cls(mul=max(mul, 0.3), call=max(call, 0.0), pow128=max(pw, 64.0), checkpoint=max(checkpoint, 0.0),
                   native_multiexp=bool(getattr(ring, "has_native_multiexp", False)))


# ---------------------------------------------------------------------------------------------- Wesolowski


@dataclass(frozen=True)
class WesolowskiPlan:
    """Checkpoints every ``kappa`` squarings; the proof's bucket windows have ``window`` bits."""

    t: int
    kappa: int
    window: int
    parts: int = 1

    @property
    def checkpoints(self) -> int:
        return -(-self.t // self.kappa)

    def positions(self) -> range:
        return range(0, self.checkpoints * self.kappa, self.kappa)

    def proof_cost(self, cost: CostModel) -> float:
        """Squarings one process spends on its share of the proof (after the evaluation)."""
        return wesolowski_proof_cost(self.t, self.kappa, self.window, self.parts, cost)

    def as_dict(self) -> dict:
        return {"kappa": self.kappa, "window_bits": self.window, "checkpoints": self.checkpoints,
                "parts": self.parts}


def wesolowski_proof_cost(t: int, kappa: int, window: int, parts: int, cost: CostModel) -> float:
    n = -(-t // kappa)
    if cost.native_multiexp:
        # One native call; each of the `parts` threads takes every base over its own slice of the
        # kappa exponent bits (its own bucket sums), then the slices combine by Horner.
        windows = -(-kappa // (parts * window))
        return cost.mul * windows * (n + (2 << window)) + kappa + cost.call
    windows = -(-kappa // window)
    share = -(-n // parts)
    return cost.mul * windows * (share + (2 << window)) + kappa + cost.call * windows


def best_window(t: int, kappa: int, parts: int, cost: CostModel) -> int:
    """The window width ``k`` minimising the proof cost for given checkpoints."""
    return min(range(1, MAX_WINDOW_BITS + 1), key=lambda k: (wesolowski_proof_cost(t, kappa, k, parts, cost), k))


def plan_wesolowski(t: int, limit: int, parts: int = 1, cost: CostModel = CostModel()) -> WesolowskiPlan:
    """Choose ``kappa`` (a power of two, at most ``limit`` checkpoints) and the window."""
    best: tuple[float, WesolowskiPlan] | None = None
    kappa = 1
    while True:
        n = -(-t // kappa)
        if n <= limit:
            k = best_window(t, kappa, parts, cost)
            total = wesolowski_proof_cost(t, kappa, k, parts, cost) + cost.checkpoint * n
            if best is None or total < best[0]:
                best = (total, WesolowskiPlan(t, kappa, k, parts))
        if kappa >= t:
            break
        kappa *= 2
    assert best is not None
    return best[1]


# ---------------------------------------------------------------------------------------------- Pietrzak


def pietrzak_lengths(t: int) -> list[int]:
    """``T_i`` for every round (before the odd step): ``T_0 = t``, ``T_(i+1) = ceil(T_i/2)``, while ``T_i > 1``."""
    if t < 1:
        raise ValueError("t must be positive")
    out = []
    while t > 1:
        out.append(t)
        t = (t + 1) // 2
    return out


def pietrzak_rounds(t: int) -> int:
    """Number of midpoints in a Pietrzak proof of delay ``t``: ``ceil(log2 t)``."""
    return len(pietrzak_lengths(t))


@dataclass(frozen=True)
class PietrzakPlan:
    """The first ``depth`` rounds take their midpoints from stored values."""

    t: int
    depth: int
    parts: int = 1

    @cached_property
    def lengths(self) -> list[int]:
        return pietrzak_lengths(self.t)

    @property
    def halves(self) -> list[int]:
        """``h_i = ceil(T_i / 2)``: the exponent ``2^h_i`` of round ``i``'s midpoint."""
        return [(T + 1) // 2 for T in self.lengths]

    def offsets(self, i: int) -> list[int]:
        """``a(b)`` for ``b`` in ``[0, 2^i)``: the sum of ``h_j`` over the set bits ``j`` of ``b``."""
        sums = [0]
        for h in self.halves[:i]:
            sums = sums + [s + h for s in sums]
        return sums

    def round_positions(self, i: int) -> list[int]:
        """Round ``i``'s midpoint is ``prod_b (x^(2^p_b))^(E_b)`` for these ``p_b = h_i + a(b)``."""
        h = self.halves[i]
        return [h + a for a in self.offsets(i)]

    def positions(self) -> list[int]:
        out: set[int] = set()
        sums = [0]
        for h in self.halves[: self.depth]:
            out.update(h + s for s in sums)
            sums = sums + [s + h for s in sums]
        return sorted(out)

    def proof_cost(self, cost: CostModel) -> float:
        return pietrzak_proof_cost(self.t, self.depth, self.parts, cost)

    def as_dict(self) -> dict:
        return {"depth": self.depth, "rounds": len(self.lengths), "stored": len(self.positions()),
                "parts": self.parts}


def pietrzak_proof_cost(t: int, depth: int, parts: int, cost: CostModel) -> float:
    halves = [(T + 1) // 2 for T in pietrzak_lengths(t)]
    direct = sum(halves[depth:]) + cost.call * max(0, len(halves) - depth)
    combine = sum((1 << i) - 1 for i in range(depth)) * (cost.pow128 + cost.mul) / parts
    per_round = len(halves) * 3 * (cost.pow128 + cost.mul)
    return direct + combine + per_round


def plan_pietrzak(t: int, limit: int, parts: int = 1, cost: CostModel = CostModel()) -> PietrzakPlan:
    rounds = pietrzak_rounds(t)
    best = (math.inf, 0)
    for depth in range(rounds + 1):
        if (1 << depth) - 1 > limit:
            break
        total = pietrzak_proof_cost(t, depth, parts, cost) + cost.call * ((1 << depth) - 1)
        if total < best[0]:
            best = (total, depth)
    return PietrzakPlan(t, best[1], parts)
