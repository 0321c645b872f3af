"""``modforge bench msm``: our MSM beside gnark-crypto and arkworks, on the same points and scalars.

Three programs speak one protocol (``PROG POINTS SCALARS THREADS REPEATS`` on gnark-raw files, printing
``ms T`` per repeat and then ``x 0x..``/``y 0x..`` or ``infinity``):

* ours: ``modforge-msm-run`` of native/crates/modforge-msm, built from the source tree;
* ours with a fixed-base table (``modforge (table)``): the same runner's ``table`` mode, on a table
  precomputed once per size (``precompute``, timed apart and reported as ``precompute_ms``);
* gnark-crypto: ``G1Jac.MultiExp`` (bench/harness/msm/gnark, Go), at the latest gnark-crypto release
  when first built (``go get ...@latest``);
* arkworks: ``VariableBaseMSM::msm`` (bench/harness/msm/ark), the latest 0.x ``ark-ec`` with the
  ``parallel`` and ``asm`` features, compiled for this CPU (``-C target-cpu=native``, which the ``asm``
  feature needs for its MULX/ADX code).

Each is built on first use into ``<bench cache>/anchors/msm-*`` keyed by its sources, the toolchain
and the CPU, and skipped with a notice when it cannot be built.  Every (size, threads) cell runs the
programs round-robin, ``repeats`` rounds, each run timing a warm second repetition; the results must
agree (exit 1 otherwise).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .anchors import (
    AnchorEnv,
    AnchorProgram,
    AnchorUnavailable,
    _digest,
    _locked,
    _run_logged,
    cpu_identity,
)

Notice = Callable[[str], None]

OURS = "modforge"
OURS_TABLE = "modforge (table)"
GNARK = "gnark-crypto"
ARK = "arkworks"
GNARK_MODULE = "github.com/consensys/gnark-crypto"


def _tree_digest(*roots: Path) -> str:
    h = hashlib.sha256()
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "target" not in p.parts):
            if path.name == "Cargo.lock":
                continue
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _version(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr).strip() else "unknown"


def native_source_dir() -> Path | None:
    """native/crates of the source tree this package runs from (None for an installed wheel)."""
    crates = Path(__file__).resolve().parents[3] / "native" / "crates"
    return crates if (crates / "modforge-msm" / "Cargo.toml").is_file() else None


def _copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns("target", "Cargo.lock"))


def build_ours(env: AnchorEnv, notice: Notice) -> AnchorProgram:
    crates = native_source_dir()
    if crates is None:
        raise AnchorUnavailable(OURS, "native/crates/modforge-msm is not here (run from a source checkout)")
    cargo = shutil.which(env.cargo)
    if cargo is None:
        raise AnchorUnavailable(OURS, f"{env.cargo!r} not found")
    rustc = _version(["rustc", "--version"])
    key = _digest(_tree_digest(crates / "modforge-msm", crates / "modforge-bls12-377"), rustc, cpu_identity())
    out = env.cache_dir / f"msm-ours-{key}"
    exe = out / "target" / "release" / "modforge-msm-run"
    with _locked(env.cache_dir / "msm-ours.lock"):
        if not exe.is_file():
            if not env.build:
                raise AnchorUnavailable(OURS, "not built yet (building is off)")
            notice(f"building our MSM runner in {out} (once)")
            out.mkdir(parents=True, exist_ok=True)
            ok = _run_logged([cargo, "build", "--release", "--manifest-path", str(crates / "modforge-msm" / "Cargo.toml")],
                             crates / "modforge-msm", out / "build.log",
                             env={**os.environ, "CARGO_TARGET_DIR": str(out / "target")})
            if not ok or not exe.is_file():
                raise AnchorUnavailable(OURS, f"cargo build failed (log: {out / 'build.log'})")
    return AnchorProgram(OURS, (str(exe), "run"), f"modforge-msm ({rustc})", {"key": key, "rustc": rustc})


def build_gnark(env: AnchorEnv, notice: Notice) -> AnchorProgram:
    go = shutil.which("go")
    if go is None:
        raise AnchorUnavailable(GNARK, "no Go toolchain (`go` not on PATH)")
    src = env.sources_dir / "msm" / "gnark"
    go_version = _version([go, "version"])
    key = _digest(_tree_digest(src), go_version, cpu_identity())
    out = env.cache_dir / f"msm-gnark-{key}"
    exe = out / "msm-gnark"
    with _locked(env.cache_dir / "msm-gnark.lock"):
        if not exe.is_file():
            if not env.build:
                raise AnchorUnavailable(GNARK, "not built yet (building is off)")
            notice(f"building the gnark-crypto anchor in {out} (once; fetches the latest gnark-crypto)")
            _copy_tree(src, out)
            log = out / "build.log"
            ok = _run_logged([go, "get", f"{GNARK_MODULE}@latest"], out, log) and \
                _run_logged([go, "mod", "tidy"], out, log) and \
                _run_logged([go, "build", "-o", str(exe), "."], out, log)
            if not ok or not exe.is_file():
                raise AnchorUnavailable(GNARK, f"go build failed (log: {log})")
    try:  # the gnark-crypto release `go get ...@latest` resolved when this anchor was built
        version = subprocess.run([go, "list", "-m", "-f", "{{.Version}}", GNARK_MODULE], cwd=out, capture_output=True,
                                 text=True, timeout=60, check=False).stdout.strip() or "?"
    except (OSError, subprocess.TimeoutExpired):
        version = "?"
    return AnchorProgram(GNARK, (str(exe),), f"gnark-crypto {version} G1Jac.MultiExp ({go_version})",
                      {"key": key, "version": version})


def build_ark(env: AnchorEnv, notice: Notice) -> AnchorProgram:
    cargo = shutil.which(env.cargo)
    if cargo is None:
        raise AnchorUnavailable(ARK, f"{env.cargo!r} not found")
    src = env.sources_dir / "msm" / "ark"
    rustc = _version(["rustc", "--version"])
    key = _digest(_tree_digest(src), rustc, cpu_identity())
    out = env.cache_dir / f"msm-ark-{key}"
    exe = out / "target" / "release" / "msm-ark"
    with _locked(env.cache_dir / "msm-ark.lock"):
        if not exe.is_file():
            if not env.build:
                raise AnchorUnavailable(ARK, "not built yet (building is off)")
            notice(f"building the arkworks anchor in {out} (once; fetches ark-ec from crates.io)")
            _copy_tree(src, out)
            build_env = {**os.environ, "CARGO_TARGET_DIR": str(out / "target"), "RUSTFLAGS": "-C target-cpu=native"}
            ok = _run_logged([cargo, "build", "--release"], out, out / "build.log", env=build_env)
            if not ok or not exe.is_file():
                raise AnchorUnavailable(ARK, f"cargo build failed (log: {out / 'build.log'})")
    lock = out / "Cargo.lock"
    version = "?"
    if lock.is_file():
        m = re.search(r'name = "ark-ec"\nversion = "([^"]+)"', lock.read_text())
        version = m.group(1) if m else "?"
    return AnchorProgram(ARK, (str(exe),), f"arkworks ark-ec {version} VariableBaseMSM::msm (parallel, asm)",
                      {"key": key, "version": version})


def table_program(ours: AnchorProgram) -> AnchorProgram:
    """Our runner's fixed-base mode: the same protocol with a table file in place of the points."""
    return AnchorProgram(OURS_TABLE, (ours.argv[0], "table"), f"{ours.detail}, fixed-base table", ours.build)


def collect(env: AnchorEnv, notice: Notice, which: Sequence[str] = (OURS, GNARK, ARK)
            ) -> tuple[list[AnchorProgram], list[AnchorUnavailable]]:
    builders = {OURS: build_ours, GNARK: build_gnark, ARK: build_ark}
    programs, skipped = [], []
    for name in which:
        try:
            programs.append(builders[name](env, notice))
        except AnchorUnavailable as exc:
            notice(f"{name} skipped: {exc.why}")
            skipped.append(exc)
        else:
            if name == OURS:
                programs.append(table_program(programs[-1]))
    return programs, skipped


@dataclass
class RunResult:
    times_ms: list[float]
    result: str


class ProgramFailed(RuntimeError):
    pass


def run_program(prog: AnchorProgram, points: Path, scalars: Path, threads: int, repeats: int,
                extra: Sequence[str] = ()) -> RunResult:
    argv = [*prog.argv, str(points), str(scalars), str(threads), str(repeats), *extra]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ProgramFailed(f"{prog.name}: exit {proc.returncode}: {proc.stderr.strip()[:300]}")
    times = [float(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("ms ")]
    lines = [ln.strip() for ln in proc.stdout.splitlines()]
    if "infinity" in lines:
        result = "infinity"
    else:
        xs = [ln.split()[1] for ln in lines if ln.startswith("x ")]
        ys = [ln.split()[1] for ln in lines if ln.startswith("y ")]
        if not xs or not ys:
            raise ProgramFailed(f"{prog.name}: no result in its output")
        result = f"({int(xs[-1], 16):#x}, {int(ys[-1], 16):#x})"
    return RunResult(times, result)


def generate(ours: AnchorProgram, n: int, seed: int, directory: Path) -> tuple[Path, Path]:
    points, scalars = directory / f"points-{n}-{seed}.bin", directory / f"scalars-{n}-{seed}.bin"
    if not points.is_file():
        subprocess.run([ours.argv[0], "gen", str(n), str(seed), str(points), str(scalars)], check=True)
    return points, scalars


def precompute_table(ours: AnchorProgram, points: Path, directory: Path) -> tuple[Path, float]:
    """The fixed-base table of ``points`` (our runner's default window) and its precomputation's ms."""
    table = directory / (points.name + ".table")
    proc = subprocess.run([ours.argv[0], "precompute", str(points), str(table)], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise ProgramFailed(f"{OURS} precompute: exit {proc.returncode}: {proc.stderr.strip()[:300]}")
    ms = [float(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("precompute_ms ")]
    return table, ms[0] if ms else float("nan")


def run_bench(log_ns: Sequence[int], thread_counts: Sequence[int], repeats: int, seed: int, env: AnchorEnv,
              notice: Notice, step: Callable[[str], None] | None = None) -> dict:
    from .machine import git_commit, machine_info

    programs, skipped = collect(env, notice)
    if not programs or programs[0].name != OURS:
        raise AnchorUnavailable(OURS, "our runner is needed to generate the instances")
    doc: dict = {
        "benchmark": "msm", "curve": "BLS12-377 G1", "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "machine": machine_info(), "commit": git_commit(), "seed": seed, "repeats": repeats,
        "programs": {p.name: p.detail for p in programs},
        "skipped": [{"impl": ", ".join(s.impls), "why": s.why} for s in skipped],
        "rows": [], "mismatches": [], "precompute_ms": {},
    }
    with tempfile.TemporaryDirectory(prefix="modforge-bench-msm-") as tmp:
        for log_n in log_ns:
            points, scalars = generate(programs[0], 1 << log_n, seed, Path(tmp))
            if step:
                step(f"2^{log_n} precomputing the fixed-base table")
            table, doc["precompute_ms"][str(log_n)] = precompute_table(programs[0], points, Path(tmp))
            for threads in thread_counts:
                samples: dict[str, list[float]] = {p.name: [] for p in programs}
                results: dict[str, str] = {}
                for rnd in range(repeats):
                    order = programs[rnd % len(programs):] + programs[:rnd % len(programs)]
                    for prog in order:
                        if step:
                            step(f"2^{log_n} x{threads} {prog.name} ({rnd + 1}/{repeats})")
                        run = run_program(prog, table if prog.name == OURS_TABLE else points, scalars, threads, 2)
                        samples[prog.name].append(run.times_ms[-1])  # the warm repetition
                        results[prog.name] = run.result
                if len(set(results.values())) > 1:
                    doc["mismatches"].append({"log_n": log_n, "threads": threads, "results": results})
                base = samples.get(GNARK)
                for prog in programs:
                    t = samples[prog.name]
                    med = statistics.median(t)
                    doc["rows"].append({
                        "log_n": log_n, "n": 1 << log_n, "threads": threads, "impl": prog.name,
                        "median_ms": med, "min_ms": min(t), "max_ms": max(t),
                        "spread": (max(t) - min(t)) / med if med else 0.0, "samples_ms": t,
                        "vs_gnark": med / statistics.median(base) if base else None,
                        # the table's speed-up over our variable-base MSM (ours / with table)
                        "table_speedup": statistics.median(samples[OURS]) / med if prog.name == OURS_TABLE else None,
                        "agrees": len(set(results.values())) == 1,
                    })
            table.unlink(missing_ok=True)  # 1.6 GB at 2^20: do not keep it beside the next size's
    return doc


def format_table(doc: dict) -> str:
    title = (f"MSM over {doc['curve']}  ({doc['machine'].get('cpu_model', '?')}, {doc['date']}, "
             f"commit {str(doc.get('commit'))[:10]})")
    lines = [title,
             f"{'n':>8} {'thr':>3} {'impl':<16} {'median ms':>10} {'spread':>7} {'vs gnark':>8}  agree"]
    for row in doc["rows"]:
        ratio = f"{row['vs_gnark']:.2f}x" if row["vs_gnark"] is not None else "-"
        lines.append(f"{'2^' + str(row['log_n']):>8} {row['threads']:>3} {row['impl']:<16} {row['median_ms']:>10.1f} "
                     f"{row['spread']:>6.1%} {ratio:>8}  {'yes' if row['agrees'] else 'NO'}")
    for row in doc["rows"]:
        if row.get("table_speedup"):
            lines.append(f"  2^{row['log_n']} x{row['threads']}: fixed-base table {row['table_speedup']:.2f}x faster "
                         f"than without (precomputed once in {doc['precompute_ms'][str(row['log_n'])]:.0f} ms)")
    for name, detail in doc["programs"].items():
        lines.append(f"  {name}: {detail}")
    for s in doc["skipped"]:
        lines.append(f"  skipped {s['impl']}: {s['why']}")
    return "\n".join(lines)


def to_markdown(doc: dict) -> str:
    head = ("| n | threads | impl | median ms | spread | vs gnark |\n|---|---|---|---|---|---|\n")
    body = "".join(
        f"| 2^{r['log_n']} | {r['threads']} | {r['impl']} | {r['median_ms']:.1f} | {r['spread']:.1%} | "
        f"{'' if r['vs_gnark'] is None else format(r['vs_gnark'], '.2f') + 'x'} |\n" for r in doc["rows"])
    return head + body


def plot(doc: dict, path: str, overwrite: bool = True) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    series: dict[tuple[str, int], list[tuple[int, float]]] = {}
    for row in doc["rows"]:
        series.setdefault((row["impl"], row["threads"]), []).append((row["n"], row["median_ms"]))
    for (impl, threads), pts in sorted(series.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{impl}, {threads} thread(s)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("points")
    ax.set_ylabel("wall time (ms, median)")
    ax.set_title(f"MSM BLS12-377 G1 - {doc['machine'].get('cpu_model', '')}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    import io

    from ..fileio import write_output

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    write_output(path, buf.getvalue(), "plot", overwrite=overwrite)
