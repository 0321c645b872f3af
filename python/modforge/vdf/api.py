"""The VDF in a few calls: ``run`` (evaluate and prove), ``prove``, ``verify``."""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..arith.base import ParameterError, require_int
from ..engine import ModRing
from ..engine.ring import MAX_THREADS
from . import pietrzak, wesolowski
from .evaluation import Evaluation, Progress, evaluate, require_t
from .fiat_shamir import PROOF_TYPES
from .formats import Proof
from .group import Group, Reject
from .parallel import ProofPool
from .plan import (DEFAULT_MEMORY_BYTES, CostModel, PietrzakPlan, WesolowskiPlan, cpu_count, max_checkpoints,
                   plan_pietrzak, plan_wesolowski)

if TYPE_CHECKING:
    from .proof_progress import ProofProgress
    from .resume import ResumeOptions

PARALLEL_MIN_COST = 1 << 17     # squarings of proof work below which a helper process costs more than it saves
MEASURE_MIN_T = 1 << 18         # below this the default cost model is good enough
MAX_DEFAULT_WORKERS = 3


class ProofFailed(Exception):
    """A freshly computed proof does not verify: corrupted checkpoints or an arithmetic fault."""


@dataclass(frozen=True)
class Verdict:
    valid: bool
    reason: str
    type: str | None = None
    seconds: float = 0.0


def check_proof_type(proof_type: str) -> str:
    if proof_type not in PROOF_TYPES:
        raise ParameterError("proof", f"unknown proof type {proof_type!r}; choose one of: {', '.join(PROOF_TYPES)}")
    return proof_type


def verify(proof: Proof | dict, *, backend: str = "auto") -> Verdict:
    """Check a proof (object or parsed JSON document); never raises for a bad proof."""
    start = time.perf_counter()
    ptype = None
    try:
        if not isinstance(proof, Proof):
            proof = Proof.from_document(proof)
        ptype = proof.type
        if ptype not in PROOF_TYPES:
            raise Reject(f"unknown proof type {ptype!r}")
        try:
            group = proof.group
        except ParameterError as exc:
            raise Reject(f"modulus {exc.problem}") from None
        try:
            require_t(proof.t)
        except ParameterError as exc:
            raise Reject(str(exc)) from None
        # A Proof object is checked here as a document is by Proof.from_document: the body of its type only
        # (the other type's field is not ignored), and mu a sequence (a dict or set would give its keys).
        if ptype == "wesolowski":
            if proof.pi is None:
                raise Reject("missing field 'proof.pi'")
            if proof.mu is not None:
                raise Reject("unexpected field 'proof.mu' (a wesolowski proof has 'proof.pi' only)")
        else:
            if proof.mu is None:
                raise Reject("missing field 'proof.mu'")
            if proof.pi is not None:
                raise Reject("unexpected field 'proof.pi' (a pietrzak proof has 'proof.mu' only)")
            if not isinstance(proof.mu, (list, tuple)):
                raise Reject(f"proof.mu must be a list of group elements, got {type(proof.mu).__name__}")
        ring = ModRing(group.modulus, backend=backend)
        if ptype == "wesolowski":
            wesolowski.verify(group, ring, proof.x, proof.t, proof.y, proof.pi)
        else:
            pietrzak.verify(group, ring, proof.x, proof.t, proof.y, list(proof.mu))
    except Reject as exc:
        return Verdict(False, exc.reason, ptype, time.perf_counter() - start)
    return Verdict(True, f"{ptype} proof of |x^(2^{proof.t})| = y modulo a {group.bits}-bit N",
                   ptype, time.perf_counter() - start)


# The proof runs in 1 + workers parts (threads of the native multi-exponentiation or processes), and the
# engine takes at most MAX_THREADS threads: a larger --workers was refused under the engine's name and number.
MAX_WORKERS = MAX_THREADS - 1


def require_workers(workers: object) -> int:
    """Helper processes: an integer in 0..MAX_WORKERS (the CLI's --workers check, for API callers too)."""
    workers = require_int("workers", workers)
    if not 0 <= workers <= MAX_WORKERS:
        raise ParameterError("workers", f"must be between 0 and {MAX_WORKERS}, got {workers}")
    return workers


def parts_text(parts: int, processes: int) -> str:
    """How a proof in ``parts`` parallel parts ran, against this machine's cores (not 'on 256 cores' on 2)."""
    cores = cpu_count()
    unit = "process(es)" if processes > 1 else ("thread(s)" if parts > 1 else "part")
    text = f"in {parts} {unit} on {cores} core(s)"
    return text + (f" ({parts - cores} more than the cores: they only add overhead)" if parts > cores else "")


def _proof_pool(ring: ModRing, proof_type: str | None, workers: int) -> ProofPool:
    """The pool for a proof on ``1 + workers`` cores.  A Wesolowski proof on a native ring is one
    multi-exponentiation whose threads split the work: helper processes would sit idle (and waiting
    for them to exit cost about 16 ms), so it gets threads only."""
    if proof_type == "wesolowski" and getattr(ring, "has_native_multiexp", False):
        return ProofPool(ring, 0, threads=1 + workers)
    return ProofPool(ring, workers)


def prove(evaluation: Evaluation, proof_type: str, *, ring: ModRing | None = None, pool: ProofPool | None = None,
          workers: int = 0, cost: CostModel | None = None, direct: Callable[[int, int], int] | None = None,
          check: bool = True, progress: ProofProgress | None = None) -> Proof:
    """A proof of the evaluation's statement from its stored values; verified before it is returned.

    ``progress`` makes a long Wesolowski proof resumable (:mod:`modforge.vdf.proof_progress`): its state
    is saved as it goes and picked up by the next call.  A proof that went on from saved state is always
    verified (whatever ``check`` says), and one that fails is computed once more from the top.  A proof
    that fails for good deletes the saved state; a verified one leaves it for the caller to delete
    (``progress.clear()``) once the proof is written, so that a failed write costs at most the work
    since the last save."""
    check_proof_type(proof_type)
    if proof_type == "pietrzak" and pietrzak.t_problem(evaluation.t):
        raise ParameterError("t", pietrzak.t_problem(evaluation.t))
    workers = require_workers(workers)
    cost = cost or CostModel()
    own_pool = pool is None
    if pool is None:
        ring = ring or ModRing(evaluation.group.modulus)
        pool = _proof_pool(ring, proof_type, workers)
    if proof_type != "wesolowski":
        progress = None
    try:
        proof = _compute(evaluation, proof_type, pool, cost, direct, progress)
        resumed = progress is not None and progress.resumed_at is not None
        verdict = verify(proof, backend=pool.ring.backend) if check or resumed else Verdict(True, "")
        if not verdict.valid and resumed:
            progress.notify("rejected", f"the proof resumed from {progress.path} does not verify "
                                        f"({verdict.reason}); computing it again from the top")
            progress.clear()
            proof = _compute(evaluation, proof_type, pool, cost, direct, progress)
            verdict = verify(proof, backend=pool.ring.backend)
    finally:
        if own_pool:
            pool.close()
    if not verdict.valid:
        if progress is not None:
            progress.clear()    # a failed walk's saved state is not worth resuming
        raise ProofFailed(f"the computed {proof_type} proof does not verify ({verdict.reason}); "
                          "the stored values are corrupt or an arithmetic step failed")
    return proof


def _compute(evaluation: Evaluation, proof_type: str, pool: ProofPool, cost: CostModel,
             direct: Callable[[int, int], int] | None, progress: ProofProgress | None) -> Proof:
    ev = evaluation
    if proof_type == "wesolowski":
        pi = wesolowski.prove(ev, pool, cost, progress=progress)
        return Proof("wesolowski", ev.group.modulus, ev.x, ev.t, ev.y, pi=pi)
    mus = pietrzak.prove(ev, pool, direct=direct)
    return Proof("pietrzak", ev.group.modulus, ev.x, ev.t, ev.y, mu=tuple(mus))


def make_plans(group: Group, t: int, proof_types: Iterable[str], *, memory: int = DEFAULT_MEMORY_BYTES,
               parts: int = 1, cost: CostModel | None = None) -> tuple[WesolowskiPlan | None, PietrzakPlan | None]:
    """Checkpoint plans for the proof types asked for, within ``memory`` bytes of stored values."""
    cost = cost or CostModel()
    types = {check_proof_type(p) for p in proof_types}
    limit = max_checkpoints(group.bits, memory)
    if len(types) == 2:
        limit = max(1, limit - min(limit // 8, 1 << 16))   # leave Pietrzak its share
    wes = plan_wesolowski(t, limit, parts, cost) if "wesolowski" in types else None
    pie_limit = max(1, max_checkpoints(group.bits, memory) - (wes.checkpoints if wes else 0))
    pie = plan_pietrzak(t, pie_limit, parts, cost) if "pietrzak" in types else None
    return wes, pie


@dataclass
class Run:
    """What :func:`run` did: the evaluation, the proof and where the time went."""

    evaluation: Evaluation
    proof: Proof | None
    eval_seconds: float
    proof_seconds: float
    workers: int
    cost: CostModel
    plans: dict[str, Any] = field(default_factory=dict)
    eval_cpu_seconds: float = 0.0      # this process only: with helpers, the proof's critical path
    proof_cpu_seconds: float = 0.0
    backend_report: dict[str, Any] = field(default_factory=dict)  # e.g. a simulated design's cycles
    processes: int = 1                 # processes the proof ran in (this one included); 1 + workers cores
    chain: dict[str, Any] = field(default_factory=dict)  # a resumable evaluation's record (directory, checks)


def default_workers(group: Group, t: int, proof_type: str | None, memory: int, cost: CostModel) -> int:
    cpus = cpu_count()
    if proof_type is None or cpus < 2:
        return 0
    workers = min(cpus - 1, MAX_DEFAULT_WORKERS)
    wes, pie = make_plans(group, t, [proof_type], memory=memory, parts=1, cost=cost)
    plan = wes or pie
    assert plan is not None
    return workers if plan.proof_cost(cost) >= PARALLEL_MIN_COST else 0


def run(modulus: int | Group, x: int, t: int, proof_type: str | None = None, *, backend: str = "auto",
        memory: int = DEFAULT_MEMORY_BYTES, workers: int | None = None, keep: Iterable[str] = (),
        progress: Progress | None = None, cost: CostModel | None = None, resume: ResumeOptions | None = None,
        deliver: Callable[[Evaluation, Proof | None], None] | None = None,
        report: Callable[[Run], None] | None = None) -> Run:
    """Evaluate ``|x^(2^t)|`` and, if ``proof_type`` is given, prove it on ``1 + workers`` processes.

    ``keep`` names proof types whose checkpoints are stored as well (for a later :func:`prove`).
    The helper processes start before the evaluation, so they are ready when it ends.
    With ``resume``, the evaluation is checked and checkpointed and picks up where an earlier run
    of the same statement stopped (:mod:`modforge.vdf.resume`; ``progress`` is then replaced by
    ``resume.reporter``); it raises :class:`modforge.timelock.SolveInterrupted` when it stops early
    (:class:`~.resume.EvaluationStopped`, a subclass, when ``stop_after`` stopped it).
    ``deliver(evaluation, proof)`` and then ``report(run)`` run before a resumable evaluation's state
    is deleted (write the outputs and print there): if either raises, the state is kept and a rerun
    only proves, from the proof's saved progress.
    """
    group = modulus if isinstance(modulus, Group) else Group(modulus)
    x = group.require("x", x, base=True)
    t = require_t(t)
    if proof_type is not None:
        check_proof_type(proof_type)
    if workers is not None:
        workers = require_workers(workers)
    if "pietrzak" in set(keep) | {proof_type} and pietrzak.t_problem(t):
        raise ParameterError("t", pietrzak.t_problem(t))
    ring = ModRing(group.modulus, backend=backend)
    if cost is None:
        cost = CostModel.measure(ring) if t >= MEASURE_MIN_T else CostModel()
    if workers is None:
        workers = default_workers(group, t, proof_type, memory, cost)
    types = set(keep) | ({proof_type} if proof_type else set())
    wes, pie = make_plans(group, t, sorted(types), memory=memory, parts=1 + workers, cost=cost) if types \
        else (None, None)
    session = None
    chain: dict[str, Any] = {}
    if resume is not None:
        # Imported here: the time-lock solver (and its cipher) load only for a resumable evaluation.
        from ..timelock.check import CHECK_NAME
        from .resume import EvaluationStopped, Session, evaluate_resumable

        session = Session(resume.directory, group, x, t, types)
    with session.lock() if session is not None else nullcontext():
        if session is not None:
            assert resume is not None
            if resume.restart:
                session.clear()
            stored = session.load_plans()
            if stored is not None:
                wes, pie = stored       # the journal holds the positions these plans named
        pool = _proof_pool(ring, proof_type, workers if proof_type else 0)
        processes = 1 + pool.workers
        try:
            start, cpu0 = time.perf_counter(), time.process_time()
            if session is None:
                ev = evaluate(group, x, t, ring, wesolowski=wes, pietrzak=pie, progress=progress)
            else:
                assert resume is not None
                done = evaluate_resumable(session, (wes, pie), plans_reused=stored is not None, backend=backend,
                                          interval=resume.interval, reporter=resume.reporter,
                                          stop_after=resume.stop_after, handle_signals=resume.handle_signals,
                                          inject_fault_at=resume.inject_fault_at)
                if done.evaluation is None:
                    # Only --stop-after ends a solve unfinished without raising (a signal raises in it).
                    raise EvaluationStopped(done.solve, session.directory)
                ev = done.evaluation
                sr = done.solve
                chain = {"directory": str(session.directory), "session": session.id, "start_step": sr.start_step,
                         "steps": sr.step, "plans_reused": done.plans_reused, "segments": sr.segments,
                         "check": CHECK_NAME, "check_overhead": round(sr.check_overhead, 6),
                         "faults_detected": sr.faults_detected, "rollbacks": sr.rollbacks,
                         "rejected_checkpoints": sr.rejected_checkpoints}
            eval_seconds, cpu1 = time.perf_counter() - start, time.process_time()
            proof = saved_proof = None
            start = time.perf_counter()
            if proof_type is not None:
                saved_proof = session.proof_progress(resume) if session is not None else None
                proof = prove(ev, proof_type, pool=pool, cost=cost, progress=saved_proof)
                if saved_proof is not None:
                    chain["proof_resumed_at"] = saved_proof.resumed_at
            proof_seconds, cpu2 = time.perf_counter() - start, time.process_time()
        finally:
            pool.close()
        plans = {}
        if wes is not None:
            plans["wesolowski"] = wes.as_dict()
        if pie is not None:
            plans["pietrzak"] = pie.as_dict()
        result = Run(ev, proof, eval_seconds, proof_seconds, workers, cost, plans, cpu1 - cpu0, cpu2 - cpu1,
                     ring.report(), processes, chain)
        if deliver is not None:
            deliver(ev, proof)
        if report is not None:
            report(result)
        # Only now, with the outputs written: a failed write keeps the state and the proof's progress.
        if session is not None and not resume.keep:
            session.clear(finished=True)
        elif saved_proof is not None:
            saved_proof.clear()
    return result
