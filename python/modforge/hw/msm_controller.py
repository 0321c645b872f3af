# amaranth: UnusedElaboratable=no
"""``msm-controller``: the seed's bucket controller around the pipelined adder (seed 003, MSM).

Model: :func:`modforge.zk.msm_controller.simulate`, cycle for cycle.  One adder issue slot per cycle:

* **rule 1 (issue)**: an input pair whose bucket is not in flight goes to the adder;
* **rule 2 (park)**: an input pair whose bucket is in flight goes into its window's stall FIFO
  (``fifo_depth`` entries) and the slot is a bubble;
* **rule 3 (drain)**: while every FIFO is non-empty, or one is full, or no input is offered
  (``in_valid`` low), no input is taken (``in_ready`` low) and the head of the first FIFO from the
  round-robin pointer whose bucket is free is issued; if none is free the slot is a bubble.

In-flight tracking is one busy bit per bucket, set at issue and cleared when the sum is written
back; a bucket whose sum is being written this very cycle is free (the write is forwarded through
the bucket RAM's transparent read port).  The loop from issue to write-back is the RAM read register
plus the adder: the model's ``adder_latency`` is ``adder latency + 1``.

The adder is a parameter: ``edwards`` (:class:`~modforge.hw.msm_adder.MsmAdderCore`, the real one)
or ``standin``, an ``standin_bits``-bit modular adder of ``standin_latency`` stages (a cheap stand-in
with the same handshake, so that the controller's schedule can be simulated fast).

Ports::

    in_valid, in_ready       a (point, window, digit) pair is taken when both are 1
    in_point   P             the precomputed point (edwards: ym | yp << n | 4dxy << 2n; standin: a value)
    in_window  log2(W)       the window of the digit
    in_digit   b+1           the signed digit, two's complement, non-zero (the host drops zero digits)
    rd_addr    log2(W B)     bucket readout address: bucket | window << log2(B); rd_data one edge later
    rd_data    bucket bits   edwards: U | V << n | W << 2n | T << 3n; standin: the sum
    st_active, st_issue, st_stall, st_drain, st_write   per-cycle strobes the harness counts
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from amaranth.hdl import Cat, Const, Elaboratable, Module, Mux, Signal
from amaranth.lib.memory import Memory

from ..arith.base import ParameterError
from ..zk.msm_controller import ControllerParams
from ..zk.msm_model import MsmParams
from .common import Namer, Op, cpa_delay, require_range
from .harness import CPP_PRELUDE, HEX_HELPERS
from .stream import Pipe

ARCH = "msm-controller"
ADDERS = ("standin", "edwards")


@dataclass(frozen=True)
class WindowLayout:
    """What the controller model reads of an MSM layout (``windows``, ``bucket_counts``), for any widths."""

    widths: tuple[int, ...]

    @property
    def windows(self) -> int:
        return len(self.widths)

    @property
    def bucket_counts(self) -> tuple[int, ...]:
        return tuple(1 << (w - 1) for w in self.widths)


@dataclass(frozen=True)
class MsmControllerDesign:
    adder: str = "standin"
    windows: int = 4
    window_bits: int = 4              # 0: the seed's layout for 253-bit scalars in ``windows`` windows
    fifo_depth: int = 4
    standin_bits: int = 16
    standin_latency: int = 8
    karatsuba_depth: int = 3          # of the edwards adder's multipliers
    adder_modulus: int = 0            # the edwards adder's field: 0 for BLS12-377's q, else a test prime (msm-adder)

    arch = ARCH
    synth_method = "flat"            # `hw report`: no pieces the hierarchical partition knows

    def __post_init__(self) -> None:
        if self.adder not in ADDERS:
            raise ParameterError("adder", f"must be one of {', '.join(ADDERS)}, got {self.adder!r}")
        require_range("windows", self.windows, 1, 64)
        require_range("window_bits", self.window_bits, 0, 16)
        if self.window_bits == 1:
            raise ParameterError("window_bits", "must be 0 (the MSM layout) or at least 2")
        require_range("fifo_depth", self.fifo_depth, 1, 64)
        require_range("standin_bits", self.standin_bits, 2, 512)
        require_range("standin_latency", self.standin_latency, 1, 1024)
        if self.window_bits == 0:
            _ = MsmParams(windows=self.windows).widths    # raises on too many windows
        if self.adder_modulus and self.adder != "edwards":
            raise ParameterError("adder_modulus", "applies to adder=edwards only")
        if self.adder == "edwards":
            _ = self.adder_design

    @cached_property
    def layout(self) -> WindowLayout:
        if self.window_bits == 0:
            return WindowLayout(MsmParams(windows=self.windows).widths)
        return WindowLayout((self.window_bits,) * self.windows)

    @cached_property
    def adder_design(self):
        from .msm_adder import MsmAdderDesign

        if self.adder_modulus:
            return MsmAdderDesign(modulus=self.adder_modulus, karatsuba_depth=self.karatsuba_depth)
        return MsmAdderDesign(karatsuba_depth=self.karatsuba_depth)

    @property
    def modulus(self) -> int:
        return self.adder_design.modulus if self.adder == "edwards" else 1 << self.standin_bits

    @property
    def design_bits(self) -> int:
        return self.adder_design.n if self.adder == "edwards" else self.standin_bits

    @property
    def adder_latency(self) -> int:
        return self.adder_design.latency() if self.adder == "edwards" else self.standin_latency

    def latency(self) -> int:
        """Issue to write-back: the bucket RAM's read register and the adder (the model's ``adder_latency``)."""
        return self.adder_latency + 1

    def cycles_per_op(self) -> int:
        return 1

    def controller_params(self) -> ControllerParams:
        # WindowLayout stands in for MsmParams: the model reads only its windows and bucket counts.
        return ControllerParams(msm=self.layout, adder_latency=self.latency(), fifo_depth=self.fifo_depth)

    @property
    def point_bits(self) -> int:
        return 3 * self.design_bits if self.adder == "edwards" else self.standin_bits

    @property
    def bucket_value_bits(self) -> int:
        return 4 * self.design_bits if self.adder == "edwards" else self.standin_bits

    @property
    def bucket_index_bits(self) -> int:
        return max(max(self.layout.widths) - 1, 1)

    @property
    def window_index_bits(self) -> int:
        return max((self.windows - 1).bit_length(), 1)

    @property
    def digit_bits(self) -> int:
        return max(self.layout.widths) + 1

    words = 1
    out_words = 1
    dsp_bits = 17

    def identity(self) -> int:
        if self.adder == "standin":
            return 0
        n = self.design_bits
        return sum(v << (i * n) for i, v in enumerate(self.adder_design.edwards.bucket_identity))

    def resources(self) -> dict[str, Any]:
        buckets = sum(self.layout.bucket_counts)
        out = {"dsp": self.adder_design.resources()["dsp"] if self.adder == "edwards" else 0, "dsp_tile": "17x17",
               "windows": self.windows, "window_widths": list(self.layout.widths), "buckets": buckets,
               "bucket_ram_bits": self.windows * (1 << self.bucket_index_bits) * self.bucket_value_bits,
               "busy_bits": buckets,
               "fifo_bits": self.windows * self.fifo_depth * (self.point_bits + self.bucket_index_bits + 1),
               "adder_latency": self.adder_latency, "loop_latency": self.latency(),
               "depth_estimate_ps": (self.adder_design.depth_estimate_ps() if self.adder == "edwards"
                                     else cpa_delay(self.standin_bits))}
        return out

    def describe(self) -> str:
        adder = (f"the msm-adder (latency {self.adder_latency})" if self.adder == "edwards"
                 else f"a {self.standin_bits}-bit stand-in adder of {self.standin_latency} stages")
        widths = "/".join(map(str, sorted(set(self.layout.widths), reverse=True)))
        return (f"MSM bucket controller: {self.windows} windows of {widths} "
                f"bits, FIFOs of {self.fifo_depth}, {adder}; issue-to-write-back {self.latency()} cycles")

    def build(self) -> MsmController:
        return MsmController(self)

    def harness_source(self) -> str:
        return controller_harness(self)

    def simulate(self, **kw: Any) -> dict[str, Any]:
        from .msm_vectors import simulate_msm_controller

        return simulate_msm_controller(self, **kw)


class StandinAdderCore(Elaboratable):
    """bucket + point mod 2^bits, ``latency`` registers deep: the controller's cheap test adder."""

    def __init__(self, bits: int, latency: int):
        self.latency = latency
        self.bucket = Signal(bits, name="sa_bucket")
        self.point = Signal(bits, name="sa_point")
        self.out = Signal(bits, name="sa_out")

    def elaborate(self, platform) -> Module:
        m = Module()
        pipe = Pipe(m, "sa")
        total = (self.bucket + self.point)[:len(self.out)]
        m.d.comb += self.out.eq(pipe.delay("sum", total, self.latency))
        return m


class MsmController(Elaboratable):
    def __init__(self, p: MsmControllerDesign):
        self.p = p
        self.in_valid = Signal(name="in_valid")
        self.in_ready = Signal(name="in_ready")
        self.in_point = Signal(p.point_bits, name="in_point")
        self.in_window = Signal(p.window_index_bits, name="in_window")
        self.in_digit = Signal(p.digit_bits, name="in_digit")
        self.rd_addr = Signal(p.window_index_bits + p.bucket_index_bits, name="rd_addr")
        self.rd_data = Signal(p.bucket_value_bits, name="rd_data")
        self.st_active = Signal(name="st_active")
        self.st_issue = Signal(name="st_issue")
        self.st_stall = Signal(name="st_stall")
        self.st_drain = Signal(name="st_drain")
        self.st_write = Signal(name="st_write")

    def ports(self) -> list[Signal]:
        return [self.in_valid, self.in_ready, self.in_point, self.in_window, self.in_digit, self.rd_addr,
                self.rd_data, self.st_active, self.st_issue, self.st_stall, self.st_drain, self.st_write]

    def _negate(self, m: Module, nm: Namer, point, neg):
        p = self.p
        if p.adder == "standin":
            return Mux(neg, (-point)[:p.standin_bits], point)
        from .msm_adder import mod_sub

        n = p.design_bits
        q = p.modulus
        ym, yp, k = point[:n], point[n:2 * n], point[2 * n:]
        minus_k = mod_sub(nm, Op(Const(0, 1), 0), Op(k, q - 1), q, "negk").value
        # -(x, y) = (-x, y): the halves swap and 4dxy changes sign (edwards.precomputed_neg).
        return Mux(neg, Cat(yp, ym, minus_k), point)

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.p
        nm = Namer(m)
        W, D = p.windows, p.fifo_depth
        bb, wb_bits = p.bucket_index_bits, p.window_index_bits
        counts = p.layout.bucket_counts
        entry_bits = p.point_bits + bb + 1

        # ---- the adder and what travels beside it
        if p.adder == "standin":
            adder = StandinAdderCore(p.standin_bits, p.standin_latency)
            m.submodules.adder = adder
            a_bucket, a_point, a_out = adder.bucket, adder.point, adder.out
        else:
            from .msm_adder import MsmAdderCore

            adder = MsmAdderCore(p.adder_design)
            m.submodules.adder = adder
            a_bucket, a_point, a_out = Cat(*adder.bucket), Cat(*adder.point), Cat(*adder.out)
        pipe = Pipe(m, "ctl")

        # ---- bucket RAM: one read at issue (transparent to the write-back), one for the readout
        ram = Memory(shape=p.bucket_value_bits, depth=W << bb, init=[p.identity()] * (W << bb))
        m.submodules.buckets = ram
        wport = ram.write_port()
        rport = ram.read_port(transparent_for=[wport])
        oport = ram.read_port()
        m.d.comb += [oport.addr.eq(self.rd_addr), self.rd_data.eq(oport.data)]

        # ---- write-back: the issue's sideband, delayed through the RAM read and the adder
        issue = Signal()
        issue_w = Signal(wb_bits)
        issue_b = Signal(bb)
        issue_point = Signal(p.point_bits)
        issue_neg = Signal()
        side = Cat(issue, issue_w, issue_b)
        side_late = Signal(len(side))
        v = side
        for c in range(p.latency()):
            r = Signal(len(side), name=f"side_d{c}")       # resettable: the valid bit must start 0
            m.d.sync += r.eq(v)
            v = r
        m.d.comb += side_late.eq(v)
        wb_valid, wb_w, wb_b = side_late[0], side_late[1:1 + wb_bits], side_late[1 + wb_bits:]
        m.d.comb += [wport.addr.eq(Cat(wb_b, wb_w)), wport.data.eq(a_out), wport.en.eq(Mux(wb_valid, -1, 0)),
                     self.st_write.eq(wb_valid)]
        point_reg = pipe.reg("issue", [Op(self._negate(m, nm, issue_point, issue_neg), (1 << p.point_bits) - 1)])[0]
        m.d.comb += [rport.addr.eq(Cat(issue_b, issue_w)), a_bucket.eq(rport.data), a_point.eq(point_reg.value)]

        # ---- busy bits, one per bucket
        busy = [Signal(counts[w], name=f"busy{w}") for w in range(W)]

        def local(w: int, b) -> Any:
            # A bucket index of window w is below its count (|digit| <= 2^(b_w - 1)): the index's low bits
            # address its busy bit, so a narrower window's bit select covers every value (no incomplete case).
            return b[:(counts[w] - 1).bit_length()] if counts[w] > 1 else Const(0, 1)

        def free(w: int, b) -> Any:
            return ~busy[w].bit_select(local(w, b), 1) | (wb_valid & (wb_w == w) & (wb_b == b))

        # ---- stall FIFOs
        fifos, heads, tails, fill = [], [], [], []
        head_b, head_neg, head_point = [], [], []
        for w in range(W):
            f = Memory(shape=entry_bits, depth=D, init=[])
            m.submodules[f"fifo{w}"] = f
            fifos.append(f)
            heads.append(Signal(range(max(D, 2)), name=f"fifo{w}_head"))
            tails.append(Signal(range(max(D, 2)), name=f"fifo{w}_tail"))
            fill.append(Signal(range(D + 1), name=f"fifo{w}_fill"))
            rp = f.read_port(domain="comb")
            m.d.comb += rp.addr.eq(heads[w])
            head_point.append(rp.data[:p.point_bits])
            head_b.append(rp.data[p.point_bits:p.point_bits + bb])
            head_neg.append(rp.data[-1])
        nonempty = Cat(*[f != 0 for f in fill])
        full = Cat(*[f == D for f in fill])
        drain = Signal()
        m.d.comb += [drain.eq(nonempty.all() | full.any() | ~self.in_valid),
                     self.in_ready.eq(~(nonempty.all() | full.any())),
                     self.st_active.eq(self.in_valid | nonempty.any()),
                     self.st_drain.eq(drain & (self.in_valid | nonempty.any()))]

        # ---- rule 3: the first ready FIFO head from the round-robin pointer
        rr = Signal(range(max(W, 2)), name="rr")
        cand = Cat(*[nonempty[w] & free(w, head_b[w]) for w in range(W)])
        twice = Cat(cand, cand)
        rotated = Signal(W)
        m.d.comb += rotated.eq(twice >> rr)
        pick_k = Signal(range(max(W, 2)))
        for k in reversed(range(W)):              # lowest set bit of the rotated vector
            with m.If(rotated[k]):
                m.d.comb += pick_k.eq(k)
        pick_sum = Signal(range(2 * W))
        pick = Signal(range(max(W, 2)))
        m.d.comb += [pick_sum.eq(rr + pick_k), pick.eq(Mux(pick_sum >= W, pick_sum - W, pick_sum))]

        # ---- rule 1 / rule 2 on the input
        digit = self.in_digit
        in_neg = digit[-1]
        mag = Signal(p.digit_bits)
        m.d.comb += mag.eq(Mux(in_neg, -digit, digit))
        in_b = Signal(bb)
        m.d.comb += in_b.eq(mag - 1)
        in_free = Signal()
        m.d.comb += in_free.eq(Cat(*[(self.in_window == w) & free(w, in_b) for w in range(W)]).any())
        take = Signal()
        m.d.comb += take.eq(~drain)

        pop = Signal(W)
        push = Signal(W)
        with m.If(take):
            with m.If(in_free):
                m.d.comb += [issue.eq(1), issue_w.eq(self.in_window), issue_b.eq(in_b),
                             issue_point.eq(self.in_point), issue_neg.eq(in_neg)]
            with m.Else():
                m.d.comb += [self.st_stall.eq(1), push.eq(1 << self.in_window)]
        with m.Elif(cand.any()):
            m.d.comb += [issue.eq(1), issue_w.eq(pick), pop.eq(1 << pick),
                         issue_b.eq(Cat(*head_b).word_select(pick, bb)),
                         issue_neg.eq(Cat(*head_neg).bit_select(pick, 1)),
                         issue_point.eq(Cat(*head_point).word_select(pick, p.point_bits))]
            m.d.sync += rr.eq(Mux(pick == W - 1, 0, pick + 1))
        m.d.comb += self.st_issue.eq(issue)

        for w in range(W):
            wp = fifos[w].write_port()
            m.d.comb += [wp.addr.eq(tails[w]), wp.data.eq(Cat(self.in_point, in_b, in_neg)), wp.en.eq(push[w])]
            with m.If(push[w]):
                m.d.sync += tails[w].eq(Mux(tails[w] == D - 1, 0, tails[w] + 1))
            with m.If(pop[w]):
                m.d.sync += heads[w].eq(Mux(heads[w] == D - 1, 0, heads[w] + 1))
            m.d.sync += fill[w].eq(fill[w] + push[w] - pop[w])
            # busy: cleared at write-back, set at issue (an issue of the bucket written this cycle wins)
            with m.If(wb_valid & (wb_w == w)):
                m.d.sync += busy[w].bit_select(local(w, wb_b), 1).eq(0)
            with m.If(issue & (issue_w == w)):
                m.d.sync += busy[w].bit_select(local(w, issue_b), 1).eq(1)
        return m


CONTROLLER_TEMPLATE = CPP_PRELUDE + r"""
@HELPERS@
struct Pair { std::string point; unsigned window; long long digit; };

// Vector lines: "p POINTHEX WINDOW DIGIT" (the stream), "b ADDR HEX" (expected buckets),
// "s CYCLES ISSUED STALLS BUBBLES DRAIN" (the controller model's counts).
int main(int argc, char** argv) {
    if (argc < 2) { std::fprintf(stderr, "usage: %s VECTORS\n", argv[0]); return 2; }
    ctx = new VerilatedContext;
    top = new V@TOP@{ctx};
    top->rst = 1; top->in_valid = 0; tick(); tick(); top->rst = 0;
    std::ifstream in(argv[1]);
    if (!in) { std::fprintf(stderr, "cannot read %s\n", argv[1]); return 2; }
    std::vector<Pair> pairs;
    std::vector<std::pair<unsigned long long, std::string>> buckets;
    unsigned long long want[5] = {0, 0, 0, 0, 0};
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ls(line);
        std::string kind;
        ls >> kind;
        if (kind == "p") { Pair p; ls >> p.point >> p.window >> p.digit; pairs.push_back(p); }
        else if (kind == "b") { unsigned long long a; std::string h; ls >> a >> h; buckets.push_back({a, h}); }
        else if (kind == "s") { for (auto& x : want) ls >> x; }
        else { std::fprintf(stderr, "bad vector line: %s\n", line.c_str()); return 2; }
    }
    auto t0 = std::chrono::steady_clock::now();
    const unsigned digit_bits = @DIGIT_BITS@;
    uint64_t cycle = 0, issued = 0, stalls = 0, drains = 0, active = 0, writes = 0, last_write = 0;
    size_t next = 0;
    uint64_t quiet = 0;
    // Cycle 0 is the first in which the first pair is offered.
    while (true) {
        bool offer = next < pairs.size();
        top->in_valid = offer;
        if (offer) {
            set_hex(top->in_point, pairs[next].point);
            top->in_window = pairs[next].window;
            top->in_digit = (uint64_t)pairs[next].digit & ((1ULL << digit_bits) - 1);
        }
        top->clk = 0;
        top->eval();
        bool taken = offer && top->in_ready;
        if (top->st_active) active++;
        if (top->st_issue) issued++;
        if (top->st_stall) stalls++;
        if (top->st_drain) drains++;
        if (top->st_write) { writes++; last_write = cycle; }
        bool busy = top->st_active;
        tick();
        if (taken) next++;
        cycle++;
        if (!offer && !busy) { if (writes == issued) break; if (++quiet > 100000000ULL) break; }
    }
    uint64_t mismatches = 0;
    top->in_valid = 0;
    for (auto& b : buckets) {
        top->rd_addr = b.first;
        tick();
        top->eval();
        std::string got = get_hex(top->rd_data);
        if (got != trim_hex(b.second)) {
            mismatches++;
            if (mismatches <= MAX_PRINTED)
                std::printf("MISMATCH bucket %llu\n  expected %s\n  obtained %s\n", b.first,
                            trim_hex(b.second).c_str(), got.c_str());
        }
    }
    unsigned long long got[5] = {writes ? last_write + 1 : 0, issued, stalls, active - issued, drains};
    const char* names[5] = {"cycles", "issued", "stalls", "bubbles", "drain_cycles"};
    uint64_t count_mismatches = 0;
    for (int i = 0; i < 5; i++)
        if (got[i] != want[i]) {
            count_mismatches++;
            std::printf("MISMATCH %s: model %llu, RTL %llu\n", names[i], want[i], got[i]);
        }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"pairs\": %llu, \"outputs\": %llu, \"mismatches\": %llu, \"count_mismatches\": %llu, "
                "\"cycles\": %llu, \"issued\": %llu, \"stalls\": %llu, \"bubbles\": %llu, \"drain_cycles\": %llu, "
                "\"writes\": %llu, \"sim_seconds\": %.6f}\n",
                (unsigned long long)pairs.size(), (unsigned long long)buckets.size(), (unsigned long long)mismatches,
                (unsigned long long)count_mismatches, got[0], got[1], got[2], got[3], got[4],
                (unsigned long long)writes, secs);
    top->final();
    delete top;
    delete ctx;
    return (mismatches || count_mismatches) ? 1 : 0;
}
"""


def controller_harness(p: MsmControllerDesign) -> str:
    return (CONTROLLER_TEMPLATE.replace("@TOP@", "mf_msm_controller").replace("@DIGIT_BITS@", str(p.digit_bits))
            .replace("@HELPERS@", HEX_HELPERS).lstrip("\n"))


def design_from_options(modulus: int, bits: int | None, options: dict[str, Any]) -> MsmControllerDesign:
    known = {"adder", "windows", "window_bits", "fifo_depth", "standin_bits", "standin_latency", "karatsuba_depth",
             "adder_modulus"}
    for key in options:
        if key not in known:
            raise ParameterError(key, f"is not a parameter of {ARCH}; known: {', '.join(sorted(known))}")
    return MsmControllerDesign(**options)
