"""Solving: checked repeated squaring in segments, checkpoints, resume, rollback.

The loop (see :mod:`.check` for the error check)::

    resume from the newest good checkpoint (or x at step 0)
    while step < t:
        plan a segment of about `interval` seconds (B blocks of L squarings)
        square through it with ModRing.sqr_n, keeping Gerbicz's product
        verify; on failure report it and roll back to the last checkpoint
        on success write a checkpoint (atomically) and keep the last two

Only verified values reach the disk, so a kill -9 or power loss at any moment
loses at most the segment in progress: one checkpoint interval.  Ctrl-C and
SIGTERM stop at the next block boundary, verify the blocks done so far and
checkpoint them before exiting.

The loop is not specific to puzzles: :class:`ChainHooks` lets a caller keep
state of its own in step with the checkpoints (``modforge vdf eval`` keeps the
values its proofs need, :mod:`modforge.vdf.resume`).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..arith.base import ParameterError, require_seconds
from ..inttext import brief, parse_int
from .check import CHECK_NAME, Fault, measure_mul_cost, measure_rate, open_ring, plan_segment, run_segment
from .checkpoint import Checkpoint, CheckpointStore, default_checkpoint_dir
from .progress import Reporter
from .puzzle import NamedPuzzle, PuzzleFile, SquaringTask, TimelockError

FAULT_ENV = "MODFORGE_INJECT_FAULT"
DEFAULT_INTERVAL = 5.0
# Below this a --checkpoint-interval is warned about, with its predicted cost: 1 ms once cut the speed sixfold
# (each segment pays the check's fixed multiplications and a checkpoint write with fsync, a few ms each, so
# under 10 ms the writes alone outweigh the work). Not a floor: tests and short runs want many segments
# quickly; the cost of every interval is reported at the end of a solve.
SHORT_INTERVAL = 0.01
MAX_CONSECUTIVE_FAILURES = 3


class ChainHooks:
    """State a caller keeps beside the checked squaring chain, in step with its checkpoints.

    The default keeps nothing (a time-lock solve needs only the last value).  The
    solver calls ``resume`` once, with the checkpoint it resumes from (``None``:
    step 0); ``advance`` for every block of squarings; ``commit`` when a segment
    passed the error check, just before its checkpoint is written (make the
    segment's state durable first, and return fields for the checkpoint); and
    ``discard`` when a segment failed the check and is done again from ``step``.
    """

    kind = "timelock"           # names the checkpoint files and their format (CheckpointStore)
    noun = "puzzle"             # what the chain is, in messages ("checkpoint file(s) of this puzzle")

    def resume(self, checkpoint: Checkpoint | None) -> None:
        pass

    def advance(self, ring, value: int, step: int, count: int) -> int:
        """``value`` (the chain at ``step``) squared ``count`` times."""
        return ring.sqr_n(value, count)

    def commit(self, step: int) -> dict[str, Any]:
        return {}

    def discard(self, step: int) -> None:
        pass


class SolveInterrupted(Exception):
    """Ctrl-C / SIGTERM: the work up to ``step`` is checkpointed."""

    def __init__(self, step: int, t: int, checkpoint: Path | None):
        where = f"checkpoint {checkpoint}" if checkpoint else "no checkpoint (nothing verified yet)"
        super().__init__(f"interrupted at step {step} of {t}; {where}; run the same command to resume")
        self.step = step
        self.checkpoint = checkpoint


@dataclass
class SolveResult:
    label: str
    task: SquaringTask
    finished: bool
    step: int
    start_step: int
    w: int | None = None
    payload: bytes | None = None
    backend: str = ""
    checkpoint_dir: Path | None = None
    last_checkpoint: Path | None = None
    seconds: float = 0.0
    squaring_seconds: float = 0.0
    check_seconds: float = 0.0
    checkpoint_seconds: float = 0.0
    segments: int = 0
    squaring_rate: float = 0.0       # squarings per second of the squaring loop, as the solver estimates it
    extra_squarings: int = 0
    extra_multiplications: int = 0
    faults_detected: int = 0
    rollbacks: int = 0
    faults_injected: int = 0
    rejected_checkpoints: list[dict[str, str]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def squarings(self) -> int:
        return self.step - self.start_step

    @property
    def rate(self) -> float:
        return self.squarings / self.seconds if self.seconds > 0 else 0.0

    @property
    def rate_to_go(self) -> float:
        """What the rest of the puzzle will go at: the solver's squaring rate (timed at the start, then
        taken from each segment), else ``rate``.  ``rate`` divides by the whole run, start-up and the
        first checkpoint's write included: after ``--stop-after 1000`` it was about a hundredth of the
        machine's speed, and the time to go a hundred times too long."""
        return self.squaring_rate if self.squaring_rate > 0 else self.rate

    @property
    def check_overhead(self) -> float:
        """Time in the error check relative to time in the squarings, measured in this run."""
        return self.check_seconds / self.squaring_seconds if self.squaring_seconds > 0 else 0.0

    @property
    def checkpoint_share(self) -> float:
        """Time writing checkpoints relative to time in the squarings, measured in this run."""
        return self.checkpoint_seconds / self.squaring_seconds if self.squaring_seconds > 0 else 0.0


def fault_from_env() -> int | None:
    """The step at which ``MODFORGE_INJECT_FAULT`` asks for one flipped value (test hook), or None."""
    text = os.environ.get(FAULT_ENV, "").strip()
    if not text:
        return None
    step = parse_int(text, FAULT_ENV, expected="a squaring count")
    if step < 1:
        raise ParameterError(FAULT_ENV, f"must be >= 1, got {brief(step)}")
    return step


class _StopFlag:
    """SIGINT/SIGTERM set the flag (a second signal interrupts at once); restored on exit."""

    def __init__(self, install: bool):
        self.requested = False
        self._install = install and threading.current_thread() is threading.main_thread()
        self._old: dict[int, Any] = {}

    def _handler(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __enter__(self) -> "_StopFlag":
        if self._install:
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


def solve(puzzle: NamedPuzzle | PuzzleFile, *, backend: str = "auto",
          checkpoint_dir: str | Path | None = None, use_checkpoints: bool = True,
          interval: float = DEFAULT_INTERVAL, reporter: Reporter | None = None,
          inject_fault_at: int | None = None, stop_after: int | None = None, restart: bool = False,
          handle_signals: bool = False, open_payload: bool = True, hooks: ChainHooks | None = None,
          warn_short_interval: bool = False) -> SolveResult:
    """Compute ``w = x^(2^t) mod n`` for ``puzzle`` with checks and checkpoints, then open the payload.

    Raises :class:`TimelockError` (exit 1) when the checks cannot be satisfied (all checkpoints
    corrupted, repeated error-check failures) and :class:`~.puzzle.AuthenticationError` when ``w``
    does not open the ciphertext; :class:`SolveInterrupted` after Ctrl-C/SIGTERM.
    """
    interval = require_seconds("checkpoint-interval", interval)
    if stop_after is not None and stop_after < 1:
        raise ParameterError("stop-after", f"must be at least 1, got {brief(stop_after)}")
    task = puzzle.task
    reporter = reporter or Reporter()
    hooks = hooks or ChainHooks()
    ring = open_ring(task.n, backend)
    store = None
    if use_checkpoints:
        directory = Path(checkpoint_dir) if checkpoint_dir is not None else \
            default_checkpoint_dir(puzzle.path if isinstance(puzzle, PuzzleFile) else None)
        store = CheckpointStore(directory, task, kind=hooks.kind, noun=hooks.noun)
    result = SolveResult(label=puzzle.label, task=task, finished=False, step=0, start_step=0,
                         backend=ring.backend, checkpoint_dir=store.directory if store else None)

    def event(kind: str, text: str, **fields: Any) -> None:
        result.events.append({"event": kind, "message": text, **fields})
        reporter.event(kind, text, **fields)

    if inject_fault_at is not None:
        event("fault-injection", f"fault injection armed: the running value will be flipped once at "
                                 f"squaring {inject_fault_at}", step=inject_fault_at)

    lock = store.lock() if store else nullcontext()
    started = time.perf_counter()
    with lock, _StopFlag(handle_signals) as stop:
        step, y = 0, task.x
        if store is not None:
            if restart:
                moved = store.clear()
                if moved:
                    event("restart", f"--restart: moved {moved} checkpoint(s) aside (*.discarded)", moved=moved)
            ckpt, rejected = store.latest()
            for bad in rejected:
                result.rejected_checkpoints.append({"path": str(bad.path), "reason": bad.reason})
                event("rejected", f"checkpoint {bad.path.name} rejected: {bad.reason}; "
                                  f"kept as {bad.path.name}.corrupt", path=str(bad.path), reason=bad.reason)
            if ckpt is None and rejected:
                raise _with_result(TimelockError(
                    f"no usable checkpoint: all {len(rejected)} checkpoint file(s) of this {hooks.noun} in "
                    f"{store.directory} are corrupted; rerun with --restart to start over from step 0"), result)
            quarantined = store.quarantined() if ckpt is None else []
            if quarantined:
                # The corrupted files were moved aside by an earlier run: still no silent start from 0.
                raise _with_result(TimelockError(
                    f"no usable checkpoint: {len(quarantined)} checkpoint file(s) of this {hooks.noun} in "
                    f"{store.directory} were found corrupted earlier (*.corrupt); rerun with --restart to start "
                    f"over from step 0"), result)
            hooks.resume(ckpt)
            if ckpt is not None:
                store.prune()
                step, y = ckpt.step, ckpt.value
                result.last_checkpoint = ckpt.path
                event("resume", f"resuming from checkpoint at step {step} of {task.t}"
                                + (" (the previous one: the newest was rejected)" if rejected else ""), step=step)
        else:
            hooks.resume(None)
        result.start_step = result.step = step
        target = task.t if stop_after is None else min(task.t, step + stop_after)
        reporter.start(label=puzzle.label, t=task.t, step=step, backend=ring.backend, bits=task.bits)
        try:
            if step < target:
                step, y = _run(ring, task, step, y, target, store, interval, reporter, stop, result,
                               inject_fault_at, event, hooks, warn_short_interval)
        except (TimelockError, SolveInterrupted) as exc:
            result.seconds = time.perf_counter() - started
            raise _with_result(exc, result)
        finally:
            reporter.finish()
    result.seconds = time.perf_counter() - started
    result.step = step
    if step == task.t:
        result.finished = True
        result.w = y
        if open_payload:
            try:
                result.payload = puzzle.open(y)
            except TimelockError as exc:
                raise _with_result(exc, result)
    return result


def _with_result(exc: Exception, result: SolveResult) -> Exception:
    """``exc`` carrying the run's statistics and events so far (``exc.result``), for ``--json`` reports."""
    exc.result = result  # type: ignore[attr-defined]
    return exc


def short_interval_text(interval: float, rate: float, mul_cost: float, t: int) -> str:
    """What a short --checkpoint-interval costs: the check's predicted overhead here and at the default."""
    from .durations import format_duration

    def predicted(seconds: float) -> float:
        return plan_segment(int(rate * seconds), max(1, t), mul_cost).overhead(mul_cost)

    return (f"--checkpoint-interval {format_duration(interval)} is short: the error check is predicted to cost "
            f"{100 * predicted(interval):.2f}% of the squaring time (at the default {format_duration(DEFAULT_INTERVAL)}: "
            f"{100 * predicted(DEFAULT_INTERVAL):.2f}%), and every checkpoint also pays a file write and fsync "
            f"(the measured share is reported at the end); at most one interval of work is lost on a crash")


def _run(ring, task: SquaringTask, step: int, y: int, target: int, store: CheckpointStore | None,
         interval: float, reporter: Reporter, stop: _StopFlag, result: SolveResult,
         inject_fault_at: int | None, event, hooks: ChainHooks, warn_short_interval: bool = False) -> tuple[int, int]:
    perf = time.perf_counter
    rate, _, _ = measure_rate(ring, y, min(0.05, interval / 10))
    result.squaring_rate = rate
    mul_cost = measure_mul_cost(ring, y)
    if warn_short_interval and interval < SHORT_INTERVAL and rate * interval < target - step:
        event("short-interval", short_interval_text(interval, rate, mul_cost, task.t), interval=interval)
    session_start = perf()
    session_step0 = step
    first = True
    failures = 0
    fault_pending = inject_fault_at is not None and inject_fault_at > step
    while step < target:
        seconds = interval / 2 if first else interval     # the first segment runs on a rough rate estimate
        plan = plan_segment(int(rate * seconds), target - step, mul_cost)
        fault = None
        if fault_pending and step < inject_fault_at <= step + plan.steps:
            fault = Fault(block=(inject_fault_at - step - 1) // plan.block)
        seg_start = step

        def on_block(done: int, _start=seg_start, _plan=plan) -> None:
            now_step = _start + done * _plan.block
            elapsed = perf() - session_start
            r = (now_step - session_step0) / elapsed if elapsed > 0 else rate
            reporter.progress(step=now_step, t=task.t, rate=r, eta=(task.t - now_step) / r if r > 0 else None,
                              segment=_plan.steps)

        out = run_segment(ring, y, plan, fault=fault, should_stop=lambda: stop.requested, on_block=on_block,
                          advance=lambda value, offset, count, _start=seg_start:
                          hooks.advance(ring, value, _start + offset, count))
        for text in out.events:
            fault_pending = False
            result.faults_injected += 1
            event("fault-injected", text, step=inject_fault_at)
        result.squaring_seconds += out.squaring_seconds
        result.check_seconds += out.check_seconds
        result.extra_squarings += out.extra_squarings
        result.extra_multiplications += out.extra_multiplications
        result.segments += 1
        if not out.ok:
            failures += 1
            result.faults_detected += 1
            event("fault", f"error check failed for squarings {seg_start}..{seg_start + out.steps}: {out.reason}",
                  start=seg_start, end=seg_start + out.steps, reason=out.reason)
            hooks.discard(seg_start)
            y = _rollback(store, task, seg_start, y, event)
            result.rollbacks += 1
            if failures >= MAX_CONSECUTIVE_FAILURES:
                raise TimelockError(f"the error check failed {failures} times in a row from step {seg_start}: "
                                    f"this machine or backend ({ring.backend}) computes unreliably; "
                                    f"try another --backend")
            if stop.requested:
                raise SolveInterrupted(seg_start, task.t, result.last_checkpoint)
            continue
        failures = 0
        first = False
        step = seg_start + out.steps
        y = out.value
        if out.squaring_seconds > 0:
            rate = 0.5 * rate + 0.5 * out.steps / out.squaring_seconds
            result.squaring_rate = rate
        t0 = perf()
        try:
            extra = hooks.commit(step)
            if store is not None:
                result.last_checkpoint = store.save(step, y, {
                    "check": {"name": CHECK_NAME, "block": out.block, "blocks": out.blocks_done},
                    "segment_steps": plan.steps, "backend": ring.backend, **extra})
        except OSError as exc:
            where = store.directory if store is not None else "the state directory"
            raise ParameterError("checkpoint-dir", f"cannot write the checkpoint at step {step} in {str(where)!r}: "
                                                   f"{exc.strerror or exc}; the work since "
                                                   f"{'step ' + str(seg_start) if seg_start else 'the start'} is "
                                                   f"not saved (free space or fix permissions, then run the same "
                                                   f"command to resume)") from None
        result.checkpoint_seconds += perf() - t0
        if store is not None:
            reporter.event("checkpoint", f"checkpoint at step {step}", step=step, segment=plan.steps)
        result.step = step
        if stop.requested:
            event("interrupted", f"stopped at step {step} of {task.t}", step=step)
            raise SolveInterrupted(step, task.t, result.last_checkpoint)
    return step, y


def _rollback(store: CheckpointStore | None, task: SquaringTask, seg_start: int, y_start: int, event) -> int:
    """The value to restart the failed segment from: the last checkpoint, re-read and re-checked."""
    if store is None or seg_start == 0:
        event("rollback", f"rolled back to step {seg_start}", step=seg_start)
        return y_start
    ckpt, rejected = store.latest()
    for bad in rejected:
        event("rejected", f"checkpoint {bad.path.name} rejected: {bad.reason}", path=str(bad.path), reason=bad.reason)
    if ckpt is None or ckpt.step != seg_start or ckpt.value != y_start:
        raise TimelockError(f"cannot roll back: the checkpoint at step {seg_start} is missing or differs from the "
                            f"value in memory; rerun to resume from the newest good checkpoint")
    event("rollback", f"rolled back to the checkpoint at step {seg_start}", step=seg_start)
    return ckpt.value
