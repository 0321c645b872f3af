"""``modforge bench``: measurements of our engine beside outside anchors.

``modforge bench vdf`` (also what a bare ``modforge bench`` runs) times one
modular squaring at each width for every engine backend this machine runs,
natively built GMP, OpenSSL and gmpy2, interleaved in one run; see
docs/benchmarks.md.  Exit codes: 0 measured, 1 some implementation returned a
wrong result, 2 bad options.

``modforge bench rsa`` counts RSA private operations per second per core,
ours (through the kernel ``auto`` picks) beside ``openssl speed`` and the
``cryptography`` library; ``modforge bench ct`` is a dudect-style timing test
of the private-key path (exit 1 when |t| > 4.5).
"""

from __future__ import annotations

import sys

import click

from ..arith.base import ParameterError
from .main import EXIT_CHECK_FAILED, INTEGER, SECONDS

DEFAULT_BITS_TEXT = "1024,2048,3072,4096"


class _RichProgress:
    """Adapter from the runner's Progress hooks to a rich progress bar."""

    def __init__(self, progress, description: str):
        self._progress = progress
        self._task = progress.add_task(description, total=None)

    def start(self, total: int) -> None:
        self._progress.update(self._task, total=total)

    def step(self, what: str) -> None:
        self._progress.update(self._task, advance=1, description=what)


def _run_vdf(bits_text: str, repeats: int, seconds: float, as_json: bool, markdown: bool, build: bool,
             anchors: bool, pin: bool, clock: str) -> None:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from ..bench import anchors as anchors_mod
    from ..bench import report
    from ..bench.vdf import VdfBenchParams, gather_impls, parse_bits, run_vdf_bench

    params = VdfBenchParams(bits=parse_bits(bits_text), repeats=repeats, seconds=seconds, pin=pin,
                            clock=clock)
    err = Console(stderr=True, highlight=False)

    def notice(message: str) -> None:
        err.print(f"[cyan]bench:[/cyan] {message}")

    env = anchors_mod.AnchorEnv.from_environ(build=build) if anchors else None
    impls, skipped = gather_impls(env, notice)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as bar:
        doc = run_vdf_bench(params, impls, skipped, progress=_RichProgress(bar, "measuring"), notice=notice)
    if as_json or markdown:
        click.echo(report.to_json(doc) if as_json else report.to_markdown(doc), nl=as_json)
        report.print_notices(doc, err)
    else:
        report.print_tables(doc, Console())
    if doc["errors"]:
        for e in doc["errors"]:
            click.echo(f"modforge: error: {e['why']}", err=True)
        sys.exit(EXIT_CHECK_FAILED)


_vdf_options = [
    click.option("--bits", "bits_text", default=DEFAULT_BITS_TEXT, show_default=True, metavar="N[,N...]",
                 help="Modulus widths (1024 uses the VDF Alliance modulus, others a reproducible one)."),
    click.option("--repeats", type=INTEGER, default=7, show_default=True,
                 help="Round-robin rounds per width (one timed run of each implementation per round)."),
    click.option("--seconds", type=SECONDS, default=0.3, show_default=True,
                 help="Target duration of one run; k (squarings per run) is calibrated to it."),
    click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of tables."),
    click.option("--markdown", is_flag=True, help="Print Markdown tables (as in docs/benchmarks.md)."),
    click.option("--build/--no-build", default=True, show_default=True,
                 help="Build missing anchors (GMP for this CPU, the C harnesses) into the cache; "
                      "--no-build uses only what is cached."),
    click.option("--anchors/--no-anchors", default=True, show_default=True,
                 help="Include natively built GMP and OpenSSL (gmpy2 is always measured)."),
    click.option("--pin/--no-pin", default=True, show_default=True,
                 help="Pin the measurement (and the anchor processes) to one CPU."),
    click.option("--clock", type=click.Choice(["cpu", "wall"]), default="cpu", show_default=True,
                 help="Report thread CPU time (robust on a shared machine) or wall time; JSON has both."),
]


def _with_vdf_options(fn):
    for option in reversed(_vdf_options):
        fn = option(fn)
    return fn


@click.group(invoke_without_command=True)
@click.pass_context
def bench(ctx: click.Context) -> None:
    """Benchmarks of our engine beside GMP, OpenSSL and gmpy2 (bare `bench` runs `bench vdf`)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(vdf)


@bench.command()
@_with_vdf_options
def vdf(bits_text: str, repeats: int, seconds: float, as_json: bool, markdown: bool, build: bool,
        anchors: bool, pin: bool, clock: str) -> None:
    """ns per modular squaring (x -> x^2 mod N) for our backends and the anchors, side by side.

    Native anchors are built once for this machine into a cache directory
    ($MODFORGE_BENCH_CACHE/anchors, default ~/.cache/modforge/anchors); an anchor that
    cannot be built or found is skipped with a notice.  Every result is checked
    against gmpy2: a wrong one makes the command exit 1.
    """
    if as_json and markdown:
        raise ParameterError("json", "choose one of --json and --markdown")
    _run_vdf(bits_text, repeats, seconds, as_json, markdown, build, anchors, pin, clock)


def _bits_list(text: str) -> tuple[int, ...]:
    from ..bench.vdf import parse_bits

    return parse_bits(text)


@bench.command()
@click.option("--bits", "bits_text", default="2048,3072,4096", show_default=True, metavar="N[,N...]",
              help="Key sizes (1024 to 4096); one key per size is generated once and cached.")
@click.option("--seconds", type=SECONDS, default=2.0, show_default=True,
              help="Duration of one run of each implementation (openssl speed: rounded to whole seconds, >= 1).")
@click.option("--repeats", type=INTEGER, default=3, show_default=True, help="Round-robin rounds per size.")
@click.option("--backend", default="auto", show_default=True,
              help="Our kernel (auto: native when built, else python); the kernel that ran is reported.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of a table.")
@click.option("--markdown", is_flag=True, help="Print the Markdown table used in docs/benchmarks.md.")
@click.option("--openssl/--no-openssl", default=True, show_default=True, help="Run `openssl speed` beside ours.")
@click.option("--openssl-multi/--no-openssl-multi", default=True, show_default=True,
              help="Also run `openssl speed -multi 1` (its figure is by elapsed time, so load lowers it).")
@click.option("--cryptography/--no-cryptography", "use_cryptography", default=True, show_default=True,
              help="Time the cryptography library beside ours.")
@click.option("--pin/--no-pin", default=True, show_default=True, help="Pin to one CPU (openssl inherits it).")
@click.option("--clock", type=click.Choice(["cpu", "wall"]), default="cpu", show_default=True,
              help="Thread CPU time (robust on a shared machine) or wall time for ours and cryptography.")
@click.option("--ct", "with_ct", is_flag=True, help="Afterwards run the dudect-style timing test (`bench ct` "
                                                    "defaults, smallest size given).")
@click.option("--ct-samples", type=INTEGER, default=2000, show_default=True, help="Samples of the --ct test.")
def rsa(bits_text: str, seconds: float, repeats: int, backend: str, as_json: bool, markdown: bool, openssl: bool,
        openssl_multi: bool, use_cryptography: bool, pin: bool, clock: str, with_ct: bool,
        ct_samples: int) -> None:
    """RSA private operations per second per core: ours beside `openssl speed` and cryptography.

    PKCS#1 v1.5 signatures at each size, round-robin, pinned to one CPU; every
    signature of ours is verified with cryptography (a failure exits 1).  Keys
    are cached in $MODFORGE_BENCH_CACHE/rsa-keys (default ~/.cache/modforge/rsa-keys).
    """
    from rich.console import Console

    from ..bench.rsa import RsaBenchParams, print_table, run_rsa_bench, to_markdown

    if as_json and markdown:
        raise ParameterError("json", "choose one of --json and --markdown")
    params = RsaBenchParams(bits=_bits_list(bits_text), seconds=seconds, repeats=repeats, openssl=openssl,
                            openssl_multi=openssl_multi, cryptography=use_cryptography, pin=pin, clock=clock, backend=backend)
    ct_params = None
    if with_ct:
        from ..bench.dudect import CtParams

        # Checked now, not after the benchmark's minutes (--ct-samples 3 was refused only then).
        ct_params = CtParams(bits=min(params.bits), backend=backend, samples=ct_samples, pin=pin)
    err = Console(stderr=True, highlight=False)
    doc = run_rsa_bench(params, notice=lambda m: err.print(f"[cyan]bench:[/cyan] {m}"),
                        step=(lambda m: err.print(f"[dim]{m}[/dim]")) if err.is_terminal else None)
    if ct_params is not None:
        from ..bench.dudect import run_ct
        from ..bench.rsa import bench_key

        key = bench_key(ct_params.bits)[0]
        doc["ct"] = run_ct(key, ct_params, notice=lambda m: err.print(f"[cyan]ct:[/cyan] {m}"))
    if as_json:
        from ..bench.rsa import to_json as rsa_json

        click.echo(rsa_json(doc))
    elif markdown:
        click.echo(to_markdown(doc), nl=False)
    else:
        print_table(doc, Console())
        if with_ct:
            _print_ct(doc["ct"], Console())
    for e in doc["errors"]:
        click.echo(f"modforge: error: {e['why']}", err=True)
    if doc["errors"] or (with_ct and doc["ct"]["leak_detected"]):
        sys.exit(EXIT_CHECK_FAILED)


def _print_ct(doc: dict, console) -> None:
    from rich.table import Table

    p = doc["params"]
    console.print(f"[bold]dudect-style timing test[/bold]: {p['bits']}-bit key, target {p['target']}, kernel "
                  f"[bold]{doc['kernel']}[/bold], {p['clock']} clock; class 0 fixed, class 1 random; "
                  f"threshold |t| > {p['threshold']}")
    table = Table()
    for col in ("samples", "fixed", "random", "t raw", *[f"t p{c:g}" for c in p["crops"]], "max |t|"):
        table.add_column(col, justify="right")
    for row in doc["progress"]:
        table.add_row(str(row["samples"]), str(row["fixed"]), str(row["random"]), f"{row['raw']:.2f}",
                      *[f"{row[f'p{c:g}']:.2f}" for c in p["crops"]], f"{row['max_abs_t']:.2f}")
    console.print(table)
    style = "bold red" if doc["leak_detected"] else "green"
    console.print(f"[{style}]{doc['verdict']}[/{style}]" + (" (stopped at the time limit)" if doc["stopped_early"]
                                                             else ""))


@bench.command()
@click.option("--bits", type=INTEGER, default=1024, show_default=True, help="Key size (the cached bench key).")
@click.option("--samples", type=INTEGER, default=2000, show_default=True, help="Measurements (both classes together).")
@click.option("--seconds", "max_seconds", type=SECONDS, default=300.0, show_default=True,
              help="Stop early after this much wall time.")
@click.option("--target", type=click.Choice(["input", "kernel-input", "exponent"]), default="input",
              show_default=True,
              help="input: fixed vs random c through the whole checked private operation; kernel-input: the same "
                   "through the kernel alone; exponent: the kernel alone with dp, dq = 2^(exp_bits-1) vs random "
                   "(blinding off).")
@click.option("--backend", default="auto", show_default=True,
              help="Kernel: auto, python, native, or 'leaky' (CPython pow: a deliberately leaky demo).")
@click.option("--clock", type=click.Choice(["cpu", "wall"]), default="cpu", show_default=True)
@click.option("--seed", type=INTEGER, default=None, help="Seed the class coin flips and inputs (default: OS randomness).")
@click.option("--pin/--no-pin", default=True, show_default=True, help="Pin to one CPU while measuring.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def ct(bits: int, samples: int, max_seconds: float, target: str, backend: str, clock: str, seed: int | None,
       pin: bool, as_json: bool) -> None:
    """dudect-style timing test of the RSA private-key path (Welch's t, fixed vs random class).

    A benchmark, not a CI test: noisy, and minutes long.  Exit 1 when
    |t| > 4.5 (timing tells the classes apart), 0 otherwise.
    """
    from rich.console import Console

    from ..bench.dudect import CtParams, run_ct
    from ..bench.rsa import bench_key

    params = CtParams(bits=bits, samples=samples, max_seconds=max_seconds, target=target, backend=backend,
                      clock=clock, seed=seed, pin=pin)
    err = Console(stderr=True, highlight=False)
    key = bench_key(bits, notice=lambda m: err.print(f"[cyan]bench:[/cyan] {m}"))[0]
    doc = run_ct(key, params, notice=lambda m: err.print(f"[cyan]ct:[/cyan] {m}"))
    if as_json:
        import json

        click.echo(json.dumps(doc, indent=1))
    else:
        _print_ct(doc, Console())
    if doc["leak_detected"]:
        sys.exit(EXIT_CHECK_FAILED)


def _int_list(text: str, what: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ParameterError(what, f"expected comma-separated integers, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise ParameterError(what, f"expected positive integers, got {text!r}")
    return values


@bench.command("ntt")
@click.option("--log-n", "log_n_text", default="16,20,24", show_default=True, metavar="K[,K...]",
              help="Transform sizes 2^K.")
@click.option("--columns", "columns_text", default="1,8", show_default=True, metavar="C[,C...]")
@click.option("--threads", "threads_text", default="1,2", show_default=True, metavar="T[,T...]")
@click.option("--seed", type=INTEGER, default=1, show_default=True, help="Seed of the shared random input.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of a table.")
@click.option("--markdown", is_flag=True, help="Print the Markdown table used in docs/benchmarks.md.")
@click.option("--plot", "plot_path", metavar="FILE.png", default=None, help="Time against size, log-log.")
@click.option("--force", is_flag=True, help="Replace --plot if it exists (without it an existing file is an error).")
@click.option("--build/--no-build", default=True, show_default=True, help="Build the anchors if not cached.")
def ntt(log_n_text: str, columns_text: str, threads_text: str, seed: int, as_json: bool, markdown: bool,
        plot_path: str | None, force: bool, build: bool) -> None:
    """The NTT over Goldilocks: ours beside Plonky3 (SmallBatch, DitParallel), plonky2 and Winterfell.

    Same inputs, outputs cross-checked (exit 1 on a disagreement), medians with the min-max spread, and
    ours over the fastest anchor in each cell (must: <= 1, target: <= 0.8)."""
    import json

    from rich.console import Console

    from ..bench import ntt as ntt_bench
    from ..bench.anchors import AnchorEnv
    from ..fileio import check_output_path
    from ..zk.ntt_api import check_rows

    log_ns = _int_list(log_n_text, "log-n")
    for k in log_ns:
        check_rows(1 << k)
    columns_list = _int_list(columns_text, "columns")
    threads_list = _int_list(threads_text, "threads")
    plot_file = check_output_path(plot_path, "plot", overwrite=force) if plot_path is not None else None
    err = Console(stderr=True, highlight=False)
    doc = ntt_bench.run(log_ns, columns_list, threads_list, seed, AnchorEnv.from_environ(build=build),
                        notice=lambda m: err.print(f"[cyan]bench:[/cyan] {m}"),
                        progress=lambda m: err.print(f"[dim]{m}[/dim]") if not as_json else None)
    if plot_file is not None:
        ntt_bench.plot(doc, plot_file, overwrite=force)
    if as_json:
        click.echo(json.dumps(doc, indent=1))
    else:
        machine = doc["machine"]
        click.echo(f"{machine['cpu_model']} ({machine['cpu_family_model_stepping']}), {doc['date']}, "
                   f"commit {(doc['commit'] or '?')[:10]}; anchors: {doc['anchor_build']}")
        click.echo(ntt_bench.markdown(doc) if markdown else ntt_bench.markdown(doc).replace("|", " ").strip())
    if doc["failures"]:
        for failure in doc["failures"]:
            click.echo(f"modforge: error: cross-check failed: {failure}", err=True)


def _log_n_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise ParameterError("--log-n", f"{text!r} is not a comma-separated list of integers") from None
    if not values or any(not 0 <= v <= 26 for v in values):
        raise ParameterError("--log-n", "each size must be between 0 and 26")
    return values


def _threads_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise ParameterError("--threads", f"{text!r} is not a comma-separated list of integers") from None
    if not values or any(v < 1 for v in values):
        raise ParameterError("--threads", "thread counts must be at least 1")
    return values


@bench.command()
@click.option("--log-n", "log_n_text", default="16,20", show_default=True, metavar="K[,K...]",
              help="Sizes as powers of two (2^12 to 2^22 are the documented range).")
@click.option("--threads", "threads_text", default="1,2", show_default=True, metavar="T[,T...]",
              help="Thread counts.")
@click.option("--repeats", type=INTEGER, default=3, show_default=True, help="Round-robin rounds per cell.")
@click.option("--seed", type=INTEGER, default=1, show_default=True, help="Seed of the random instance.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of a table.")
@click.option("--markdown", is_flag=True, help="Print the Markdown table used in docs/benchmarks.md.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="Write time against size (PNG).")
@click.option("--force", is_flag=True, help="Replace --plot if it exists (without it an existing file is an error).")
@click.option("--build/--no-build", default=True, show_default=True, help="Build missing anchors (else skip them).")
def msm(log_n_text: str, threads_text: str, repeats: int, seed: int, as_json: bool, markdown: bool,
        plot_path: str | None, force: bool, build: bool) -> None:
    """MSM over BLS12-377 G1: ours beside gnark-crypto and arkworks, same instance, results cross-checked."""
    from rich.console import Console
    from rich.progress import Progress

    from ..bench.anchors import AnchorEnv, AnchorUnavailable
    from ..bench.msm import format_table, plot, run_bench, to_markdown

    log_ns, thread_counts = _log_n_list(log_n_text), _threads_list(threads_text)
    if repeats < 1:
        raise ParameterError("--repeats", "must be at least 1")
    if plot_path is not None:
        from ..fileio import check_output_path

        check_output_path(plot_path, "plot", overwrite=force)      # before the runs, not after them
    err = Console(stderr=True, highlight=False)
    env = AnchorEnv.from_environ(build=build)
    try:
        with Progress(console=err, transient=True) as progress:
            # per size one table precomputation, then per cell four programs (ours with and without a table)
            task = progress.add_task("msm", total=len(log_ns) * (1 + len(thread_counts) * repeats * 4))
            doc = run_bench(log_ns, thread_counts, repeats, seed, env,
                            notice=lambda m: err.print(f"[cyan]bench:[/cyan] {m}"),
                            step=lambda what: progress.update(task, advance=1, description=what))
    except AnchorUnavailable as exc:
        raise ParameterError("bench msm", exc.why) from None
    if plot_path:
        plot(doc, plot_path, overwrite=force)
    if as_json:
        import json

        click.echo(json.dumps(doc, indent=1))
    elif markdown:
        click.echo(to_markdown(doc))
    else:
        click.echo(format_table(doc))
    if doc["mismatches"]:
        err.print(f"[red]bench:[/red] results disagree: {doc['mismatches']}")
        sys.exit(EXIT_CHECK_FAILED)
