"""``modforge hw``: generate, simulate and inspect the RTL of the seeds' squarers (docs/hardware.md).

Exit codes: 0 success, 1 a check failed (a simulation mismatch, a forbidden operator, a lint
error), 2 bad usage or bad input (one line on stderr).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..arith.base import ParameterError
from .hw_design import MAX_SIM_COUNT, check_out_dir, design_from_options, design_options
from .main import EXIT_CHECK_FAILED, INTEGER, ErrorExitGroup, parse_int


class HwGroup(ErrorExitGroup):
    """Bad input exits 2; a tool, build or simulation that fails 1 (its reason on the first line)."""

    def exit_codes(self) -> list[tuple[type[BaseException], int, str]]:
        from ..hw.errors import HardwareError

        return [*super().exit_codes(), (HardwareError, EXIT_CHECK_FAILED, "error: ")]


@click.group(cls=HwGroup, context_settings={"help_option_names": ["-h", "--help"]})
def hw() -> None:
    """Generated RTL (Amaranth) for the seeds' squarers, verified with Verilator against the models."""


def _arch_names() -> list[str]:
    from ..hw.registry import ARCHITECTURES

    return list(ARCHITECTURES)


@hw.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_cmd(as_json: bool) -> None:
    """The architectures, their seeds and parameters."""
    from ..hw.registry import ARCHITECTURES

    rows = [{"arch": a.name, "summary": a.summary, "seed": a.seed, "options": a.options,
             "defaults": a.defaults, "two_operands": a.two_operands} for a in ARCHITECTURES.values()]
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    from .layout import hanging, terminal_width

    width = terminal_width()
    label = max(len(r["arch"]) for r in rows) + 2
    for r in rows:
        click.echo(hanging(f"{r['arch']:<{label}}", r["summary"], width))
        click.echo(hanging(" " * label, f"seed {r['seed']}", width))
        click.echo(hanging(" " * label, "options: " + ", ".join(f"{k}={v}" for k, v in r["options"].items()),
                           width, indent=label + 2))


@hw.command("gen")
@design_options
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory to write the RTL, harness and manifest into.")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON.")
def gen_cmd(arch: str, bits: int | None, modulus_text: str | None, cycles: int | None, word_bits: int | None,
            dsp_bits: int | None, opts: tuple[str, ...], out_dir: str, as_json: bool) -> None:
    """Write the RTL, the C++ harness and manifest.json for ARCH into a directory."""
    from ..hw.flow import generate, rtl_name, write_files
    from ..hw.scan import scan

    check_out_dir(out_dir)
    design = design_from_options(arch, bits, modulus_text, cycles, word_bits, dsp_bits, opts)
    files = generate(design)
    write_files(files, Path(out_dir))
    manifest = json.loads(files["manifest.json"])
    violations = scan(files[rtl_name(design)], design.dsp_bits)
    manifest["forbidden_operators"] = [str(v) for v in violations]
    if as_json:
        click.echo(json.dumps(manifest, indent=1))
    else:
        click.echo(f"design      {design.describe()}")
        click.echo(f"latency     {design.latency()} cycle(s); {design.cycles_per_op()} per operation")
        res = manifest["resources"]
        click.echo(f"resources   {res['dsp']} DSP ({res['dsp_tile']})" +
                   (f", {res['roms']} ROMs, {res['rom_bits']} ROM bits" if "roms" in res else "") +
                   f", depth estimate {res['depth_estimate_ps'] / 1000:.2f} ns (rough model, not timing)")
        click.echo(f"params      sha256:{manifest['params_sha256']}")
        for f in manifest["files"]:
            click.echo(f"wrote       {Path(out_dir) / f['path']}")
        click.echo(f"wrote       {Path(out_dir) / 'manifest.json'}")
        click.echo(f"scan        {'no forbidden operators' if not violations else f'{len(violations)} FORBIDDEN'}")
    if violations:
        for v in violations[:10]:
            click.echo(f"modforge: error: {v}", err=True)
        sys.exit(EXIT_CHECK_FAILED)


@hw.command("sim")
@design_options
@click.option("--vectors", type=INTEGER, default=1000, show_default=True, help="Random vectors after the edge cases.")
@click.option("--chain", type=INTEGER, default=100, show_default=True, help="Chained squarings fed back in the design.")
@click.option("--seed", type=INTEGER, default=1, show_default=True, help="Seed of the random vectors.")
@click.option("--keep-vectors", type=click.Path(dir_okay=False), help="Also write the vector file here.")
@click.option("--force", is_flag=True, help="Replace --keep-vectors if it exists (without it an existing file is "
                                             "an error).")
@click.option("--cxx-opt", type=click.Choice(["-O0", "-O1", "-O2"]), default="-O0", show_default=True,
              help="C++ optimisation of the simulation build (cached per level): -O0 compiles fastest; -O1 or -O2 "
                   "compile longer and run a long simulation of a large design several times faster.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def sim_cmd(arch: str, bits: int | None, modulus_text: str | None, cycles: int | None, word_bits: int | None,
            dsp_bits: int | None, opts: tuple[str, ...], vectors: int, chain: int, seed: int,
            keep_vectors: str | None, force: bool, cxx_opt: str, as_json: bool) -> None:
    """Build (cached) and run the self-checking Verilator simulation of ARCH; exit 1 on any mismatch."""
    from ..hw.flow import simulate

    for name, value in (("vectors", vectors), ("chain", chain)):
        if value < 0:
            raise ParameterError(name, f"must be non-negative, got {value}")
        if value > MAX_SIM_COUNT:
            raise ParameterError(name, f"at most {MAX_SIM_COUNT:,} (the bit-exact Python model computes every "
                                       f"one first), got {value:,}")
    if keep_vectors is not None:
        from ..fileio import check_output_path

        check_output_path(keep_vectors, "keep-vectors", overwrite=force)       # before the build, not after it
    design = design_from_options(arch, bits, modulus_text, cycles, word_bits, dsp_bits, opts)
    doc = simulate(design, vectors=vectors, chain=chain, seed=seed, opt=cxx_opt,
                   keep_vectors=Path(keep_vectors) if keep_vectors else None, overwrite=force)
    short = doc["outputs"] != doc["expected_outputs"]
    ok = doc["mismatches"] == 0 and doc["protocol_errors"] == 0 and doc["exit_code"] == 0 and not short
    if as_json:
        click.echo(json.dumps(doc, indent=1))
    else:
        click.echo(f"design      {design.describe()}")
        b = doc["build"]
        click.echo(f"build       {'cached' if b['cached'] else 'built'} in {b['directory']} "
                   f"(generate {b.get('generate_s', 0):.1f} s, lint {b.get('lint_s', 0):.1f} s, "
                   f"compile {b.get('build_s', 0):.1f} s when built)")
        click.echo(f"vectors     {doc['vectors']} ({len(doc['edge_cases'])} named edge cases first, seed {seed}) "
                   f"+ chain of {doc['chain']}" + (" (final value checked against pow())"
                                                   if doc["chain_checked_against_pow"] else ""))
        if doc["flags"]:
            click.echo("flags       " + ", ".join(f"{k}={v}" for k, v in sorted(doc["flags"].items())))
        click.echo(f"cycles/op   {doc['cycles_per_op']:.4f} (latency {design.latency()}; chained "
                   f"{doc['chain_cycles_per_op']:.4f})")
        click.echo(f"mismatches  {doc['mismatches']} of {doc['outputs']} results "
                   + (f"(of {doc['expected_outputs']} expected) " if short else "")
                   + f"({doc['latency_mismatches']} at the wrong cycle)")
        click.echo(f"handshake   {doc['protocol_errors']} error(s) (in_ready / out_valid)")
        if "counts" in doc:                      # msm-controller: the model's counts, which the RTL's equalled
            m = doc["model"]
            click.echo(f"controller  {m['points']} points, {m['pairs']} pairs: {m['cycles']} cycles, {m['stalls']} "
                       f"stalls, {m['bubbles']} bubbles, {m['drain_cycles']} drain cycles, utilisation "
                       f"{m['utilisation']:.4f} (model; the RTL's counts "
                       f"{'equal' if doc['harness']['count_mismatches'] == 0 else 'differ'})")
        if doc["mismatch_report"]:
            click.echo(doc["mismatch_report"])
    if not ok:
        click.echo(f"modforge: error: {_sim_problems(doc)}", err=True)
        sys.exit(EXIT_CHECK_FAILED)


def _sim_problems(doc: dict) -> str:
    """What went wrong in a simulation, in one line: mismatches, handshake errors, a short run, an exit code."""
    problems = []
    if doc["mismatches"]:
        problems.append(f"{doc['mismatches']} mismatch(es) between the RTL and the model")
    if doc["protocol_errors"]:
        problems.append(f"{doc['protocol_errors']} handshake error(s)")
    if doc["outputs"] != doc["expected_outputs"]:
        problems.append(f"the simulation gave {doc['outputs']} result(s) of the {doc['expected_outputs']} expected "
                        f"(exit {doc['exit_code']})")
    elif doc["exit_code"] != 0 and not problems:
        problems.append(f"the simulation exited {doc['exit_code']} with no mismatch reported")
    return " and ".join(problems)


def _chain_ok(row: dict) -> bool:
    return (row["mismatches"] == 0 and row["protocol_errors"] == 0 and row["exit_code"] == 0
            and row["outputs"] == row["expected_outputs"]
            and row["native_y_matches"] and row["matches_pow_and_model"])


@hw.command("bench")
@click.option("--arch", "archs", multiple=True, default=("ozturk", "predictive-montgomery"), show_default=True,
              help="Architectures to run (repeatable).")
@click.option("--t", "t", type=INTEGER, default=10_000, show_default=True, help="Chained squarings from x = 2.")
@click.option("--modulus", "modulus_text", default="vdf-alliance", show_default=True,
              help="Modulus (decimal, 0x-hex, or 'vdf-alliance').")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def bench_cmd(archs: tuple[str, ...], t: int, modulus_text: str, as_json: bool) -> None:
    """The 1024-bit acceptance run (`make bench-hw`): T chained squarings of x = 2 on the simulated
    squarers, compared with the model, pow() and the native engine; cycles per squaring."""
    import time

    from ..engine import ModRing
    from ..hw.flow import make_design, simulate

    if t < 2:
        # Cycles per squaring come from consecutive chained results: one squaring has none to compare.
        raise ParameterError("t", f"must be at least 2, got {t}")
    if t > MAX_SIM_COUNT:
        raise ParameterError("t", f"at most {MAX_SIM_COUNT:,} (the bit-exact Python model computes every squaring "
                                  f"first), got {t:,}")
    if modulus_text.strip().lower() in ("vdf-alliance", "vdf_alliance"):
        from ..data import vdf_alliance_modulus

        modulus = vdf_alliance_modulus()
    else:
        modulus = parse_int(modulus_text, "modulus")
    t0 = time.perf_counter()
    expected = ModRing(modulus, backend="auto")
    y_native = expected.sqr_n(2, t)
    native_s = time.perf_counter() - t0
    rows = []
    ok = True
    for arch in archs:
        design = make_design(arch, bits=modulus.bit_length() if arch != "san-montgomery" else None,
                             modulus=modulus)
        doc = simulate(design, vectors=100, chain=t, seed=1, chain_x=2)

        row = {"arch": arch, "bits": design.design_bits, "t": t, "mismatches": doc["mismatches"],
               "outputs": doc["outputs"], "expected_outputs": doc["expected_outputs"],
               "protocol_errors": doc["protocol_errors"], "exit_code": doc["exit_code"],
               "chain_cycles_per_op": doc["chain_cycles_per_op"], "cycles_per_op": doc["cycles_per_op"],
               "flags": doc["flags"], "matches_pow_and_model": doc["chain_checked_against_pow"],
               "native_backend": expected.backend, "native_y_matches": True,
               "resources": design.resources(), "build": doc["build"], "seconds": doc["seconds"]}
        # The chain ran from x = 2; its final value was checked against pow() and the model, and the
        # native engine must agree with pow() too.
        row["native_y_matches"] = y_native == pow(2, 1 << t, modulus)
        ok = ok and _chain_ok(row)
        rows.append(row)
    out = {"modulus_bits": modulus.bit_length(), "t": t, "native_seconds": round(native_s, 6), "runs": rows}
    if as_json:
        click.echo(json.dumps(out, indent=1))
    else:
        for r in rows:
            click.echo(f"{r['arch']:<22} {r['bits']} bits, t = {t}: mismatches {r['mismatches']}, "
                       f"{r['chain_cycles_per_op']:.4f} cycles/squaring, flags {r['flags'] or '-'}, "
                       f"native ({r['native_backend']}) agrees: {r['native_y_matches']}")
    if not ok:
        bad = [r["arch"] for r in rows if not _chain_ok(r)]
        click.echo(f"modforge: error: {', '.join(bad)}: the chain disagrees with the model, pow() or the native "
                   f"engine, or breaks the handshake", err=True)
        sys.exit(EXIT_CHECK_FAILED)


# Synthesis report and design-space sweep live in their own module (Yosys and
# matplotlib load only when these commands run).
from .hw_report import explore_cmd, report_cmd  # noqa: E402

hw.add_command(report_cmd)
hw.add_command(explore_cmd)
