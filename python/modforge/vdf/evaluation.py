"""Evaluation: ``y = |x^(2^t) mod N|`` by repeated squaring, keeping the values the proofs need."""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..arith.base import ParameterError, require_int
from ..engine import ModRing
from ..inttext import brief
from .group import Group
from .plan import PietrzakPlan, WesolowskiPlan

MAX_T = (1 << 64) - 1          # t is hashed as a u64
PROGRESS_CHUNK = 1 << 15       # squarings per sqr_n call between progress reports, at most

Progress = Callable[[int, int], None]   # (squarings done, squarings in all)


def require_t(t: int) -> int:
    t = require_int("t", t)
    if not 1 <= t <= MAX_T:
        raise ParameterError("t", f"must be between 1 and 2^64 - 1, got {brief(t)}")
    return t


@dataclass
class Evaluation:
    """The output and the stored powers of one evaluation.

    ``values[p] = |x^(2^p) mod N|`` for every position a plan asked for
    (``values[0] = x``; Pietrzak positions may pass ``t`` by at most
    ``log2 t``, the odd-``T`` steps square the claimed output).
    """

    group: Group
    x: int
    t: int
    y: int
    values: dict[int, int] = field(repr=False)
    wesolowski: WesolowskiPlan | None = None
    pietrzak: PietrzakPlan | None = None
    backend: str = ""
    seconds: float = 0.0

    def memory_bytes(self) -> int:
        return len(self.values) * self.group.nbytes


def positions_for(wesolowski: WesolowskiPlan | None, pietrzak: PietrzakPlan | None) -> list[int]:
    out: set[int] = set()
    if wesolowski is not None:
        out.update(wesolowski.positions())
    if pietrzak is not None:
        out.update(pietrzak.positions())
    return sorted(out)


def evaluate(group: Group, x: int, t: int, ring: ModRing, *, wesolowski: WesolowskiPlan | None = None,
             pietrzak: PietrzakPlan | None = None, progress: Progress | None = None,
             chunk: int = PROGRESS_CHUNK) -> Evaluation:
    """Square ``x`` ``t`` times on ``ring``, storing the positions the plans name."""
    x = group.require("x", x, base=True)
    t = require_t(t)
    check_plans(group, t, ring, wesolowski, pietrzak)
    targets = Targets(positions_for(wesolowski, pietrzak), t)
    values: dict[int, int] = {}
    found: list[int] = []

    def keep(position: int, value: int) -> None:
        canonical = group.canon(value)
        if position in targets.wanted:
            values[position] = canonical
        if position == t:
            found.append(canonical)

    start = time.perf_counter()
    targets.square(ring, x, 0, targets.total, keep, chunk=chunk, progress=progress)
    return Evaluation(group, x, t, found[0], values, wesolowski, pietrzak, ring.backend, time.perf_counter() - start)


def check_plans(group: Group, t: int, ring: ModRing, wesolowski: WesolowskiPlan | None,
                pietrzak: PietrzakPlan | None) -> None:
    if ring.modulus != group.modulus:
        raise ParameterError("ring", "works modulo another modulus than the group")
    for plan in (wesolowski, pietrzak):
        if plan is not None and plan.t != t:
            raise ParameterError("plan", f"was made for t = {plan.t}, not {t}")


class Targets:
    """The positions an evaluation keeps (the plans' and ``t``), and the squaring loop that visits them."""

    def __init__(self, wanted: Iterable[int], t: int):
        self.wanted = frozenset(wanted)
        self.t = t
        self.sorted = sorted(self.wanted | {t})
        self.total = self.sorted[-1]     # Pietrzak's odd-T steps may pass t

    def square(self, ring: ModRing, value: int, pos: int, end: int, keep: Callable[[int, int], None], *,
               chunk: int = PROGRESS_CHUNK, progress: Progress | None = None, include_start: bool = True) -> int:
        """``value`` (the chain at ``pos``) squared up to ``end``, calling ``keep(p, value)`` at every
        target in ``(pos, end]``, and at ``pos`` too when ``include_start``."""
        i = bisect.bisect_left(self.sorted, pos)
        targets = self.sorted
        while i < len(targets) and targets[i] == pos:
            if include_start:
                keep(pos, value)
            i += 1
        if value == 1:
            # 1 is a fixed point: no squarings (x = 1 is a group element, and 2^40 squarings of it would
            # otherwise take hours).
            while i < len(targets) and targets[i] <= end:
                keep(targets[i], 1)
                i += 1
            if progress is not None:
                progress(end, self.total)
            return 1
        while pos < end:
            nxt = targets[i] if i < len(targets) and targets[i] <= end else None
            if nxt is None:
                step = min(end - pos, chunk)
                value = ring.sqr_n(value, step)
                pos += step
            else:
                # A run of evenly spaced targets (Wesolowski's checkpoints) goes through one
                # sqr_n_trace call per progress chunk instead of one sqr_n call per position.
                gap = nxt - pos
                run = 1
                if gap <= chunk:
                    limit = max(1, chunk // gap)
                    while (i + run < len(targets) and run < limit and targets[i + run] <= end
                           and targets[i + run] - targets[i + run - 1] == gap):
                        run += 1
                if run > 1:
                    for value in ring.sqr_n_trace(value, gap, run):
                        pos += gap
                        keep(pos, value)
                    i += run
                else:
                    step = min(gap, chunk)
                    value = ring.sqr_n(value, step)
                    pos += step
                    if pos == nxt:
                        keep(pos, value)
                        i += 1
            if progress is not None:
                progress(pos, self.total)
        return value


def evaluate_with_oracle(group: Group, x: int, t: int, power: Callable[[int], int], *,
                         wesolowski: WesolowskiPlan | None = None,
                         pietrzak: PietrzakPlan | None = None) -> Evaluation:
    """An Evaluation whose stored values come from ``power(p) = x^(2^p) mod N`` (e.g. a trapdoor).

    For tests and for whoever knows the factorisation (a time-lock puzzle's
    creator): the proofs are then computed exactly as after a real evaluation.
    """
    values = {p: group.canon(power(p)) for p in positions_for(wesolowski, pietrzak)}
    return Evaluation(group, x, t, group.canon(power(t)), values, wesolowski, pietrzak, "oracle", 0.0)


def require_positions(evaluation: Evaluation, positions: Iterable[int], what: str) -> None:
    missing = [p for p in positions if p not in evaluation.values]
    if missing:
        raise ParameterError("checkpoints", f"{what} needs x^(2^p) at {len(missing)} positions that were not "
                                            f"stored (first: p = {missing[0]})")
