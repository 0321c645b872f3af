"""The streaming harness of seed 003's NTT core: load a transform, run it, read it back, check it.

The scalar harness (:mod:`modforge.hw.harness`) drives one operand and waits for one result; a core
takes n words, computes, and gives n words back, so it has its own mode, in the same style: one small
self-checking C++ program, specialised per design, reading a vector file written from the models::

    # comment
    xfm NAME LOG_N CYCLES       a transform of 2^LOG_N points that must take CYCLES edges
    i HEX HEX ...               its input, natural order
    e HEX HEX ...               the expected output (the model's forward transform), natural order

For each transform it drives ``in_valid`` with one word per cycle, then counts rising edges until the last
word is out (from the edge that took the first word, both counted) and compares every word and the count.
The handshake is checked too: ``in_ready`` 1 when a transform may start and from its last output word on, 0
in between; ``out_valid`` 0 while loading and in the idle cycles between transforms, and 1 on n consecutive
cycles once the output starts.  A mismatch prints the transform, the word's index, the expected and obtained
values and the cycle; any mismatch or breach makes the exit code 1.  The last line is one JSON object.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from ..fileio import write_output
from .errors import HardwareError
from .harness import CPP_PRELUDE
from .pool import run_tool

PRELUDE = CPP_PRELUDE + r"""
static uint64_t protocol_errors = 0;
static std::string current;

static void protocol_error(const char* what) {
    protocol_errors++;
    if (protocol_errors <= MAX_PRINTED)
        std::printf("PROTOCOL %s: %s at cycle %llu\n", current.c_str(), what, (unsigned long long)ticks);
}

static std::vector<uint64_t> words(const std::string& line, char tag) {
    std::istringstream ls(line);
    std::string t;
    ls >> t;
    if (t.size() != 1 || t[0] != tag) { std::fprintf(stderr, "expected a '%c' line: %s\n", tag, line.substr(0, 80).c_str()); std::exit(2); }
    std::vector<uint64_t> out;
    while (ls >> t) out.push_back(std::strtoull(t.c_str(), nullptr, 16));
    return out;
}

static void start_design() {
    ctx = new VerilatedContext;
    top = new V@TOP@{ctx};
    top->rst = 1;
    top->in_valid = 0;
    tick();
    tick();
    top->rst = 0;
    tick();
}

// The last line: one JSON object; the exit code 1 on any mismatch, wrong cycle count or handshake breach.
static int finish(std::chrono::steady_clock::time_point t0, uint64_t transforms, uint64_t checked, uint64_t mismatches,
                  uint64_t cycle_mismatches, uint64_t cycles_total) {
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"transforms\": %llu, \"words\": %llu, \"mismatches\": %llu, \"cycle_mismatches\": %llu, "
                "\"protocol_errors\": %llu, \"cycles\": %llu, \"sim_seconds\": %.6f}\n",
                (unsigned long long)transforms, (unsigned long long)checked, (unsigned long long)mismatches,
                (unsigned long long)cycle_mismatches, (unsigned long long)protocol_errors,
                (unsigned long long)cycles_total, secs);
    top->final();
    delete top;
    delete ctx;
    return (mismatches || cycle_mismatches || protocol_errors) ? 1 : 0;
}
"""

CORE_TEMPLATE = r"""
@PRELUDE@
int main(int argc, char** argv) {
    if (argc < 2) { std::fprintf(stderr, "usage: %s VECTORS\n", argv[0]); return 2; }
    std::ifstream in(argv[1]);
    if (!in) { std::fprintf(stderr, "cannot read %s\n", argv[1]); return 2; }
    start_design();
    auto t0 = std::chrono::steady_clock::now();
    uint64_t transforms = 0, checked = 0, mismatches = 0, cycle_mismatches = 0, cycles_total = 0;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream hs(line);
        std::string kind, name;
        unsigned log_n;
        unsigned long long exp_cycles;
        hs >> kind >> name >> log_n >> exp_cycles;
        if (kind != "xfm") { std::fprintf(stderr, "bad vector line: %s\n", line.substr(0, 80).c_str()); return 2; }
        std::string in_line, exp_line;
        std::getline(in, in_line);
        std::getline(in, exp_line);
        std::vector<uint64_t> x = words(in_line, 'i'), e = words(exp_line, 'e');
        std::size_t n = (std::size_t)1 << log_n;
        if (x.size() != n || e.size() != n) { std::fprintf(stderr, "%s: expected %zu words\n", name.c_str(), n); return 2; }
        transforms++;
        current = name;
        // Idle cycles before some transforms (the others start back to back).
        for (unsigned i = 0; i < transforms % 3; i++) {
            tick();
            if (top->out_valid) protocol_error("out_valid is 1 while idle");
        }
        if (!top->in_ready) protocol_error("in_ready is 0 when a transform may start");
        uint64_t edges = 0;
        for (std::size_t i = 0; i < n; i++) {
            if (i > 0 && !top->in_ready) protocol_error("in_ready fell during the load");
            top->in_valid = 1;
            top->in_log_n = log_n;
            top->in_data = x[i];
            tick();
            edges++;
            if (top->out_valid) protocol_error("out_valid is 1 during the load");
        }
        top->in_valid = 0;
        top->in_data = 0;
        uint64_t limit = exp_cycles + 1000;
        bool lost = false;
        while (!top->out_valid) {
            if (top->in_ready) { protocol_error("in_ready is 1 before the transform's output"); }
            if (edges >= limit) { lost = true; break; }
            tick();
            edges++;
        }
        for (std::size_t i = 0; i < n && !lost; i++) {
            if (i > 0) {
                tick();
                edges++;
                if (!top->out_valid) { protocol_error("out_valid fell before the last word"); lost = true; break; }
            }
            if (i + 1 < n && top->in_ready) protocol_error("in_ready is 1 before the last output word");
            if (i + 1 == n && !top->in_ready) protocol_error("in_ready is 0 at the last output word");
            uint64_t got = top->out_data;
            checked++;
            if (got != e[i]) {
                mismatches++;
                if (mismatches <= MAX_PRINTED)
                    std::printf("MISMATCH %s (2^%u) word %zu at cycle %llu\n  expected %llx\n  obtained %llx\n",
                                name.c_str(), log_n, i, (unsigned long long)ticks, (unsigned long long)e[i],
                                (unsigned long long)got);
            }
        }
        if (lost) {
            mismatches++;
            std::printf("MISMATCH %s (2^%u): no complete output within %llu cycles\n", name.c_str(), log_n,
                        (unsigned long long)limit);
            top->rst = 1; tick(); top->rst = 0; tick();
            continue;
        }
        cycles_total += edges;
        if (edges != exp_cycles) {
            cycle_mismatches++;
            if (cycle_mismatches <= MAX_PRINTED)
                std::printf("CYCLES %s (2^%u): %llu edges, the model says %llu\n", name.c_str(), log_n,
                            (unsigned long long)edges, exp_cycles);
        }
    }
    return finish(t0, transforms, checked, mismatches, cycle_mismatches, cycles_total);
}
"""


def core_harness_source(design: Any) -> str:
    from .flow import top_name

    return CORE_TEMPLATE.replace("@PRELUDE@", PRELUDE).replace("@TOP@", top_name(design)).lstrip("\n")


# ---------------------------------------------------------------------------------------- vectors
def named_inputs(log_n: int, p: int) -> list[tuple[str, list[int]]]:
    """The named cases of issue 27 (all zeros, all p - 1, a single 1, values just below p) and two more."""
    n = 1 << log_n
    return [("all_zeros", [0] * n), ("all_p_minus_1", [p - 1] * n), ("single_one_first", [1] + [0] * (n - 1)),
            ("single_one_last", [0] * (n - 1) + [1]), ("just_below_p", [p - 1 - (i % 7) for i in range(n)]),
            ("ramp", list(range(n)))]


def expected_transform(x: list[int]) -> list[int]:
    """The model's forward transform, checked against the native engine when it is built."""
    from ..zk.ntt_api import native_available, ntt
    from ..zk.ntt_model import forward

    want = forward(x)
    if native_available():
        import numpy as np

        native = [int(v) for v in ntt(np.array(x, dtype=np.uint64))]
        if native != want:
            raise AssertionError(f"the model and the native engine disagree on a 2^{len(x).bit_length() - 1} transform")
    return want


def core_vectors(design: Any, sizes: list[int], per_size: int, seed: int, named_size: int | None) -> tuple[str, dict]:
    """The vector file's text and what it holds: named cases at ``named_size``, then ``per_size`` seeded random
    transforms at each log size of ``sizes``."""
    from ..zk.goldilocks import P

    rng = random.Random(seed)
    cases: list[tuple[str, list[int]]] = []
    if named_size is not None:
        cases += [(f"{name}_2^{named_size}", x) for name, x in named_inputs(named_size, P)]
    for log_n in sizes:
        for i in range(per_size):
            cases.append((f"random{i}_2^{log_n}", [rng.randrange(P) for _ in range(1 << log_n)]))
    lines = [f"# seed {seed}; sizes {sizes}; {per_size} random transform(s) per size"]
    for name, x in cases:
        log_n = len(x).bit_length() - 1
        lines.append(f"xfm {name} {log_n} {design.transform_cycles(log_n)}")
        lines.append("i " + " ".join(f"{v:x}" for v in x))
        lines.append("e " + " ".join(f"{v:x}" for v in expected_transform(x)))
    info = {"transforms": len(cases), "names": [c[0] for c in cases], "sizes": sorted({len(c[1]).bit_length() - 1
                                                                                      for c in cases})}
    return "\n".join(lines) + "\n", info


def run_harness(exe: Path, vectors: Path) -> tuple[dict, str, int]:
    res = run_tool([str(exe), str(vectors)], capture_output=True, text=True)
    lines = res.stdout.strip().splitlines()
    try:
        summary = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        summary = {}
    if not isinstance(summary, dict) or "mismatches" not in summary or res.returncode not in (0, 1):
        raise HardwareError(f"the NTT simulation failed (exit {res.returncode}):\n{res.stdout[-3000:]}\n"
                            f"{res.stderr[-3000:]}")
    summary["runs"] = {ln.split()[1]: int(ln.split()[2]) for ln in lines[:-1] if ln.startswith("RUN ")}
    return summary, "\n".join(ln for ln in lines[:-1] if not ln.startswith("RUN ")), res.returncode


def simulate_core(design: Any, *, vectors: int = 1, seed: int = 1, opt: str = "-O0", sizes: list[int] | None = None,
                  named_size: int | None = 4) -> dict[str, Any]:
    """Build (cached), write the transforms, run; the document ``hw sim`` prints.  ``vectors`` random transforms
    per size; sizes 1 .. log_n by default."""
    from .common import digest
    from .flow import ensure_built, header, params_json

    sizes = list(range(1, design.log_n + 1)) if sizes is None else sizes
    named = min(named_size, design.log_n) if named_size is not None else None
    t0 = time.perf_counter()
    b = ensure_built(design, opt)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    text, info = core_vectors(design, sizes, vectors, seed, named)
    t_vec = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="modforge-hw-") as tmp:
        vec = Path(tmp) / "vectors.txt"
        write_output(vec, header(design, "#") + text, "vectors")
        t0 = time.perf_counter()
        summary, report, code = run_harness(b.exe, vec)
        t_sim = time.perf_counter() - t0
    logs = [int(name.rsplit("^", 1)[1]) for name in info["names"]]
    words = sum(1 << s for s in logs)
    expected_cycles = sum(design.transform_cycles(s) for s in logs)
    return {
        "arch": design.arch, "bits": design.design_bits, "modulus": hex(design.modulus),
        "params": params_json(design), "params_sha256": digest(design.arch, design), "seed": seed,
        "latency": design.latency(), "vectors": info["transforms"], "edge_cases": [n for n in info["names"]
                                                                                 if not n.startswith("random")],
        "sizes": info["sizes"], "chain": 0, "chain_checked_against_pow": False, "flags": {},
        "outputs": summary.get("words", 0), "expected_outputs": words,
        "mismatches": summary["mismatches"], "latency_mismatches": summary.get("cycle_mismatches", 0),
        "protocol_errors": summary.get("protocol_errors", 0),
        "cycles": summary.get("cycles"), "expected_cycles": expected_cycles,
        "cycles_per_op": summary.get("cycles", 0) / max(1, info["transforms"]), "chain_cycles_per_op": 0.0,
        "exit_code": code, "skipped_invalid": 0,
        "build": {"cached": b.cached, "directory": str(b.directory), **b.times},
        "seconds": {"build_or_cache": round(t_build, 3), "vectors": round(t_vec, 3), "simulation": round(t_sim, 3),
                    "harness": summary.get("sim_seconds")},
        "mismatch_report": report, "harness": summary,
    }


# ---------------------------------------------------------------------------------------- the cluster
CLUSTER_TEMPLATE = r"""
@PRELUDE@
#define CORES @CORES@

template <std::size_t N>
static void set_lane(VlWide<N>& w, int c, uint64_t v) { w[2 * c] = (uint32_t)v; w[2 * c + 1] = (uint32_t)(v >> 32); }
template <typename T>
static void set_lane(T& w, int, uint64_t v) { w = (T)v; }
template <std::size_t N>
static uint64_t get_lane(const VlWide<N>& w, int c) { return (uint64_t)w[2 * c] | ((uint64_t)w[2 * c + 1] << 32); }
template <typename T>
static uint64_t get_lane(const T& w, int) { return (uint64_t)w; }

// The memory model (modforge.zk.ntt_cycles.ClusterMemory): one channel for reads and writes; a line (one
// word per core) takes line_cycles; a read burst's first line comes burst_latency cycles after the request,
// which waits until the previous group's posted writes have drained.
static uint64_t chan_free = 0;
static unsigned line_cycles = 1, burst_latency = 0;

// One group: load n_sub lines (line j from src(j, c)), run, collect n_sub lines into dst(i, c).
template <typename Src, typename Dst>
static bool group(unsigned log_sub, unsigned column, bool twiddle, Src src, Dst dst) {
    std::size_t n_sub = (std::size_t)1 << log_sub;
    uint64_t request = std::max(ticks, chan_free);
    while (ticks < request) { tick(); if (top->out_valid) protocol_error("out_valid while idle"); }
    if (!top->in_ready) protocol_error("in_ready is 0 when a group may start");
    for (std::size_t j = 0; j < n_sub; j++) {
        uint64_t arrival = request + burst_latency + j * line_cycles;
        top->in_valid = 0;
        while (ticks < arrival) { tick(); if (top->out_valid) protocol_error("out_valid during the load"); }
        top->in_valid = 1;
        top->in_log_n = log_sub;
        top->in_column = column;
        top->in_twiddle = twiddle;
        for (int c = 0; c < CORES; c++) set_lane(top->in_data, c, src(j, c));
        tick();
        if (top->out_valid) protocol_error("out_valid during the load");
    }
    top->in_valid = 0;
    uint64_t limit = ticks + (uint64_t)64 * n_sub * (log_sub + 4) + 10000;
    while (!top->out_valid) {
        if (top->in_ready) protocol_error("in_ready is 1 before the group's output");
        if (ticks >= limit) return false;
        tick();
    }
    uint64_t first = ticks;
    for (std::size_t i = 0; i < n_sub; i++) {
        if (i > 0) { tick(); if (!top->out_valid) { protocol_error("out_valid fell before the last line"); return false; } }
        for (int c = 0; c < CORES; c++) dst(i, c, get_lane(top->out_data, c));
    }
    chan_free = first + n_sub * line_cycles;
    return true;
}

int main(int argc, char** argv) {
    if (argc < 2) { std::fprintf(stderr, "usage: %s VECTORS\n", argv[0]); return 2; }
    std::ifstream in(argv[1]);
    if (!in) { std::fprintf(stderr, "cannot read %s\n", argv[1]); return 2; }
    start_design();
    auto t0 = std::chrono::steady_clock::now();
    uint64_t transforms = 0, checked = 0, mismatches = 0, cycle_mismatches = 0, cycles_total = 0;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream hs(line);
        std::string kind, name;
        unsigned log_n1, log_n2;
        unsigned long long exp_cycles;
        hs >> kind >> name >> log_n1 >> log_n2 >> line_cycles >> burst_latency >> exp_cycles;
        if (kind != "fourstep" || line_cycles < 1) { std::fprintf(stderr, "bad vector line: %s\n", line.substr(0, 80).c_str()); return 2; }
        std::string in_line, exp_line;
        std::getline(in, in_line);
        std::getline(in, exp_line);
        std::vector<uint64_t> x = words(in_line, 'i'), e = words(exp_line, 'e');
        std::size_t n1 = (std::size_t)1 << log_n1, n2 = (std::size_t)1 << log_n2, n = n1 * n2;
        if (x.size() != n || e.size() != n) { std::fprintf(stderr, "%s: expected %zu words\n", name.c_str(), n); return 2; }
        transforms++;
        current = name;
        std::vector<uint64_t> mid(n), out(n);
        uint64_t start = std::max(ticks, chan_free);
        while (ticks < start) tick();
        chan_free = ticks;
        bool ok = true;
        // Pass 1: columns j2 = C g + c of the row-major n1 x n2 matrix, then the twiddles; entry (k1, j2) back.
        for (std::size_t g = 0; ok && g < n2 / CORES; g++)
            ok = group(log_n1, (unsigned)(g * CORES), true,
                       [&](std::size_t j1, int c) { return x[j1 * n2 + g * CORES + c]; },
                       [&](std::size_t k1, int c, uint64_t v) { mid[k1 * n2 + g * CORES + c] = v; });
        // Pass 2: rows k1 = C g + c; word k2 of row k1 is output k1 + n1 k2 (the transposed read of the 4-step).
        for (std::size_t g = 0; ok && g < n1 / CORES; g++)
            ok = group(log_n2, 0, false,
                       [&](std::size_t j2, int c) { return mid[(g * CORES + c) * n2 + j2]; },
                       [&](std::size_t k2, int c, uint64_t v) { out[g * CORES + c + n1 * k2] = v; });
        if (!ok) {
            mismatches++;
            std::printf("MISMATCH %s: a group gave no complete output\n", name.c_str());
            top->rst = 1; tick(); top->rst = 0; tick();
            continue;
        }
        uint64_t cycles = chan_free - start;
        cycles_total += cycles;
        std::printf("RUN %s %llu\n", name.c_str(), (unsigned long long)cycles);
        for (std::size_t i = 0; i < n; i++) {
            checked++;
            if (out[i] != e[i]) {
                mismatches++;
                if (mismatches <= MAX_PRINTED)
                    std::printf("MISMATCH %s word %zu\n  expected %llx\n  obtained %llx\n", name.c_str(), i,
                                (unsigned long long)e[i], (unsigned long long)out[i]);
            }
        }
        if (cycles != exp_cycles) {
            cycle_mismatches++;
            std::printf("CYCLES %s: %llu cycles, the model says %llu\n", name.c_str(), (unsigned long long)cycles,
                        exp_cycles);
        }
    }
    return finish(t0, transforms, checked, mismatches, cycle_mismatches, cycles_total);
}
"""


def cluster_harness_source(design: Any) -> str:
    from .flow import top_name

    return (CLUSTER_TEMPLATE.replace("@PRELUDE@", PRELUDE).replace("@TOP@", top_name(design))
            .replace("@CORES@", str(design.cores)).lstrip("\n"))


def expected_four_step(x: list[int], log_n1: int, log_n2: int, model: bool) -> list[int]:
    """The native engine's forward transform (the cluster's oracle), and with ``model`` also the model's
    4-step, which must agree."""
    from ..zk.ntt_api import native_available, ntt
    from ..zk.ntt_model import four_step

    want = None
    if native_available():
        import numpy as np

        want = [int(v) for v in ntt(np.array(x, dtype=np.uint64))]
    if model or want is None:
        by_model = four_step(x, 1 << log_n1, 1 << log_n2)
        if want is not None and by_model != want:
            raise AssertionError("the model's 4-step and the native engine disagree")
        want = by_model
    return want


def simulate_cluster(design: Any, *, vectors: int = 1, seed: int = 1, opt: str = "-O0",
                     memories: list[Any] | None = None, model: bool = True, named: bool = True) -> dict[str, Any]:
    """Build (cached) and run complete 4-step transforms: the named input all p - 1 and one seeded random
    input, each under every memory model of ``memories`` (default: one line per cycle, no latency).  Expected
    outputs from the native engine (and the model's 4-step with ``model``); expected cycles from
    :func:`modforge.zk.ntt_cycles.cluster_four_step_cycles`."""
    from ..zk.goldilocks import P
    from ..zk.ntt_cycles import ClusterMemory
    from .common import digest
    from .flow import ensure_built, header, params_json

    memories = memories or [ClusterMemory()]
    n = 1 << design.log_n
    t0 = time.perf_counter()
    b = ensure_built(design, opt)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    rng = random.Random(seed)
    inputs = [("all_p_minus_1", [P - 1] * n)] if named else []
    inputs += [(f"random{i}", [rng.randrange(P) for _ in range(n)]) for i in range(max(1, vectors))]
    lines = [f"# seed {seed}; 4-step 2^{design.log_n1} x 2^{design.log_n2} on {design.cores} cores"]
    runs = []
    for name, x in inputs:
        want = expected_four_step(x, design.log_n1, design.log_n2, model)
        for mem in memories:
            model_cycles = design.four_step_cycles(mem)
            label = f"{name}_bw{mem.bytes_per_cycle}_lat{mem.burst_latency}"
            lines.append(f"fourstep {label} {design.log_n1} {design.log_n2} {mem.line_cycles(design.cores)} "
                         f"{mem.burst_latency} {model_cycles['cycles']}")
            lines.append("i " + " ".join(f"{v:x}" for v in x))
            lines.append("e " + " ".join(f"{v:x}" for v in want))
            runs.append({"name": label, "bytes_per_cycle": mem.bytes_per_cycle, "burst_latency": mem.burst_latency,
                         **model_cycles})
    t_vec = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="modforge-hw-") as tmp:
        vec = Path(tmp) / "vectors.txt"
        write_output(vec, header(design, "#") + "\n".join(lines) + "\n", "vectors")
        t0 = time.perf_counter()
        summary, report, code = run_harness(b.exe, vec)
        t_sim = time.perf_counter() - t0
    expected_cycles = sum(r["cycles"] for r in runs)
    for r in runs:
        r["measured_cycles"] = summary["runs"].get(r["name"])
    return {
        "arch": design.arch, "bits": design.design_bits, "modulus": hex(design.modulus),
        "params": params_json(design), "params_sha256": digest(design.arch, design), "seed": seed,
        "latency": design.latency(), "vectors": len(runs), "edge_cases": ["all_p_minus_1"] if named else [],
        "runs": runs, "chain": 0, "chain_checked_against_pow": False, "flags": {},
        "outputs": summary.get("words", 0), "expected_outputs": n * len(runs),
        "mismatches": summary["mismatches"], "latency_mismatches": summary.get("cycle_mismatches", 0),
        "protocol_errors": summary.get("protocol_errors", 0),
        "cycles": summary.get("cycles"), "expected_cycles": expected_cycles,
        "cycles_per_op": summary.get("cycles", 0) / max(1, len(runs)), "chain_cycles_per_op": 0.0,
        "exit_code": code, "skipped_invalid": 0,
        "build": {"cached": b.cached, "directory": str(b.directory), **b.times},
        "seconds": {"build_or_cache": round(t_build, 3), "vectors": round(t_vec, 3), "simulation": round(t_sim, 3),
                    "harness": summary.get("sim_seconds")},
        "mismatch_report": report, "harness": summary,
    }
