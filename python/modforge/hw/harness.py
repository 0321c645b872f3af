"""The C++ harness Verilator compiles around a generated design.

One small self-checking program, specialised per design by a few ``#define`` lines:

``sim VECTORS``
    Reads a vector file (written by :mod:`modforge.hw.vectors` from the models) and, for
    every operation, drives ``in_valid`` for one cycle, then counts rising edges until each
    expected result appears on ``out_valid``.  A result must match the expected digits,
    flags *and* cycle count exactly; any difference prints the vector's name, inputs,
    expected and obtained values and the cycle, and the exit code is 1.  The handshake is
    checked too: ``in_ready`` must be 0 from the start until the operation's last result
    and 1 from then on, and ``out_valid`` 0 in the idle cycles left after every operation
    but each third (those start back to back); each breach prints a ``PROTOCOL`` line
    and also makes the exit code 1.  The last line is one JSON object: vectors, outputs,
    mismatches, protocol errors, cycles per operation.

``sim --serve``
    Engine mode, used by :class:`modforge.engine.sim_backend.SimBackend`: reads
    ``chain COUNT XHEX`` lines on stdin, runs COUNT chained operations and answers
    ``ZHEX CYCLES FLAGGED`` (final digits, edges taken, results with a nonzero flag).

Vector file lines (hex is the packed digit bus, digit i at bits [i*D, (i+1)*D))::

    # comment
    op NAME COUNT XHEX YHEX        (YHEX is - for squarers)
    out CYCLES FLAGS ZHEX          (COUNT of them follow each op)
"""

from __future__ import annotations

# Hex in and out of Verilator's wide and narrow port types (shared with modforge.hw.stream).
HEX_HELPERS = r"""
static int nibble(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

template <std::size_t N>
static void set_hex(VlWide<N>& w, const std::string& h) {
    for (std::size_t i = 0; i < N; i++) w[i] = 0;
    std::size_t k = 0;
    for (std::size_t p = h.size(); p-- > 0; k++) {
        int v = nibble(h[p]);
        if (v < 0 || k / 8 >= N) { std::fprintf(stderr, "bad hex operand %s\n", h.c_str()); std::exit(2); }
        w[k / 8] |= (uint32_t)v << (4 * (k % 8));
    }
}

template <typename T>
static void set_hex(T& w, const std::string& h) {
    uint64_t v = 0;
    for (char c : h) { int n = nibble(c); if (n < 0) { std::fprintf(stderr, "bad hex\n"); std::exit(2); } v = (v << 4) | (uint64_t)n; }
    w = (T)v;
}

static std::string trim_hex(const std::string& s) {
    std::size_t p = 0;
    while (p + 1 < s.size() && s[p] == '0') p++;
    return s.substr(p);
}

template <std::size_t N>
static std::string get_hex(const VlWide<N>& w) {
    std::string out;
    char buf[16];
    for (std::size_t i = N; i-- > 0;) { std::snprintf(buf, sizeof buf, "%08x", (unsigned)w[i]); out += buf; }
    return trim_hex(out);
}

template <typename T>
static std::string get_hex(const T& w) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%llx", (unsigned long long)w);
    return std::string(buf);
}

"""

# The top of every harness (the scalar one below; the streaming modes of stream.py, msm_controller.py and
# ntt_harness.py; pam.py's command stream keeps its own): headers, the model, one rising clock edge.
CPP_PRELUDE = r"""
#include "V@TOP@.h"
#include "verilated.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#define MAX_PRINTED 20

static VerilatedContext* ctx;
static V@TOP@* top;
static uint64_t ticks = 0;

static void tick() {
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();
    ticks++;
}
"""

TEMPLATE = CPP_PRELUDE + r"""
#define HAS_Y @HAS_Y@
#define HAS_FLAGS @HAS_FLAGS@

@HELPERS@
static unsigned flags_now() {
#if HAS_FLAGS
    return (unsigned)top->out_flags;
#else
    return 0;
#endif
}

static void reset() {
    top->rst = 1;
    top->in_valid = 0;
    tick();
    tick();
    top->rst = 0;
    tick();
}

// Drive one operation: returns false if the design was not ready.
static bool start(const std::string& x, const std::string& y, uint32_t count) {
    if (!top->in_ready) return false;
    set_hex(top->in_x, x);
#if HAS_Y
    set_hex(top->in_y, y == "-" ? x : y);
#else
    (void)y;
#endif
    top->in_count = count;
    top->in_valid = 1;
    tick();
    top->in_valid = 0;
    return true;
}

// The handshake (docs/hardware.md): in_ready is 1 exactly while the design is idle, and
// out_valid is a one-cycle pulse per result.  Each breach is counted and printed.
static uint64_t protocol_errors = 0;
static uint64_t current_op = 0;
static std::string current_name;

static void protocol_error(const char* what) {
    protocol_errors++;
    if (protocol_errors <= MAX_PRINTED)
        std::printf("PROTOCOL op %llu (%s): %s at cycle %llu\n", (unsigned long long)current_op,
                    current_name.c_str(), what, (unsigned long long)ticks);
}

// Rising edges until out_valid (the edge that delivered the previous event counts as 0).
// An operation is in flight meanwhile, so in_ready must stay 0 (checked unless the operation was
// already lost to a reset; one breach per result, however long the wait).
static uint64_t wait_result(uint64_t first, uint64_t limit, bool check_ready) {
    uint64_t c = first;
    bool reported = false;
    while (!top->out_valid) {
        if (check_ready && !reported && top->in_ready) {
            protocol_error("in_ready is 1 before the result's out_valid");
            reported = true;
        }
        if (c >= limit) return 0;
        tick();
        c++;
    }
    return c;
}

// Idle cycles after an operation's last result: no further result, and ready.
static void idle(unsigned cycles) {
    for (unsigned i = 0; i < cycles; i++) {
        tick();
        if (top->out_valid) protocol_error("out_valid is 1 with no operation in flight");
        if (!top->in_ready) protocol_error("in_ready is 0 while idle");
    }
}

static int serve() {
    std::string cmd;
    while (std::cin >> cmd) {
        if (cmd == "quit") break;
        if (cmd != "chain") { std::printf("error unknown command %s\n", cmd.c_str()); std::fflush(stdout); continue; }
        unsigned long long count;
        std::string x;
        std::cin >> count >> x;
        uint64_t edges = 0, flagged = 0;
        std::string cur = x;
        while (count > 0) {
            uint32_t n = count > 0xffffffffULL ? 0xffffffffU : (uint32_t)count;
            if (!start(cur, "-", n)) { std::printf("error not ready\n"); std::fflush(stdout); return 1; }
            edges += 1;
            for (uint32_t i = 0; i < n; i++) {
                if (i > 0) { tick(); edges++; }
                uint64_t guard = 0;
                while (!top->out_valid) {
                    if (top->in_ready) {
                        std::printf("error protocol: in_ready is 1 while an operation is in flight\n");
                        std::fflush(stdout);
                        return 1;
                    }
                    if (++guard > (1ULL << 32)) { std::printf("error timeout\n"); std::fflush(stdout); return 1; }
                    tick();
                    edges++;
                }
                if (flags_now()) flagged++;
            }
            cur = get_hex(top->out_z);
            count -= n;
        }
        std::printf("%s %llu %llu\n", cur.c_str(), (unsigned long long)edges, (unsigned long long)flagged);
        std::fflush(stdout);
    }
    return 0;
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
    uint64_t ops = 0, outs = 0, mismatches = 0, latency_mismatches = 0, flagged = 0;
    uint64_t op_cycles = 0, chain_cycles = 0, chain_outs = 0;
    std::string line;
    std::string name, x, y;
    uint64_t count = 0, k = 0;
    bool op_lost = false;           // the operation was cut short by a reset: its handshake is not checked
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ls(line);
        std::string kind;
        ls >> kind;
        if (kind == "op") {
            ls >> name >> count >> x >> y;
            ops++;
            k = 0;
            current_op = ops;
            current_name = name;
            op_lost = false;
            if (count > 0xffffffffULL) {
                std::fprintf(stderr, "op %s: count %llu does not fit in_count (32 bits)\n", name.c_str(),
                             (unsigned long long)count);
                return 2;
            }
            if (!start(x, y, (uint32_t)count)) {
                op_lost = true;
                mismatches++;
                std::printf("MISMATCH op %llu (%s): design not ready at cycle %llu\n", (unsigned long long)ops,
                            name.c_str(), (unsigned long long)ticks);
                reset();
            }
        } else if (kind == "out") {
            uint64_t exp_cycles;
            unsigned exp_flags;
            std::string exp_z;
            ls >> exp_cycles >> exp_flags >> exp_z;
            if (k > 0) tick();
            uint64_t c = wait_result(1, exp_cycles + 64, !op_lost);
            std::string got = c ? get_hex(top->out_z) : std::string("(none)");
            unsigned got_flags = c ? flags_now() : 0;
            // The design is idle again exactly from its last result on (a count of 0 means 1).
            bool last = k + 1 >= (count ? count : 1);
            if (c && !op_lost) {
                if (!last && top->in_ready) protocol_error("in_ready is 1 before the operation's last result");
                if (last && !top->in_ready) protocol_error("in_ready is 0 at the operation's last result");
                // Some operations start back to back, the others after one or two idle cycles.
                if (last) idle((unsigned)(ops % 3));
            }
            outs++;
            if (got_flags) flagged++;
            if (k == 0) op_cycles += c; else { chain_cycles += c; chain_outs++; }
            bool bad = (c != exp_cycles) || (got != trim_hex(exp_z)) || (got_flags != exp_flags);
            if (c != exp_cycles) latency_mismatches++;
            if (bad) {
                mismatches++;
                if (mismatches <= MAX_PRINTED)
                    std::printf("MISMATCH op %llu (%s) result %llu at cycle %llu\n  x        %s\n  y        %s\n"
                                "  expected %s (after %llu cycles, flags %u)\n  obtained %s (after %llu cycles, flags %u)\n",
                                (unsigned long long)ops, name.c_str(), (unsigned long long)k, (unsigned long long)ticks,
                                x.c_str(), y.c_str(), trim_hex(exp_z).c_str(), (unsigned long long)exp_cycles,
                                exp_flags, got.c_str(), (unsigned long long)c, got_flags);
                if (!c) { reset(); op_lost = true; }
            }
            k++;
        } else {
            std::fprintf(stderr, "bad vector line: %s\n", line.c_str());
            return 2;
        }
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"vectors\": %llu, \"outputs\": %llu, \"mismatches\": %llu, \"latency_mismatches\": %llu, "
                "\"flagged\": %llu, \"cycles\": %llu, \"cycles_per_op\": %.4f, \"chain_outputs\": %llu, "
                "\"chain_cycles_per_op\": %.4f, \"protocol_errors\": %llu, \"sim_seconds\": %.6f}\n",
                (unsigned long long)ops, (unsigned long long)outs, (unsigned long long)mismatches,
                (unsigned long long)latency_mismatches, (unsigned long long)flagged, (unsigned long long)ticks,
                outs ? (double)(op_cycles + chain_cycles) / (double)outs : 0.0, (unsigned long long)chain_outs,
                chain_outs ? (double)chain_cycles / (double)chain_outs : 0.0,
                (unsigned long long)protocol_errors, secs);
    top->final();
    delete top;
    delete ctx;
    return (mismatches || protocol_errors) ? 1 : 0;
}
"""


def harness_source(top: str, has_y: bool, has_flags: bool) -> str:
    return (TEMPLATE.replace("@HELPERS@\n", HEX_HELPERS.lstrip("\n")).replace("@TOP@", top)
            .replace("@HAS_Y@", "1" if has_y else "0")
            .replace("@HAS_FLAGS@", "1" if has_flags else "0").lstrip("\n"))
