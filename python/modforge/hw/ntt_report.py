"""Yosys figures of seed 003's NTT designs beside the seed's published table (``make bench-hw``).

``python -m modforge.hw.ntt_report [--mul-cycles 1,3,6,9] [--json]`` synthesises (cached, :func:`modforge.hw.synth.report`, flat,
Xilinx UltraScale+) the field multiplier, one 2^12-point core and the 8-core cluster of 2^12 x 2^12, and
prints LUT, FF, DSP, block RAM (RAMB36 + RAMB18 / 2), UltraRAM and depth for each, labelled ``measured``,
beside the seed's 8-core row labelled ``published``.  ``--mul-cycles`` adds a sweep of the multiplier's
latency (the one knob that moves its depth and registers), a small ``hw explore`` of the field multiplier.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

# The 8-core cluster twice: with 2^6-word memories (the logic of 8 cores; minutes of Yosys) and as the seed
# built it, 2^12 x 2^12 (6.4 MB of Verilog with its ROM contents: not finished in 17 minutes on a loaded 2-core
# machine, still in Yosys's Verilog reader).
DESIGNS = [("goldilocks-mul", {}), ("ntt-core", {}), ("ntt-cluster", {"log_n1": 6, "log_n2": 6}), ("ntt-cluster", {})]


def ram_blocks(cells_by_type: dict[str, int]) -> dict[str, float]:
    """Block RAMs in RAMB36 equivalents (two RAMB18 are one) and UltraRAMs, from the mapped cells."""
    b36 = sum(n for t, n in cells_by_type.items() if t.lstrip("\\").startswith("RAMB36"))
    b18 = sum(n for t, n in cells_by_type.items() if t.lstrip("\\").startswith("RAMB18"))
    uram = sum(n for t, n in cells_by_type.items() if t.lstrip("\\").startswith("URAM"))
    return {"bram36": b36 + b18 / 2, "uram": uram}


def measured_rows(target: str = "xilinx", designs: list[tuple[str, dict]] = DESIGNS) -> list[dict[str, Any]]:
    from .flow import make_design
    from .synth import report

    out = []
    for arch, options in designs:
        design = make_design(arch, options=options)
        doc = report(design, (target,), method="flat")
        r = doc["targets"][target]
        f = r["figures"]
        out.append({"design": design.describe(), "arch": arch, "params": doc["params"], "source": "measured",
                    "tool": f"Yosys {doc['yosys']} synth_xilinx -family xcup (flat)",
                    "lut": f["lut"]["value"], "ff": f["ff"]["value"], "dsp": f["dsp"]["value"],
                    **ram_blocks(r["cells_by_type"]), "ram_cells": f["ram_cells"]["value"],
                    "depth": f["depth"]["value"], "declared_dsp": doc["declared"]["dsp"],
                    "seconds": r["seconds"], "cached": r["cached"]})
    return out


def main(argv: list[str] | None = None) -> int:
    from .published_ntt import row

    ap = argparse.ArgumentParser(prog="python -m modforge.hw.ntt_report", description=__doc__.splitlines()[0])
    ap.add_argument("--mul-cycles", default="", help="also synthesise goldilocks-mul at these latencies (comma list)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        sweep = [int(x) for x in args.mul_cycles.split(",") if x.strip()]
    except ValueError:
        print(f"modforge: error: --mul-cycles must be a comma-separated list of integers, got {args.mul_cycles!r}",
              file=sys.stderr)
        return 2
    rows = measured_rows(designs=DESIGNS + [("goldilocks-mul", {"cycles": c}) for c in sweep if c != 6])
    seed = row(8).as_dict()
    if args.json:
        print(json.dumps({"measured": rows, "published": seed}, indent=1))
        return 0
    print(f"{'design':<24} {'LUT':>9} {'FF':>9} {'DSP':>5} {'BRAM36':>7} {'URAM':>5} {'depth':>5}  source")
    for r in rows:
        label = r["arch"] + (f" L={r['params']['cycles']}" if r["arch"] == "goldilocks-mul" else "")
        if r["arch"] == "ntt-cluster":
            label += f" 2^{r['params']['log_n1']}x2^{r['params']['log_n2']}"
        print(f"{label:<24} {r['lut']:>9,} {r['ff']:>9,} {r['dsp']:>5} {r['bram36']:>7g} {r['uram']:>5} "
              f"{r['depth']:>5}  measured ({r['tool']})")
    print(f"{'seed, 8 cores':<24} {seed['lut']:>9,} {seed['ff']:>9,} {seed['dsp']:>5} {seed['bram36']:>7} "
          f"{seed['uram']:>5} {'-':>5}  published, not measured here ({seed['tool']}; a 2^24 transform in "
          f"{seed['latency_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
