"""Wall time of a VDF evaluation alone against evaluation plus proof (issue 3: at most 1.15x at t = 2^24, 2048 bits).

    .venv/bin/python benchmarks/vdf_proof_overhead.py --t 2^20 --bits 2048 --backend gmp [--proof wesolowski] [--json]

"eval alone" is the plain squaring loop (``sqr_n`` in chunks, nothing stored);
"eval + proof" is ``modforge.vdf.run`` end to end: cost calibration, helper
processes (none for a Wesolowski proof on a native ring: its multi-exponentiation
runs in threads), evaluation with checkpoints, proof on every core, the proof's
own verification.  Runs alternate so that drift on a shared machine hits both;
medians are reported.

On a shared machine the wall-clock ratio also measures the neighbours: a busy
second core delays the helper process.  The script therefore also reports a
load-independent estimate from CPU times, ``(eval CPU with checkpoints + proof
CPU of the main process) / eval CPU alone``: with the proof split evenly, the
main process's share is the critical path when the helper has a core of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time

import gmpy2

from modforge.engine import ModRing
from modforge.vdf import Group, evaluate, run
from modforge.vdf.plan import cpu_count


def rsa_modulus(bits: int, seed: int) -> int:
    rng = random.Random(seed)
    half = bits // 2

    def prime(width: int) -> int:
        return int(gmpy2.next_prime(rng.getrandbits(width) | (3 << (width - 2))))

    while True:
        n = prime(half) * prime(bits - half)
        if n.bit_length() == bits:
            return n


def parse_t(text: str) -> int:
    return 1 << int(text[2:]) if text.startswith("2^") else int(text, 0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--t", default="2^20", help="squarings (decimal or 2^K) [2^20]")
    ap.add_argument("--bits", type=int, default=2048, help="modulus width [2048]")
    ap.add_argument("--backend", default="gmp", help="engine backend [gmp]")
    ap.add_argument("--proof", choices=("wesolowski", "pietrzak", "both"), default="both")
    ap.add_argument("--workers", type=int, default=None, help="helper processes [auto]")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each [3]")
    ap.add_argument("--seed", type=int, default=1, help="seed of the modulus [1]")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)

    t = parse_t(args.t)
    group = Group(rsa_modulus(args.bits, args.seed))
    x = group.hash_to_group(b"modforge benchmark")
    ring = ModRing(group.modulus, backend=args.backend)
    kinds = ("wesolowski", "pietrzak") if args.proof == "both" else (args.proof,)

    alone: list[float] = []
    alone_cpu: list[float] = []
    runs: dict[str, list[dict]] = {k: [] for k in kinds}
    y_ref = None
    for _ in range(args.repeat):
        start, cpu = time.perf_counter(), time.process_time()
        ev = evaluate(group, x, t, ring, chunk=1 << 20)
        alone.append(time.perf_counter() - start)
        alone_cpu.append(time.process_time() - cpu)
        y_ref = ev.y
        for kind in kinds:
            start = time.perf_counter()
            r = run(group, x, t, kind, backend=args.backend, workers=args.workers)
            total = time.perf_counter() - start
            assert r.evaluation.y == y_ref and r.proof is not None
            runs[kind].append({"total": total, "eval": r.eval_seconds, "proof": r.proof_seconds,
                               "cpu": r.eval_cpu_seconds + r.proof_cpu_seconds,
                               "workers": r.workers, "plans": r.plans,
                               "cost_model": {"mul": round(r.cost.mul, 3), "call": round(r.cost.call, 3),
                                              "pow128": round(r.cost.pow128, 1)}})

    base = statistics.median(alone)
    base_cpu = statistics.median(alone_cpu)
    result = {"t": t, "bits": args.bits, "backend": ring.backend, "cpu": platform.processor() or platform.machine(),
              "load_average": [round(v, 2) for v in os.getloadavg()], "cores": cpu_count(),
              "repeat": args.repeat, "eval_alone_seconds": round(base, 4), "eval_alone_cpu_seconds": round(base_cpu, 4),
              "ns_per_squaring": round(base / t * 1e9, 1), "proofs": {}}
    for kind in kinds:
        rows = runs[kind]
        total = statistics.median(r["total"] for r in rows)
        result["proofs"][kind] = {
            "eval_plus_proof_seconds": round(total, 4),
            "ratio": round(total / base, 4),
            "ratio_cpu_estimate": round(statistics.median(r["cpu"] for r in rows) / base_cpu, 4),
            "eval_with_checkpoints_seconds": round(statistics.median(r["eval"] for r in rows), 4),
            "proof_seconds": round(statistics.median(r["proof"] for r in rows), 4),
            "processes": 1 + rows[-1]["workers"], "plans": rows[-1]["plans"], "cost_model": rows[-1]["cost_model"],
        }
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"t = {t}, {args.bits}-bit modulus, backend {ring.backend}: eval alone {base:.3f} s "
          f"({result['ns_per_squaring']} ns/squaring), median of {args.repeat}; "
          f"load average {result['load_average']} on {result['cores']} cores")
    for kind, row in result["proofs"].items():
        print(f"  {kind:10s}  eval+proof {row['eval_plus_proof_seconds']:.3f} s = {row['ratio']:.3f}x wall, "
              f"{row['ratio_cpu_estimate']:.3f}x by CPU time  "
              f"(eval with checkpoints {row['eval_with_checkpoints_seconds']:.3f} s, proof {row['proof_seconds']:.3f} s "
              f"on {row['processes']} cores; plan {row['plans'][kind]}; cost model {row['cost_model']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
