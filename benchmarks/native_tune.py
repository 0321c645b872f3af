"""Measure the native backends and (re)write the engine's ``auto`` tuning data.

    .venv/bin/python benchmarks/native_tune.py            # measure, print the table
    .venv/bin/python benchmarks/native_tune.py --write    # ... and rewrite tuning.json
    .venv/bin/python benchmarks/native_tune.py --bits 1024,2048 --runs 9 --json

For each width it times ``sqr_n(x, k)`` (k squarings in one native call) on
every native backend this CPU runs, and ``gmpy2.powmod(x, 2**k, N)`` in the
same run, interleaved, ``--runs`` times each; it reports the median and the
minimum in ns per squaring.  ``k`` is about 200,000 at 1024 bits, scaled by
``(1024/bits)**2``.  With ``--write`` it writes
``python/modforge/engine/tuning.json``: CPU, compiler, date, the raw medians,
and ``best``, the fastest backend per range of widths (ranges split halfway
between measured widths), which :func:`modforge.engine.tuning.choose_backend`
reads for ``backend="auto"``.  The file is generated: edit this script, not it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import gmpy2

from modforge import native
from modforge.engine.tuning import cpu_name

ROOT = Path(__file__).resolve().parents[1]
TUNING = ROOT / "python" / "modforge" / "engine" / "tuning.json"
DEFAULT_BITS = [256, 512, 768, 1024, 1536, 2048, 3072, 4096]
# Candidates for `auto`; ifma-mont is measured for the comparison only.
AUTO_CANDIDATES = ("portable", "adx", "ifma", "gmp")


def rustc_version() -> str:
    try:
        return subprocess.run(["rustc", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def measure(bits: int, runs: int, backends: list[str], seed: int) -> dict[str, dict[str, float]]:
    rng = random.Random(seed + bits)
    n = rng.getrandbits(bits) | (1 << (bits - 1)) | 1
    x = rng.randrange(n)
    k = max(2000, int(200_000 * (1024 / bits) ** 2))
    mpz_n = gmpy2.mpz(n)
    exponent = gmpy2.mpz(1) << k
    rings = {b: native.Ring(n, b) for b in backends}
    want = int(gmpy2.powmod(x, exponent, mpz_n))
    samples: dict[str, list[float]] = {name: [] for name in ["gmp", *backends]}
    for _ in range(runs):
        start = time.perf_counter()
        gmpy2.powmod(x, exponent, mpz_n)
        samples["gmp"].append((time.perf_counter() - start) / k * 1e9)
        for name, ring in rings.items():
            start = time.perf_counter()
            got = ring.sqr_n(x, k)
            samples[name].append((time.perf_counter() - start) / k * 1e9)
            if got != want:
                raise SystemExit(f"{name} gave a wrong result at {bits} bits")
    return {name: {"median": statistics.median(v), "min": min(v)} for name, v in samples.items()}


def best_ranges(results: dict[int, dict[str, dict[str, float]]]) -> list[dict]:
    widths = sorted(results)
    rows = []
    for i, bits in enumerate(widths):
        medians = {b: r["median"] for b, r in results[bits].items() if b in AUTO_CANDIDATES}
        best = min(medians, key=medians.__getitem__)
        lo = 256 if i == 0 else (widths[i - 1] + bits) // 2 + 1
        hi = 4096 if i == len(widths) - 1 else (bits + widths[i + 1]) // 2
        if rows and rows[-1]["backend"] == best:
            rows[-1]["max_bits"] = hi
        else:
            rows.append({"min_bits": lo, "max_bits": hi, "backend": best})
    # Below 256 bits only the portable native backend runs; above 4096 none.
    rows.insert(0, {"min_bits": 2, "max_bits": 255, "backend": "gmp"})
    rows.append({"min_bits": 4097, "max_bits": 1 << 20, "backend": "gmp"})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bits", default=",".join(map(str, DEFAULT_BITS)), help="comma-separated widths")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per backend and width (median reported)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--write", action="store_true", help=f"rewrite {TUNING.relative_to(ROOT)}")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    if not native.available():
        print("the native engine is not built: run `make`", file=sys.stderr)
        return 2
    widths = [int(b) for b in args.bits.split(",")]
    backends = [b for b in native.supported_backends() if b != "fold-portable"]
    results = {}
    for bits in widths:
        results[bits] = measure(bits, args.runs, backends, args.seed)
        if not args.json:
            row = results[bits]
            gmp = row["gmp"]["median"]
            cells = "  ".join(f"{name} {r['median']:7.1f} /{r['min']:7.1f} ({gmp / r['median']:4.1f}x)"
                              for name, r in row.items())
            print(f"{bits:5d} bits, ns/squaring median / min of {args.runs} (x = gmpy2 / backend): {cells}", flush=True)
    data = {
        "generated_by": "benchmarks/native_tune.py --write (do not edit by hand)",
        "cpu": cpu_name(),
        "cpu_features": native.cpu_features(),
        "compiler": rustc_version(),
        "date": datetime.date.today().isoformat(),
        "unit": "ns per squaring, median of sqr_n runs; gmp = gmpy2.powmod with exponent 2^k",
        "measured": {str(b): {name: round(r["median"], 1) for name, r in row.items()} for b, row in results.items()},
        "best": best_ranges(results),
    }
    if args.json:
        print(json.dumps(data, indent=2))
    if args.write:
        TUNING.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {TUNING.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
