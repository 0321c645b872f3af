"""``modforge vdf``: evaluate, prove and verify the RSA-group VDF (see docs/vdf.md).

Exit codes: 0 success / valid proof, 1 invalid proof (the reason on stdout,
or in the JSON), 2 bad usage, bad input or an unreadable file (one line on
stderr).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ..arith.base import ParameterError
from .main import EXIT_CHECK_FAILED, ErrorExitGroup, parse_int

PROOF_CHOICES = ("wesolowski", "pietrzak", "none")
PROGRESS_MIN_T = 1 << 16




@click.group(cls=ErrorExitGroup, context_settings={"help_option_names": ["-h", "--help"]})
def vdf() -> None:
    """Verifiable delay function y = |x^(2^t) mod N| in QR+_N, with Wesolowski or Pietrzak proofs."""


# ------------------------------------------------------------------------------------------------ parsing


def parse_modulus(text: str) -> int:
    if text.strip().lower() in ("vdf-alliance", "vdf_alliance"):
        from ..data import vdf_alliance_modulus

        return vdf_alliance_modulus()
    return parse_int(text, "modulus")


def parse_t(text: str) -> int:
    """Decimal, 0x-hex, or a power of two written ``2^K`` / ``2**K``."""
    t = text.strip().replace(" ", "")
    for sep in ("**", "^"):
        if sep in t:
            base, _, exp = t.partition(sep)
            if base != "2":
                raise ParameterError("t", f"only powers of two may be written with {sep}: {text!r}")
            k = parse_int(exp, "t")
            if not 0 <= k <= 64:
                raise ParameterError("t", f"exponent out of range in {text!r}")
            return 1 << k
    return parse_int(t, "t")


def parse_x(group, text: str) -> int:
    """A number (a canonical element) or ``hash:TEXT`` (hash-to-group of TEXT's UTF-8 bytes)."""
    if text.startswith("hash:"):
        return group.hash_to_group(text[len("hash:"):].encode("utf-8"))
    return group.require("x", parse_int(text, "x"))


def check_backend(name: str) -> str:
    """``auto`` or a backend the engine knows and this machine runs; ParameterError (exit 2) otherwise."""
    from ..engine import available_backends, backend_names
    from ..engine.backends import SIM_PREFIX

    if name.startswith(SIM_PREFIX):
        return name  # a simulated design: the engine loads (and validates) it on first use
    if name not in backend_names():
        raise ParameterError("backend", f"unknown backend {name!r}; choose one of: {', '.join(backend_names())}")
    if name != "auto" and name not in available_backends():
        raise ParameterError("backend", f"{name!r} is not available on this machine; available: "
                                        f"{', '.join(['auto', *available_backends()])}")
    return name


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
            return Text("-" if speed is None else f"{speed / 1e6:.2f} M sqr/s")

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
              help="Engine backend: auto, or one of `modforge.engine.backend_names()` (portable, adx, ifma, gmp, ...).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, writable=True),
              help="Write the proof file here (atomically).")
@click.option("--checkpoints", "checkpoints_path", type=click.Path(dir_okay=False, writable=True),
              help="Also store checkpoints for both proof types here, for `modforge vdf prove`.")
@click.option("--memory", "memory_mib", type=int, default=64, show_default=True,
              help="Budget for stored checkpoints, MiB.")
@click.option("--workers", type=int, default=None, help="Helper processes for the proof [default: auto].")
@click.option("--progress/--no-progress", "show_progress", default=None,
              help="Progress bar on stderr [default: when stderr is a terminal and T >= 2^16].")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def eval_cmd(modulus_text: str, x_text: str, t_text: str, proof_type: str, backend: str, out_path: str | None,
             checkpoints_path: str | None, memory_mib: int, workers: int | None, show_progress: bool | None,
             as_json: bool) -> None:
    """Evaluate y = |x^(2^T) mod N| and optionally prove it."""
    from ..vdf import Group, ProofFailed, run, write_checkpoints, write_proof
    from ..vdf.parallel import WorkerError

    check_backend(backend)
    group = Group(parse_modulus(modulus_text))
    x = parse_x(group, x_text)
    t = parse_t(t_text)
    ptype = None if proof_type == "none" else proof_type
    if out_path and ptype is None:
        raise ParameterError("out", "--out writes a proof file: give --proof wesolowski or --proof pietrzak")
    if workers is not None and workers < 0:
        raise ParameterError("workers", f"must be >= 0, got {workers}")
    keep = ("wesolowski", "pietrzak") if checkpoints_path else ()
    bar = _progress(show_progress, t)
    try:
        if bar is not None:
            with bar:
                task = bar.add_task("squaring", total=t)
                result = run(group, x, t, ptype, backend=backend, memory=memory_bytes(memory_mib), workers=workers,
                             keep=keep, progress=lambda done, total: bar.update(task, completed=done, total=total))
        else:
            result = run(group, x, t, ptype, backend=backend, memory=memory_bytes(memory_mib), workers=workers,
                         keep=keep)
    except (ProofFailed, WorkerError) as exc:
        click.echo(f"modforge: error: {exc}", err=True)
        sys.exit(EXIT_CHECK_FAILED)
    ev = result.evaluation
    if out_path and result.proof is not None:
        write_proof(out_path, result.proof)
    if checkpoints_path:
        write_checkpoints(checkpoints_path, ev)
    doc: dict[str, Any] = {
        "modulus": hex(group.modulus), "bits": group.bits, "x": hex(ev.x), "t": t, "y": hex(ev.y),
        "backend": ev.backend, "eval_seconds": round(result.eval_seconds, 6),
        "squarings_per_second": round(t / result.eval_seconds) if result.eval_seconds > 0 else None,
        "checkpoints": len(ev.values), "plans": result.plans,
    }
    if result.backend_report:
        doc["backend_report"] = result.backend_report
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
        return
    click.echo(f"y            {hex(ev.y)}")
    click.echo(f"statement    |x^(2^{t})| mod a {group.bits}-bit N, x = {hex(ev.x)}")
    click.echo(f"evaluation   {result.eval_seconds:.3f} s on {ev.backend}"
               + (f" ({t / result.eval_seconds / 1e6:.3f} M squarings/s)" if result.eval_seconds > 0 else "")
               + f", {len(ev.values)} values stored")
    rep = result.backend_report
    if "cycles_per_squaring" in rep:
        click.echo(f"hardware     {rep['cycles_per_squaring']} cycles/squaring on the simulated design; "
                   f"{rep['projected_ns_per_squaring']} ns/squaring and {rep['projected_seconds']:.6f} s projected "
                   f"at {rep['clock_mhz']} MHz ({rep['clock_source']})")
    if result.proof is not None:
        click.echo(f"proof        {result.proof.type}, {result.proof_seconds:.3f} s on {1 + result.workers} "
                   f"core(s) ({result.proof_seconds / max(result.eval_seconds, 1e-9):.1%} of the evaluation)")
        if out_path:
            click.echo(f"written      {out_path}")
        else:
            click.echo("note         use --out FILE to save the proof, or --json to print it")
    if checkpoints_path:
        click.echo(f"checkpoints  {checkpoints_path}")


# ------------------------------------------------------------------------------------------------ prove


@vdf.command("prove")
@click.option("--checkpoints", "checkpoints_path", required=True, type=click.Path(dir_okay=False),
              help="Checkpoints file written by `modforge vdf eval --checkpoints`.")
@click.option("--proof", "proof_type", required=True, type=click.Choice(PROOF_CHOICES[:2]))
@click.option("--backend", default="auto", show_default=True, help="Engine backend.")
@click.option("--workers", type=int, default=None, help="Helper processes [default: auto].")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, writable=True), help="Write the proof file here.")
@click.option("--json", "as_json", is_flag=True, help="Print the proof document.")
def prove_cmd(checkpoints_path: str, proof_type: str, backend: str, workers: int | None, out_path: str | None,
              as_json: bool) -> None:
    """Compute a proof from stored checkpoints (no second evaluation)."""
    import time

    from ..engine import ModRing
    from ..vdf import ProofFailed, prove, read_checkpoints, write_proof
    from ..vdf.api import default_workers
    from ..vdf.parallel import WorkerError
    from ..vdf.plan import CostModel, DEFAULT_MEMORY_BYTES

    check_backend(backend)
    ev = read_checkpoints(checkpoints_path)
    plan = ev.wesolowski if proof_type == "wesolowski" else ev.pietrzak
    if plan is None:
        raise ParameterError("checkpoints", f"{checkpoints_path} holds no checkpoints for a {proof_type} proof")
    ring = ModRing(ev.group.modulus, backend=backend)
    if workers is None:
        workers = default_workers(ev.group, ev.t, proof_type, DEFAULT_MEMORY_BYTES, CostModel())
    start = time.perf_counter()
    try:
        proof = prove(ev, proof_type, ring=ring, workers=workers)
    except (ProofFailed, WorkerError) as exc:
        click.echo(f"modforge: error: {exc}", err=True)
        sys.exit(EXIT_CHECK_FAILED)
    seconds = time.perf_counter() - start
    if out_path:
        write_proof(out_path, proof)
    if as_json:
        click.echo(proof.to_json(), nl=False)
        return
    click.echo(f"proof        {proof_type}, {seconds:.3f} s on {1 + workers} process(es)")
    click.echo(f"y            {hex(proof.y)}")
    if out_path:
        click.echo(f"written      {out_path}")


# ------------------------------------------------------------------------------------------------ verify


@vdf.command("verify")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--backend", default="auto", show_default=True, help="Engine backend.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def verify_cmd(file: str, backend: str, as_json: bool) -> None:
    """Check a proof file: exit 0 valid, 1 invalid (reason printed), 2 unreadable."""
    from ..vdf import verify
    from ..vdf.formats import read_json

    check_backend(backend)          # an unknown backend is bad usage (exit 2), not a bad proof
    doc = read_json(file)
    verdict = verify(doc, backend=backend)
    if as_json:
        out: dict[str, Any] = {"valid": verdict.valid, "reason": verdict.reason, "type": verdict.type,
                               "seconds": round(verdict.seconds, 6)}
        if verdict.valid:
            out.update(t=doc["t"], bits=doc["bits"], y=hex(int(doc["y"], 16)))
        click.echo(json.dumps(out, indent=1))
    else:
        click.echo(("valid: " if verdict.valid else "invalid: ") + verdict.reason
                   + (f" ({verdict.seconds * 1e3:.1f} ms)" if verdict.valid else ""))
    if not verdict.valid:
        sys.exit(EXIT_CHECK_FAILED)
