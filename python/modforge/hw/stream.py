# amaranth: UnusedElaboratable=no
"""Fully pipelined (streaming) designs: one operation accepted per cycle, each result a fixed latency later.

The MSM designs of seed 003 (``fq-mul``, ``msm-adder``) are not loops with a chain count like the
squarers (:mod:`modforge.hw.loop`): they take a new operand every cycle.  Their interface::

    in_valid   1        in_data holds an operation this cycle (there is no in_ready: always accepted)
    in_data    I        the operands, packed (each design documents its fields)
    out_valid  1        out_data holds the result of the operation taken ``latency`` edges ago
    out_data   O        the results, packed

:class:`Pipe` builds such a datapath: ``reg`` registers every value still live at a stage boundary
(pipeline registers are free-running and reset-less); ``in_valid`` travels beside it through a
shift register of the same length, the only registers with a reset.

:func:`stream_harness` is the self-checking Verilator program (the scalar harness's conventions:
exit 1 on any mismatch, the last line one JSON object); :func:`simulate_stream` writes the vectors,
runs it and returns the document ``modforge hw sim`` prints.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from amaranth.hdl import Module, Signal, Value

from .common import Op
from .errors import HardwareError
from .harness import CPP_PRELUDE, HEX_HELPERS


class Pipe:
    """Counts and inserts the stage registers of a streaming datapath."""

    def __init__(self, m: Module, name: str):
        self.m = m
        self.name = name
        self.stages: list[str] = []

    def reg(self, stage: str, ops: list[Op]) -> list[Op]:
        """Register ``ops`` at the end of stage ``stage`` (one cycle of latency)."""
        self.stages.append(stage)
        out = []
        for i, o in enumerate(ops):
            r = Signal(o.width, name=f"{self.name}_{stage}_{i}", reset_less=True)
            self.m.d.sync += r.eq(o.value)
            out.append(Op(r, o.max))
        return out

    def delay(self, stage: str, value: Value, cycles: int) -> Value:
        """``value`` delayed by ``cycles`` registers (a shift register beside a sub-pipeline)."""
        v = Value.cast(value)
        for c in range(cycles):
            r = Signal(len(v), name=f"{self.name}_{stage}_d{c}", reset_less=True)
            self.m.d.sync += r.eq(v)
            v = r
        return v


def valid_line(m: Module, valid: Value, cycles: int, name: str = "valid") -> Value:
    """``valid`` delayed by ``cycles`` resettable registers."""
    v = valid
    for c in range(cycles):
        r = Signal(name=f"{name}_d{c}")
        m.d.sync += r.eq(v)
        v = r
    return v


STREAM_TEMPLATE = CPP_PRELUDE + r"""
#define LATENCY @LATENCY@
@HELPERS@
struct Pending { uint64_t due; std::string name, in, out; };

int main(int argc, char** argv) {
    if (argc < 2) { std::fprintf(stderr, "usage: %s VECTORS\n", argv[0]); return 2; }
    ctx = new VerilatedContext;
    top = new V@TOP@{ctx};
    top->rst = 1; top->in_valid = 0; tick(); tick(); top->rst = 0; tick();
    std::ifstream in(argv[1]);
    if (!in) { std::fprintf(stderr, "cannot read %s\n", argv[1]); return 2; }
    auto t0 = std::chrono::steady_clock::now();
    uint64_t vectors = 0, outs = 0, mismatches = 0, latency_mismatches = 0, protocol_errors = 0;
    std::deque<Pending> queue;
    // After every edge: a result is due exactly now, or out_valid must be 0.
    auto check = [&]() {
        if (!queue.empty() && queue.front().due == ticks) {
            Pending p = queue.front();
            queue.pop_front();
            outs++;
            if (!top->out_valid) {
                latency_mismatches++;
                mismatches++;
                if (mismatches <= MAX_PRINTED)
                    std::printf("MISMATCH %s: no out_valid %d edges after its input (cycle %llu)\n", p.name.c_str(),
                                LATENCY, (unsigned long long)ticks);
                return;
            }
            std::string got = get_hex(top->out_data);
            if (got != trim_hex(p.out)) {
                mismatches++;
                if (mismatches <= MAX_PRINTED)
                    std::printf("MISMATCH %s at cycle %llu\n  in       %s\n  expected %s\n  obtained %s\n",
                                p.name.c_str(), (unsigned long long)ticks, p.in.c_str(), trim_hex(p.out).c_str(),
                                got.c_str());
            }
        } else if (top->out_valid) {
            protocol_errors++;
            if (protocol_errors <= MAX_PRINTED)
                std::printf("PROTOCOL out_valid is 1 with no result due at cycle %llu\n", (unsigned long long)ticks);
        }
    };
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ls(line);
        std::string kind, name, x, z;
        ls >> kind >> name >> x >> z;
        if (kind != "v") { std::fprintf(stderr, "bad vector line: %s\n", line.c_str()); return 2; }
        // A deterministic pattern of idle cycles between operations (most go back to back).
        unsigned gap = (vectors % 7 == 3) ? (unsigned)(vectors % 3) + 1 : 0;
        for (unsigned g = 0; g < gap; g++) { top->in_valid = 0; tick(); check(); }
        set_hex(top->in_data, x);
        top->in_valid = 1;
        tick();
        top->in_valid = 0;
        vectors++;
        queue.push_back({ticks + LATENCY - 1, name, x, z});
        check();
    }
    top->in_valid = 0;
    for (int i = 0; i < LATENCY + 8; i++) { tick(); check(); }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"vectors\": %llu, \"outputs\": %llu, \"mismatches\": %llu, \"latency_mismatches\": %llu, "
                "\"protocol_errors\": %llu, \"cycles\": %llu, \"sim_seconds\": %.6f}\n",
                (unsigned long long)vectors, (unsigned long long)outs, (unsigned long long)mismatches,
                (unsigned long long)latency_mismatches, (unsigned long long)protocol_errors,
                (unsigned long long)ticks, secs);
    top->final();
    delete top;
    delete ctx;
    return (mismatches || protocol_errors || outs != vectors) ? 1 : 0;
}
"""


def stream_harness(top: str, latency: int) -> str:
    return (STREAM_TEMPLATE.replace("@TOP@", top).replace("@LATENCY@", str(latency))
            .replace("@HELPERS@", HEX_HELPERS).lstrip("\n"))


def run_harness(design: Any, write: Callable[[Path], dict[str, Any]], *, seed: int, opt: str = "-O0",
                keep_vectors: Path | None = None, overwrite: bool = True,
                needed: Iterable[str] = ("outputs", "mismatches")) -> dict[str, Any]:
    """Build (cached), let ``write`` fill the vector file (it returns what it wrote), run the harness.

    Returns the document ``modforge hw sim`` prints, in the scalar designs' shape (``chain`` 0)."""
    from .common import digest
    from .flow import ensure_built, params_json
    from .pool import run_tool

    if keep_vectors:
        from ..fileio import check_output_path

        check_output_path(Path(keep_vectors), "keep-vectors", overwrite=overwrite)
    t0 = time.perf_counter()
    b = ensure_built(design, opt)
    t_build = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="modforge-hw-") as tmp:
        vec = Path(keep_vectors) if keep_vectors else Path(tmp) / "vectors.txt"
        t0 = time.perf_counter()
        stats = write(vec)
        t_vec = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = run_tool([str(b.exe), str(vec)], capture_output=True, text=True)
        t_sim = time.perf_counter() - t0
    lines = res.stdout.strip().splitlines()
    try:
        summary = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        summary = {}
    if not isinstance(summary, dict) or not all(isinstance(summary.get(k), (int, float)) for k in needed):
        raise HardwareError(f"the simulation printed no summary (exit {res.returncode}):\n{res.stdout[-3000:]}\n"
                            f"{res.stderr[-3000:]}")
    if res.returncode not in (0, 1):
        raise HardwareError(f"the simulation failed (exit {res.returncode}):\n{res.stdout[-3000:]}\n"
                            f"{res.stderr[-3000:]}")
    return {
        "arch": design.arch, "bits": design.design_bits, "modulus": hex(design.modulus),
        "params": params_json(design), "params_sha256": digest(design.arch, design), "seed": seed,
        "latency": design.latency(), "vectors": stats["vectors"], "edge_cases": stats["edge_cases"], "chain": 0,
        "outputs": summary["outputs"], "expected_outputs": stats["outputs"], "mismatches": summary["mismatches"],
        "latency_mismatches": summary.get("latency_mismatches", 0),
        "protocol_errors": summary.get("protocol_errors", 0),
        "cycles_per_op": 1.0, "chain_cycles_per_op": 0.0, "flags": {}, "chain_checked_against_pow": False,
        "skipped_invalid": 0, "exit_code": res.returncode,
        "build": {"cached": b.cached, "directory": str(b.directory), **b.times},
        "seconds": {"build_or_cache": round(t_build, 3), "vectors": round(t_vec, 3), "simulation": round(t_sim, 3),
                    "harness": summary.get("sim_seconds")},
        "mismatch_report": "\n".join(lines[:-1]), "harness": summary, "model": stats.get("model", {}),
    }
