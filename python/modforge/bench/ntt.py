"""``modforge bench ntt``: our NTT beside Plonky3, plonky2 and Winterfell, side by side in one run.

The anchors are one Rust program (``harness/ntt_anchor``: Plonky3's ``p3-dft`` ``Radix2DFTSmallBatch`` and
``Radix2DitParallel``, plonky2_field's ``fft`` and winter-math's ``evaluate_poly``, the latest releases
cargo resolves), built on first use into the benchmark cache (``MODFORGE_BENCH_CACHE``, see
:mod:`.anchors`) with ``-C target-cpu=native`` so that Plonky3 uses the packing this CPU has; a failed
build is a notice, never an error.  plonky2_field uses unstable language features: it is built with
``RUSTC_BOOTSTRAP=1``, and left out (with a notice) if even that fails.

Every implementation transforms the same input, the splitmix64 stream of :mod:`modforge.zk.ntt_files`,
which the anchor program regenerates; each run reports 64 sampled outputs that are checked against ours
(plonky2 and Winterfell evaluate at another generator of the same subgroup, w' = w^k: their output k'
is ours at k * k' mod n, and k is found by a discrete logarithm in the 2-group).  The times are of the
transform alone (no input copy, twiddles precomputed by each library's own cache), medians of the
repetitions with the min-max spread.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..zk.goldilocks import GOLDILOCKS
from .anchors import (
    AnchorEnv,
    AnchorUnavailable,
    _locked,
    _run_logged,
    cpu_identity,
    default_sources_dir,
)

P = GOLDILOCKS.p
ANCHOR_DIR = "ntt_anchor"
ANCHORS = ("p3-smallbatch", "p3-ditparallel", "plonky2", "winterfell")
SINGLE_COLUMN_ANCHORS = ("plonky2", "winterfell")     # their FFTs take one polynomial
SINGLE_THREAD_ANCHORS = ("plonky2",)                  # plonky2_field's fft has no parallel path
OURS = "modforge"
SAMPLES_MULTIPLIER = 2_654_435_761

Notice = Callable[[str], None]


@dataclass(frozen=True)
class AnchorBuild:
    binary: Path
    features: tuple[str, ...]            # which optional anchors are in it
    detail: str


def _anchor_sources() -> Path:
    env_dir = os.environ.get("MODFORGE_ANCHOR_SOURCES")
    return (Path(env_dir) if env_dir else default_sources_dir()) / ANCHOR_DIR


def _rustc_version() -> str:
    try:
        return subprocess.run(["rustc", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "rustc not found"


def build_anchor(env: AnchorEnv, notice: Notice) -> AnchorBuild:
    """The anchor program for this CPU, built once per (sources, rustc, CPU) into the cache."""
    source = _anchor_sources()
    manifest, main = source / "Cargo.toml", source / "src" / "main.rs"
    if not manifest.is_file() or not main.is_file():
        raise AnchorUnavailable(ANCHORS, f"anchor sources not found in {source}")
    key = hashlib.sha256(manifest.read_bytes() + main.read_bytes() + _rustc_version().encode()
                         + json.dumps(cpu_identity(), sort_keys=True).encode()).hexdigest()[:16]
    work = env.cache_dir / f"ntt-anchor-{key}"
    marker = work / "built.json"
    with _locked(env.cache_dir / "ntt-anchor.lock"):
        if marker.is_file():
            doc = json.loads(marker.read_text(encoding="utf-8"))
            binary = Path(doc["binary"])
            if binary.is_file():
                return AnchorBuild(binary, tuple(doc["features"]), doc["detail"])
        if not env.build:
            raise AnchorUnavailable(ANCHORS, "not built yet and building is disabled (--no-build)")
        if shutil.which(env.cargo) is None:
            raise AnchorUnavailable(ANCHORS, "cargo not found: it builds the Plonky3/plonky2/Winterfell anchors")
        (work / "src").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(manifest, work / "Cargo.toml")
        shutil.copyfile(main, work / "src" / "main.rs")
        build_env = dict(os.environ, CARGO_TARGET_DIR=str(work / "target"), RUSTC_BOOTSTRAP="1",
                         RUSTFLAGS=(os.environ.get("RUSTFLAGS", "") + " -C target-cpu=native").strip())
        log = work / "build.log"
        notice(f"building the NTT anchors (Plonky3, plonky2, Winterfell) with cargo; log: {log}")
        attempts = [(("plonky2", "winterfell"), []), (("winterfell",), ["--no-default-features", "--features",
                                                                          "winterfell"]),
                    ((), ["--no-default-features"])]
        for features, flags in attempts:
            if _run_logged([env.cargo, "build", "--release", "--quiet", *flags], work, log, build_env):
                binary = work / "target" / "release" / "modforge-ntt-anchor"
                left_out = [a for a in SINGLE_COLUMN_ANCHORS if a not in features]
                if left_out:
                    notice(f"NTT anchors built without {', '.join(left_out)} (see {log})")
                detail = f"{_rustc_version()}, -C target-cpu=native, {_locked_versions(work)}"
                marker.write_text(json.dumps({"binary": str(binary), "features": list(features), "detail": detail}),
                                  encoding="utf-8")
                return AnchorBuild(binary, features, detail)
        raise AnchorUnavailable(ANCHORS, f"cargo build failed (log: {log})")


def _locked_versions(work: Path) -> str:
    """The resolved versions of the anchor crates, from Cargo.lock."""
    try:
        text = (work / "Cargo.lock").read_text(encoding="utf-8")
    except OSError:
        return "versions unknown"
    found = {}
    name = None
    for line in text.splitlines():
        if line.startswith("name = "):
            name = line.split('"')[1]
        elif line.startswith("version = ") and name in ("p3-dft", "p3-goldilocks", "plonky2_field", "winter-math"):
            found[name] = line.split('"')[1]
    return ", ".join(f"{k} {v}" for k, v in sorted(found.items()))


def discrete_log_2group(h: int, g: int, log_n: int) -> int:
    """k with g^k = h, g of order 2^log_n (Pohlig-Hellman one bit at a time)."""
    k = 0
    g_inv = pow(g, P - 2, P)
    for bit in range(log_n):
        # (h * g^-k)^(2^(log_n - 1 - bit)) is 1 or -1: the next bit of k.
        t = pow(h * pow(g_inv, k, P) % P, 1 << (log_n - 1 - bit), P)
        if t != 1:
            k |= 1 << bit
    if pow(g, k, P) != h:
        raise ValueError("not in the subgroup")
    return k


def check_samples(ours: np.ndarray, columns: int, log_n: int, anchor_root: int, samples: list) -> str | None:
    """None if the anchor's sampled outputs agree with ours (after the change of generator), else why."""
    n = 1 << log_n
    our_root = GOLDILOCKS.root_of_unity(log_n)
    try:
        k = discrete_log_2group(anchor_root, our_root, log_n) if anchor_root != our_root else 1
    except ValueError:
        return f"its root {anchor_root:#x} is not of order 2^{log_n}"
    table = ours.reshape(n, columns)
    for row, col, value in samples:
        expected = int(table[(k * row) % n, col])
        if int(value, 16) != expected:
            return f"output row {row} column {col}: {value} where ours gives {expected:#x}"
    return None


def sample_positions(n: int, columns: int) -> list[tuple[int, int]]:
    return [((k * SAMPLES_MULTIPLIER) & (n - 1), k % columns) for k in range(64)]


def time_ours(log_n: int, columns: int, threads: int, reps: int, seed: int
              ) -> tuple[list[float], list[float], np.ndarray]:
    """Seconds per transform, wall-clock and process CPU time (in place, the input restored outside the
    timed region), and the output."""
    from ..zk import ntt_api, ntt_files

    pristine = ntt_files.random_elements((1 << log_n) * columns, seed)
    work = np.empty_like(pristine)
    np.copyto(work, pristine)
    ntt_api.ntt(work, columns=columns, threads=threads)          # warm-up: plan, twiddles, pool
    times, cpu = [], []
    for _ in range(reps):
        np.copyto(work, pristine)
        start, cpu_start = time.perf_counter(), time.process_time()
        ntt_api.ntt(work, columns=columns, threads=threads)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - cpu_start)
    return times, cpu, work


def time_anchor(build: AnchorBuild, name: str, log_n: int, columns: int, threads: int, reps: int,
                seed: int) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    proc = subprocess.run([str(build.binary), name, str(log_n), str(columns), str(reps), str(seed)],
                          capture_output=True, text=True, env=env, check=False, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(f"{name} exited {proc.returncode}: {proc.stderr.strip()[:200]}")
    doc = json.loads(proc.stdout)
    doc["times_s"] = [t / 1e9 for t in doc.pop("times_ns")]
    doc["cpu_s"] = [t / 1e9 for t in doc.pop("cpu_ns", [])]
    return doc


def reps_for(log_n: int) -> int:
    return 21 if log_n <= 16 else 7 if log_n <= 20 else 3


def summary(times: list[float], cpu: list[float]) -> dict:
    """Wall-clock median and min-max, and the median process CPU time (all threads): on a machine shared
    with other work, CPU time is the steadier comparison of one-thread cells; wall time is the measure."""
    out = {"median_ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3, "max_ms": max(times) * 1e3,
           "reps": len(times)}
    if cpu:
        out["cpu_median_ms"] = statistics.median(cpu) * 1e3
    return out


def run(log_ns: tuple[int, ...], columns_list: tuple[int, ...], threads_list: tuple[int, ...], seed: int,
        env: AnchorEnv, notice: Notice, progress: Callable[[str], None] = lambda s: None) -> dict:
    """Measure every cell; returns the document ``--json`` prints."""
    from ..zk import ntt_api
    from .machine import git_commit, machine_info

    skipped: dict[str, str] = {}
    build: AnchorBuild | None = None
    try:
        build = build_anchor(env, notice)
    except AnchorUnavailable as exc:
        notice(f"NTT anchors skipped: {exc.why}")
        for a in ANCHORS:
            skipped[a] = exc.why
    have_ours = ntt_api.native_available()
    if not have_ours:
        skipped[OURS] = "the native engine is not built (run `make`); the Python model is not benchmarked"
        notice(f"{OURS} skipped: {skipped[OURS]}")
    anchors = [a for a in ANCHORS if build is not None and (a not in SINGLE_COLUMN_ANCHORS or a in build.features)]
    for a in ANCHORS:
        if build is not None and a not in anchors:
            skipped[a] = "left out of the anchor build (see the notice)"
    cells = []
    failures = []
    for log_n in log_ns:
        for columns in columns_list:
            for threads in threads_list:
                reps = reps_for(log_n)
                cell = {"log_n": log_n, "columns": columns, "threads": threads, "results": {}}
                ours_out = None
                if have_ours:
                    progress(f"2^{log_n} x{columns} t={threads}: {OURS}")
                    times, cpu, ours_out = time_ours(log_n, columns, threads, reps, seed)
                    cell["results"][OURS] = summary(times, cpu)
                for name in anchors:
                    if columns != 1 and name in SINGLE_COLUMN_ANCHORS:
                        continue
                    if threads != 1 and name in SINGLE_THREAD_ANCHORS:
                        continue
                    progress(f"2^{log_n} x{columns} t={threads}: {name}")
                    try:
                        doc = time_anchor(build, name, log_n, columns, threads, reps, seed)
                    except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
                        notice(f"{name} at 2^{log_n} x{columns} t={threads} failed: {exc}")
                        continue
                    result = summary(doc["times_s"], doc["cpu_s"])
                    result["threads_seen"] = doc["threads"]
                    if ours_out is not None:
                        problem = check_samples(ours_out, columns, log_n, int(doc["root"], 16), doc["samples"])
                        result["cross_check"] = "agrees" if problem is None else f"DISAGREES: {problem}"
                        if problem is not None:
                            failures.append(f"{name} at 2^{log_n} x{columns}: {problem}")
                    cell["results"][name] = result
                anchor_medians = {k: v["median_ms"] for k, v in cell["results"].items() if k != OURS}
                if anchor_medians and OURS in cell["results"]:
                    fastest = min(anchor_medians, key=anchor_medians.__getitem__)
                    ratio = cell["results"][OURS]["median_ms"] / anchor_medians[fastest]
                    cell.update(fastest_anchor=fastest, ours_over_fastest=ratio, must=ratio <= 1.0, target=ratio <= 0.8)
                    cpu_medians = {k: v["cpu_median_ms"] for k, v in cell["results"].items()
                                   if k != OURS and v.get("cpu_median_ms", 0) > 0}
                    if cpu_medians and "cpu_median_ms" in cell["results"][OURS]:
                        fastest_cpu = min(cpu_medians, key=cpu_medians.__getitem__)
                        cell.update(fastest_anchor_cpu=fastest_cpu, ours_over_fastest_cpu=cell["results"][OURS][
                            "cpu_median_ms"] / cpu_medians[fastest_cpu])
                cells.append(cell)
    return {"benchmark": "ntt", "machine": machine_info(), "commit": git_commit(),
            "date": time.strftime("%Y-%m-%d", time.gmtime()), "seed": seed,
            "anchor_build": build.detail if build is not None else None, "skipped": skipped,
            "cells": cells, "failures": failures}


def markdown(doc: dict) -> str:
    names = [OURS, *ANCHORS]
    lines = ["| n | columns | threads | " + " | ".join(names) + " | ours / fastest | CPU time: ours / fastest |",
             "|---|---|---|" + "---|" * len(names) + "---|---|"]
    for cell in doc["cells"]:
        row = [f"2^{cell['log_n']}", str(cell["columns"]), str(cell["threads"])]
        for name in names:
            r = cell["results"].get(name)
            row.append(f"{r['median_ms']:.1f} ({r['min_ms']:.1f}-{r['max_ms']:.1f})" if r else "-")
        ratio = cell.get("ours_over_fastest")
        row.append(f"{ratio:.2f} ({cell['fastest_anchor']})" if ratio is not None else "-")
        cpu_ratio = cell.get("ours_over_fastest_cpu")
        row.append(f"{cpu_ratio:.2f} ({cell['fastest_anchor_cpu']})" if cpu_ratio is not None else "-")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def plot(doc: dict, path: Path, overwrite: bool = True) -> None:
    """Median time against size, log-log, one panel per (columns, threads); written atomically (an existing
    file only with ``overwrite``; failures name --plot)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..fileio import write_output

    panels = sorted({(c["columns"], c["threads"]) for c in doc["cells"]})
    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 4), squeeze=False)
    for ax, (columns, threads) in zip(axes[0], panels):
        cells = [c for c in doc["cells"] if c["columns"] == columns and c["threads"] == threads]
        for name in (OURS, *ANCHORS):
            points = [(1 << c["log_n"], c["results"][name]["median_ms"]) for c in cells if name in c["results"]]
            if points:
                ax.plot(*zip(*points), marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("points")
        ax.set_ylabel("median ms")
        ax.set_title(f"{columns} column{'s' if columns != 1 else ''}, {threads} thread{'s' if threads != 1 else ''}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"NTT over Goldilocks, {doc['machine'].get('cpu_model', 'this CPU')}, {doc['date']}", fontsize=9)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    write_output(path, buffer.getvalue(), "plot", overwrite=overwrite)
