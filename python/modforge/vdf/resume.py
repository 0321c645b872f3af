"""Resumable evaluation: ``vdf eval`` that survives Ctrl-C, kill -9 and power loss.

A long evaluation (t = 2^40 is hours) runs through the time-lock solver's
checked, checkpointed squaring loop (:func:`modforge.timelock.solve`: Gerbicz's
product check on the running value, a checkpoint every few seconds, rollback
on a failed check) with :class:`EvalJournal` as its hooks: the values the
proofs need are appended to a journal and made durable before each
checkpoint, which records how many journal records it covers.  A rerun of the
same command finds the session by its statement, takes the plans the first
run made (not new ones: the stored positions depend on them), truncates the
journal to the newest good checkpoint and goes on from there.

Files in the session directory (``vdf-eval-<session id, 16 hex>``; formats in
docs/vdf.md): ``.plan.json`` (the statement and the plans, written once,
atomically), ``.values`` (fixed-size records: position, value, check digest),
the checkpoints ``vdf-eval-<task id>-<step>.json``, a lock file and, while a long
Wesolowski proof runs, its progress ``.proof.json`` (:mod:`modforge.vdf.proof_progress`).  The
session is removed once its proof (if any) verified, unless asked to keep it.
"""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..arith.base import ParameterError, require_int, require_seconds
from ..fileio import (InputTooLarge, atomic_write, exclusive_lock, fsync_dir, read_bounded, remove_stale_temps,
                      user_cache_dir)
from ..inttext import brief
from ..timelock.checkpoint import Checkpoint
from ..timelock.puzzle import SquaringTask, TimelockError, canonical_json
from ..timelock.solver import ChainHooks, SolveInterrupted, SolveResult, solve
from .evaluation import MAX_T, Evaluation, Targets, positions_for, require_t
from .group import Group
from .plan import (MAX_WINDOW_BITS, PietrzakPlan, WesolowskiPlan, element_cost_bytes, physical_memory_bytes,
                   pietrzak_rounds)
from .proof_progress import ProofProgress

KIND = "vdf-eval"
PLAN_FORMAT = "modforge-vdf-eval-plan"
VERSION = 1
SESSION_TAG = "modforge/vdf/v1/eval-session"
TASK_TAG = "modforge/vdf/v1/eval-task"
DIGEST_BYTES = 16
MAX_PLAN_BYTES = 1 << 20        # a plan is a few hundred bytes of JSON


def cache_dir() -> Path:
    return user_cache_dir("vdf")


class JournalCorrupt(TimelockError):
    """The values journal does not match its checkpoint (a damaged disk, or a file edited by hand)."""


@dataclass(frozen=True)
class EvalTask(SquaringTask):
    """The squaring chain of one session: ``x^(2^total)``, ``total`` the last stored position.

    Its id (which names the checkpoints) derives from the session alone, so that the session's
    files can be found before its plan file is read."""

    session: str = ""

    @property
    def id(self) -> str:
        return task_id(self.session)


def task_id(session: str) -> str:
    return hashlib.sha256(canonical_json({"tag": TASK_TAG, "session": session})).hexdigest()


@dataclass(frozen=True)
class _Chain:
    """What :func:`modforge.timelock.solve` needs of a puzzle (no payload to open)."""

    task: EvalTask
    label: str
    path: None = None

    def open(self, w: int) -> bytes:
        raise AssertionError("a VDF evaluation has no payload")


def session_id(group: Group, x: int, t: int, kept: Iterable[str]) -> str:
    """SHA-256 over the statement and the proof types whose values the session keeps."""
    return hashlib.sha256(canonical_json({"tag": SESSION_TAG, "modulus": hex(group.modulus), "x": hex(x),
                                          "t": hex(t), "kept": sorted(set(kept))})).hexdigest()


def _plan_fields(doc: dict[str, Any], name: str, fields: tuple[str, ...]) -> dict[str, Any]:
    """The plan object ``doc[name]`` with exactly ``fields``; ValueError otherwise (a damaged plan file)."""
    plan = doc[name]
    if not isinstance(plan, dict) or set(plan) != set(fields):
        raise ValueError(f"field {name!r} must be an object with the fields {', '.join(fields)}")
    return plan


def _plan_int(plan: dict[str, Any], name: str, low: int, high: int | None = None) -> int:
    """A plan's number: a JSON integer (not a string, float or boolean) from ``low`` to ``high`` (if any)."""
    value = plan[name.partition(".")[2]]
    if type(value) is not int or value < low or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise ValueError(f"field {name!r} must be a JSON integer {span}, got {str(value)[:40]!r}")
    return value


def _digest(doc: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json({k: v for k, v in doc.items() if k != "sha256"})).hexdigest()


class Session:
    """One evaluation's state directory: plan file, journal, checkpoints, lock."""

    def __init__(self, directory: str | Path, group: Group, x: int, t: int, kept: Iterable[str]):
        self.directory = Path(directory)
        self.group = group
        self.x = x
        self.t = require_t(t)
        self.kept = tuple(sorted(set(kept)))
        self.id = session_id(group, x, t, self.kept)
        self.stem = f"{KIND}-{self.id[:16]}"
        self.plan_path = self.directory / f"{self.stem}.plan.json"
        self.values_path = self.directory / f"{self.stem}.values"
        self.lock_path = self.directory / f"{self.stem}.lock"
        self.proof_path = self.directory / f"{self.stem}.proof.json"
        self.finished = False          # set by clear(finished=True): the lock file goes too

    @contextmanager
    def lock(self) -> Iterator[None]:
        """One process per session (the kernel drops the lock on kill -9)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ParameterError("resume-dir", f"cannot create {str(self.directory)!r}: "
                                               f"{exc.strerror or exc}") from None
        with exclusive_lock(self.lock_path, "resume-dir",
                            f"another process is evaluating this statement in {str(self.directory)!r}"):
            remove_stale_temps(self.directory, self.stem)
            yield
            if self.finished:
                # Safe while held: a second process never waits for this lock (LOCK_NB), it fails.
                self.lock_path.unlink(missing_ok=True)

    # -- plans ---------------------------------------------------------------------------------------------
    def load_plans(self) -> tuple[WesolowskiPlan | None, PietrzakPlan | None] | None:
        """The plans of an earlier run of this session, or None when there was none.

        A plan file that does not check out is an error (its journal was written for it)."""
        try:
            raw = read_bounded(self.plan_path, MAX_PLAN_BYTES)
        except FileNotFoundError:
            return None
        except InputTooLarge:
            raw = None
        except OSError as exc:
            raise ParameterError("resume-dir", f"cannot read {self.plan_path}: {exc.strerror or exc}") from None
        try:
            if raw is None:
                raise ValueError(f"more than the {MAX_PLAN_BYTES}-byte limit for this file")
            doc = json.loads(raw)
            if not isinstance(doc, dict) or doc.get("format") != PLAN_FORMAT or doc.get("version") != VERSION:
                raise ValueError(f"not a {PLAN_FORMAT} version {VERSION} file")
            if doc.get("sha256") != _digest(doc):
                raise ValueError("SHA-256 of the contents does not match (the file was damaged)")
            if doc.get("session") != self.id:
                raise ValueError("belongs to another statement (session id differs)")
            wes = pie = None
            for name in ("wesolowski", "pietrzak"):
                if (doc[name] is not None) != (name in self.kept):
                    raise ValueError(f"field {name!r} does not match the proof types of this session")
            if doc["wesolowski"] is not None:
                w = _plan_fields(doc, "wesolowski", ("kappa", "window_bits", "parts"))
                wes = WesolowskiPlan(self.t, _plan_int(w, "wesolowski.kappa", 1, MAX_T),
                                     _plan_int(w, "wesolowski.window_bits", 1, MAX_WINDOW_BITS),
                                     _plan_int(w, "wesolowski.parts", 1))
            if doc["pietrzak"] is not None:
                p = _plan_fields(doc, "pietrzak", ("depth", "parts"))
                pie = PietrzakPlan(self.t, _plan_int(p, "pietrzak.depth", 0, pietrzak_rounds(self.t)),
                                   _plan_int(p, "pietrzak.parts", 1))
            self._check_plan_memory(wes, pie)
        except (ValueError, KeyError, TypeError) as exc:
            raise TimelockError(f"{self.plan_path}: {exc}; rerun with --restart to start this evaluation "
                                f"over") from None
        return wes, pie

    def _check_plan_memory(self, wes: WesolowskiPlan | None, pie: PietrzakPlan | None) -> None:
        """A plan is chosen for the ``--memory`` of the run that wrote it, which a resume need not repeat, so
        the bound here is the machine's own memory: a hand-edited plan (kappa = 1, or a deep Pietrzak
        split) must not try to hold more values than it has."""
        limit = physical_memory_bytes()
        # Pietrzak stores fewer than 2^depth values; the bound is taken before any position is built.
        stored = (wes.checkpoints if wes else 0) + ((1 << pie.depth) if pie else 0)
        need = stored * element_cost_bytes(self.group.modulus.bit_length())
        if limit is not None and need > limit:
            raise ValueError(f"its checkpoints would hold {stored:,} values ({need / 2**20:,.0f} MiB), more than "
                             f"this machine's memory ({limit / 2**20:,.0f} MiB)")

    def save_plans(self, wes: WesolowskiPlan | None, pie: PietrzakPlan | None) -> None:
        doc: dict[str, Any] = {
            "format": PLAN_FORMAT, "version": VERSION, "session": self.id, "modulus": hex(self.group.modulus),
            "x": hex(self.x), "t": self.t, "kept": list(self.kept),
            "wesolowski": None if wes is None else {"kappa": wes.kappa, "window_bits": wes.window,
                                                    "parts": wes.parts},
            "pietrzak": None if pie is None else {"depth": pie.depth, "parts": pie.parts},
        }
        doc["sha256"] = _digest(doc)
        atomic_write(self.plan_path, json.dumps(doc, indent=1) + "\n")

    # -- lifecycle -----------------------------------------------------------------------------------------
    def files(self) -> list[Path]:
        """Every file of this session (plan, journal, checkpoints) except its lock."""
        try:
            entries = list(self.directory.iterdir())
        except FileNotFoundError:
            return []
        checkpoints = f"{KIND}-{task_id(self.id)[:16]}-"
        return sorted(e for e in entries if e != self.lock_path
                      and (e.name.startswith(f"{self.stem}.") or e.name.startswith(checkpoints)))

    def clear(self, finished: bool = False) -> int:
        """Delete the session's files (``finished``: after success, the lock file too, on release; else for
        ``--restart``); how many there were."""
        self.finished = finished
        done = 0
        for path in self.files():
            try:
                path.unlink()
                done += 1
            except OSError:
                pass
        fsync_dir(self.directory)
        return done

    def proof_progress(self, options: ResumeOptions) -> ProofProgress:
        """Where this session's Wesolowski proof keeps its state between ranges (deleted with the session)."""
        reporter = options.reporter

        def notify(kind: str, text: str) -> None:
            if reporter is not None:
                reporter.event(kind, text, file=str(self.proof_path))

        def on_range(done: int, total: int) -> None:
            if reporter is not None:
                reporter.proof(done=done, total=total)

        return ProofProgress(self.proof_path, self.id, self.group.modulus, interval=options.interval,
                             notify=notify, on_range=on_range)

    def task(self, targets: Targets) -> EvalTask:
        return EvalTask(self.group.modulus, self.x, targets.total, session=self.id)


class EvalJournal(ChainHooks):
    """The solver hooks of an evaluation: keep the targets' values, durably, in step with the checkpoints.

    Record ``i`` of the journal is ``position (8 bytes) || value (nbytes) || digest (16 bytes)``, big-endian,
    the digest SHA-256 over the session id and the first two fields; records are in position order and
    hold every target from 1 up to the checkpoint's step (position 0 is ``x``).
    """

    kind = KIND
    noun = "VDF evaluation"

    def __init__(self, session: Session, targets: Targets):
        self.session = session
        self.group = session.group
        self.targets = targets
        self.record = 8 + self.group.nbytes + DIGEST_BYTES
        self.values: dict[int, int] = {}
        self.pending: list[tuple[int, int]] = []
        self.records = 0

    def _digest(self, head: bytes) -> bytes:
        return hashlib.sha256(self.session.id.encode("ascii") + head).digest()[:DIGEST_BYTES]

    def _encode(self, position: int, value: int) -> bytes:
        head = position.to_bytes(8, "big") + self.group.encode(value)
        return head + self._digest(head)

    def resume(self, checkpoint: Checkpoint | None) -> None:
        """Load the records the checkpoint covers and cut the journal after them (what follows was never
        checkpointed: a kill between the journal's fsync and the checkpoint's rename)."""
        self.values = {0: self.session.x} if 0 in self.targets.wanted else {}
        self.pending = []
        path = self.session.values_path
        if checkpoint is None:
            self.records = 0
            with open(path, "wb") as fh:
                os.fsync(fh.fileno())
            return
        count = checkpoint.doc.get("values_records")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise JournalCorrupt(f"checkpoint {checkpoint.path.name} has no valid 'values_records' count; rerun "
                                 f"with --restart")
        expected = [p for p in self.targets.sorted if 0 < p <= checkpoint.step]
        where = f"the values journal {path}"
        if count != len(expected):
            raise JournalCorrupt(f"checkpoint {checkpoint.path.name} at step {checkpoint.step} covers {count} "
                                 f"journal records, the plan puts {len(expected)} positions there; rerun with "
                                 f"--restart")
        try:
            with open(path, "r+b") as fh:
                data = fh.read(count * self.record)
                if len(data) < count * self.record:
                    raise JournalCorrupt(f"{where} holds {len(data) // self.record} complete records, its "
                                         f"checkpoint at step {checkpoint.step} needs {count}; rerun with --restart")
                for i, position in enumerate(expected):
                    rec = data[i * self.record:(i + 1) * self.record]
                    head, tag = rec[:-DIGEST_BYTES], rec[-DIGEST_BYTES:]
                    if self._digest(head) != tag:
                        raise JournalCorrupt(f"{where} is damaged at record {i} (digest mismatch); rerun "
                                             f"with --restart")
                    got = int.from_bytes(head[:8], "big")
                    value = int.from_bytes(head[8:], "big")
                    if got != position:
                        raise JournalCorrupt(f"{where}: record {i} holds position {got}, expected {position}; "
                                             f"rerun with --restart")
                    if self.group.element_problem(value) is not None:
                        raise JournalCorrupt(f"{where}: record {i} (position {got}) is not a group element; "
                                             f"rerun with --restart")
                    self.values[position] = value
                fh.truncate(count * self.record)
                os.fsync(fh.fileno())
        except FileNotFoundError:
            raise JournalCorrupt(f"{where} is missing but checkpoint {checkpoint.path.name} needs it; rerun "
                                 f"with --restart") from None
        self.records = count

    def advance(self, ring, value: int, step: int, count: int) -> int:
        return self.targets.square(ring, value, step, step + count, self._keep, include_start=False)

    def _keep(self, position: int, value: int) -> None:
        self.pending.append((position, self.group.canon(value)))

    def commit(self, step: int) -> dict[str, Any]:
        if self.pending:
            with open(self.session.values_path, "r+b") as fh:
                fh.seek(self.records * self.record)
                fh.write(b"".join(self._encode(p, v) for p, v in self.pending))
                fh.flush()
                os.fsync(fh.fileno())
            self.values.update(self.pending)
            self.records += len(self.pending)
            self.pending = []
        return {"values_records": self.records, "session": self.session.id}

    def discard(self, step: int) -> None:
        self.pending = []

    def evaluation(self, wes: WesolowskiPlan | None, pie: PietrzakPlan | None, backend: str,
                   seconds: float) -> Evaluation:
        t = self.targets.t
        y = self.values[t]
        values = {p: v for p, v in self.values.items() if p in self.targets.wanted}
        return Evaluation(self.group, self.session.x, t, y, values, wes, pie, backend, seconds)


@dataclass(frozen=True)
class ResumeOptions:
    """How :func:`modforge.vdf.run` keeps a resumable evaluation (``vdf eval --resume-dir``)."""

    directory: str | Path
    restart: bool = False          # delete the session's state first and start from step 0
    keep: bool = False             # keep the state after success (default: remove it)
    interval: float = 5.0          # seconds between checkpoints
    reporter: Any = None           # a modforge.timelock.progress.Reporter (progress bar, events)
    stop_after: int | None = None  # stop, checkpointed, after this many squarings (tests, batch slots)
    handle_signals: bool = False   # Ctrl-C / SIGTERM stop at the next block, checkpointed
    inject_fault_at: int | None = None   # test hook: flip the running value once at this squaring

    def __post_init__(self) -> None:
        # Checked here, before a session's plan file exists: a refused value leaves nothing on disk.
        require_seconds("checkpoint-interval", self.interval)
        if self.stop_after is not None:
            stop = require_int("stop-after", self.stop_after)
            if stop < 1:
                raise ParameterError("stop-after", f"must be at least 1, got {brief(stop)}")


@dataclass
class ResumableEval:
    """What :func:`evaluate_resumable` did: the solver's record and, when it finished, the evaluation."""

    solve: SolveResult
    evaluation: Evaluation | None
    plans_reused: bool


class EvaluationStopped(SolveInterrupted):
    """A resumable evaluation stopped by ``stop_after``, checkpointed (a SolveInterrupted, for callers that
    catch that); ``solve`` is the solver's result (``step``, ``last_checkpoint``), ``directory`` the state."""

    def __init__(self, solve, directory):
        super().__init__(solve.step, solve.task.t, solve.last_checkpoint)
        self.solve = solve
        self.directory = directory


def evaluate_resumable(session: Session, plans: tuple[WesolowskiPlan | None, PietrzakPlan | None], *,
                       plans_reused: bool, backend: str = "auto", interval: float = 5.0, reporter=None,
                       stop_after: int | None = None, handle_signals: bool = False,
                       inject_fault_at: int | None = None) -> ResumableEval:
    """Evaluate the session's statement from its newest good checkpoint (call under ``session.lock()``).

    Raises :class:`modforge.timelock.SolveInterrupted` after Ctrl-C / SIGTERM (the work so far is
    checkpointed) and :class:`JournalCorrupt` / :class:`modforge.timelock.TimelockError` when the
    stored state cannot be trusted.
    """
    wes, pie = plans
    targets = Targets(positions_for(wes, pie), session.t)
    journal = EvalJournal(session, targets)
    chain = _Chain(session.task(targets), "vdf eval")
    if not plans_reused:
        session.save_plans(wes, pie)
    if reporter is not None:
        reporter.event("state", f"resumable evaluation, state in {session.directory} (after an interruption, run "
                                f"the same command to go on)", directory=str(session.directory))
    result = solve(chain, backend=backend, checkpoint_dir=session.directory, interval=interval, reporter=reporter,
                   inject_fault_at=inject_fault_at, stop_after=stop_after, handle_signals=handle_signals,
                   open_payload=False, hooks=journal)
    evaluation = None
    if result.finished:
        evaluation = journal.evaluation(wes, pie, result.backend, result.seconds)
        expected = session.group.canon(result.w)
        if session.t == targets.total and evaluation.y != expected:
            raise JournalCorrupt(f"the journal's y differs from the checked chain's value at t = {session.t}")
    return ResumableEval(result, evaluation, plans_reused)


__all__ = ["EvaluationStopped", "EvalJournal", "EvalTask", "JournalCorrupt", "ResumableEval", "Session", "cache_dir",
           "evaluate_resumable", "session_id"]
