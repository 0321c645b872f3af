"""``modforge ntt``: the number theoretic transform over Goldilocks (docs/zk-ntt.md).

    modforge ntt --in FILE --out FILE [--inverse | --zprize] [--columns C] [--coset-shift G] [--threads T] [--json]
    modforge ntt --random N --seed S [--out FILE] [--json]
    modforge ntt model [--json]

Files are little-endian u64 canonical elements; with C columns, row-major (row i holds element i of
every column).  The forward transform is out[k] = sum_j in[j] * w_n^(j*k), w_n = Plonky3's
TWO_ADIC_GENERATORS[log2 n] (the ZPrize table); --inverse is its exact inverse, 1/n included; --zprize is
the ZPrize competition's transform, which is the forward one (unscaled).  Exit codes: 0 success, 2 bad
usage or input (one line on stderr naming the problem: a value >= p names its index; --reduce accepts
it mod p instead).
"""

from __future__ import annotations

import json
import time
from typing import Any

import click

from ..arith.base import ParameterError
from .main import INTEGER, ErrorExitGroup, parse_count

ORDER_CHOICES = click.Choice(["natural", "bit-reversed"])


def _dump(doc: dict[str, Any]) -> None:
    click.echo(json.dumps(doc, indent=1))


class NttGroup(ErrorExitGroup):
    """Bad input exits 2 (one line); the transform itself has no check that can fail."""


@click.group(cls=NttGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--in", "in_path", metavar="FILE", help="Input: little-endian u64 elements, row-major.")
@click.option("--out", "out_path", metavar="FILE", help="Output file (written atomically).")
@click.option("--force", is_flag=True, help="Replace --out if it exists (without it an existing file is an error).")
@click.option("--random", "random_n", metavar="N", help="Transform N seeded random points instead (N or 2^K).")
@click.option("--seed", type=INTEGER, default=0, show_default=True, help="Seed of --random (splitmix64).")
@click.option("--inverse", is_flag=True, help="The inverse transform (w_n^-1, times 1/n).")
@click.option("--zprize", is_flag=True, help="The ZPrize convention (= the forward transform, unscaled).")
@click.option("--columns", type=INTEGER, default=1, show_default=True, help="Columns of the row-major batch.")
@click.option("--coset-shift", type=INTEGER, default=None, metavar="G",
              help="Evaluate on the coset G * <w_n> (with --inverse: interpolate from it).")
@click.option("--input-order", type=ORDER_CHOICES, default="natural", show_default=True)
@click.option("--output-order", type=ORDER_CHOICES, default="natural", show_default=True)
@click.option("--threads", type=INTEGER, default=0, show_default=True, help="Threads (0: every core).")
@click.option("--backend", default=None, help="portable, avx2, avx512 (native) or model; default the fastest.")
@click.option("--reduce", "reduce_input", is_flag=True, help="Reduce input values >= p mod p instead of refusing.")
@click.option("--json", "as_json", is_flag=True, help="A JSON summary (big integers as 0x-hex).")
@click.pass_context
def ntt(ctx: click.Context, in_path: str | None, out_path: str | None, force: bool, random_n: str | None, seed: int,
        inverse: bool, zprize: bool, columns: int, coset_shift: int | None, input_order: str, output_order: str,
        threads: int, backend: str | None, reduce_input: bool, as_json: bool) -> None:
    """Number theoretic transform over Goldilocks (p = 2^64 - 2^32 + 1), seed 003's NTT."""
    if ctx.invoked_subcommand is not None:
        return
    from ..fileio import check_output_path, write_output
    from ..zk import ntt_api, ntt_files

    if (in_path is None) == (random_n is None):
        raise ParameterError("in", "give exactly one of --in FILE and --random N")
    if in_path is not None and out_path is None:
        raise ParameterError("out", "--in needs --out FILE")
    if zprize and inverse:
        raise ParameterError("zprize", "--zprize is the forward transform; it does not combine with --inverse")
    if columns < 1:
        raise ParameterError("columns", f"must be at least 1, got {columns}")
    if threads < 0:
        raise ParameterError("threads", f"must be >= 0 (0: every core), got {threads}")
    out = check_output_path(out_path, "out", overwrite=force) if out_path is not None else None
    if random_n is not None:
        n = parse_count(random_n, "random", noun="a number of points")
        ntt_api.check_rows(n)
        if n * columns > 1 << 31:
            raise ParameterError("random", f"{n} points x {columns} columns is more than 2^31 elements")
        data = ntt_files.random_elements(n * columns, seed)
        source = f"random:{seed}"
    else:
        data = ntt_files.read_elements(in_path)
        if data.size == 0 or data.size % columns:
            raise ParameterError("in", f"{data.size} elements do not make rows of {columns} columns")
        n = data.size // columns
        ntt_api.check_rows(n)
        source = in_path
    start = time.perf_counter()
    result = ntt_api.ntt(data, inverse=inverse, columns=columns, coset_shift=coset_shift, input_order=input_order,
                         output_order=output_order, threads=threads, backend=backend, reduce=reduce_input,
                         zprize=zprize)
    seconds = time.perf_counter() - start
    if out is not None:
        write_output(out, ntt_files.element_bytes(result), "out", overwrite=force)
    used = backend or (_fastest_native() if ntt_api.native_available() else "model")
    from ..zk.goldilocks import GOLDILOCKS

    log_n = n.bit_length() - 1
    transform = "zprize" if zprize else ("inverse" if inverse else "forward")
    doc = {
        "transform": transform,
        "n": n,
        "log_n": log_n,
        "columns": columns,
        "root": hex(GOLDILOCKS.root_of_unity(log_n)),
        "scaled_by_1_over_n": inverse,
        "coset_shift": hex(coset_shift) if coset_shift is not None else None,
        "input_order": input_order,
        "output_order": output_order,
        "input": source,
        "output": str(out) if out is not None else None,
        "output_sha256": ntt_files.digest(result),
        "backend": used,
        "threads": threads,
        "seconds": seconds,
    }
    if as_json:
        _dump(doc)
        return
    click.echo(f"{transform} NTT of 2^{log_n} points x {columns} column{'s' if columns != 1 else ''} "
               f"in {seconds:.6f} s ({used}, threads {threads or 'all'}); sha256 of the output {doc['output_sha256']}"
               + (f"; written to {out}" if out is not None else ""))


def _fastest_native() -> str:
    from .. import _native

    return str(_native.ntt_backends()[-1])


@ntt.command("model")
@click.option("--log-n", type=INTEGER, default=24, show_default=True, help="Transform size 2^K.")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
def model(log_n: int, as_json: bool) -> None:
    """The cycle model of the seed's FPGA design: predicted latency for 8, 16, 32 and 64 cores beside the
    seed's measured latency, with every parameter it used."""
    from ..zk import ntt_cycles

    rows = ntt_cycles.seed_table(log_n)
    params = ntt_cycles.SEED_DESIGN
    if as_json:
        _dump({"parameters": params.as_dict(), "log_n": log_n, "rows": rows})
        return
    click.echo(ntt_cycles.describe(params))
    click.echo(f"{'cores':>5}  {'predicted s':>11}  {'seed s':>7}  {'ratio':>6}  {'compute s':>9}  {'memory s':>8}  bound")
    for row in rows:
        seed = f"{row['seed_seconds']:.4f}" if row["seed_seconds"] is not None else "-"
        ratio = f"{row['predicted_seconds'] / row['seed_seconds']:.2f}" if row["seed_seconds"] else "-"
        click.echo(f"{row['cores']:>5}  {row['predicted_seconds']:>11.4f}  {seed:>7}  {ratio:>6}  "
                   f"{row['compute_seconds']:>9.4f}  {row['memory_seconds']:>8.4f}  {row['bound']}")
