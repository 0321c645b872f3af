# amaranth: UnusedElaboratable=no
"""``pam-mpu``: the DEC PAM modular product unit (seed 004, Sec. 3.1, 3.4, 4.3 and Fig. 4).

The model is :mod:`modforge.arith.pam` (its docstring gives the recurrence, the command set, the
timing and where this unit departs from the seed); this module is its RTL, its Verilator harness
(a command-stream harness, not the loop designs' scalar one) and its test vectors.

Ports (synchronous to ``clk``, ``rst`` synchronous and active high)::

    cmd_valid  1    a command is offered
    cmd_ready  1    the unit takes it on this rising edge: always for WriteB (B is free once a product
                    has loaded its multiplier bits), for the others only while no product runs
    busy       1    a product is running (its recurrence steps or its carry completion)
    cmd_op     3    the command (:class:`modforge.arith.pam.Cmd`)
    cmd_data   32   the word of WriteM / WriteB
    rsp_data   32   the word ReadP returns: valid whenever the unit is ready (prepared by the
                    previous access, as the seed's "ready for immediate return")

Datapath per recurrence step (one cycle): two rows of ``bits + 3`` full adders,
``(S, C, b_i A) -> (S1, C1)`` then ``(S1, C1, q_i M) -> (S2, C2)`` with ``q_i = S1[0]``, and the
shift ``S, C <- S2 / 2, C2 / 2``; the multiplier bits ``b_i`` come from a shift register loaded
from B (MultB) or A (Square).  The carry completion: half-adder rows ``S, C <- S ^ C, 2 (S & C)``
until the detector (a NOR over C) sees zero.  No multiplier, divider or wide adder anywhere.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from amaranth.hdl import Cat, Const, Elaboratable, Module, Mux, Signal

from ..arith.base import ParameterError
from ..arith.pam import WORD_BITS, Cmd, PamParams, PamUnit, product, words_of

ARCH = "pam-mpu"
# Rough delays for the depth estimate only (not timing): a full-adder row, a 4:1 select, the detector.
_CSA_PS, _MUX_PS = 400, 350


@dataclass(frozen=True)
class PamDesign:
    bits: int
    extra_bits: int = 2

    arch = ARCH
    dsp_bits = 17            # the scan's tile width; the unit has no multiplier at all
    digit_bits = WORD_BITS

    def __post_init__(self) -> None:
        self.model_params

    @cached_property
    def model_params(self) -> PamParams:
        return PamParams(self.bits, self.extra_bits)

    @property
    def design_bits(self) -> int:
        return self.bits

    @cached_property
    def modulus(self) -> int:
        """The vectors' first modulus (the unit takes any odd modulus below ``2^bits`` by WriteM)."""
        from ..data import deterministic_modulus

        return deterministic_modulus(self.bits, 0, odd=True)

    @property
    def words(self) -> int:
        return self.model_params.words

    out_words = words

    def latency(self) -> int:
        """Busy edges of a product whose carry completion takes no row (the data-dependent rows add to it)."""
        return self.model_params.product_busy(0)

    def cycles_per_op(self) -> int:
        return self.latency()

    def resources(self) -> dict[str, Any]:
        p = self.model_params
        return {"dsp": 0, "dsp_tile": "none", "full_adders": 2 * p.sum_bits, "half_adders": p.state_bits,
                "state_bits": 2 * p.state_bits + p.state_bits + p.iterations,
                "host_registers_bits": 2 * p.reg_bits + (p.reg_bits - WORD_BITS) + WORD_BITS,
                "iterations": p.iterations, "worst_busy": p.worst_busy,
                "depth_estimate_ps": 2 * _CSA_PS + 2 * _MUX_PS}

    def describe(self) -> str:
        p = self.model_params
        return (f"{self.bits}-bit PAM modular product unit: bit-serial, beta = 2^{p.iterations}, carry-save, "
                f"{p.iterations + 1} + carry-completion cycles per product, {p.words} words per operand")

    def build(self) -> "PamMpu":
        return PamMpu(self)

    def model(self) -> PamUnit:
        return PamUnit(self.model_params)

    def harness_source(self) -> str:
        return HARNESS.replace("@TOP@", "mf_pam_mpu").lstrip("\n")

    def simulate(self, **kwargs: Any) -> dict[str, Any]:
        return simulate(self, **kwargs)

    def published_comparison(self) -> dict[str, Any]:
        """The seed's RSA-512 throughput beside ours projected from the cycle model (``hw report``)."""
        from .pam_rsa import seed_comparison

        return seed_comparison(self.bits, samples=500)


class PamMpu(Elaboratable):
    def __init__(self, d: PamDesign):
        self.d = d
        self.cmd_valid = Signal(name="cmd_valid")
        self.cmd_ready = Signal(name="cmd_ready")
        self.cmd_op = Signal(3, name="cmd_op")
        self.cmd_data = Signal(WORD_BITS, name="cmd_data")
        self.rsp_data = Signal(WORD_BITS, name="rsp_data")
        self.busy = Signal(name="busy")

    def ports(self) -> list[Signal]:
        return [self.cmd_valid, self.cmd_ready, self.cmd_op, self.cmd_data, self.rsp_data, self.busy]

    def elaborate(self, platform) -> Module:
        p = self.d.model_params
        sw, w, rb, n_it = p.state_bits, p.sum_bits, p.reg_bits, p.iterations
        m = Module()
        reg_m = Signal(rb, name="reg_m", reset_less=True)
        reg_b = Signal(rb, name="reg_b", reset_less=True)
        reg_a = Signal(sw, name="reg_a", reset_less=True)
        out_s = Signal(rb - WORD_BITS, name="out_s", reset_less=True)
        p_word = Signal(WORD_BITS, name="p_word", reset_less=True)
        bits_y = Signal(n_it, name="bits_y", reset_less=True)         # multiplier bits, b_i at bit 0
        acc_s = Signal(sw, name="acc_s", reset_less=True)
        acc_c = Signal(sw, name="acc_c", reset_less=True)
        step = Signal(range(n_it + 1), name="step")
        running = Signal(name="running")     # recurrence steps
        settling = Signal(name="settling")   # carry completion
        # The pipelined stream (seed 004 Sec. 5: the host loads the next operand while the unit computes):
        # WriteB is taken at once; every other command waits for the product to end.
        m.d.comb += [self.busy.eq(running | settling), self.rsp_data.eq(p_word),
                     self.cmd_ready.eq(~self.busy | (self.cmd_op == Cmd.WRITE_B))]
        accept = Signal()
        m.d.comb += accept.eq(self.cmd_valid & self.cmd_ready)

        def csa_row(x, y, z, tag):
            s = Signal(w, name=f"{tag}_s")
            c = Signal(w, name=f"{tag}_c")
            m.d.comb += [s.eq(x ^ y ^ z), c.eq(Cat(Const(0, 1), ((x & y) | (x & z) | (y & z))[:w - 1]))]
            return s, c

        def gate(bit, value):
            """``bit ? value : 0`` as an AND with the bit replicated (a row of AND gates)."""
            return Cat(*[bit] * w) & Cat(value[:w], Const(0, max(0, w - len(value))))[:w]

        # One recurrence step: P + b_i A, then + q_i M, then halve (both vectors).
        s1, c1 = csa_row(Cat(acc_s, Const(0, w - sw)), Cat(acc_c, Const(0, w - sw)), gate(bits_y[0], reg_a), "row1")
        q_bit = s1[0]
        s2, c2 = csa_row(s1, c1, gate(q_bit, reg_m), "row2")
        # Carry completion: one row of half adders, and the detector.
        carry_done = Signal(name="carry_done")
        m.d.comb += carry_done.eq(~acc_c.any())

        op = self.cmd_op
        with m.If(accept & (op == Cmd.WRITE_M)):
            m.d.sync += reg_m.eq(Cat(reg_m[WORD_BITS:], self.cmd_data))
        with m.If(accept & (op == Cmd.WRITE_B)):
            m.d.sync += reg_b.eq(Cat(reg_b[WORD_BITS:], self.cmd_data))
        with m.If(accept & (op == Cmd.COPY_BA)):
            m.d.sync += reg_a.eq(reg_b[:sw])
        with m.If(accept & ((op == Cmd.MULT_B) | (op == Cmd.SQUARE))):
            src = Mux(op == Cmd.MULT_B, reg_b[:min(rb, n_it)], reg_a[:min(sw, n_it)])
            m.d.sync += [bits_y.eq(src), acc_s.eq(0), acc_c.eq(0), step.eq(0), running.eq(1)]
        with m.If(accept & (op == Cmd.READ_P)):
            m.d.sync += [p_word.eq(out_s[:WORD_BITS]), out_s.eq(out_s[WORD_BITS:])]
        with m.If(running):
            m.d.sync += [acc_s.eq(s2[1:sw + 1]), acc_c.eq(c2[1:sw + 1]), bits_y.eq(bits_y[1:]),
                         step.eq(step + 1)]
            with m.If(step == n_it - 1):
                m.d.sync += [running.eq(0), settling.eq(1)]
        with m.If(settling):
            with m.If(carry_done):
                m.d.sync += [settling.eq(0), reg_a.eq(acc_s), p_word.eq(acc_s[:WORD_BITS]),
                             out_s.eq(acc_s[WORD_BITS:])]
            with m.Else():
                m.d.sync += [acc_s.eq(acc_s ^ acc_c), acc_c.eq(Cat(Const(0, 1), (acc_s & acc_c)[:sw - 1]))]
        return m


def design_from_options(modulus: int, bits: int | None, options: dict[str, Any]) -> PamDesign:
    known = {"extra_bits"}
    for key in options:
        if key not in known:
            raise ParameterError(key, f"is not a parameter of {ARCH}; known: {', '.join(sorted(known))}")
    width = bits if bits is not None else modulus.bit_length()
    if modulus.bit_length() > width:
        raise ParameterError("modulus", f"is {modulus.bit_length()} bits wide, wider than --bits {width}")
    # The modulus is written at run time (WriteM): the design depends on its width only.
    return PamDesign(bits=width, **options)


# ---------------------------------------------------------------------------------------- vectors
def program(p: PamParams, m: int, a: int, b: int, square: bool,
            then: int | None = None) -> list[tuple[int, int, bool]]:
    """The command stream of one product, as (op, data, overlapped): M, B = a, A <- B, B = b, MultB (or
    Square), ReadP x words.  With ``then``, B = then is written *while* that product runs (overlapped), and
    a second MultB multiplies the first (redundant) result by it, its words read too."""
    cmds = [(Cmd.WRITE_M, w, False) for w in words_of(m, p.words)]
    cmds += [(Cmd.WRITE_B, w, False) for w in words_of(a, p.words)] + [(Cmd.COPY_BA, 0, False)]
    if not square:
        cmds += [(Cmd.WRITE_B, w, False) for w in words_of(b, p.words)]
    cmds.append((Cmd.SQUARE if square else Cmd.MULT_B, 0, False))
    if then is not None:
        cmds += [(Cmd.WRITE_B, w, True) for w in words_of(then, p.words)]
    cmds += [(Cmd.READ_P, 0, False)] * p.words
    if then is not None:
        cmds.append((Cmd.MULT_B, 0, False))
        cmds += [(Cmd.READ_P, 0, False)] * p.words
    return cmds


def edge_cases(p: PamParams) -> list[tuple[str, int, int, int, bool]]:
    """(name, m, a, b, square): the extremes of the operands, the modulus and the carry completion."""
    n = p.bits
    m_max = (1 << n) - 1                       # the widest modulus
    m_min = 3
    m_mid = (1 << (n - 1)) + 1
    out = [("zero_times_zero", m_max, 0, 0, False), ("one_times_one", m_max, 1, 1, False),
           ("max_operands", m_max, 2 * m_max - 1, 2 * m_max - 1, False),
           ("max_square", m_max, 2 * m_max - 1, 0, True), ("smallest_modulus", m_min, 5, 4, False),
           ("m_times_m", m_mid, m_mid, m_mid, False), ("all_ones_b", m_max, 1, 2 * m_max - 1, False),
           ("square_of_zero", m_mid, 0, 0, True)]
    # The longest carry completion among a few hundred seeded tries: the detector's slowest case.
    rng = random.Random(4)
    best = None
    for _ in range(300):
        m = rng.randrange(1 << (n - 1), 1 << n) | 1
        a, b = rng.randrange(2 * m), rng.randrange(2 * m)
        rows = product(p, a, b, m).carry_rows
        if best is None or rows > best[0]:
            best = (rows, m, a, b)
    out.append(("longest_carry_completion", best[1], best[2], best[3], False))
    return out


def write_vectors(d: PamDesign, path: Path, vectors: int, seed: int, header: str) -> dict[str, Any]:
    """Command streams with the model's expected busy cycles and read words; returns counts."""
    p = d.model_params
    rng = random.Random(seed)
    cases = edge_cases(p)
    names = [c[0] for c in cases]
    while len(cases) < vectors:
        # Moduli of every width up to the design's, most of them full width.
        width = p.bits if rng.random() < 0.7 else rng.randrange(2, p.bits + 1)
        m = rng.randrange(1 << (width - 1), 1 << width) | 1
        if m < 3:
            m = 3
        a, b = rng.randrange(2 * m), rng.randrange(2 * m)
        cases.append(("random", m, a, b, rng.random() < 0.3))
    lines = [header]
    products = 0
    busy_total = 0
    rows_max = 0
    chained = 0
    for index, (name, m, a, b, square) in enumerate(cases[:max(vectors, len(names))]):
        unit = PamUnit(p)
        lines.append(f"# {name}")
        # One vector in 8 writes its next operand while the product runs and multiplies the result by it.
        then = (a ^ b) % (2 * m) if index % 8 == 7 else None
        for op, data, overlapped in program(p, m, a, b, square, then):
            busy, word = unit.run(op, data)
            lines.append(f"{'o' if overlapped else 'c'} {int(op)} {data:x} {busy} "
                         f"{'-' if word is None else format(word, 'x')}")
        # The model's own check against Montgomery's identity, before the RTL is compared with it.
        first = unit.products[0].value
        if (first * p.beta - a * (a if square else b)) % m or first >= 2 * m:
            raise AssertionError(f"model: {name} is not the Montgomery product below 2m")
        if then is not None:
            second = unit.products[1].value
            if (second * p.beta - first * then) % m or second >= 2 * m:
                raise AssertionError(f"model: {name}'s chained product is not Montgomery's below 2m")
            chained += 1
        products += 1
        for res in unit.products:
            busy_total += res.busy
            rows_max = max(rows_max, res.carry_rows)
    path.write_text("\n".join(lines) + "\n")
    return {"vectors": products, "products": products + chained, "chained": chained, "edge_cases": names,
            "busy_total": busy_total, "carry_rows_max": rows_max}


def simulate(d: PamDesign, *, vectors: int = 1000, chain: int = 0, seed: int = 1, opt: str = "-O0",
             keep_vectors: Path | None = None, overwrite: bool = True, **_: Any) -> dict[str, Any]:
    """Build (cached), write the command-stream vectors, run the self-checking harness; the JSON document."""
    from ..fileio import check_output_path
    from .common import digest
    from .errors import HardwareError
    from .flow import ensure_built, header, params_json
    from .pool import run_tool

    t0 = time.perf_counter()
    b = ensure_built(d, opt)
    t_build = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="modforge-hw-") as tmp:
        vec = Path(tmp) / "vectors.txt"
        t0 = time.perf_counter()
        stats = write_vectors(d, vec, vectors, seed, header(d, "#").rstrip("\n"))
        t_vec = time.perf_counter() - t0
        if keep_vectors:
            from ..fileio import atomic_write

            check_output_path(Path(keep_vectors), "keep-vectors", overwrite=overwrite)
            atomic_write(Path(keep_vectors), vec.read_text())
        t0 = time.perf_counter()
        res = run_tool([str(b.exe), str(vec)], capture_output=True, text=True)
        t_sim = time.perf_counter() - t0
    lines = res.stdout.strip().splitlines()
    try:
        summary = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        summary = {}
    if not isinstance(summary, dict) or "mismatches" not in summary:
        raise HardwareError(f"the simulation printed no summary (exit {res.returncode}):\n{res.stdout[-3000:]}\n"
                            f"{res.stderr[-3000:]}")
    if res.returncode not in (0, 1):
        raise HardwareError(f"the simulation failed (exit {res.returncode}):\n{res.stdout[-3000:]}")
    return {
        "arch": d.arch, "bits": d.bits, "modulus": hex(d.modulus), "params": params_json(d),
        "params_sha256": digest(d.arch, d), "seed": seed, "latency": d.latency(),
        "vectors": stats["vectors"], "edge_cases": stats["edge_cases"], "chain": 0,
        "outputs": summary["products"], "expected_outputs": stats["products"], "chained": stats["chained"],
        "mismatches": summary["mismatches"], "latency_mismatches": summary["latency_mismatches"],
        "protocol_errors": summary["protocol_errors"],
        "cycles_per_op": summary["busy_per_product"], "chain_cycles_per_op": 0.0,
        "model_cycles_per_op": stats["busy_total"] / max(stats["products"], 1),
        "carry_rows_max": stats["carry_rows_max"], "commands": summary["commands"],
        "flags": {}, "chain_checked_against_pow": False, "skipped_invalid": 0, "exit_code": res.returncode,
        "build": {"cached": b.cached, "directory": str(b.directory), **b.times},
        "seconds": {"build_or_cache": round(t_build, 3), "vectors": round(t_vec, 3), "simulation": round(t_sim, 3),
                    "harness": summary.get("sim_seconds")},
        "mismatch_report": "\n".join(lines[:-1]), "harness": summary,
    }


# ---------------------------------------------------------------------------------------- harness
HARNESS = r"""
// Self-checking command-stream harness of pam-mpu (modforge.hw.pam).
//   sim VECTORS     lines "c OP DATA BUSY RSP": wait until no product runs, issue the command; for a product
//                   BUSY = edges after its accept edge until busy is 0 again; RSP = the word ReadP returns
//                   (hex) or '-'.  Lines "o ..." are issued while the previous product still runs (WriteB
//                   only: cmd_ready must be 1 at once).  Last line: one JSON object; exit 1 on any mismatch.
//   sim --serve     lines "OP DATA" run as they come (each waits for cmd_ready); a ReadP prints its word
//                   (hex); "sync" waits for the unit to be idle and prints "cycles products busy_edges";
//                   "quit" ends.
#include "V@TOP@.h"
#include "verilated.h"
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

static VerilatedContext* ctx;
static V@TOP@* top;
static uint64_t ticks = 0, busy_ticks = 0;
static const unsigned MAX_PRINTED = 20;

static void tick() {
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();
    ticks++;
    if (top->busy) busy_ticks++;
}

static void reset() {
    top->rst = 1;
    top->cmd_valid = 0;
    tick();
    tick();
    top->rst = 0;
    tick();
}

// Offer one command and hold it until taken (at most limit edges of waiting); returns the word rsp_data
// held at the accept edge.  *waited: the edges it waited.
static uint32_t issue(unsigned op, uint32_t data, uint64_t limit, uint64_t* waited) {
    top->cmd_op = op;
    top->cmd_data = data;
    top->cmd_valid = 1;
    top->eval();
    uint64_t w = 0;
    while (!top->cmd_ready && w < limit) { tick(); w++; }
    *waited = w;
    uint32_t word = top->rsp_data;
    tick();
    top->cmd_valid = 0;
    return word;
}

static int serve() {
    std::string line;
    uint64_t products = 0;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        if (line == "quit") break;
        if (line == "sync") {
            uint64_t guard = 0;
            while (top->busy && ++guard < (1ULL << 32)) tick();
            std::printf("%llu %llu %llu\n", (unsigned long long)ticks, (unsigned long long)products,
                        (unsigned long long)busy_ticks);
            std::fflush(stdout);
            continue;
        }
        std::istringstream ls(line);
        unsigned op;
        std::string data;
        if (!(ls >> op >> data)) { std::printf("error bad command %s\n", line.c_str()); std::fflush(stdout); return 1; }
        uint64_t waited = 0;
        uint32_t word = issue(op, (uint32_t)std::stoul(data, nullptr, 16), 1ULL << 32, &waited);
        if (waited >= (1ULL << 32)) { std::printf("error the unit never became ready\n"); std::fflush(stdout); return 1; }
        if (op == 4 || op == 5) products++;
        if (op == 6) { std::printf("%x\n", word); std::fflush(stdout); }
    }
    return 0;
}

static uint64_t commands = 0, products = 0, mismatches = 0, latency_mismatches = 0, protocol_errors = 0;
static uint64_t busy_total = 0;
static std::string current = "?";
// The product in flight: the edge count after its accept edge, and what the model expects.
static bool pending = false;
static uint64_t pending_start = 0, pending_expected = 0, pending_command = 0;

static void finish_pending() {
    if (!pending) return;
    pending = false;
    while (top->busy && ticks - pending_start < pending_expected + 64) tick();
    uint64_t busy = ticks - pending_start;
    products++;
    busy_total += busy;
    if (busy != pending_expected || top->busy) {
        mismatches++;
        latency_mismatches++;
        if (mismatches <= MAX_PRINTED)
            std::printf("MISMATCH %s: product (command %llu) busy for %llu edges, expected %llu\n", current.c_str(),
                        (unsigned long long)pending_command, (unsigned long long)busy,
                        (unsigned long long)pending_expected);
        if (top->busy) reset();
    }
}

int main(int argc, char** argv) {
    ctx = new VerilatedContext;
    top = new V@TOP@{ctx};
    reset();
    if (argc >= 2 && std::strcmp(argv[1], "--serve") == 0) return serve();
    if (argc < 2) { std::fprintf(stderr, "usage: %s VECTORS | --serve\n", argv[0]); return 2; }
    std::ifstream in(argv[1]);
    if (!in) { std::fprintf(stderr, "cannot read %s\n", argv[1]); return 2; }
    auto t0 = std::chrono::steady_clock::now();
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        if (line[0] == '#') { if (line.size() > 2 && line.find(':') == std::string::npos) current = line.substr(2); continue; }
        std::istringstream ls(line);
        std::string kind, data, rsp;
        unsigned op;
        uint64_t exp_busy;
        ls >> kind >> op >> data >> exp_busy >> rsp;
        if ((kind != "c" && kind != "o") || ls.fail()) { std::fprintf(stderr, "bad vector line: %s\n", line.c_str()); return 2; }
        commands++;
        if (kind == "c") finish_pending();
        top->cmd_op = op;
        top->eval();
        if (!top->cmd_ready || (kind == "o" && !top->busy)) {
            protocol_errors++;
            if (protocol_errors <= MAX_PRINTED)
                std::printf("PROTOCOL %s: command %llu (op %u): cmd_ready %d, busy %d\n", current.c_str(),
                            (unsigned long long)commands, op, (int)top->cmd_ready, (int)top->busy);
            if (kind == "o") finish_pending();
        }
        uint64_t waited = 0;
        uint32_t word = issue(op, (uint32_t)std::stoul(data, nullptr, 16), 64, &waited);
        if (op == 4 || op == 5) {
            pending = true;
            pending_start = ticks;
            pending_expected = exp_busy;
            pending_command = commands;
        } else if (rsp != "-" && word != (uint32_t)std::stoul(rsp, nullptr, 16)) {
            mismatches++;
            if (mismatches <= MAX_PRINTED)
                std::printf("MISMATCH %s: command %llu (op %u): expected word %s, got %x\n", current.c_str(),
                            (unsigned long long)commands, op, rsp.c_str(), word);
        }
    }
    finish_pending();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"commands\": %llu, \"products\": %llu, \"mismatches\": %llu, \"latency_mismatches\": %llu, "
                "\"protocol_errors\": %llu, \"cycles\": %llu, \"busy_per_product\": %.4f, \"sim_seconds\": %.6f}\n",
                (unsigned long long)commands, (unsigned long long)products, (unsigned long long)mismatches,
                (unsigned long long)latency_mismatches, (unsigned long long)protocol_errors,
                (unsigned long long)ticks, products ? (double)busy_total / (double)products : 0.0, secs);
    top->final();
    delete top;
    delete ctx;
    return (mismatches || protocol_errors) ? 1 : 0;
}
"""


__all__ = ["ARCH", "PamDesign", "PamMpu", "design_from_options", "program", "edge_cases", "write_vectors",
           "simulate", "HARNESS"]
