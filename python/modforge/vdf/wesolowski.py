"""Wesolowski's proof: ``pi = x^floor(2^t / l)``, checked by ``pi^l * x^(2^t mod l) == y``.

The prover never recomputes ``x^(2^i)``: ``q = floor(2^t / l)`` is cut into
``kappa``-bit blocks ``D_c`` matching the stored checkpoints
``C_c = x^(2^(kappa*c))``, so ``pi = prod_c C_c^(D_c)``, a multi-exponentiation
that splits into independent ranges of ``c`` (one per process).  The blocks
come from the identity ``floor(2^e / l) = 2^kappa * floor(2^(e-kappa) / l) +
floor((2^(e-kappa) mod l) * 2^kappa / l)``: walking ``c`` downwards carries
``2^(t - kappa*(c+1)) mod l`` along, one small product per block, so even
``t = 2^40`` never materialises ``q``.  See :mod:`modforge.vdf.plan` for the
cost and the choice of ``kappa`` and the window.
"""

from __future__ import annotations

import gmpy2

from ..engine import ModRing
from .evaluation import Evaluation, require_positions
from .fiat_shamir import challenge_prime
from .group import Group, Reject
from .parallel import ProofPool
from .plan import CostModel, best_window

TYPE = "wesolowski"


# Up to this t, q = floor(2^t / l) is formed whole by GMP (2^28 bits: 32 MiB) and cut into blocks: 20 ms
# at t = 2^24 against 30 ms for the streaming recurrence below, which never holds q.
WHOLE_QUOTIENT_MAX_T = 1 << 28


def quotient_blocks(t: int, kappa: int, l: int, count: int) -> list[int]:
    """``D_c = floor(2^t / l) >> (kappa*c)  mod 2^kappa`` for ``c < count`` (``kappa*(count-1) < t``)."""
    if t <= WHOLE_QUOTIENT_MAX_T and kappa % 8 == 0:
        q = int((gmpy2.mpz(1) << t) // l)
        step = kappa // 8
        raw = q.to_bytes(step * count + 1, "little")
        return [int.from_bytes(raw[step * c:step * (c + 1)], "little") for c in range(count)]
    blocks = [0] * count
    c = count - 1
    while c >= 0 and kappa * (c + 1) > t:      # the top, partial block: floor(2^e / l) with e < kappa
        blocks[c] = (1 << (t - kappa * c)) // l
        c -= 1
    if c >= 0:
        rem = pow(2, t - kappa * (c + 1), l)
        while c >= 0:
            shifted = rem << kappa
            blocks[c] = shifted // l
            rem = shifted % l
            c -= 1
    return blocks


def split(count: int, parts: int) -> list[tuple[int, int]]:
    parts = max(1, min(parts, count))
    edges = [count * i // parts for i in range(parts + 1)]
    return [(edges[i], edges[i + 1]) for i in range(parts) if edges[i] < edges[i + 1]]


def prove(evaluation: Evaluation, pool: ProofPool, cost: CostModel = CostModel()) -> int:
    """``pi`` for the evaluation's statement, from its checkpoints, on ``pool.parts`` processes."""
    plan = evaluation.wesolowski
    if plan is None:
        raise ValueError("the evaluation kept no Wesolowski checkpoints")
    group, t, kappa = evaluation.group, evaluation.t, plan.kappa
    require_positions(evaluation, plan.positions(), "a Wesolowski proof")
    l = challenge_prime(group, evaluation.x, evaluation.y, t, TYPE)
    count = plan.checkpoints
    blocks = quotient_blocks(t, kappa, l, count)
    # Blocks at or above bit t - 255 of q are zero; leave them out.
    live = [c for c in range(count) if blocks[c]]
    ring = pool.ring
    if ring.has_native_multiexp:
        # One native call: its threads split the exponent bits (each sums buckets over its own
        # windows only) and share the checkpoints, so nothing is copied to the helper processes.
        bases = [evaluation.values[kappa * c] for c in live]
        part = ring.multiexp(bases, [blocks[c] for c in live], threads=pool.parts)
        return group.canon(part)
    window = best_window(t, kappa, pool.parts, cost)   # the Python bucket method's windows
    tasks = []
    for lo, hi in split(len(live), pool.parts):
        cs = live[lo:hi]
        tasks.append(([evaluation.values[kappa * c] for c in cs], [blocks[c] for c in cs], kappa, window))
    pi = 1
    for part in pool.run("multiexp", tasks):
        if part is not None:
            pi = ring.mul(pi, part)
    return group.canon(pi)


def verify(group: Group, ring: ModRing, x: int, t: int, y: int, pi: int) -> None:
    """Raise Reject unless ``pi`` proves ``|x^(2^t)| = y`` in ``QR+_N``."""
    group.check("x", x)
    group.check("y", y, square=True)
    group.check("pi", pi)
    l = challenge_prime(group, x, y, t, TYPE)
    r = pow(2, t, l)
    if group.canon(ring.mul(ring.pow(pi, l), ring.pow(x, r))) != y:
        raise Reject("pi^l * x^(2^t mod l) != y: the proof does not hold for this (N, x, t, y)")
