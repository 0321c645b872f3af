"""The cluster's acceptance run for ``make bench-hw``: a 2^16-point 4-step on the 8-core cluster in Verilator.

``python -m modforge.hw.ntt_bench [--log-n1 8] [--log-n2 8] [--cores 8] [--json]``: one seeded random input,
run under several memory models on one build (the memory is the harness's, its parameters runtime ones);
every output word is compared with the native engine's forward transform and the model's 4-step, and every
run's cycle count with :func:`modforge.zk.ntt_cycles.cluster_four_step_cycles`.  The table shows where the
cluster turns from compute-bound to bandwidth-bound.  Exit 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

# (bytes per cycle, burst latency in cycles): the seed's 512-bit bus at one line per cycle, then narrower
# channels and a latency of the order of an HBM read's at a few hundred MHz.
MEMORIES = [(64, 0), (64, 100), (32, 100), (16, 100)]


def main(argv: list[str] | None = None) -> int:
    from ..zk.ntt_cycles import ClusterMemory
    from .flow import make_design

    ap = argparse.ArgumentParser(prog="python -m modforge.hw.ntt_bench", description=__doc__.splitlines()[0])
    ap.add_argument("--log-n1", type=int, default=8)
    ap.add_argument("--log-n2", type=int, default=8)
    ap.add_argument("--cores", type=int, default=8)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    design = make_design("ntt-cluster", options={"log_n1": args.log_n1, "log_n2": args.log_n2, "cores": args.cores})
    t0 = time.perf_counter()
    doc = design.simulate(vectors=1, seed=args.seed, named=False,
                          memories=[ClusterMemory(bw, lat) for bw, lat in MEMORIES])
    doc["wall_seconds"] = round(time.perf_counter() - t0, 3)
    ok = (doc["mismatches"] == 0 and doc["latency_mismatches"] == 0 and doc["protocol_errors"] == 0
          and doc["exit_code"] == 0 and doc["outputs"] == doc["expected_outputs"])
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print(f"{design.describe()}: 4-step of 2^{design.log_n} points, seed {args.seed}")
        print(f"{'bytes/cycle':>11} {'latency':>7} {'cycles/line':>11} {'cycles':>9} {'model':>9} {'compute':>8} "
              f"{'memory':>8}  bound")
        for r in doc["runs"]:
            print(f"{r['bytes_per_cycle']:>11} {r['burst_latency']:>7} {r['line_cycles']:>11} {str(r['measured_cycles']):>9} {r['cycles']:>9} "
                  f"{r['compute_cycles']:>8} {r['memory_cycles']:>8}  {r['bound']}")
        print(f"measured {doc['cycles']:,} cycles in all, the model {doc['expected_cycles']:,}; "
              f"{doc['mismatches']} mismatching words of {doc['outputs']:,} (native engine and model), "
              f"{doc['latency_mismatches']} runs at another cycle count, {doc['protocol_errors']} handshake errors; "
              f"build {'cached' if doc['build']['cached'] else 'built'}, {doc['wall_seconds']} s")
        if doc["mismatch_report"]:
            print(doc["mismatch_report"][:3000])
    if not ok:
        print("modforge: error: the cluster's 4-step disagrees with the native engine or the cycle model",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
