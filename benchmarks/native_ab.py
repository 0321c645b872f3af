"""Two builds of the native extension side by side in one run: did a change to ``native/`` move the speed?

    .venv/bin/python benchmarks/native_ab.py OLD.so [NEW.so] [--bits 1024,2048] [--rounds 15] [--json]

``NEW.so`` defaults to the extension the package imports.  Both are loaded into this one process (an
extension module's init function is named after the last part of its module name, so each loads under a
name of its own), and every round times the same work on each build in turn, alternating which goes
first: ``Ring.sqr_n`` (ns per squaring) on every backend both builds run at each width, and one checked
RSA private operation (``RsaKey.private``, microseconds) at each width up to 2048 bits per prime pair.
It reports the median of each, the spread (min..max over rounds), and new/old; a ratio inside both
spreads is no change.  Run it before landing a restructuring of the crates (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType

import gmpy2

from modforge.engine.tuning import cpu_name


def load_build(path: Path, alias: str) -> ModuleType:
    """The extension at ``path`` as a module of its own, ``<alias>._native``."""
    name = f"{alias}._native"
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    if spec is None:
        sys.exit(f"error: {path} is not an extension module")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def modulus(bits: int, seed: int) -> int:
    rng = gmpy2.random_state(seed)
    return int(gmpy2.mpz_urandomb(rng, bits)) | (1 << (bits - 1)) | 1


def prime(bits: int, seed: int) -> int:
    rng = gmpy2.random_state(seed)
    return int(gmpy2.next_prime(gmpy2.mpz_urandomb(rng, bits) | (1 << (bits - 1))))


def sqr_case(build: ModuleType, n: int, backend: str, k: int):
    ring = build.Ring(n, backend)
    x = n // 3

    def run() -> float:
        start = time.perf_counter()
        ring.sqr_n(x, k)
        return (time.perf_counter() - start) / k * 1e9
    return run


def rsa_case(build: ModuleType, bits: int, repeats: int = 20):
    p, q = prime(bits // 2, 1), prime(bits // 2, 2)
    e = 65537
    d = pow(e, -1, (p - 1) * (q - 1))
    key = build.RsaKey(p, q, pow(q, -1, p), e)
    c = (p * q) // 7

    def run() -> float:
        start = time.perf_counter()
        for _ in range(repeats):
            key.private(c, d % (p - 1), d % (q - 1), bits // 2)
        return (time.perf_counter() - start) / repeats * 1e6
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path, nargs="?")
    ap.add_argument("--bits", default="1024,2048,4096")
    ap.add_argument("--rsa-bits", default="2048,4096")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.new is None:
        from modforge import _native

        args.new = Path(_native.__file__)
    builds = {"old": load_build(args.old, "modforge_ab_old"), "new": load_build(args.new, "modforge_ab_new")}
    backends = [b for b in builds["old"].supported_backends() if b in builds["new"].supported_backends()
                and b not in ("fold-portable", "fold32-portable")]
    cases: dict[str, dict[str, object]] = {}
    for bits in [int(b) for b in args.bits.split(",")]:
        n = modulus(bits, bits)
        k = max(2_000, int(200_000 * (1024 / bits) ** 2))
        for backend in backends:
            cases[f"sqr_n {backend} {bits} (ns/sq)"] = {v: sqr_case(m, n, backend, k) for v, m in builds.items()}
    for bits in [int(b) for b in args.rsa_bits.split(",")]:
        cases[f"rsa private {bits} (us)"] = {v: rsa_case(m, bits) for v, m in builds.items()}
    samples: dict[str, dict[str, list[float]]] = {c: {"old": [], "new": []} for c in cases}
    for r in range(args.rounds):
        order = ("old", "new") if r % 2 == 0 else ("new", "old")
        for case, runs in cases.items():
            for v in order:
                samples[case][v].append(runs[v]())
    rows = []
    for case, s in samples.items():
        old, new = statistics.median(s["old"]), statistics.median(s["new"])
        rows.append({"case": case, "old_median": old, "old_min": min(s["old"]), "old_max": max(s["old"]),
                     "new_median": new, "new_min": min(s["new"]), "new_max": max(s["new"]), "new_over_old": new / old})
    doc = {"cpu": cpu_name(), "old": str(args.old), "new": str(args.new), "rounds": args.rounds, "rows": rows}
    if args.json:
        print(json.dumps(doc, indent=1))
        return
    print(f"CPU: {doc['cpu']}; {args.rounds} rounds, interleaved")
    print(f"{'case':<30} {'old median (min..max)':>26} {'new median (min..max)':>26} {'new/old':>8}")
    for r in rows:
        print(f"{r['case']:<30} {r['old_median']:>9.1f} ({r['old_min']:.1f}..{r['old_max']:.1f})"
              f" {r['new_median']:>9.1f} ({r['new_min']:.1f}..{r['new_max']:.1f}) {r['new_over_old']:>8.3f}")


if __name__ == "__main__":
    main()
