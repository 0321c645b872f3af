"""``modforge hw report`` and ``modforge hw explore``: Yosys synthesis figures and the design-space sweep.

Both are standalone click commands, attached to the ``hw`` group in :mod:`modforge.cli.hw`::

    from .hw_report import explore_cmd, report_cmd
    hw.add_command(report_cmd)
    hw.add_command(explore_cmd)

Exit codes: 0 success, 2 bad usage or input (one line on stderr), 1 a synthesis failed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ..arith.base import ParameterError
from ..hw.errors import HardwareError
from ..inttext import brief, parse_int
from .hw_design import check_out_dir, design_from_options
from .main import EXIT_BAD_INPUT, EXIT_CHECK_FAILED, INTEGER

_LABELS = [("lut", "LUT"), ("ff", "FF (upper bound)"), ("dsp", "DSP"), ("carry", "carry cells"), ("muxf", "MUXF"),
           ("ram_cells", "RAM cells"), ("rom_bits", "ROM bits"), ("ram_bits", "RAM bits"),
           ("depth", "logic depth (levels)")]


def _fail(msg: str, code: int = EXIT_BAD_INPUT) -> None:
    click.echo(f"modforge: error: {msg}", err=True)
    sys.exit(code)


def _int_list(text: str, what: str) -> list[int]:
    try:
        out = [parse_int(x, what) for x in text.replace(" ", "").split(",") if x]
    except ParameterError as exc:
        raise ParameterError(what, f"must be a comma-separated list of integers, got {brief(text)} ({exc.problem})") \
            from None
    if not out:
        raise ParameterError(what, "is empty")
    return list(dict.fromkeys(out))          # a value given twice is one point of the sweep, not two rows


def _axes(pairs: tuple[str, ...]) -> dict[str, list[Any]]:
    """``--opt KEY=V1,V2,...`` (repeatable) as {key: [values]}: each value read as ``hw gen --opt`` reads it."""
    from .main import _parse_options

    axes: dict[str, list[Any]] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ParameterError("opt", f"expected KEY=V1,V2,..., got {pair!r}")
        key, text = pair.split("=", 1)
        values = [v for v in text.replace(" ", "").split(",") if v]
        if not values:
            raise ParameterError("opt", f"{key.strip()} has no values")
        parsed = [next(iter(_parse_options((f"{key}={v}",)).items())) for v in values]
        name = parsed[0][0]
        if name in axes:
            raise ParameterError("opt", f"{name} given twice: give its values in one --opt {name}=V1,V2")
        axes[name] = list(dict.fromkeys(v for _, v in parsed))
    return axes


def _targets(target: str) -> tuple[str, ...]:
    if target == "both":
        return ("xilinx", "intel")
    return (target,)


def _print_report(doc: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console()
    tg = list(doc["targets"])
    method = doc["method"]
    table = Table(title=f"{doc['arch']} {doc['bits']} bits: Yosys {method} synthesis "
                        f"({'one piece' if method == 'flat' else 'pieces summed'})")
    table.add_column("figure")
    for t in tg:
        table.add_column(t, justify="right")
    table.add_column("declared by the generator", justify="right")
    declared = {"dsp": doc["declared"]["dsp"], "rom_bits": doc["declared"]["rom_bits"]}
    for key, label in _LABELS:
        cells = []
        for t in tg:
            f = doc["targets"][t]["figures"][key]
            cells.append(f"{f['value']:,}" + ("" if f["flat"] else " (summed)"))
        d = declared.get(key)
        table.add_row(label, *cells, "" if d is None else f"{d:,}")
    table.add_row("cycles per operation", *[str(doc["cycles_per_op"]) for _ in tg], "")
    con.print(table)
    for t in tg:
        r = doc["targets"][t]
        path = ", ".join(f"{v} {k}" for k, v in r["figures"]["depth"]["path"].items())
        when = "cached" if r["cached"] else f"{r['seconds']} s"
        con.print(f"[bold]{t}[/]: depth path {path or '-'}; {when}; {doc['yosys']}")
        if r["method"] == "hierarchical":
            k = r["pieces"]["kinds"]
            con.print("  pieces: " + "; ".join(f"{name} {v['distinct']} distinct x {v['instances']} instances"
                                               for name, v in sorted(k.items()))
                      + f"; rest (registers, control, muxes, splits): {r['pieces']['glue']['lut']:,} LUT")
        con.print(f"  script: {' ; '.join(s for s in r['script'] if not s.startswith('read_verilog -lib'))}")
    cmp = doc.get("published_comparison")
    if cmp:
        con.print(f"[bold]beside the seed[/]: RSA-{cmp['key_bits']} {cmp['projected_bits_per_s']:,} bit/s projected "
                  f"({cmp['cycles_per_product']} cycles per product x {cmp['products_per_exponentiation']} products "
                  f"at the seed's {cmp['clock_ns']:g} ns, two units in parallel; not a timing result) | RSA-"
                  f"{cmp['published_key_bits']} {cmp['published_bits_per_s']:,} bit/s published, not measured here "
                  f"({cmp['published']})")
    con.print("FF counts are upper bounds (Yosys leaves DSP pipeline registers in fabric); Yosys maps UltraScale+ "
              "carries to CARRY4, not CARRY8. These are Yosys estimates, not Vivado or Quartus results.")


@click.command("report")
@click.argument("arch", metavar="ARCH")
@click.option("--bits", type=INTEGER, help="Design width in bits.")
@click.option("--modulus", "modulus_text", help="Modulus (decimal or 0x-hex), or 'vdf-alliance' (the 1024-bit "
                                                "competition modulus) [default: a reproducible modulus of --bits bits].")
@click.option("--cycles", type=INTEGER, help="Cycles per operation (ozturk, san-montgomery) [default: 1].")
@click.option("--word-bits", type=INTEGER, help="Digit weight d [default: 16].")
@click.option("--dsp-bits", type=INTEGER, help="DSP tile operand width [default: 17].")
@click.option("--opt", "opts", multiple=True, metavar="KEY=VALUE", help="Any design parameter, repeatable.")
@click.option("--target", type=click.Choice(["xilinx", "intel", "both"]), default="xilinx", show_default=True,
              help="Yosys flow: synth_xilinx (UltraScale+), synth_intel_alm (Cyclone V ALMs), or both.")
@click.option("--method", type=click.Choice(["auto", "flat", "hierarchical"]), default="auto", show_default=True,
              help="auto: flat up to 256 bits, pieces summed above.")
@click.option("--jobs", type=INTEGER, default=2, show_default=True,
              help="Parallel Yosys runs (hierarchical; at most 1024, and no more than there are batches).")
@click.option("--cluster", metavar="ADDRESS", help="Hierarchical: send the batches of pieces to the Dask scheduler at "
                                                   "ADDRESS instead of --jobs local processes.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def report_cmd(arch: str, bits: int | None, modulus_text: str | None, cycles: int | None, word_bits: int | None,
               dsp_bits: int | None, opts: tuple[str, ...], target: str, method: str, jobs: int,
               cluster: str | None, as_json: bool) -> None:
    """Synthesise ARCH with Yosys: LUT, FF, DSP, carry and RAM/ROM counts and logic depth."""

    try:
        from ..hw.pool import check_jobs

        check_jobs(jobs)
        design = design_from_options(arch, bits, modulus_text, cycles, word_bits, dsp_bits, opts)
        from ..hw.synth import report

        progress = None
        if not as_json and sys.stderr.isatty():
            def progress(t: str, i: int, n: int) -> None:
                state = "done" if i == n else "running"
                click.echo(f"\r{design.arch} {design.design_bits} bits on {t}: {i}/{n} Yosys runs ({state})",
                           nl=False, err=True)
        doc = report(design, _targets(target), method=method, jobs=jobs, progress=progress, cluster=cluster)
        if hasattr(design, "published_comparison"):     # pam-mpu: the seed published a throughput, not an area
            doc["published_comparison"] = design.published_comparison()
    except ParameterError as exc:
        _fail(str(exc))
        return
    except HardwareError as exc:
        _fail(str(exc).splitlines()[0] if str(exc) else "synthesis failed", EXIT_CHECK_FAILED)
        return
    if as_json:
        click.echo(json.dumps(doc, indent=1))
    else:
        if sys.stderr.isatty():
            click.echo("", err=True)
        _print_report(doc)


@click.command("explore")
@click.option("--archs", default="ozturk,predictive-montgomery,san-montgomery", show_default=True,
              help="Comma-separated architectures.")
@click.option("--bits", "bits_text", default="64,128,256,512,1024", show_default=True, help="Comma-separated widths.")
@click.option("--word-bits", "word_text", default="16,32", show_default=True, help="Comma-separated word sizes d.")
@click.option("--opt", "opts", multiple=True, metavar="KEY=V1,V2",
              help="A parameter axis, repeatable (e.g. cores=2,4,8 for ntt-cluster, karatsuba_depth=2,3 for fq-mul, "
                   "cycles=3,6 for goldilocks-mul); it applies to the architectures that have KEY.")
@click.option("--target", type=click.Choice(["xilinx", "intel"]), default="xilinx", show_default=True)
@click.option("--jobs", type=INTEGER, default=2, show_default=True,
              help="Worker processes (one point each; at most 1024, and no more than there are points).")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory for explore.csv, explore.json and pareto.png (-o, as for hw gen).")
@click.option("--method", type=click.Choice(["yosys", "estimate"]), default="yosys", show_default=True,
              help="yosys: synthesise each point; estimate: generate and scan it and take its declared figures "
                   "(no Yosys, seconds a point).")
@click.option("--cluster", metavar="ADDRESS", help="Send the points to the Dask scheduler at ADDRESS "
                                                   "(tcp://host:8786) instead of a local pool.")
@click.option("--cache/--no-cache", "use_cache", default=True, show_default=True,
              help="Reuse the rows of points already done (cached by design parameters; a stopped sweep resumes).")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON document.")
def explore_cmd(archs: str, bits_text: str, word_text: str, opts: tuple[str, ...], target: str, jobs: int,
                out_dir: str, method: str, cluster: str | None, use_cache: bool, as_json: bool) -> None:
    """Sweep architecture x width x word size (x any --opt axis) with Yosys; CSV, JSON and a Pareto plot beside the seeds'
    published figures (published, not measured here)."""
    from ..hw.explore import explore, grid

    try:
        arch_list = list(dict.fromkeys(a for a in archs.replace(" ", "").split(",") if a))
        if not arch_list:
            raise ParameterError("archs", "is empty")
        bits = _int_list(bits_text, "bits")
        words = _int_list(word_text, "word_bits")
        axes = _axes(opts)
        points = grid(arch_list, bits, words, axes)
        from ..hw.pool import check_jobs

        check_jobs(jobs)
        from ..hw.explore import check_outputs
        from ..hw.synth import yosys_version

        check_out_dir(out_dir)    # -o as for hw gen
        check_outputs(Path(out_dir))
        if method == "yosys":
            yosys_version()        # Yosys found and running, before any directory or work
    except ParameterError as exc:
        _fail(str(exc))
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  transient=as_json, disable=as_json) as bar:
        task = bar.add_task("synthesising", total=len(points))

        def progress(row: dict[str, Any]) -> None:
            extra = f" {row['options']}" if row.get("options") else ""
            bar.update(task, advance=1, description=f"{row['arch']} {row['bits']}b d={row['word_bits']}{extra}: "
                                                    f"{row.get('status')}")

        def warn(message: str) -> None:
            click.echo(f"modforge: warning: {message}", err=True)

        try:
            doc = explore(arch_list, bits, words, Path(out_dir), jobs=jobs, target=target, progress=progress,
                          method=method, cluster=cluster, cache=use_cache, warn=warn, axes=axes)
        except ParameterError as exc:
            _fail(str(exc))
            return
    if as_json:
        click.echo(json.dumps(doc, indent=1))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"hw explore ({target}, {doc['yosys'] or 'declared estimates, no Yosys'}; * = summed)")
    for col in ("arch", "bits", "d", "cycles/op", "latency", "LUT", "FF", "DSP", "ROM bits", "depth", "status"):
        table.add_column(col, justify="left" if col in ("arch", "status") else "right")
    for r in doc["points"]:
        name = r["arch"] + (f" {r['options']}" if r.get("options") else "")
        if r.get("status") == "ok" and r.get("lut") is None:
            table.add_row(name, str(r["bits"]), str(r["word_bits"]), str(r["cycles_per_op"]), str(r["latency"]), "", "",
                          f"{r['dsp']:,}", f"{r['rom_bits']:,}", "", "ok (estimate)")
        elif r.get("status") == "ok":
            table.add_row(name, f"{r['bits']}{'' if r['flat'] else '*'}", str(r["word_bits"]),
                          str(r["cycles_per_op"]), str(r["latency"]), f"{r['lut']:,}", f"{r['ff']:,}", f"{r['dsp']:,}",
                          f"{r['rom_bits']:,}", str(r["depth"]), "ok")
        else:
            table.add_row(name, str(r["bits"]), str(r["word_bits"]), "", "", "", "", "", "", "",
                          f"{r['status']}: {r.get('error', '')[:60]}")
    Console().print(table)
    for f in doc["files"]:
        click.echo(f"wrote {f}")
    if any(r.get("status") == "failed" for r in doc["points"]):
        sys.exit(EXIT_CHECK_FAILED)


__all__ = ["report_cmd", "explore_cmd"]
