"""Design-space sweep (``modforge hw explore``): architecture x width x word size x any design parameter
(``--opt KEY=V1,V2``: seed 003's cores per cluster, multiplier latency, Karatsuba depth), synthesised on
a process pool, written to CSV and JSON and drawn as a Pareto plot beside the seeds' published figures.

Every point is one :func:`modforge.hw.synth.report` (flat up to 256 bits, hierarchically summed
above), so points share the synthesis cache with ``modforge hw report``.  A point whose parameters
an architecture refuses (``predictive-montgomery`` needs digits that fit one DSP tile, so
``word_bits=32`` with the default 17-bit tile is refused) is written with its reason, not dropped.

The plot (matplotlib, Agg backend) has three panels: LUTs against cycles per operation (ours and
the published rows), LUTs against logic depth (ours; published papers give nanoseconds, not
levels), and the published rows' LUTs against their latency in ns.  Published rows are drawn as
hollow grey markers and labelled "published, not measured here" (:mod:`modforge.hw.published`).
"""

from __future__ import annotations

import csv
import io
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..arith.base import ParameterError
from ..fileio import atomic_write, check_output_path, write_together
from ..interrupts import completed
from ..inttext import brief
from .pool import check_jobs, worker_pool

CSV_FIELDS = ["arch", "bits", "word_bits", "options", "target", "status", "method", "cycles_per_op", "latency", "lut", "ff",
              "dsp", "carry", "muxf", "ram_cells", "rom_bits", "depth", "flat", "declared_dsp", "seconds", "error"]


@dataclass(frozen=True)
class Point:
    arch: str
    bits: int
    word_bits: int
    options: tuple[tuple[str, Any], ...] = ()      # the --opt axes that apply to this architecture, sorted

    def options_text(self) -> str:
        return ";".join(f"{k}={v}" for k, v in self.options)

    def label(self) -> str:
        extra = f" {self.options_text()}" if self.options else ""
        return f"{self.arch} {self.bits}b d={self.word_bits}{extra}"


def grid(archs: list[str], bits: list[int], word_bits: list[int],
         axes: dict[str, list[Any]] | None = None) -> list[Point]:
    """Every point of the sweep.  An axis (``word_bits`` or an ``axes`` parameter) applies to the
    architectures that have that parameter (``modforge hw list``); a field design of one modulus (seed
    003's NTT: Goldilocks) takes that modulus's width whatever the widths asked."""
    import itertools

    from .registry import arch_info

    infos = {a: arch_info(a) for a in archs}
    for b in bits:
        if b < 16 or b > 4096:
            raise ParameterError("bits", f"each width must be between 16 and 4096, got {brief(b)}")
    for w in word_bits:
        if w < 2 or w > 64:
            raise ParameterError("word_bits", f"each word size must be between 2 and 64, got {brief(w)}")
    axes = dict(axes or {})
    for key, values in axes.items():
        if key == "word_bits":
            raise ParameterError("opt", "word_bits has its own axis: give --word-bits")
        if not values:
            raise ParameterError("opt", f"{key} has no values")
        if not any(key in info.defaults for info in infos.values()):
            raise ParameterError("opt", f"{key} is a parameter of none of {', '.join(archs)} (see modforge hw list)")
    points: list[Point] = []
    for a, info in infos.items():
        widths = [info.fixed_modulus.bit_length()] if info.fixed_modulus is not None else bits
        # Architectures without digits (pam-mpu is bit-serial; hybrid's chunks are its tile's; seed 003's
        # designs) have no word-size axis: one word size stands for all, so no point is swept twice.
        words = word_bits if "word_bits" in info.defaults else word_bits[:1]
        mine = sorted((k, v) for k, v in axes.items() if k in info.defaults)
        for b in dict.fromkeys(widths):
            for w in words:
                for combo in itertools.product(*[v for _, v in mine]):
                    points.append(Point(a, b, w, tuple((k, x) for (k, _), x in zip(mine, combo))))
    return points


METHODS = ("yosys", "estimate")


def run_point(point: Point, target: str = "xilinx", method: str = "yosys") -> dict[str, Any]:
    """Synthesise one point (or, with ``method="estimate"``, generate it and take the design's own declared
    figures, no Yosys); never raises (errors become the row's ``error``)."""
    from .flow import make_design
    from .synth import report, summary_row

    t0 = time.perf_counter()
    row: dict[str, Any] = {"arch": point.arch, "bits": point.bits, "word_bits": point.word_bits,
                           "options": point.options_text(), "target": target}
    try:
        from .registry import arch_info

        info = arch_info(point.arch)
        options = {"word_bits": point.word_bits} if "word_bits" in info.defaults else {}
        options.update(point.options)
        # A design with a default field (seed 003's MSM: BLS12-377's q) takes it at that field's width;
        # other widths get the reproducible modulus of the width, as with --bits.
        modulus = (info.default_modulus if info.default_modulus is not None
                   and info.default_modulus.bit_length() == point.bits else None)
        design = make_design(point.arch, bits=point.bits, modulus=modulus, options=options)
    except ParameterError as exc:
        row.update(status="refused", error=str(exc), seconds=round(time.perf_counter() - t0, 2))
        return row
    if method == "estimate":
        return _estimate(design, row, t0)
    try:
        doc = report(design, (target,))
    except Exception as exc:  # a tool failure is a result of the sweep, not its end
        row.update(status="failed", error=f"{type(exc).__name__}: {str(exc)[:500]}",
                   seconds=round(time.perf_counter() - t0, 2))
        return row
    row.update(summary_row(doc, target))
    row.update(status="ok", latency=doc["latency"], declared_dsp=doc["declared"]["dsp"], error="",
               seconds=round(time.perf_counter() - t0, 2))
    return row


def _estimate(design: Any, row: dict[str, Any], t0: float) -> dict[str, Any]:
    """The Yosys-free row: the RTL generated and scanned, the declared DSP tiles, ROM bits and latency."""
    from .flow import emit_rtl
    from .scan import scan

    try:
        violations = scan(emit_rtl(design), design.dsp_bits)
    except Exception as exc:
        row.update(status="failed", error=f"{type(exc).__name__}: {str(exc)[:500]}",
                   seconds=round(time.perf_counter() - t0, 2))
        return row
    res = design.resources()
    row.update(status="ok" if not violations else "failed", method="estimate", cycles_per_op=design.cycles_per_op(),
               latency=design.latency(), dsp=res.get("dsp"), declared_dsp=res.get("dsp"),
               rom_bits=res.get("rom_bits", 0), flat=True,
               error="" if not violations else f"{len(violations)} forbidden operator(s)",
               seconds=round(time.perf_counter() - t0, 2))
    return row


def row_key(point: Point, target: str, method: str) -> str:
    """The row cache's key: the point, the target and method, the generator's source and (for synthesis) Yosys."""
    import hashlib

    from .flow import generator_source_hash
    from .synth import yosys_version

    tool = yosys_version() if method == "yosys" else "none"
    sweep_source = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()      # how a row is made
    text = json.dumps([point.arch, point.bits, point.word_bits, target, method, generator_source_hash(), sweep_source,
                       tool] + ([list(map(list, point.options))] if point.options else []))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def row_cache_dir() -> Path:
    from .paths import cache_root

    return cache_root() / "explore-rows"


def cached_row(point: Point, target: str, method: str) -> dict[str, Any] | None:
    path = row_cache_dir() / f"{row_key(point, target, method)}.json"
    try:
        row = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return row if isinstance(row, dict) and row.get("status") in ("ok", "refused") else None


def store_row(point: Point, target: str, method: str, row: dict[str, Any]) -> None:
    """Keep a finished row (not a failed one: a failure is retried) as soon as it arrives."""
    if row.get("status") not in ("ok", "refused"):
        return
    d = row_cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    atomic_write(d / f"{row_key(point, target, method)}.json", json.dumps(row, sort_keys=True))


def sweep(points: list[Point], jobs: int = 2, target: str = "xilinx",
          progress: Callable[[dict[str, Any]], None] | None = None, *, method: str = "yosys",
          cluster: str | None = None, cache: bool = False,
          warn: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Run every point: rows cached by parameters are reused, the rest run on a local process pool
    (``jobs`` workers) or, with ``cluster``, on the Dask scheduler at that address; rows in grid order."""
    if method not in METHODS:
        raise ParameterError("method", f"must be one of {', '.join(METHODS)}, got {method!r}")
    check_jobs(jobs)
    rows: dict[Point, dict[str, Any]] = {}
    todo = []
    for p in points:
        hit = cached_row(p, target, method) if cache else None
        if hit is not None:
            rows[p] = {**hit, "cached": True}
            if progress:
                progress(rows[p])
        else:
            todo.append(p)

    def done(p: Point, row: dict[str, Any]) -> None:
        rows[p] = row
        if cache:
            store_row(p, target, method, row)
        if progress:
            progress(row)

    if cluster is not None and todo:
        from . import cluster as dask_cluster

        client = dask_cluster.connect(cluster)
        try:
            from .synth import worker_problem

            dask_cluster.run(client, todo, run_point, target, method, done, warn or (lambda msg: None), worker_problem)
        finally:
            client.close()
    elif jobs == 1 or len(todo) <= 1:
        for p in todo:
            done(p, run_point(p, target, method))
    else:
        with worker_pool(jobs, len(todo)) as ex:
            futs = {ex.submit(run_point, p, target, method): p for p in todo}
            for f in completed(futs):
                done(futs[f], f.result())
    return [rows[p] for p in points]


def pareto(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both coordinates (both minimised)."""
    out = []
    for i, (x, y) in enumerate(points):
        if not any((x2 <= x and y2 <= y) and (x2 < x or y2 < y) for j, (x2, y2) in enumerate(points) if j != i):
            out.append(i)
    return sorted(out, key=lambda i: points[i])


def csv_text(rows: list[dict[str, Any]]) -> str:
    fh = io.StringIO(newline="")
    w = csv.DictWriter(fh, fieldnames=CSV_FIELDS, extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k, "") for k in CSV_FIELDS})
    return fh.getvalue()


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    atomic_write(path, csv_text(rows))


# What a target's figures are, for the plot's title.
TARGET_FLOWS = {"xilinx": "Yosys synth_xilinx (UltraScale+) LUT estimates",
                "intel": "Yosys synth_intel_alm (Cyclone V) ALUT estimates, beside published Vivado LUTs "
                         "(other units)"}


def plot(rows: list[dict[str, Any]], path: Path, published: list[Any] | None = None, target: str = "xilinx") -> None:
    atomic_write(path, plot_png(rows, published, target))


def plot_png(rows: list[dict[str, Any]], published: list[Any] | None = None, target: str = "xilinx") -> bytes:
    """The Pareto plot as PNG bytes (rendered in memory: a failed write never leaves half a picture)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .published import PUBLISHED_NOTE, rows as published_rows

    pub = published if published is not None else published_rows()
    ok = [r for r in rows if r.get("status") == "ok" and r.get("lut") not in (None, "")]   # estimates have no LUTs
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.6))
    markers = {"ozturk": "o", "predictive-montgomery": "s", "san-montgomery": "^"}
    colours = {16: "tab:blue", 32: "tab:orange", 64: "tab:green"}
    panels = [(axes[0], "cycles_per_op", "cycles per operation"), (axes[1], "depth", "logic depth (levels, Yosys)")]
    for ax, key, xlabel in panels:
        pts = []
        for r in ok:
            x, y = r[key], r["lut"]
            pts.append((x, y))
            ax.scatter([x], [y], marker=markers.get(r["arch"], "x"), color=colours.get(r["word_bits"], "tab:red"),
                       s=45, zorder=3)
            ax.annotate(f"{r['bits']}{'' if r['flat'] else '*'}", (x, y), fontsize=7, xytext=(3, 3),
                        textcoords="offset points")
        front = pareto(pts)
        if len(front) > 1:
            ax.plot([pts[i][0] for i in front], [pts[i][1] for i in front], color="black", lw=1, ls="--",
                    label="Pareto front (ours)", zorder=2)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("LUTs")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    ax0 = axes[0]
    for p in pub:
        if p.lut and p.cycles:
            ax0.scatter([p.cycles], [p.lut], marker=markers.get(p.arch, "D"), facecolors="none", edgecolors="grey",
                        s=60, zorder=4)
    ax2 = axes[2]
    for p in pub:
        if p.lut and p.latency_ns:
            ax2.scatter([p.latency_ns], [p.lut], marker=markers.get(p.arch, "D"), facecolors="none",
                        edgecolors="grey", s=60)
            ax2.annotate(f"{p.seed} {p.bits}b" + (f" d={p.word_bits}" if p.seed == "002" else ""),
                         (p.latency_ns, p.lut), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax2.set_xlabel("latency per operation (ns)")
    ax2.set_ylabel("LUTs")
    ax2.set_yscale("log")
    ax2.grid(True, which="both", alpha=0.3)
    ax2.set_title(f"seeds 000 and 002: {PUBLISHED_NOTE}", fontsize=9)
    axes[0].set_title("area vs cycles per operation", fontsize=10)
    axes[1].set_title("area vs logic depth", fontsize=10)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker=m, ls="", color="black", label=a) for a, m in markers.items()]
    handles += [Line2D([], [], marker="o", ls="", color=c, label=f"ours, d={w}") for w, c in colours.items()]
    handles.append(Line2D([], [], marker="o", ls="", markerfacecolor="none", markeredgecolor="grey",
                          label=PUBLISHED_NOTE))
    handles.append(Line2D([], [], ls="--", color="black", label="Pareto front (ours)"))
    fig.legend(handles=handles, loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.suptitle(f"modforge hw explore: {TARGET_FLOWS[target]}; labels are widths, * = hierarchically summed",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


OUTPUT_FILES = ("explore.csv", "explore.json", "pareto.png")


def check_outputs(out_dir: Path) -> None:
    """Each output file's place in ``out_dir`` (when it exists), before the sweep: a directory, a symbolic
    link or a device there is refused now, not after an hour of synthesis."""
    if out_dir.is_dir():
        for name in OUTPUT_FILES:
            check_output_path(out_dir / name, "out")


def write_outputs(files: dict[str, str | bytes], out_dir: Path) -> None:
    """Every file staged (written and synced) before any is replaced: a full disk leaves the previous
    CSV, JSON and plot as they were, together."""
    write_together(files, out_dir)


def explore(archs: list[str], bits: list[int], word_bits: list[int], out_dir: Path, jobs: int = 2,
            target: str = "xilinx", progress: Callable[[dict[str, Any]], None] | None = None, *,
            method: str = "yosys", cluster: str | None = None, cache: bool = False,
            warn: Callable[[str], None] | None = None, axes: dict[str, list[Any]] | None = None) -> dict[str, Any]:
    """Run the sweep and write ``explore.csv``, ``explore.json`` and ``pareto.png`` into ``out_dir``."""
    from .published import rows as published_rows
    from .synth import FLAT_LIMIT, yosys_version

    points = grid(archs, bits, word_bits, axes)
    check_outputs(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rows = sweep(points, jobs=jobs, target=target, progress=progress, method=method, cluster=cluster, cache=cache,
                 warn=warn)
    secs = time.perf_counter() - t0
    pub = published_rows()
    doc = {"target": target, "yosys": yosys_version() if method == "yosys" else None, "method": method,
           "axes": {k: list(v) for k, v in (axes or {}).items()},
           "cluster": cluster, "cached_points": sum(1 for r in rows if r.get("cached")), "flat_limit": FLAT_LIMIT,
           "jobs": jobs,
           "seconds": round(secs, 1), "points": rows,
           "published": [p.as_dict() for p in pub],
           "notes": ["our figures are Yosys estimates (see docs/hardware.md, 'Synthesis report'); published rows "
                     "are Vivado / Vivado HLS results from the seeds: published, not measured here"]}
    check_outputs(out_dir)          # again: the sweep took a while
    write_outputs({"explore.csv": csv_text(rows), "explore.json": json.dumps(doc, indent=1) + "\n",
                   "pareto.png": plot_png(rows, pub, target)}, out_dir)
    doc["files"] = [str(out_dir / n) for n in OUTPUT_FILES]
    return doc


__all__ = ["Point", "METHODS", "grid", "run_point", "row_key", "cached_row", "store_row", "sweep", "pareto", "csv_text", "write_csv", "plot", "plot_png", "explore",
           "check_outputs", "OUTPUT_FILES", "CSV_FIELDS"]
