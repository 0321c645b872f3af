"""``modforge msm``: multi-scalar multiplication over BLS12-377 G1 (see docs/zk-msm.md).

  modforge msm --points FILE --scalars FILE [--format ark|gnark] [--threads T] [--json] [--out FILE]  (read in blocks)
  modforge msm --random N --seed S [--json] [--progress/--no-progress]
  modforge msm precompute --points FILE --out TABLE [--format ark|gnark] [--window C] [--json]
  modforge msm --table TABLE --scalars FILE [--format ark|gnark] [--json]
  modforge msm model --log-n K [--latency L] [--fifo-depth D] [--json]

Exit codes: 0 success, 2 bad usage or bad input (a malformed file: one line naming the file, the
index and the reason).  JSON output writes big integers as 0x-prefixed lowercase hex.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import click

from ..arith.base import ParameterError
from .main import INTEGER, ErrorExitGroup


class MsmGroup(ErrorExitGroup):
    """Bad input exits 2 (MsmFileError is a ParameterError)."""


def _dump(doc: dict[str, Any]) -> None:
    click.echo(json.dumps(doc, indent=1))


def _hex(v: int) -> str:
    return f"{v:#x}"


# the largest --random instance: 2^28 points take about 45 GB in Rust (points, scalars, digits)
MAX_RANDOM_N = 1 << 28

# --random runs at least this large show a progress bar by default (when stderr is a terminal)
PROGRESS_MIN_N = 1 << 18


def _progress_bar(enabled: bool | None, n: int):
    """A rich progress bar on stderr (the instance's generation, then the windows), or None."""
    if enabled is None:
        enabled = sys.stderr.isatty() and n >= PROGRESS_MIN_N
    if not enabled:
        return None
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(TextColumn(f"msm 2^{n.bit_length() - 1}" if n & (n - 1) == 0 else f"msm {n}"), BarColumn(),
                    TaskProgressColumn(), TextColumn("steps"), TimeElapsedColumn(), console=Console(stderr=True),
                    transient=True)


def _emit(result: Any, n: int, seconds: float, backend: str, as_json: bool, extra: dict[str, Any] | None = None
          ) -> None:
    if as_json:
        doc: dict[str, Any] = {"n": n, "seconds": round(seconds, 6), "backend": backend, **(extra or {})}
        if result is None:
            doc.update({"infinity": True, "x": None, "y": None})
        else:
            doc.update({"infinity": False, "x": _hex(result[0]), "y": _hex(result[1])})
        _dump(doc)
    elif result is None:
        click.echo("infinity")
    else:
        click.echo(f"x {_hex(result[0])}")
        click.echo(f"y {_hex(result[1])}")


@click.group(cls=MsmGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--points", "points_path", type=click.Path(dir_okay=False), help="Points file.")
@click.option("--table", "table_path", type=click.Path(dir_okay=False),
              help="Instead of --points: a fixed-base table from `modforge msm precompute`.")
@click.option("--scalars", "scalars_path", type=click.Path(dir_okay=False), help="Scalars file.")
@click.option("--format", "fmt", type=click.Choice(["ark", "gnark"]), default="ark", show_default=True,
              help="File encoding: arkworks canonical (a Vec) or gnark-crypto raw.")
@click.option("--random", "random_n", type=INTEGER, default=None, metavar="N",
              help="Instead of files: the reproducible random instance of N points.")
@click.option("--seed", type=INTEGER, default=0, show_default=True, help="With --random: the instance's seed.")
@click.option("--threads", type=INTEGER, default=None, help="Worker threads (default: every core).")
@click.option("--backend", type=click.Choice(["auto", "native", "model", "seed"]), default="auto",
              show_default=True, help="native engine, the Python model, or the model with the seed's layout.")
@click.option("--trusted", is_flag=True, help="Skip the subgroup check of the points (they are known good).")
@click.option("--reduce", "reduce_scalars", is_flag=True, help="Accept scalars >= r, taking them mod r.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False),
              help="Also write the result point in --format (written atomically).")
@click.option("--force", is_flag=True, help="Replace --out if it exists (without it an existing file is an error).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--progress/--no-progress", "show_progress", default=None,
              help=f"Progress bar on stderr for --random (default: on a terminal from {PROGRESS_MIN_N} points).")
@click.pass_context
def msm(ctx: click.Context, points_path: str | None, table_path: str | None, scalars_path: str | None, fmt: str,
        random_n: int | None, seed: int, threads: int | None, backend: str, trusted: bool, reduce_scalars: bool,
        out_path: str | None, force: bool, as_json: bool, show_progress: bool | None) -> None:
    """Multi-scalar multiplication sum s_i P_i over BLS12-377 G1."""
    if ctx.invoked_subcommand is not None:
        return
    from ..fileio import check_output_path, write_output
    from ..zk import msm_api, msm_files

    if threads is not None and threads < 1:
        raise ParameterError("--threads", "must be at least 1")
    if out_path is not None:
        check_output_path(out_path, "out", overwrite=force)     # before the work, not after it
    if table_path is not None:
        if points_path or random_n is not None:
            raise ParameterError("--table", "give --table with --scalars only (the table holds the points)")
        if not scalars_path:
            raise ParameterError("--scalars", "--table needs the scalars file")
        if backend not in ("auto", "native"):
            raise ParameterError("--backend", "a table runs on the native engine only")
        from ..zk.msm_table import load_table

        table = load_table(table_path, trusted=trusted, threads=threads)
        scalars = msm_files.read_scalars(scalars_path, fmt, reduce=reduce_scalars)
        if len(scalars) != table.n:
            raise ParameterError(scalars_path, f"{len(scalars)} scalars for the {table.n} points of {table_path}")
        start = time.perf_counter()
        result = table.msm(scalars, threads=threads)
        seconds = time.perf_counter() - start
        if out_path:
            write_output(out_path, msm_files.encode_result(result, fmt), "out", overwrite=force)
        _emit(result, table.n, seconds, "native", as_json, {"table": {"window": table.window, "windows": table.windows,
                                                                     "memory_bytes": table.memory_bytes}})
        return
    if random_n is not None:
        if points_path or scalars_path:
            raise ParameterError("--random", "give either --random N or --points and --scalars, not both")
        if not 0 <= random_n <= MAX_RANDOM_N:
            raise ParameterError("--random", f"must be between 0 and 2^{MAX_RANDOM_N.bit_length() - 1}")
        native = msm_api._native()
        if backend in ("auto", "native") and native is not None and hasattr(native, "msm_bls12_377_random"):
            # generated and multiplied in Rust: no Python object per point, so 2^24 points fit easily
            bar = _progress_bar(show_progress, random_n)
            start = time.perf_counter()
            if bar is None:
                raw = native.msm_bls12_377_random(random_n, seed, threads or 0)
            else:
                with bar:
                    task = bar.add_task("msm", total=None)
                    raw = native.msm_bls12_377_random(
                        random_n, seed, threads or 0, lambda done, total: bar.update(task, completed=done, total=total))
            seconds = time.perf_counter() - start
            result = None if raw is None else (int(raw[0], 16), int(raw[1], 16))
            if out_path:
                write_output(out_path, msm_files.encode_result(result, fmt), "out", overwrite=force)
            _emit(result, random_n, seconds, "native", as_json)
            return
        if backend == "native":
            raise ParameterError("--backend", "the native engine is not built into this installation")
        points, scalars = msm_api.random_instance(random_n, seed)
        trusted = True  # generated as multiples of the generator
    else:
        if not points_path or not scalars_path:
            raise ParameterError("--points/--scalars", "both files are needed (or --random N)")
        # Read, checked and multiplied a block of points at a time (msm_api.msm_files): files larger than
        # memory run in a few GB.  The time includes reading and checking the files.
        n = msm_files.PointsFile(points_path, fmt).n
        bar = _progress_bar(show_progress, n)
        start = time.perf_counter()
        if bar is None:
            result, n = msm_api.msm_files(points_path, scalars_path, fmt, threads=threads, backend=backend,
                                          trusted=trusted, reduce=reduce_scalars)
        else:
            with bar:
                task = bar.add_task("msm", total=n)
                result, n = msm_api.msm_files(points_path, scalars_path, fmt, threads=threads, backend=backend,
                                              trusted=trusted, reduce=reduce_scalars,
                                              progress=lambda done, total: bar.update(task, completed=done))
        seconds = time.perf_counter() - start
        if out_path:
            write_output(out_path, msm_files.encode_result(result, fmt), "out", overwrite=force)
        _emit(result, n, seconds, backend, as_json, {"includes_reading": True})
        return
    start = time.perf_counter()
    result = msm_api.msm(points, scalars, threads=threads, backend=backend, trusted=True, reduce=reduce_scalars)
    seconds = time.perf_counter() - start
    if out_path:
        write_output(out_path, msm_files.encode_result(result, fmt), "out", overwrite=force)
    _emit(result, len(points), seconds, backend, as_json)


@msm.command("precompute")
@click.option("--points", "points_path", type=click.Path(dir_okay=False), required=True, help="Points file.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), required=True,
              help="The table file to write (atomically).")
@click.option("--format", "fmt", type=click.Choice(["ark", "gnark"]), default="ark", show_default=True,
              help="Encoding of the points file.")
@click.option("--window", type=INTEGER, default=None, help="Window width in bits, 2 to 22 (default: the cost model's).")
@click.option("--threads", type=INTEGER, default=None, help="Worker threads (default: every core).")
@click.option("--trusted", is_flag=True, help="Skip the subgroup check of the points (they are known good).")
@click.option("--force", is_flag=True, help="Replace --out if it exists (without it an existing file is an error).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def precompute_cmd(points_path: str, out_path: str, fmt: str, window: int | None, threads: int | None, trusted: bool,
                   force: bool, as_json: bool) -> None:
    """Build the fixed-base table of a points file, for `modforge msm --table`."""
    from ..fileio import check_output_path, write_output
    from ..zk import msm_files
    from ..zk.msm_table import precompute

    if threads is not None and threads < 1:
        raise ParameterError("--threads", "must be at least 1")
    if window is not None and not 2 <= window <= 22:
        raise ParameterError("--window", "must be between 2 and 22")
    check_output_path(out_path, "out", overwrite=force)     # before the work, not after it
    points = msm_files.read_points(points_path, fmt, trusted=trusted)
    start = time.perf_counter()
    table = precompute(points, window=window, threads=threads, trusted=True)
    seconds = time.perf_counter() - start
    write_output(out_path, table.to_bytes(), "out", overwrite=force)
    doc = {"n": table.n, "window": table.window, "windows": table.windows, "memory_bytes": table.memory_bytes,
           "file_bytes": os.path.getsize(out_path), "seconds": round(seconds, 6), "out": out_path}
    if as_json:
        _dump(doc)
    else:
        click.echo(f"table of {table.n} points: {table.window}-bit windows, {table.windows} copies per point, "
                   f"{doc['file_bytes']} bytes in {out_path} ({seconds:.2f} s)")


@msm.command("model")
@click.option("--log-n", "log_n", type=INTEGER, required=True, help="Run 2^K random scalars through the model.")
@click.option("--latency", type=INTEGER, default=238, show_default=True, help="Adder pipeline stages.")
@click.option("--fifo-depth", type=INTEGER, default=4, show_default=True, help="Stall FIFO entries per window.")
@click.option("--windows", type=INTEGER, default=20, show_default=True, help="Signed-digit windows over 253 bits.")
@click.option("--seed", type=INTEGER, default=0, show_default=True, help="Seed of the random scalars.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def model_cmd(log_n: int, latency: int, fifo_depth: int, windows: int, seed: int, as_json: bool) -> None:
    """The seed's bucket controller, cycle by cycle, beside the seed's published figures."""
    from ..zk.msm_controller import (
        SEED_RESULTS,
        ControllerParams,
        digit_rows,
        ideal_cycles,
        random_scalars,
        simulate,
    )
    from ..zk.msm_model import MsmParams

    if not 0 <= log_n <= 26:
        raise ParameterError("--log-n", "must be between 0 and 26")
    try:
        layout = MsmParams(windows=windows)
        layout.top_digit_bound  # noqa: B018 - refuses a layout that cannot hold the top digit
        params = ControllerParams(msm=layout, adder_latency=latency, fifo_depth=fifo_depth)
    except ValueError as exc:
        raise ParameterError("--windows/--latency/--fifo-depth", str(exc)) from None
    n = 1 << log_n
    report = simulate(params, digit_rows(layout, random_scalars(n, seed, layout)))
    ideal = ideal_cycles(params, n)
    seed_row = SEED_RESULTS.get(log_n)
    doc: dict[str, Any] = {
        "n": n, "windows": list(layout.widths), "adder_latency": latency, "fifo_depth": fifo_depth,
        "clock_hz": params.clock_hz, "cycles": report.cycles, "ideal_cycles": ideal, "issued": report.issued,
        "bubbles": report.bubbles, "stalls": report.stalls, "drain_cycles": report.drain_cycles,
        "max_fifo": report.max_fifo, "utilisation": round(report.utilisation, 6),
        "fpga_seconds": round(report.seconds(params), 6),
        "seed_seconds": None if seed_row is None else {"four_rounds": seed_row[0], "masked_round": seed_row[1],
                                                         "unmasked_round": seed_row[2]},
    }
    if as_json:
        _dump(doc)
        return
    click.echo(f"points            2^{log_n} = {n}")
    click.echo(f"windows           {len(layout.widths)} ({', '.join(map(str, layout.widths))} bits)")
    click.echo(f"adder             {latency} stages at {params.clock_hz / 1e6:g} MHz, FIFO depth {fifo_depth}")
    click.echo(f"cycles            {report.cycles} (ideal {ideal}: one slot per point and window + drain)")
    click.echo(f"issued additions  {report.issued}")
    click.echo(f"bubbles           {report.bubbles}   stalls (points parked) {report.stalls}   "
               f"largest FIFO {report.max_fifo}")
    click.echo(f"utilisation       {report.utilisation:.4%}")
    click.echo(f"bucket time       {report.seconds(params):.4f} s at the clock")
    if seed_row is not None:
        click.echo(f"seed (measured)   {seed_row[1]:.3f} s per round masked, {seed_row[2]:.3f} s unmasked "
                   f"(host work included)")
    else:
        click.echo("seed (measured)   no published figure at this size (the seed lists 2^22 to 2^26)")
