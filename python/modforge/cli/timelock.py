"""``modforge timelock create|solve|info``: time-lock puzzles on this machine.

Exit codes: 0 success (also a solve stopped by --stop-after), 1 a check failed
(authentication failure, corrupted checkpoints that cannot be recovered,
repeated error-check failures), 2 bad usage or input, 130 interrupted by
Ctrl-C/SIGTERM after writing a checkpoint.  JSON output writes big integers as
0x-prefixed lowercase hex.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import click

from ..arith.base import ParameterError
from .main import EXIT_CHECK_FAILED, EXIT_INTERRUPTED, INTEGER, ErrorExitGroup, parse_count



class TimelockGroup(ErrorExitGroup):
    """Bad input exits 2; a failed authentication or check 1; an interrupted solve 130 after its checkpoint."""

    def exit_codes(self) -> list[tuple[type[BaseException], int, str]]:
        from ..timelock import SolveInterrupted, TimelockError

        return [*super().exit_codes(), (TimelockError, EXIT_CHECK_FAILED, "error: "),
                (SolveInterrupted, EXIT_INTERRUPTED, "")]


def _num(value: int) -> str:
    return f"{value} ({hex(value)})" if value < 1 << 64 else hex(value)


def _dump(doc: dict[str, Any]) -> None:
    click.echo(json.dumps(doc, indent=1))


@click.group(cls=TimelockGroup)
def timelock() -> None:
    """Time-lock puzzles: create one with the trapdoor, solve one by repeated squaring, inspect one."""


@timelock.command()
@click.option("--bits", type=INTEGER, default=2048, show_default=True, help="Modulus width (N = p*q, exactly this wide).")
@click.option("--duration", "duration_text", help="Solving time on this machine: 90s, 10m, 2h, 1d, 1h30m.")
@click.option("--t", "t_text", help="Instead of --duration: the number of squarings.")
@click.option("--message", "message", help="Text to lock (UTF-8).")
@click.option("--file", "file_path", type=click.Path(dir_okay=False), help="Instead of --message: a file to lock.")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="Puzzle file to write.")
@click.option("--keep-trapdoor", "keep_trapdoor", type=click.Path(dir_okay=False),
              help="Also write the primes p, q to this file (mode 0600). Without it they never touch the disk.")
@click.option("--random-base", is_flag=True, help="Use a random base x instead of x = 2.")
@click.option("--backend", default="auto", show_default=True, help="Engine backend to calibrate with.")
@click.option("--force", is_flag=True, help="Replace existing --out / --keep-trapdoor files.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def create(bits: int, duration_text: str | None, t_text: str | None, message: str | None, file_path: str | None,
           out: str, keep_trapdoor: str | None, random_base: bool, backend: str, force: bool, as_json: bool) -> None:
    """Create a puzzle that takes --duration (or --t squarings) to solve on this machine."""
    from ..timelock import create_puzzle
    from ..timelock.durations import format_count, format_duration, parse_duration

    if (duration_text is None) == (t_text is None):
        raise ParameterError("duration", "give exactly one of --duration or --t")
    if (message is None) == (file_path is None):
        raise ParameterError("message", "give exactly one of --message TEXT or --file F")
    duration = parse_duration(duration_text) if duration_text is not None else None
    t = parse_count(t_text, "t") if t_text is not None else None
    if file_path is not None:
        from ..fileio import InputTooLarge, read_bounded
        from ..timelock.puzzle import MAX_PAYLOAD

        try:
            if file_path == "-":
                payload = read_bounded(sys.stdin.buffer, MAX_PAYLOAD, "standard input")
            else:
                payload = read_bounded(file_path, MAX_PAYLOAD, repr(file_path))
        except InputTooLarge as exc:
            raise ParameterError("file", f"{exc} (a puzzle locks at most {MAX_PAYLOAD} bytes)") from None
        except OSError as exc:
            raise ParameterError("file", f"cannot read {file_path!r}: {exc.strerror or exc}") from None
    else:
        # surrogateescape: argument bytes that are not UTF-8 are locked exactly as given.
        payload = message.encode("utf-8", "surrogateescape")
    if not payload:
        # Most likely an unset shell variable; found out only when the puzzle is solved, years later.
        raise ParameterError("message" if file_path is None else "file", "the payload is empty: nothing to lock")
    made = create_puzzle(bits, payload, out, t=t, duration=duration, random_base=random_base,
                         keep_trapdoor=keep_trapdoor, backend=backend, overwrite=force)
    task, cal = made.puzzle.task, made.calibration
    if as_json:
        _dump({"out": str(made.path), "task_id": task.id, "bits": task.bits, "n": hex(task.n), "x": hex(task.x),
               "t": hex(task.t), "estimated_seconds": made.estimated_seconds, "calibration": cal,
               "trapdoor_file": str(made.trapdoor_path) if made.trapdoor_path else None,
               "keygen_seconds": made.keygen_seconds, "trapdoor_seconds": made.trapdoor_seconds,
               "payload_bytes": len(payload)})
        return
    click.echo(f"wrote     {made.path} ({task.bits}-bit modulus, x = {task.x if task.x < 1 << 64 else hex(task.x)}, "
               f"t = {task.t} squarings)")
    click.echo(f"estimate  {format_duration(made.estimated_seconds)} to solve on this machine "
               f"({cal['backend']}, {format_count(cal['squarings_per_second'])} squarings/s, {cal['cpu']})")
    click.echo(f"trapdoor  key computed in {made.trapdoor_seconds * 1000:.1f} ms; "
               + (f"primes written to {made.trapdoor_path} (keep it secret)" if made.trapdoor_path
                  else "primes not stored"))


# Event fields that are step numbers: hex in JSON, like every other step.
_EVENT_STEPS = ("step", "start", "end")


# A terminal gets a text payload whole up to this many characters, and a binary one as this many leading
# bytes in hex; past that, a 20 MB payload would flood it with 40 MB of hex (the file is what --output is for).
SHOWN_TEXT_CHARS = 2000
SHOWN_BINARY_BYTES = 32


def _payload_summary(payload: bytes, written_to: str | None) -> dict[str, Any]:
    """The payload's size and SHA-256 (and where it was written): what is printed instead of the bytes."""
    return {"payload_bytes": len(payload), "payload_sha256": hashlib.sha256(payload).hexdigest(),
            "output": written_to}


def _result_doc(result, kind: str | None, shown: str | None, written_to: str | None = None) -> dict[str, Any]:
    """The solve's JSON object; the payload goes in once (``message``), or not at all when a file has it."""
    task = result.task
    events = [{k: hex(v) if k in _EVENT_STEPS and isinstance(v, int) else v for k, v in e.items()}
              for e in result.events]
    doc: dict[str, Any] = {
        "puzzle": result.label, "task_id": task.id, "bits": task.bits, "n": hex(task.n), "x": hex(task.x),
        "t": hex(task.t), "finished": result.finished, "step": hex(result.step), "start_step": hex(result.start_step),
        "w": hex(result.w) if result.w is not None else None,
        "message": shown, "message_encoding": kind,
        **(_payload_summary(result.payload, written_to) if result.payload is not None else
           {"payload_bytes": None, "payload_sha256": None, "output": None}),
        "backend": result.backend, "seconds": result.seconds, "squarings": result.squarings, "rate": result.rate,
        "check": {"name": "gerbicz-product", "segments": result.segments, "extra_squarings": result.extra_squarings,
                  "extra_multiplications": result.extra_multiplications,
                  "squaring_seconds": result.squaring_seconds, "check_seconds": result.check_seconds,
                  "overhead_measured": result.check_overhead,
                  "checkpoint_overhead_measured": result.checkpoint_share},
        "checkpoint_dir": str(result.checkpoint_dir) if result.checkpoint_dir else None,
        "checkpoint": str(result.last_checkpoint) if result.last_checkpoint else None,
        "checkpoint_seconds": result.checkpoint_seconds,
        "faults_detected": result.faults_detected, "rollbacks": result.rollbacks,
        "rejected_checkpoints": result.rejected_checkpoints, "events": events,
    }
    return doc


@timelock.command()
@click.argument("puzzle_spec", metavar="PUZZLE")
@click.option("--checkpoint-dir", type=click.Path(file_okay=False),
              help="Where checkpoints go [default: PUZZLE.checkpoints/ next to a puzzle file, "
                   "~/.cache/modforge/timelock for built-in names].")
@click.option("--checkpoint-interval", "interval_text", default="5s", show_default=True,
              help="Seconds of work between checkpoints (at most this much is lost on a crash; shorter "
                   "intervals cost more checks and checkpoint writes: the work line reports both, and under "
                   "10ms a warning says how much).")
@click.option("--backend", default="auto", show_default=True, help="Engine backend (see modforge.engine).")
@click.option("--progress", "progress_mode", type=click.Choice(["auto", "bar", "plain", "none"]), default="auto",
              show_default=True, help="Progress bar (auto: on a terminal), plain log lines on stderr, or none.")
@click.option("--stop-after", "stop_after_text", help="Stop (with a checkpoint) after this many squarings.")
@click.option("--restart", is_flag=True, help="Move this puzzle's checkpoints aside and start from step 0.")
@click.option("--trapdoor", "trapdoor_path", type=click.Path(dir_okay=False),
              help="Open a modforge puzzle at once with its trapdoor file instead of squaring.")
@click.option("--output", "output_path", type=click.Path(dir_okay=False),
              help="Write the payload bytes here (then only its size and SHA-256 are printed); '-' writes them "
                   "to stdout (the summary then goes to stderr).")
@click.option("--force", is_flag=True, help="Replace --output if it exists (without it an existing file is an error).")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object (w, the message unless --output has it, statistics).")
def solve(puzzle_spec: str, checkpoint_dir: str | None, interval_text: str, backend: str, progress_mode: str,
          stop_after_text: str | None, restart: bool, trapdoor_path: str | None, output_path: str | None,
          force: bool, as_json: bool) -> None:
    """Solve PUZZLE (a file, or lcs35, lcs35-toy, csail2019) by repeated squaring; resumes from checkpoints."""
    from ..fileio import check_output_path, same_file
    from ..timelock import AuthenticationError, PuzzleFile, SolveInterrupted, SolveResult, TimelockError
    from ..timelock import render_message, resolve_puzzle
    from ..timelock import solve as run_solve
    from ..timelock.durations import format_count, format_duration, parse_duration
    from ..timelock.progress import make_reporter
    from ..timelock.puzzle import load_trapdoor, trapdoor_solution
    from ..timelock.solver import fault_from_env

    puzzle = resolve_puzzle(puzzle_spec)
    interval = parse_duration(interval_text, "checkpoint-interval")
    stop_after = parse_count(stop_after_text, "stop-after") if stop_after_text is not None else None
    to_stdout = output_path == "-"
    if to_stdout and as_json:
        raise ParameterError("output", "'-' (the payload on stdout) does not go with --json (the JSON is there)")
    if output_path is not None and not to_stdout:
        # Checked now, not after hours of squaring.
        if isinstance(puzzle, PuzzleFile) and puzzle.path is not None and same_file(output_path, puzzle.path):
            raise ParameterError("output", "must not be the puzzle file itself")
        if trapdoor_path is not None and same_file(output_path, trapdoor_path):
            raise ParameterError("output", "must not be the trapdoor file (the primes would be lost)")
        check_output_path(output_path, "output", overwrite=force)
    if trapdoor_path is not None:
        if not isinstance(puzzle, PuzzleFile):
            raise ParameterError("trapdoor", "only modforge puzzle files have a trapdoor file")
        p, q = load_trapdoor(trapdoor_path, puzzle)
        w = trapdoor_solution(puzzle.task, p, q)
        result = SolveResult(label=puzzle.label, task=puzzle.task, finished=True, step=puzzle.task.t,
                             start_step=puzzle.task.t, w=w, backend="trapdoor")
        try:
            result.payload = puzzle.open(w)
        except TimelockError as exc:
            if as_json:
                _dump({**_result_doc(result, None, None), "error": str(exc)})
            raise
    else:
        reporter = make_reporter(progress_mode, interval)
        try:
            result = run_solve(puzzle, backend=backend, checkpoint_dir=checkpoint_dir, interval=interval,
                               reporter=reporter, inject_fault_at=fault_from_env(), stop_after=stop_after,
                               restart=restart, handle_signals=True, warn_short_interval=True)
        except (TimelockError, SolveInterrupted) as exc:
            partial = getattr(exc, "result", None)
            if isinstance(exc, AuthenticationError) and partial is not None and partial.start_step > 0:
                resumed = AuthenticationError(f"{exc}; this solve resumed from a checkpoint at step "
                                              f"{partial.start_step}: if an untrusted or faulty run wrote it, "
                                              f"rerun with --restart")
                resumed.result = partial  # type: ignore[attr-defined]
                exc = resumed
            if as_json and partial is not None:
                # Scripts get the statistics and events of a failed or interrupted run too (exit code 1 / 130).
                _dump({**_result_doc(partial, None, None), "error": str(exc)})
            raise exc from None
    kind = shown = written_to = None
    if result.payload is not None:
        if to_stdout:
            sys.stdout.buffer.write(result.payload)
            sys.stdout.buffer.flush()
            written_to = "-"
        elif output_path is not None:
            from ..fileio import write_output

            write_output(output_path, result.payload, "output", overwrite=force)
            written_to = str(output_path)
        else:
            kind, shown = render_message(result.payload)
    if as_json:
        _dump(_result_doc(result, kind, shown, written_to))
        return
    echo = functools.partial(click.echo, err=to_stdout)       # stdout carries the payload bytes alone
    task = result.task
    echo(f"puzzle    {result.label} (n: {task.bits} bits, x = {_num(task.x)}, t = {task.t})")
    if not result.finished:
        rate = result.rate_to_go
        eta = (task.t - result.step) / rate if rate > 0 else None
        echo(f"stopped   at step {result.step} of {task.t} ({100 * result.step / task.t:.4g}%); "
             f"about {format_duration(eta)} to go at {format_count(rate)} squarings/s")
        if result.last_checkpoint:
            echo(f"checkpoint {result.last_checkpoint}")
        return
    echo(f"w         {_num(result.w)}")
    if result.payload is not None:
        for line in _message_lines(result.payload, kind, shown, written_to):
            echo(line)
    if result.squarings:
        echo(f"work      {result.squarings} squarings in {format_duration(result.seconds)} "
             f"({format_count(result.rate)}/s, {result.backend}); error check overhead "
             f"{100 * result.check_overhead:.2f}%, checkpoint writes {100 * result.checkpoint_share:.2f}%, "
             f"{result.faults_detected} fault(s) detected")


def _message_lines(payload: bytes, kind: str | None, shown: str | None, written_to: str | None) -> list[str]:
    """What the terminal gets of the payload: the text, or a prefix and where the rest is, or size and hash."""
    digest = hashlib.sha256(payload).hexdigest()
    if written_to is not None:
        where = "stdout" if written_to == "-" else written_to
        return [f"payload   {len(payload)} bytes written to {where} (SHA-256 {digest})"]
    assert shown is not None
    whole = f"{len(payload)} bytes, SHA-256 {digest}; --output FILE writes them all"
    if kind == "text":
        if len(shown) <= SHOWN_TEXT_CHARS:
            return [f"message   {shown}"]
        return [f"message   {shown[:SHOWN_TEXT_CHARS]}...", f"          (the first {SHOWN_TEXT_CHARS} characters "
                                                              f"of {whole})"]
    if len(payload) <= SHOWN_BINARY_BYTES:
        return [f"message   {shown}  (hex: not printable text)"]
    return [f"message   {payload[:SHOWN_BINARY_BYTES].hex()}...  (hex of the first {SHOWN_BINARY_BYTES} bytes: not "
            f"printable text; {whole})"]


@timelock.command()
@click.argument("puzzle_spec", metavar="PUZZLE")
@click.option("--checkpoint-dir", type=click.Path(file_okay=False), help="Where to look for checkpoints.")
@click.option("--backend", default="auto", show_default=True, help="Engine backend to time.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def info(puzzle_spec: str, checkpoint_dir: str | None, backend: str, as_json: bool) -> None:
    """Show PUZZLE's parameters, its estimated solving time here, and checkpoint progress if any."""
    from ..timelock import puzzle_info, resolve_puzzle
    from ..timelock.durations import format_count, format_duration

    doc = puzzle_info(resolve_puzzle(puzzle_spec), backend=backend, checkpoint_dir=checkpoint_dir)
    if as_json:
        out = dict(doc)
        for key in ("n", "x", "t", "z"):
            if key in out:
                out[key] = hex(out[key])
        if out["checkpoint"] is not None:
            out["checkpoint"] = dict(out["checkpoint"], step=hex(out["checkpoint"]["step"]))
        _dump(out)
        return
    title = doc.get("name") or doc.get("path")
    click.echo(f"puzzle     {title} ({doc['kind']})")
    if doc.get("source"):
        click.echo(f"source     {doc['source']}")
    click.echo(f"modulus    {doc['bits']} bits: {hex(doc['n'])}")
    click.echo(f"base, t    x = {_num(doc['x'])}, t = {doc['t']} squarings")
    if doc["kind"] == "file":
        click.echo(f"cipher     {doc['cipher']} ({doc['kdf']}), {doc['ciphertext_bytes']} bytes, created {doc['created']}")
    sp = doc["speed"]
    overhead = sp["check_overhead_predicted"]
    # On a chain of a few squarings (the toy) the check's fixed cost dwarfs the work: say so plainly.
    check = (f"error check ~{100 * overhead:.2f}% included" if overhead < 1 else
             f"the error check's fixed cost, {overhead:.0f}x the squarings themselves, included")
    click.echo(f"this host  {format_count(sp['squarings_per_second'])} squarings/s ({sp['backend']}): about "
               f"{format_duration(doc['estimated_seconds'])} in all ({check})")
    click.echo(f"backend    {sp['backend_choice']['text']}")
    ck = doc["checkpoint"]
    if doc["restart_needed"]:
        click.echo(f"progress   no usable checkpoint: {len(doc['rejected_checkpoints'])} checkpoint file(s) in "
                   f"{doc['checkpoint_dir']} are corrupted; solve refuses to start over silently, "
                   f"'timelock solve --restart' starts from step 0")
    elif ck is None:
        click.echo(f"progress   no checkpoint in {doc['checkpoint_dir']}")
    else:
        state = "done" if ck["done"] else f"{format_duration(ck['remaining_seconds'])} to go"
        click.echo(f"progress   step {ck['step']} of {doc['t']} ({100 * ck['fraction']:.4g}%), {state}; "
                   f"{ck['path']} ({ck['written']})")
    for bad in doc["rejected_checkpoints"]:
        click.echo(f"modforge: checkpoint {bad['path']} is corrupted: {bad['reason']}", err=True)
