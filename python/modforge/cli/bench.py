"""``modforge bench``: measurements of our engine beside outside anchors.

``modforge bench vdf`` (also what a bare ``modforge bench`` runs) times one
modular squaring at each width for every engine backend this machine runs,
natively built GMP, OpenSSL and gmpy2, interleaved in one run; see
docs/benchmarks.md.  Exit codes: 0 measured, 1 some implementation returned a
wrong result, 2 bad options.
"""

from __future__ import annotations

import sys

import click

from ..arith.base import ParameterError
from .main import EXIT_CHECK_FAILED

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
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

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
    click.option("--repeats", type=int, default=7, show_default=True,
                 help="Round-robin rounds per width (one timed run of each implementation per round)."),
    click.option("--seconds", type=float, default=0.3, show_default=True,
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
    ($MODFORGE_BENCH_CACHE, default ~/.cache/modforge/anchors); an anchor that
    cannot be built or found is skipped with a notice.  Every result is checked
    against gmpy2: a wrong one makes the command exit 1.
    """
    if as_json and markdown:
        raise ParameterError("json", "choose one of --json and --markdown")
    _run_vdf(bits_text, repeats, seconds, as_json, markdown, build, anchors, pin, clock)
