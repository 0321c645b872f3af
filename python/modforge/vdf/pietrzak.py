"""Pietrzak's halving proof.

The claim ``x_i^(2^T_i) = y_i`` (``x_0 = x``, ``T_0 = t``, ``y_0 = y``) is halved
each round.  If ``T_i`` is odd the claim is first replaced by the equivalent
``x_i^(2^(T_i+1)) = y_i^2`` (``y_i := |y_i^2|``, ``T_i := T_i + 1``), so the
prover may compute ``y^2`` but never needs to evaluate beyond ``t + log2 t``.
Then, with ``h = T_i / 2``, the prover sends ``mu_i = |x_i^(2^h)|``, the challenge
``r_i`` hashes the round (:mod:`modforge.vdf.fiat_shamir`), and
``x_(i+1) = |x_i^(r_i) * mu_i|``, ``y_(i+1) = |mu_i^(r_i) * y_i|``, ``T_(i+1) = h``.
After ``R = ceil(log2 t)`` rounds ``T_R = 1`` and the verifier checks
``|x_R^2| = y_R``.  Every ``mu_i`` must be a canonical square of ``QR+_N``.

The prover takes ``mu_i`` for the first ``depth`` rounds from values stored
during the evaluation (:class:`modforge.vdf.plan.PietrzakPlan`), folded with
the challenges so far; the remaining rounds, short by then, square directly.
"""

from __future__ import annotations

from typing import Callable

from ..engine import ModRing
from .evaluation import Evaluation, require_positions
from .fiat_shamir import round_challenge
from .group import Group, Reject
from .parallel import ProofPool, fold
from .plan import pietrzak_lengths

TYPE = "pietrzak"
PARALLEL_MIN_TERMS = 64     # fold smaller midpoints in the main process
# The round challenges hash T_i as a u64, and an odd t becomes t + 1 in round 0: t = 2^64 - 1 would need
# 2^64.  So a Pietrzak statement takes t up to 2^64 - 2 (Wesolowski's up to 2^64 - 1).
MAX_T = (1 << 64) - 2


def t_problem(t: int) -> str | None:
    """Why ``t`` cannot have a Pietrzak proof, or None."""
    if t > MAX_T:
        return (f"t = {t} is beyond a Pietrzak proof's range (at most 2^64 - 2: round 0 would make it 2^64, and "
                f"the challenges hash T_i in 64 bits)")
    return None


def _fold(pool: ProofPool, values: list[int], challenges: list[int]) -> int:
    parts = 1
    while parts * 2 <= pool.parts and len(values) >= PARALLEL_MIN_TERMS * parts * 2:
        parts *= 2
    if parts == 1:
        return fold(pool.ring, values, challenges)
    s = parts.bit_length() - 1               # top s bits pick the part
    low = challenges[: len(challenges) - s]
    size = len(values) // parts
    partial = pool.run("fold", [(values[j * size:(j + 1) * size], low) for j in range(parts)])
    return fold(pool.ring, partial, challenges[len(challenges) - s:])


def prove(evaluation: Evaluation, pool: ProofPool, *,
          direct: Callable[[int, int], int] | None = None) -> list[int]:
    """The midpoints ``mu_0 .. mu_(R-1)``; ``direct(v, h) = v^(2^h)`` for rounds past the stored depth."""
    plan = evaluation.pietrzak
    if plan is None:
        raise ValueError("the evaluation kept no Pietrzak values")
    group, ring = evaluation.group, pool.ring
    require_positions(evaluation, plan.positions(), "a Pietrzak proof")
    if direct is None:
        direct = ring.sqr_n
    x, y, t = evaluation.x, evaluation.y, evaluation.t
    xi, yi = x, y
    mus: list[int] = []
    challenges: list[int] = []
    for i, T in enumerate(plan.lengths):
        if T % 2:
            yi = group.canon(ring.sqr(yi))
            T += 1
        h = T // 2
        if i < plan.depth:
            mu = _fold(pool, [evaluation.values[p] for p in plan.round_positions(i)], challenges)
        else:
            mu = direct(xi, h)
        mu = group.canon(mu)
        r = round_challenge(group, x, y, t, i, xi, T, yi, mu)
        xi = group.canon(ring.mul(ring.pow(xi, r), mu))
        yi = group.canon(ring.mul(ring.pow(mu, r), yi))
        mus.append(mu)
        challenges.append(r)
    return mus


def verify(group: Group, ring: ModRing, x: int, t: int, y: int, mus: list[int]) -> None:
    """Raise Reject unless ``mus`` proves ``|x^(2^t)| = y`` in ``QR+_N``."""
    problem = t_problem(t)
    if problem is not None:
        raise Reject(problem)
    x = group.check("x", x, base=True)
    y = group.check("y", y, square=True)
    lengths = pietrzak_lengths(t)
    if len(mus) != len(lengths):
        raise Reject(f"proof.mu has {len(mus)} midpoints; t = {t} needs exactly {len(lengths)}")
    mus = [group.check(f"mu[{i}]", mu, square=True) for i, mu in enumerate(mus)]
    xi, yi = x, y
    for i, (T, mu) in enumerate(zip(lengths, mus)):
        if T % 2:
            yi = group.canon(ring.sqr(yi))
            T += 1
        r = round_challenge(group, x, y, t, i, xi, T, yi, mu)
        xi = group.canon(ring.mul(ring.pow(xi, r), mu))
        yi = group.canon(ring.mul(ring.pow(mu, r), yi))
    if group.canon(ring.sqr(xi)) != yi:
        raise Reject("final round: x_R^2 != y_R: the proof does not hold for this (N, x, t, y)")
