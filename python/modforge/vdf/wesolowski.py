"""Wesolowski's proof: ``pi = x^floor(2^t / l)``, checked by ``pi^l * x^(2^t mod l) == y``.

The prover never recomputes ``x^(2^i)``: ``q = floor(2^t / l)`` is cut into
``kappa``-bit blocks ``D_c`` matching the stored checkpoints
``C_c = x^(2^(kappa*c))``, so ``pi = prod_c C_c^(D_c)``, a multi-exponentiation
that splits into independent ranges of ``c`` (one per process).  The blocks
come from the identity ``floor(2^e / l) = 2^kappa * floor(2^(e-kappa) / l) +
floor((2^(e-kappa) mod l) * 2^kappa / l)``: walking ``c`` downwards carries
``2^(t - kappa*(c+1)) mod l`` along, one small product per block.  See
:mod:`modforge.vdf.plan` for the cost and the choice of ``kappa`` and the window.

The blocks together are ``t`` bits (128 GiB at ``t = 2^40``), so above
``DIGIT_BUDGET_BITS`` they are never all held: the same identity walks every
block by *bit ranges* of ``width`` bits from the top (:func:`quotient_ranges`,
one ``2^(t - kappa*c - b) mod l`` carried per block), and the product is
Horner's rule over the ranges, ``acc = acc^(2^width) * prod_c C_c^(digit_c)``,
with ``acc`` one more base of the range's multi-exponentiation (exponent
``2^width``), so the shift costs no separate squarings.  Between ranges the
proof's whole state is ``(b, acc)``: a :class:`~modforge.vdf.proof_progress.ProofProgress`
keeps it on disk, and a rerun goes on from there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import gmpy2

from ..engine import ModRing
from .evaluation import Evaluation, require_positions
from .fiat_shamir import challenge_prime
from .group import Group, Reject
from .parallel import ProofPool
from .plan import CostModel, best_window

if TYPE_CHECKING:
    from .proof_progress import ProofProgress

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


# Quotient digits held at once above this (32 MiB, like the whole quotient up to WHOLE_QUOTIENT_MAX_T).
DIGIT_BUDGET_BITS = 1 << 28
MIN_RANGE_BITS = 2048       # a range at least this wide, however many checkpoints: few multiexp calls


def range_width(count: int, kappa: int, budget_bits: int = DIGIT_BUDGET_BITS) -> int:
    """Bits per range so that ``count`` digits stay within ``budget_bits`` (at least MIN_RANGE_BITS)."""
    return min(kappa, max(MIN_RANGE_BITS, budget_bits // count))


def quotient_ranges(t: int, kappa: int, l: int, count: int, width: int,
                    top: int | None = None) -> Iterator[tuple[int, list[int]]]:
    """``(b - a, digits)`` per bit range ``[a, b)`` of the blocks, from ``b = top`` (default ``kappa``) down,
    where ``digits[c] = D_c >> a  mod 2^(b-a)`` and ``D_c`` are the blocks of :func:`quotient_blocks`.

    Block ``c`` holds bits ``kappa*c ..`` of ``q = floor(2^t / l)``, so its bits from ``a`` up are
    ``floor(2^(t - kappa*c - a) / l)``: carried down a range at a time as ``2^(t - kappa*c - b) mod l``.
    A walk resumed at ``top = kappa - m*width`` yields exactly the ranges the whole walk yields from there.
    """
    top = kappa if top is None else top
    rem: list[int | None] = [None] * count      # 2^(t - kappa*c - b) mod l once that exponent is >= 0
    mpz_l = gmpy2.mpz(l)
    for c in range(count):
        e = t - kappa * c - top
        if e >= 0:
            rem[c] = gmpy2.powmod(2, e, mpz_l)
    b = top
    while b > 0:
        a = max(0, b - width)
        digits = [0] * count
        for c in range(count):
            e = t - kappa * c - a
            if e < 0:                               # bits above q's top: zero
                continue
            r = rem[c]
            if r is None:                           # q's top bits start inside this range
                digits[c], rem[c] = (int(v) for v in gmpy2.f_divmod(gmpy2.mpz(1) << e, mpz_l))
            else:
                q, rem[c] = gmpy2.f_divmod(gmpy2.mpz(r) << (b - a), mpz_l)
                digits[c] = int(q)
        yield b - a, digits
        b = a


def split(count: int, parts: int) -> list[tuple[int, int]]:
    parts = max(1, min(parts, count))
    edges = [count * i // parts for i in range(parts + 1)]
    return [(edges[i], edges[i + 1]) for i in range(parts) if edges[i] < edges[i + 1]]


def prove(evaluation: Evaluation, pool: ProofPool, cost: CostModel = CostModel(),
          budget_bits: int | None = None, progress: ProofProgress | None = None) -> int:
    """``pi`` for the evaluation's statement, from its checkpoints, on ``pool.parts`` processes, holding at
    most about ``budget_bits`` (default ``DIGIT_BUDGET_BITS``) of the quotient at once.  ``progress`` keeps
    the range walk's state on disk (used only when the quotient is walked by ranges)."""
    if budget_bits is None:
        budget_bits = DIGIT_BUDGET_BITS
    plan = evaluation.wesolowski
    if plan is None:
        raise ValueError("the evaluation kept no Wesolowski checkpoints")
    group, t, kappa = evaluation.group, evaluation.t, plan.kappa
    require_positions(evaluation, plan.positions(), "a Wesolowski proof")
    l = challenge_prime(group, evaluation.x, evaluation.y, t, TYPE)
    count = plan.checkpoints
    if count * kappa > budget_bits:
        width = range_width(count, kappa, budget_bits)
        return group.canon(_prove_by_ranges(evaluation, pool, l, width, cost, progress))
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


def _prove_by_ranges(evaluation: Evaluation, pool: ProofPool, l: int, width: int, cost: CostModel,
                     progress: ProofProgress | None = None) -> int:
    """``prod_c C_c^(D_c)`` by Horner's rule over ``width``-bit ranges of the blocks (see the module notes),
    from the state ``progress`` saved, if any, and saving it after each range."""
    plan = evaluation.wesolowski
    assert plan is not None
    # A plan may set kappa above t: one checkpoint (x), whose block is all of q < 2^t. That is the plan
    # with kappa = t, and walked as such: from kappa the walk would step through (kappa - t) / width empty
    # ranges (~2^54 for a kappa near 2^64), and the saved progress and its report count from kappa = t.
    t, kappa, count, ring = evaluation.t, min(plan.kappa, evaluation.t), plan.checkpoints, pool.ring
    window = min(width, best_window(t, kappa, pool.parts, cost))
    saved = progress.load(l, kappa, count, width) if progress is not None else None
    b, acc = saved if saved is not None else (kappa, 1)
    for shift, digits in quotient_ranges(t, kappa, l, count, width, top=b):
        b -= shift                                  # this range is [b, b + shift)
        live = [c for c in range(count) if digits[c]]
        bases = [evaluation.values[kappa * c] for c in live]
        exps = [digits[c] for c in live]
        if acc != 1:
            bases.append(acc)
            exps.append(1 << shift)
        if not bases:
            continue
        if ring.has_native_multiexp:
            acc = ring.multiexp(bases, exps, threads=pool.parts)
        else:
            tasks = [(bases[lo:hi], exps[lo:hi], shift + 1, window) for lo, hi in split(len(bases), pool.parts)]
            acc = 1
            for part in pool.run("multiexp", tasks):
                if part is not None:
                    acc = ring.mul(acc, part)
            del tasks
        # Dropped before the generator makes the next range's digits: one range in memory, not two.
        del digits, exps
        if progress is not None and b > 0:
            progress.save(l, kappa, count, width, b, acc)
    if progress is not None:
        progress.on_range(kappa, kappa)
    return acc


def verify(group: Group, ring: ModRing, x: int, t: int, y: int, pi: int) -> None:
    """Raise Reject unless ``pi`` proves ``|x^(2^t)| = y`` in ``QR+_N``."""
    x = group.check("x", x, base=True)
    y = group.check("y", y, square=True)
    pi = group.check("pi", pi)
    l = challenge_prime(group, x, y, t, TYPE)
    r = pow(2, t, l)
    if group.canon(ring.mul(ring.pow(pi, l), ring.pow(x, r))) != y:
        raise Reject("pi^l * x^(2^t mod l) != y: the proof does not hold for this (N, x, t, y)")
