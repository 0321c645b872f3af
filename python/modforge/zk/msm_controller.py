"""Cycle-level model of the seed's bucket controller in front of the pipelined point adder.

Seed 003 (003_5c7e6dc92c5cc8aa.txt, "MSM"): the adder "has over 200 pipeline stages" (about 238 at
278 MHz in the authors' write-up), so a bucket that is being updated cannot be read again until its
sum leaves the pipeline; "we also implement a controller which coordinates stalling and adding points
into buckets to avoid data hazards".  The model, one adder issue slot per cycle:

* the input is the stream of (point, window) pairs, point by point, each point's windows in order
  (zero digits need no addition and take no slot);
* rule 1 (issue): a pair whose bucket is not in flight is issued to the adder; the bucket is in flight
  for ``adder_latency`` cycles;
* rule 2 (park): a pair whose bucket is in flight is parked in its window's stall FIFO and the slot
  is a bubble;
* rule 3 (drain): while every FIFO is non-empty, or one is full (``fifo_depth``), or the input is
  exhausted, the controller takes no input and issues the head of the next FIFO (round robin) whose
  bucket is free; if none is free the slot is a bubble.

The run ends when the last issued addition leaves the pipeline.  Every number that describes the
hardware is a field of :class:`ControllerParams`; the figures it reports are computed by running it.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .msm_model import SEED_LAYOUT, MsmParams, bucket_of, reduce_scalar, signed_digits

# The seed's measured results (003_5c7e6dc92c5cc8aa.txt, MSM "Results" table): log2 n -> seconds for
# (4 rounds, masked 1 round, unmasked 1 round) on the AWS f1.2xlarge FPGA.
SEED_RESULTS = {
    26: (20.331, 5.083, 5.518),
    25: (10.398, 2.600, 2.989),
    24: (5.967, 1.492, 1.724),
    23: (3.901, 0.975, 1.092),
    22: (2.883, 0.720, 0.779),
}


@dataclass(frozen=True)
class ControllerParams:
    """The controller and adder as the seed sizes them."""

    msm: MsmParams = SEED_LAYOUT
    adder_latency: int = 238
    fifo_depth: int = 4
    clock_hz: float = 278e6
    seed: str = "003_5c7e6dc92c5cc8aa.txt MSM (pipelined adder, bucket controller, stall FIFOs)"

    def __post_init__(self) -> None:
        if self.adder_latency < 1 or self.fifo_depth < 1:
            raise ValueError("adder_latency and fifo_depth must be at least 1")


@dataclass
class ControllerReport:
    points: int
    cycles: int
    issued: int
    bubbles: int
    stalls: int
    drain_cycles: int
    max_fifo: int
    schedule: list[tuple[int, int, int]] | None = field(default=None, repr=False)  # (cycle, point, window)

    @property
    def utilisation(self) -> float:
        """Useful additions per cycle, pipeline fill and drain included."""
        return self.issued / self.cycles if self.cycles else 0.0

    def seconds(self, params: ControllerParams) -> float:
        return self.cycles / params.clock_hz


def digit_rows(params: MsmParams, scalars: Iterable[int]) -> Iterable[tuple[int, ...]]:
    """Each scalar's signed digits, as the host streams them."""
    for s in scalars:
        yield signed_digits(params, reduce_scalar(params, s)[0])


def simulate(
    params: ControllerParams, digits: Iterable[Sequence[int]], record: bool = False
) -> ControllerReport:
    """Run the controller over the digit rows of a stream of points (see the module docstring)."""
    windows = params.msm.windows
    latency, depth = params.adder_latency, params.fifo_depth
    free_at = [[0] * count for count in params.msm.bucket_counts]  # cycle at which a bucket leaves the pipe
    fifos: list[deque[tuple[int, int]]] = [deque() for _ in range(windows)]
    occupied = 0  # FIFOs that are non-empty
    full = 0  # FIFOs that are full
    schedule: list[tuple[int, int, int]] | None = [] if record else None
    cycle = issued = bubbles = stalls = drain_cycles = max_fifo = 0
    last_issue = -1
    rr = 0  # round-robin pointer over the FIFOs
    n_points = 0

    def pairs() -> Iterable[tuple[int, int, int]]:
        nonlocal n_points
        for i, row in enumerate(digits):
            n_points = i + 1
            for w in range(windows):
                if row[w]:
                    yield i, w, bucket_of(row[w])

    stream = iter(pairs())
    pending = next(stream, None)
    while pending is not None or occupied:
        if occupied == windows or full or pending is None:
            # rule 3: drain, without taking input
            drain_cycles += 1
            for k in range(windows):
                w = (rr + k) % windows
                fifo = fifos[w]
                if fifo and free_at[w][fifo[0][1]] <= cycle:
                    i, b = fifo.popleft()
                    if len(fifo) == depth - 1:
                        full -= 1
                    if not fifo:
                        occupied -= 1
                    free_at[w][b] = cycle + latency
                    issued += 1
                    last_issue = cycle
                    if schedule is not None:
                        schedule.append((cycle, i, w))
                    rr = (w + 1) % windows
                    break
            else:
                bubbles += 1
        else:
            i, w, b = pending
            pending = next(stream, None)
            if free_at[w][b] <= cycle:  # rule 1
                free_at[w][b] = cycle + latency
                issued += 1
                last_issue = cycle
                if schedule is not None:
                    schedule.append((cycle, i, w))
            else:  # rule 2
                fifo = fifos[w]
                if not fifo:
                    occupied += 1
                fifo.append((i, b))
                if len(fifo) == depth:
                    full += 1
                max_fifo = max(max_fifo, len(fifo))
                stalls += 1
                bubbles += 1
        cycle += 1
    cycles = last_issue + 1 + latency if issued else 0
    return ControllerReport(n_points, cycles, issued, bubbles, stalls, drain_cycles, max_fifo, schedule)


def random_scalars(n: int, seed: int, params: MsmParams = SEED_LAYOUT) -> Iterable[int]:
    rng = random.Random(seed)
    for _ in range(n):
        yield rng.randrange(params.curve.r)


def ideal_cycles(params: ControllerParams, n: int) -> int:
    """One slot per (point, window) and one pipeline drain: the bound no controller can beat."""
    return n * params.msm.windows + params.adder_latency
