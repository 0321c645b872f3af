"""``modforge vdf``: evaluate, prove and verify the RSA-group VDF (see docs/vdf.md).

Exit codes: 0 success / valid proof, 1 invalid proof (the reason on stdout,
or in the JSON) or untrustworthy resumable state, 2 bad usage, bad input or an
unreadable file (one line on stderr), 130 an evaluation stopped by Ctrl-C or
SIGTERM after its checkpoint (rerun the same command to go on).
"""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from typing import Any, NoReturn

import click

from ..arith.base import ParameterError
from .main import EXIT_CHECK_FAILED, EXIT_INTERRUPTED, INTEGER, ErrorExitGroup, parse_count, parse_int

PROOF_CHOICES = ("wesolowski", "pietrzak", "none")
PROGRESS_MIN_T = 1 << 16
RESUME_MIN_T = 1 << 28          # from here on an evaluation is resumable unless --no-resume


class VdfGroup(ErrorExitGroup):
    """Bad input exits 2; untrustworthy resumable state 1; an interrupted evaluation 130 after its checkpoint."""

    def exit_codes(self) -> list[tuple[type[BaseException], int, str]]:
        from ..hw.errors import HardwareError
        from ..timelock import SolveInterrupted, TimelockError

        return [*super().exit_codes(), (TimelockError, EXIT_CHECK_FAILED, "error: "),
                (HardwareError, EXIT_CHECK_FAILED, "error: "),          # a sim:<design> backend failed
                (SolveInterrupted, EXIT_INTERRUPTED, "")]


@click.group(cls=VdfGroup, context_settings={"help_option_names": ["-h", "--help"]})
def vdf() -> None:
    """Verifiable delay function y = |x^(2^t) mod N| in QR+_N, with Wesolowski or Pietrzak proofs."""


# ------------------------------------------------------------------------------------------------ parsing


def parse_modulus(text: str) -> int:
    if text.strip().lower() in ("vdf-alliance", "vdf_alliance"):
        from ..data import vdf_alliance_modulus

        return vdf_alliance_modulus()
    return parse_int(text, "modulus")


def parse_t(text: str) -> int:
    """Decimal, 0x-hex, or a power of two written ``2^K`` / ``2**K``; checked against the range of t."""
    from ..vdf.evaluation import require_t

    return require_t(parse_count(text, "t"))


def parse_x(group, text: str) -> int:
    """A number (a canonical element) or ``hash:TEXT`` (hash-to-group of TEXT's UTF-8 bytes)."""
    if text.startswith("hash:"):
        # surrogateescape: argument bytes that are not UTF-8 are hashed exactly as given.
        return group.hash_to_group(text[len("hash:"):].encode("utf-8", "surrogateescape"))
    return group.require("x", parse_int(text, "x"), base=True)


def check_backend(name: str) -> str:
    """``auto`` or a backend the engine knows and this machine runs; ParameterError (exit 2) otherwise (a
    ``sim:<design>`` is validated as the engine loads it)."""
    from ..engine import check_backend as engine_check

    return engine_check(name)


def memory_bytes(mib: int) -> int:
    if mib < 1:
        raise ParameterError("memory", f"must be at least 1 MiB, got {mib}")
    return mib << 20


def _progress(enabled: bool | None, t: int):
    """A rich progress bar on stderr (squarings, rate, ETA), or None."""
    if enabled is None:
        enabled = sys.stderr.isatty() and t >= PROGRESS_MIN_T
    if not enabled:
        return None
    from rich.console import Console
    from rich.progress import (BarColumn, Progress, ProgressColumn, TaskProgressColumn, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task) -> Text:
            speed = task.finished_speed or task.speed
            return Text("-" if speed is None else f"{speed / 1e6:.2f} M sq/s")

    return Progress(TextColumn("squaring"), BarColumn(), TaskProgressColumn(), RateColumn(), TimeElapsedColumn(),
                    TextColumn("ETA"), TimeRemainingColumn(), console=Console(stderr=True), transient=True)


# ------------------------------------------------------------------------------------------------ eval


@vdf.command("eval")
@click.option("--modulus", "modulus_text", required=True, metavar="N",
              help="RSA modulus (decimal or 0x-hex), or 'vdf-alliance'.")
@click.option("--x", "x_text", required=True, metavar="X", help="Input: a number, or hash:TEXT for hash-to-group.")
@click.option("--t", "t_text", required=True, metavar="T", help="Number of squarings (decimal, 0x-hex or 2^K).")
@click.option("--proof", "proof_type", type=click.Choice(PROOF_CHOICES), default="none", show_default=True,
              help="Proof to compute beside the output.")
@click.option("--backend", default="auto", show_default=True,
              help="Engine backend: auto, or one of `modforge.engine.backend_names()` (portable, adx, ifma, avx512f, avx2, gmp, ...).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, writable=True),
              help="Write the proof file here (atomically).")
@click.option("--checkpoints", "checkpoints_path", type=click.Path(dir_okay=False, writable=True),
              help="Also store checkpoints for both proof types here, for `modforge vdf prove`.")
@click.option("--force", is_flag=True, help="Replace --out / --checkpoints files that exist (without it an existing "
                                             "file is an error).")
@click.option("--memory", "memory_mib", type=INTEGER, default=64, show_default=True,
              help="Budget for stored checkpoints, MiB.")
@click.option("--workers", type=INTEGER, default=None, help="Helper processes for the proof [default: auto].")
@click.option("--progress/--no-progress", "show_progress", default=None,
              help="Progress bar on stderr [default: when stderr is a terminal and T >= 2^16].")
@click.option("--resume-dir", type=click.Path(file_okay=False),
              help="Make the evaluation resumable, with its state here: after Ctrl-C, kill or power loss, rerun "
                   "the same command to go on [default: ~/.cache/modforge/vdf when T >= 2^28].")
@click.option("--no-resume", is_flag=True, help="Evaluate in memory only, however large T is.")
@click.option("--restart", is_flag=True, help="Discard this statement's resumable state and start from step 0.")
@click.option("--checkpoint-interval", "interval_text", default="5s", show_default=True,
              help="Seconds between checkpoints of a resumable evaluation (e.g. 5s, 1m).")
@click.option("--stop-after", "stop_after_text", help="Stop a resumable evaluation, checkpointed, after this many "
                                                       "squarings (exit 130; rerun to go on).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def eval_cmd(modulus_text: str, x_text: str, t_text: str, proof_type: str, backend: str, out_path: str | None,
             checkpoints_path: str | None, memory_mib: int, workers: int | None, show_progress: bool | None,
             resume_dir: str | None, no_resume: bool, restart: bool, interval_text: str,
             stop_after_text: str | None, force: bool, as_json: bool) -> None:
    """Evaluate y = |x^(2^T) mod N| and optionally prove it.

    A long evaluation is resumable: it runs with an error check on the running value (Gerbicz's
    product check, as `timelock solve`) and writes a checkpoint every few seconds; the same command
    run again goes on from the newest good one.
    """
    from ..vdf import Group, ProofFailed, run, write_checkpoints, write_proof
    from ..vdf.api import require_workers
    from ..vdf.parallel import WorkerError
    from ..vdf.pietrzak import t_problem

    check_backend(backend)
    group = Group(parse_modulus(modulus_text))
    x = parse_x(group, x_text)
    t = parse_t(t_text)                 # in range: checked before --out, --resume-dir and the rest depend on it
    ptype = None if proof_type == "none" else proof_type
    if (ptype == "pietrzak" or checkpoints_path) and t_problem(t):
        raise ParameterError("t", t_problem(t))
    if out_path and ptype is None:
        raise ParameterError("out", "--out writes a proof file: give --proof wesolowski or --proof pietrzak")
    if workers is not None:
        workers = require_workers(workers)
    _check_outputs(force, out=out_path, checkpoints=checkpoints_path)
    keep = ("wesolowski", "pietrzak") if checkpoints_path else ()
    resume = _resume_options(t, resume_dir, no_resume, restart, interval_text, stop_after_text, show_progress)
    if resume is not None and ptype is not None and not out_path and not as_json:
        raise ParameterError("out", "a resumable evaluation deletes its state when it ends, so the proof would be "
                                    "lost: give --out FILE (or --json)")
    bar = _progress(show_progress, t) if resume is None else None
    stopped_after: tuple[type[BaseException], ...] = ()
    if resume is not None:
        # --stop-after is a planned stop, as in timelock solve: exit 0 and, with --json, an object.
        from ..vdf.resume import EvaluationStopped

        stopped_after = (EvaluationStopped,)

    def deliver(ev, proof) -> None:
        # Before a resumable evaluation's state is deleted: a failed write keeps it.
        if out_path and proof is not None:
            write_proof(out_path, proof, "out", overwrite=force)
        if checkpoints_path:
            write_checkpoints(checkpoints_path, ev, "checkpoints", overwrite=force)

    printed: list[bool] = []

    def report(result) -> None:
        # Also before the state is deleted: the proof may exist only in this output (--json).
        _print_eval(result, group, t, out_path, checkpoints_path, as_json, backend)
        printed.append(True)

    try:
        if bar is not None:
            with bar:
                task = bar.add_task("squaring", total=t)
                result = run(group, x, t, ptype, backend=backend, memory=memory_bytes(memory_mib), workers=workers,
                             keep=keep, progress=lambda done, total: bar.update(task, completed=done, total=total),
                             deliver=deliver)
        else:
            result = run(group, x, t, ptype, backend=backend, memory=memory_bytes(memory_mib), workers=workers,
                         keep=keep, resume=resume, deliver=deliver, report=report if resume is not None else None)
    except stopped_after as stopped:
        _print_stopped(stopped, group, x, t, as_json)
        return
    except (ProofFailed, WorkerError) as exc:
        hint = (f"; the evaluation's state is kept in {resume.directory} (rerun with --restart to compute it "
                f"again)") if resume is not None else ""
        click.echo(f"modforge: error: {exc}{hint}", err=True)
        sys.exit(EXIT_CHECK_FAILED)
    except KeyboardInterrupt:
        # After a resumable evaluation (during it, the solver turns Ctrl-C into SolveInterrupted): the
        # evaluation and the proof's progress are on disk.
        if resume is None:
            raise
        _interrupted(f"the evaluation's state (and a long Wesolowski proof's progress) is kept in "
                     f"{resume.directory}")
    if not printed:
        _print_eval(result, group, t, out_path, checkpoints_path, as_json, backend)


def _print_eval(result, group, t: int, out_path: str | None, checkpoints_path: str | None,
                as_json: bool, requested_backend: str = "auto") -> None:
    """What ``vdf eval`` prints about a finished run (before a resumable run's state is deleted)."""
    from ..engine.tuning import explain
    from ..vdf.api import parts_text

    ev = result.evaluation
    # Squarings this run did (a resumed evaluation started part way).
    done = result.chain["steps"] - result.chain["start_step"] if result.chain else t
    doc: dict[str, Any] = {
        "modulus": hex(group.modulus), "bits": group.bits, "x": hex(ev.x), "t": t, "y": hex(ev.y),
        "backend": ev.backend, "eval_seconds": round(result.eval_seconds, 6),
        "squarings_per_second": round(done / result.eval_seconds) if result.eval_seconds > 0 and done else None,
        "checkpoints": len(ev.values), "plans": result.plans,
        "backend_choice": explain(group.bits, ev.backend, requested_backend),
    }
    if result.backend_report:
        doc["backend_report"] = result.backend_report
    if result.chain:
        doc["resumable"] = result.chain
    if result.proof is not None:
        doc.update(proof_type=result.proof.type, proof_seconds=round(result.proof_seconds, 6),
                   proof_cores=1 + result.workers, proof_processes=result.processes,
                   proof=result.proof.to_document())
    if out_path:
        doc["out"] = out_path
    if checkpoints_path:
        doc["checkpoints_file"] = checkpoints_path
    if as_json:
        click.echo(json.dumps(doc, indent=1))
        sys.stdout.flush()              # a failed write (EPIPE, a full disk) raises here, state kept
        return
    click.echo(f"y            {hex(ev.y)}")
    click.echo(f"statement    |x^(2^{t})| mod a {group.bits}-bit N, x = {hex(ev.x)}")
    click.echo(f"evaluation   {result.eval_seconds:.3f} s on {ev.backend}"
               + (f" ({done / result.eval_seconds / 1e6:.3f} M squarings/s)" if result.eval_seconds > 0 and done
                  else "")
               + f", {len(ev.values)} values stored")
    click.echo(f"backend      {doc['backend_choice']['text']}")
    if result.chain:
        ch = result.chain
        click.echo(f"resumable    {ch['directory']}: from step {ch['start_step']}, error check "
                   f"{100 * ch['check_overhead']:.2f}% of the squaring time, {ch['faults_detected']} fault(s) "
                   f"detected")
        if ch.get("proof_resumed_at") is not None:
            click.echo(f"             the proof went on from its saved progress (the ranges above bit "
                       f"{ch['proof_resumed_at']} were done)")
    rep = result.backend_report
    if "cycles_per_squaring" in rep:
        click.echo(f"hardware     {rep['cycles_per_squaring']} cycles/squaring on the simulated design; "
                   f"{rep['projected_ns_per_squaring']} ns/squaring and {rep['projected_seconds']:.6f} s projected "
                   f"at {rep['clock_mhz']} MHz ({rep['clock_source']})")
    if result.proof is not None:
        # Against the evaluation only when this run did all of it (a resumed one may have done none).
        whole = not result.chain or result.chain["start_step"] == 0
        share = f" ({result.proof_seconds / max(result.eval_seconds, 1e-9):.1%} of the evaluation)" if whole else ""
        click.echo(f"proof        {result.proof.type}, {result.proof_seconds:.3f} s "
                   f"{parts_text(1 + result.workers, result.processes)}{share}")
        if out_path:
            click.echo(f"written      {out_path}")
        else:
            click.echo("note         use --out FILE to save the proof, or --json to print it")
    if checkpoints_path:
        click.echo(f"checkpoints  {checkpoints_path}")
    sys.stdout.flush()                  # a failed write (EPIPE, a full disk) raises here


def _print_stopped(stopped, group, x: int, t: int, as_json: bool) -> None:
    """What ``vdf eval --stop-after`` prints when it stops (exit 0), in the shape of ``timelock solve``'s."""
    step = stopped.solve.step
    checkpoint = str(stopped.checkpoint) if stopped.checkpoint else None
    if as_json:
        click.echo(json.dumps({"modulus": hex(group.modulus), "bits": group.bits, "x": hex(x), "t": t, "y": None,
                               "finished": False, "step": step, "checkpoint": checkpoint,
                               "resumable": {"directory": str(stopped.directory), "steps": step}}, indent=1))
        return
    click.echo(f"stopped      at step {step} of {t} ({100 * step / t:.4g}%) by --stop-after; state in "
               f"{stopped.directory}: run the same command to go on")


def _refuse_given(reason: str, **given: bool) -> None:
    """ParameterError naming the first option given (``resume_dir`` is ``--resume-dir``) that cannot be."""
    for name, present in given.items():
        if present:
            raise ParameterError(name.replace("_", "-"), reason)


def _interrupted(kept: str) -> NoReturn:
    """Exit 130 after Ctrl-C outside the squaring loop, saying what was kept."""
    click.echo(f"modforge: interrupted; {kept} (rerun the same command to go on)", err=True)
    sys.exit(EXIT_INTERRUPTED)


def _check_outputs(force: bool, **paths: str | None) -> None:
    """Every output path writable (new, or existing with ``force``) and no two the same, checked before the
    evaluation (not after hours of it)."""
    from ..fileio import check_output_path, same_file

    given = [(name, path) for name, path in paths.items() if path is not None]
    for i, (name, path) in enumerate(given):
        for other, path2 in given[i + 1:]:
            if same_file(path, path2):
                raise ParameterError(other, f"is the same file as --{name}")
    for name, path in given:
        check_output_path(path, name, overwrite=force)


def _resume_options(t: int, resume_dir: str | None, no_resume: bool, restart: bool, interval_text: str,
                    stop_after_text: str | None, show_progress: bool | None):
    """ResumeOptions for ``vdf eval``, or None for an in-memory evaluation."""
    from ..timelock.durations import parse_duration
    from ..timelock.progress import make_reporter
    from ..timelock.solver import fault_from_env
    from ..vdf.resume import ResumeOptions, cache_dir

    if no_resume:
        _refuse_given("does not go with --no-resume", resume_dir=resume_dir is not None, restart=restart,
                      stop_after=stop_after_text is not None)
        return None
    if resume_dir is None and not restart and stop_after_text is None and t < RESUME_MIN_T:
        return None
    interval = parse_duration(interval_text, "checkpoint-interval")
    stop_after = parse_count(stop_after_text, "stop-after") if stop_after_text is not None else None
    mode = "auto" if show_progress is None else ("bar" if show_progress else "none")
    return ResumeOptions(directory=resume_dir if resume_dir is not None else cache_dir(), restart=restart,
                         interval=interval, reporter=make_reporter(mode, interval), stop_after=stop_after,
                         handle_signals=True, inject_fault_at=fault_from_env())


# ------------------------------------------------------------------------------------------------ prove


@vdf.command("prove")
@click.option("--checkpoints", "checkpoints_path", required=True, type=click.Path(dir_okay=False),
              help="Checkpoints file written by `modforge vdf eval --checkpoints`.")
@click.option("--proof", "proof_type", required=True, type=click.Choice(PROOF_CHOICES[:2]))
@click.option("--backend", default="auto", show_default=True, help="Engine backend.")
@click.option("--workers", type=INTEGER, default=None, help="Helper processes [default: auto].")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, writable=True), help="Write the proof file here.")
@click.option("--force", is_flag=True, help="Replace --out if it exists (without it an existing file is an error).")
@click.option("--resume-dir", type=click.Path(file_okay=False),
              help="Keep a Wesolowski proof's progress here: after Ctrl-C, kill or power loss, rerun the same "
                   "command to go on [default: ~/.cache/modforge/vdf when T >= 2^28].")
@click.option("--no-resume", is_flag=True, help="Keep no progress on disk, however large T is.")
@click.option("--restart", is_flag=True, help="Discard this proof's saved progress and start from the top.")
@click.option("--checkpoint-interval", "interval_text", default="5s", show_default=True,
              help="Seconds between saves of the proof's progress (e.g. 5s, 1m).")
@click.option("--json", "as_json", is_flag=True, help="Print the proof document.")
def prove_cmd(checkpoints_path: str, proof_type: str, backend: str, workers: int | None, out_path: str | None,
              resume_dir: str | None, no_resume: bool, restart: bool, interval_text: str, force: bool,
              as_json: bool) -> None:
    """Compute a proof from stored checkpoints (no second evaluation).

    A long Wesolowski proof (T >= 2^28, or with --resume-dir) saves its progress every few seconds;
    the same command run again goes on from there.
    """
    import time

    from ..engine import ModRing
    from ..vdf import ProofFailed, prove, read_checkpoints, write_proof
    from ..vdf.api import default_workers, parts_text, require_workers
    from ..vdf.parallel import WorkerError
    from ..timelock.durations import parse_duration
    from ..vdf.plan import CostModel, DEFAULT_MEMORY_BYTES

    check_backend(backend)
    if workers is not None:
        workers = require_workers(workers)
    if not out_path and not as_json:
        raise ParameterError("out", "the proof would be computed and not kept: give --out FILE or --json")
    if out_path is not None:
        from ..fileio import same_file

        if same_file(out_path, checkpoints_path):
            raise ParameterError("out", "is the checkpoints file itself")
    _check_outputs(force, out=out_path)
    ev = read_checkpoints(checkpoints_path)
    plan = ev.wesolowski if proof_type == "wesolowski" else ev.pietrzak
    if plan is None:
        raise ParameterError("checkpoints", f"{checkpoints_path} holds no checkpoints for a {proof_type} proof")
    ring = ModRing(ev.group.modulus, backend=backend)
    if workers is None:
        workers = default_workers(ev.group, ev.t, proof_type, DEFAULT_MEMORY_BYTES, CostModel())
    interval = parse_duration(interval_text, "checkpoint-interval")   # checked even where it is not used
    directory = _prove_resume_dir(ev.t, proof_type, resume_dir, no_resume, restart)
    with _proof_progress(directory, ev, interval) as progress:
        if progress is not None and restart:
            progress.clear()
        start = time.perf_counter()
        try:
            proof = prove(ev, proof_type, ring=ring, workers=workers, progress=progress)
        except (ProofFailed, WorkerError) as exc:
            click.echo(f"modforge: error: {exc}", err=True)
            sys.exit(EXIT_CHECK_FAILED)
        except KeyboardInterrupt:
            if progress is None:
                raise
            _interrupted(f"the proof's progress is kept in {progress.path}")
        seconds = time.perf_counter() - start
        if out_path:
            write_proof(out_path, proof, "out", overwrite=force)
        if as_json:
            click.echo(proof.to_json(), nl=False)
        else:
            # As api.prove's pool: a native Wesolowski proof splits into threads, anything else into processes.
            threads = proof_type == "wesolowski" and getattr(ring, "has_native_multiexp", False)
            click.echo(f"proof        {proof_type}, {seconds:.3f} s "
                       f"{parts_text(1 + workers, 1 if threads else 1 + workers)}")
            if progress is not None and progress.resumed_at is not None:
                click.echo(f"resumed      from {progress.path} (the ranges above bit {progress.resumed_at} were "
                           f"done)")
            click.echo(f"y            {hex(proof.y)}")
            if out_path:
                click.echo(f"written      {out_path}")
        sys.stdout.flush()              # a failed write (EPIPE, a full disk) raises here, progress kept
        if progress is not None:
            progress.clear()            # only once the proof is written and printed


def _prove_resume_dir(t: int, proof_type: str, resume_dir: str | None, no_resume: bool, restart: bool):
    """The directory for a resumable ``vdf prove``, or None."""
    from pathlib import Path

    from ..vdf.resume import cache_dir

    if no_resume or proof_type != "wesolowski":
        _refuse_given("does not go with --no-resume" if no_resume else
                      "applies to Wesolowski proofs only (a Pietrzak proof from checkpoints is seconds of work)",
                      resume_dir=resume_dir is not None, restart=restart)
        return None
    if resume_dir is None and not restart and t < RESUME_MIN_T:
        return None
    return Path(resume_dir) if resume_dir is not None else cache_dir()


@contextmanager
def _proof_progress(directory, ev, interval: float):
    """A ProofProgress for ``vdf prove`` in ``directory`` (None: yields None), held under a lock."""
    if directory is None:
        yield None
        return
    from ..fileio import exclusive_lock, remove_stale_temps
    from ..timelock.progress import make_reporter
    from ..vdf.proof_progress import ProofProgress, statement_key

    plan = ev.wesolowski
    key = statement_key(ev.group.modulus, ev.x, ev.t, ev.y, plan.kappa, plan.checkpoints)
    stem = f"vdf-prove-{key[:16]}"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ParameterError("resume-dir", f"cannot create {str(directory)!r}: {exc.strerror or exc}") from None
    lock_path = directory / f"{stem}.lock"
    reporter = make_reporter("auto", interval)        # a bar on a terminal
    with exclusive_lock(lock_path, "resume-dir", f"another process is computing this proof in {str(directory)!r}"):
        remove_stale_temps(directory, stem)
        progress = ProofProgress(directory / f"{stem}.json", key, ev.group.modulus, interval=interval,
                                 notify=lambda kind, text: click.echo(f"modforge: {text}", err=True),
                                 on_range=lambda done, total: reporter.proof(done=done, total=total))
        try:
            yield progress
        finally:
            reporter.finish()
            # Also after a failure or Ctrl-C (the progress file stays for the rerun): safe while held, since
            # a second process never waits for this lock (LOCK_NB), it fails and exits.
            lock_path.unlink(missing_ok=True)


# ------------------------------------------------------------------------------------------------ verify


@vdf.command("verify")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--modulus", "modulus_text", metavar="N",
              help="The modulus the proof must be for (decimal or 0x-hex, or 'vdf-alliance') [default: the "
                   "proof file's, the prover's choice].")
@click.option("--x", "x_text", metavar="X", help="The input the proof must be for: a number, or hash:TEXT.")
@click.option("--t", "t_text", metavar="T", help="The number of squarings the proof must be for (decimal, "
                                                   "0x-hex or 2^K).")
@click.option("--backend", default="auto", show_default=True, help="Engine backend.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def verify_cmd(file: str, modulus_text: str | None, x_text: str | None, t_text: str | None, backend: str,
               as_json: bool) -> None:
    """Check a proof file (`-`: standard input): exit 0 valid, 1 invalid (reason printed), 2 unreadable.

    A proof file is what `vdf eval --out` and `vdf prove --out` write; in `vdf eval --json` output it is
    the `proof` field.  It states N, x and t itself: --modulus, --x and --t pin them, and a proof of
    another statement is invalid.  Without --modulus the prover chose N (and may know its factors).
    """
    from ..vdf import Group, Proof, verify
    from ..vdf.formats import read_json

    from ..vdf.api import Verdict
    from ..vdf.group import Reject

    check_backend(backend)          # an unknown backend is bad usage (exit 2), not a bad proof
    # The pins are read before the file: bad syntax is bad usage (exit 2) whatever the file holds.
    pinned_group = Group(parse_modulus(modulus_text)) if modulus_text is not None else None
    pinned_t = parse_t(t_text) if t_text is not None else None
    pinned_x = None
    if x_text is not None:
        if pinned_group is not None:
            pinned_x = parse_x(pinned_group, x_text)
        elif not x_text.startswith("hash:"):
            parse_int(x_text, "x")  # the syntax now; membership in the proof's group once it is read
    try:
        doc = read_json(file, stdin=True)
    except Reject as exc:           # JSON, but not a valid document (a repeated key, NaN): an invalid proof
        doc, verdict = None, Verdict(False, exc.reason)
    else:
        if isinstance(doc, dict) and "format" not in doc and isinstance(doc.get("proof"), dict) \
                and "format" in doc["proof"]:
            # A valid proof in the wrong container is bad input, not an invalid proof.
            raise ParameterError("FILE", f"{file} is `vdf eval --json` output, not a proof file: its 'proof' "
                                         f"field is the proof (e.g. jq .proof), or write one with --out")
        try:
            proof = Proof.from_document(doc)
        except Reject as exc:
            verdict = Verdict(False, exc.reason)
        else:
            # The statement first: a proof of another one is invalid however sound it is.
            verdict = _pinned_statement(proof, pinned_group, x_text, pinned_x, pinned_t)
            if verdict is None:
                verdict = verify(proof, backend=backend)
    if not as_json and pinned_group is None:
        click.echo("modforge: note: the modulus N is the one in the proof file, i.e. the prover's choice (who may "
                   "know its factors); give --modulus N to pin it", err=True)
    if as_json:
        out: dict[str, Any] = {"valid": verdict.valid, "reason": verdict.reason, "type": verdict.type,
                               "seconds": round(verdict.seconds, 6)}
        if verdict.valid:
            out.update(modulus=doc["modulus"], x=doc["x"], t=doc["t"], bits=doc["bits"], y=hex(int(doc["y"], 16)))
        click.echo(json.dumps(out, indent=1))
    else:
        click.echo(("valid: " if verdict.valid else "invalid: ") + verdict.reason
                   + (f" ({verdict.seconds * 1e3:.1f} ms)" if verdict.valid else ""))
    if not verdict.valid:
        sys.exit(EXIT_CHECK_FAILED)


def _pinned_statement(proof, group, x_text: str | None, x: int | None, t: int | None):
    """An invalid Verdict naming the first field of the proof's statement that differs from its option, or None.

    ``x`` is ``--x`` read in the group of ``--modulus``; without it (None), ``x_text`` is read in the group of
    the proof's modulus, and a number that is no canonical element of it makes the proof invalid."""
    from ..vdf.api import Verdict

    if group is not None and proof.modulus != group.modulus:
        return Verdict(False, "modulus differs from --modulus: the proof is for another N", proof.type)
    if x_text is not None:
        if x is None:
            # Read in the proof's group, which the prover chose: a number that is no element of it is
            # another statement (an invalid proof), not bad usage.
            try:
                x = parse_x(proof.group, x_text)
            except ParameterError as exc:
                return Verdict(False, f"x differs from --x: --x is no element of the proof's group ({exc})",
                               proof.type)
        if x != proof.x:
            return Verdict(False, "x differs from --x: the proof is for another input", proof.type)
    if t is not None and proof.t != t:
        return Verdict(False, f"t differs from --t: the proof is for t = {proof.t}, not {t}", proof.type)
    return None
