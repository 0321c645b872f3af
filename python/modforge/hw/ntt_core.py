# amaranth: UnusedElaboratable=no
"""Seed 003's NTT core: radix-2 transforms of up to 2^log_n Goldilocks points, one butterfly per cycle.

Seed 003 ("NTT"): the 2^24-point transform is cut into 2^12-point transforms that "fit in the available
SRAM", computed by cores doing radix-2 Cooley-Tukey; "each core inputs and outputs 64 bits and has its own
field multiplier and two adders".  This core::

    load   n words, one per cycle, written to bank 0 at the bit-reversed address (the DIT input order)
    stage  s = 0 .. k-1: n/2 butterflies, one issued per cycle, from bank s mod 2 into bank (s+1) mod 2
           (ping-pong RAMs: each bank is only read or only written in a stage, its two ports serve the
           butterfly's two words, so each is one true dual-port block RAM); then the pipeline drains
    store  n words in natural order from bank k mod 2, one per cycle

A butterfly is ``(u, v) -> (u + t, u - t)``, ``t = v * w_(2m)^j`` (m = 2^s, j the butterfly's place in
its group), exactly :func:`modforge.zk.ntt_model.dit_bitrev_to_natural`; the transform is the model's
``forward`` (evaluation at the powers of w_n in natural order).  Its pipeline: the RAM and ROM read
(1 cycle), the multiplier (``mul_cycles``), the adders' register (1): ``pipeline = mul_cycles + 2``
cycles from a butterfly's read to its words being readable again, which each stage waits out.

**Twiddles from a ROM**, not a twiddle multiplier: the ROM holds w_N^i for i < N/2 (N = 2^log_n, the
largest size), and stage s reads entry j * 2^(log_n - 1 - s).  Since w_(2m) does not depend on the
transform's size, one ROM serves every runtime size k <= log_n; it costs 2^(log_n - 1) x 64 bits (a few
block RAMs) and no DSP, where a multiplier generating w^j would cost 16 DSPs (the data path's own
multiplier count again) and a recurrence whose latency would stall each stage's first butterflies.

The transform's size is a runtime input (``in_log_n``, 1 .. log_n): one build serves every size up to
its own.  Cycles of one transform, edges from the first word taken to the last word out, both counted:
``n + k (n/2 + pipeline) + n`` (:func:`modforge.zk.ntt_cycles.core_transform_cycles`, the model).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from amaranth.hdl import Cat, Const, Elaboratable, Module, Mux, Signal
from amaranth.lib.memory import Memory

from ..arith.base import ParameterError
from ..zk.goldilocks import GOLDILOCKS
from ..zk.ntt_cycles import ClusterMemory, FpgaNttDesign, cluster_four_step_cycles, core_transform_cycles
from .common import require_range
from .goldilocks_mul import P, WORD, GoldilocksMulDesign, GoldilocksMulPipe, GoldilocksWordDesign, checked_options

ARCH = "ntt-core"
CLUSTER_ARCH = "ntt-cluster"
MAX_LOG_N = 16          # 2^16 words per bank: 4 Mbit; the seed's cores are 2^12
MAX_SIM_LOG_N = 18      # the largest 4-step the cluster's simulation takes (2^16 runs in about a minute per memory)


def field_add(a, b):
    """a + b mod p for canonical a, b: the 65-bit sum, and p subtracted when the sum + epsilon carries
    (sum >= p exactly when sum + 2^64 - p >= 2^64)."""
    s = a + b                                                  # 65 bits
    up = s + ((1 << WORD) - P)                                 # 66 bits
    return Mux(up[WORD:].any(), up[:WORD], s[:WORD])


def field_sub(a, b):
    """a - b mod p for canonical a, b: p added back on a borrow."""
    d = Cat(a, Const(0, 1)) - b                               # 65 bits, bit 64 the borrow
    return Mux(d[WORD], (d + P)[:WORD], d[:WORD])


def bit_reverse_value(value, bits: int):
    """The ``bits`` low bits of ``value`` in reverse order (wiring only)."""
    return Cat(*[value[bits - 1 - i] for i in range(bits)])


def refuse_kept_vectors(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``hw sim --keep-vectors`` has no meaning here (the transforms are generated per run into the build
    directory): refused by name rather than ignored."""
    if kwargs.pop("keep_vectors", None) is not None:
        raise ParameterError("keep-vectors", "the NTT designs generate their transforms per run; "
                                             "--keep-vectors is not supported for them")
    kwargs.pop("overwrite", None)
    return kwargs


@dataclass(frozen=True)
class NttCoreDesign(GoldilocksWordDesign):
    """One core: transforms of up to 2^log_n points (the size itself a runtime input)."""

    log_n: int = 12
    mul_cycles: int = 6
    dsp_bits: int = 17
    modulus: int = P
    bits: int | None = None

    arch = ARCH

    def __post_init__(self) -> None:
        self.check_field()
        require_range("log_n", self.log_n, 1, MAX_LOG_N)
        self.multiplier          # validates mul_cycles and dsp_bits

    @cached_property
    def multiplier(self) -> GoldilocksMulDesign:
        return GoldilocksMulDesign(cycles=self.mul_cycles, dsp_bits=self.dsp_bits)

    @property
    def pipeline(self) -> int:
        """Cycles from a butterfly's read to its results being readable: read, multiplier, adders."""
        return self.mul_cycles + 2

    def cycle_model(self) -> FpgaNttDesign:
        """The cycle model's parameters this core realises (its pipeline is the model's ``pipeline_cycles``)."""
        return FpgaNttDesign(log_n1=self.log_n, pipeline_cycles=self.pipeline)

    def transform_cycles(self, log_m: int) -> int:
        return core_transform_cycles(self.cycle_model(), log_m)

    def latency(self) -> int:
        """Cycles of one transform of the largest size (the manifest's ``latency``)."""
        return self.transform_cycles(self.log_n)

    def cycles_per_op(self) -> int:
        return self.latency()

    def twiddles(self) -> list[int]:
        """The ROM: w_N^i for i < N/2, N = 2^log_n (Plonky3's TWO_ADIC_GENERATORS[log_n])."""
        w = GOLDILOCKS.root_of_unity(self.log_n)
        out, x = [], 1
        for _ in range(max(1, (1 << self.log_n) >> 1)):
            out.append(x)
            x = x * w % P
        return out

    def resources(self) -> dict[str, Any]:
        mul = self.multiplier.resources()
        return {"dsp": mul["dsp"], "dsp_tile": mul["dsp_tile"], "multipliers": 1, "adders": 2,
                "ram_bits": 2 * (1 << self.log_n) * WORD, "rom_bits": len(self.twiddles()) * WORD,
                "roms": 1, "pipeline": self.pipeline, "multiplier_cuts": mul["pipeline_cuts"],
                "depth_estimate_ps": self.multiplier.depth_estimate_ps()}

    def describe(self) -> str:
        return (f"NTT core: radix-2 DIT transforms of 2^1..2^{self.log_n} Goldilocks points, one butterfly per "
                f"cycle, ping-pong RAMs of 2 x 2^{self.log_n} words, twiddle ROM of {len(self.twiddles())} words, "
                f"multiplier latency {self.mul_cycles}")

    def build(self) -> NttEngine:
        return NttEngine(self.log_n, 1, self.multiplier, self.twiddles())

    # -- the streaming harness (modforge.hw.ntt_harness) -------------------------------------------
    def harness_source(self) -> str:
        from .ntt_harness import core_harness_source

        return core_harness_source(self)

    def simulate(self, **kwargs: Any) -> dict[str, Any]:
        from .ntt_harness import simulate_core

        return simulate_core(self, **refuse_kept_vectors(kwargs))


@dataclass(frozen=True)
class FourStepTwiddles:
    """The 4-step's twiddle pass after the column transforms of an n1 x n2 matrix (n = n1 n2): entry
    (k1, j2) times w_n^(j2 k1).  The exponent e = j2 k1 mod n is accumulated (one adder: e += j2 per word),
    and w_n^e = A[e >> log_n2] * B[e mod n2] with A[i] = w_n^(i n2) = w_n1^i and B[i] = w_n^i: two ROMs of
    n1 and n2 words and one more multiplier per core (the twiddle multiplier)."""

    log_n1: int
    log_n2: int

    @property
    def log_n(self) -> int:
        return self.log_n1 + self.log_n2

    def tables(self) -> tuple[list[int], list[int]]:
        w = GOLDILOCKS.root_of_unity(self.log_n)
        a = [pow(w, i << self.log_n2, P) for i in range(1 << self.log_n1)]
        b = [pow(w, i, P) for i in range(1 << self.log_n2)]
        return a, b


class NttEngine(Elaboratable):
    """``lanes`` cores under one controller: one set of counters, one butterfly-twiddle ROM read per cycle
    shared by every lane (the lanes run in lockstep, so they need the same twiddle), and per lane two banks
    of RAM, the data multiplier and the two adders (and, with ``four_step``, the exponent accumulator, the
    twiddle ROMs and the twiddle multiplier).  ``ntt-core`` is one lane without the 4-step pass.

    Ports (all synchronous to ``clk``; ``rst`` synchronous, active high; lane c at bits [64c, 64c + 64))::

        in_valid    1         a line (one word per lane) of the transforms being loaded; taken when in_ready
        in_ready    1         the engine is idle or loading
        in_log_n    w         the transforms' log2 size, 1 .. log_n; read with the first line
        in_data     64 lanes  the words, canonical field elements, natural order
        in_column   log_n2    (four_step) column of lane 0; lane c transforms column in_column + c
        in_twiddle  1         (four_step) apply the 4-step twiddles after this transform; read with the first line
        out_valid   1         out_data holds the next line of the results (natural order)
        out_data    64 lanes
    """

    def __init__(self, log_n: int, lanes: int, multiplier: GoldilocksMulDesign, twiddles: list[int],
                 four_step: FourStepTwiddles | None = None):
        self.log_n, self.lanes, self.multiplier, self.twiddles, self.four_step = log_n, lanes, multiplier, twiddles, four_step
        K = log_n
        self.in_valid = Signal(name="in_valid")
        self.in_ready = Signal(name="in_ready")
        self.in_log_n = Signal(range(K + 1), name="in_log_n")
        self.in_data = Signal(WORD * lanes, name="in_data")
        self.out_valid = Signal(name="out_valid")
        self.out_data = Signal(WORD * lanes, name="out_data")
        if four_step is not None:
            self.in_column = Signal(max(four_step.log_n2, 1), name="in_column")
            self.in_twiddle = Signal(name="in_twiddle")

    def ports(self) -> list[Signal]:
        out = [self.in_valid, self.in_ready, self.in_log_n, self.in_data]
        if self.four_step is not None:
            out += [self.in_column, self.in_twiddle]
        return out + [self.out_valid, self.out_data]

    def elaborate(self, platform) -> Module:
        K = self.log_n
        L = self.multiplier.cycles
        fs = self.four_step
        m = Module()

        # -- the shared controller ----------------------------------------------------------------------
        LOAD, COMPUTE, TWIDDLE, STORE = 0, 1, 2, 3
        state = Signal(2, init=LOAD)
        k = Signal(range(K + 1))                 # this transform's log2 size
        count = Signal(K + 1)                     # lines loaded / stored
        stage = Signal(range(max(K, 2)))
        bfly = Signal(K + 2)                      # cycle within a stage or the twiddle pass
        n = Signal(K + 2)
        half = Signal(K + 1)
        twiddle_after = Signal()                  # the 4-step twiddle pass follows the stages
        m.d.comb += [n.eq(Const(1, K + 2) << k), half.eq(n[1:])]
        m.d.comb += self.in_ready.eq(state == LOAD)

        mask = Signal(K)
        m.d.comb += mask.eq((Const(1, K + 1) << stage) - 1)
        b_low = bfly[:K] & mask
        addr_u = Signal(K)
        m.d.comb += addr_u.eq(((bfly[:K] & ~mask) << 1)[:K] | b_low)
        addr_v = Signal(K)
        m.d.comb += addr_v.eq(addr_u | (mask + 1)[:K])
        issuing = Signal()
        m.d.comb += issuing.eq((state == COMPUTE) & (bfly < half))
        tw_issuing = Signal()
        m.d.comb += tw_issuing.eq((state == TWIDDLE) & (bfly < n))

        rom = Memory(shape=WORD, depth=len(self.twiddles), init=self.twiddles)
        m.submodules.twiddle_rom = rom
        rom_rd = rom.read_port(domain="sync")
        if K > 1:
            rom_shift = Signal(range(K))
            m.d.comb += rom_shift.eq(K - 1 - stage)
            m.d.comb += rom_rd.addr.eq((b_low << rom_shift)[:K - 1])
        else:
            m.d.comb += rom_rd.addr.eq(0)
        read_bank = stage[0]

        # The butterflies' write side: addresses travel with the data through the pipeline.
        depth = L + 2
        w_valid = [Signal(name=f"w_valid{i}") for i in range(depth)]
        w_u = [Signal(K, name=f"w_u{i}") for i in range(depth)]
        w_v = [Signal(K, name=f"w_v{i}") for i in range(depth)]
        w_bank = [Signal(name=f"w_bank{i}") for i in range(depth)]
        m.d.sync += [w_valid[0].eq(issuing), w_u[0].eq(addr_u), w_v[0].eq(addr_v), w_bank[0].eq(~read_bank)]
        for i in range(1, depth):
            m.d.sync += [w_valid[i].eq(w_valid[i - 1]), w_u[i].eq(w_u[i - 1]), w_v[i].eq(w_v[i - 1]),
                         w_bank[i].eq(w_bank[i - 1])]
        last = depth - 1
        # The twiddle pass's write side: the read (1), the twiddle product (L), the data product (L).
        tw_depth = 2 * L + 1
        t_valid = [Signal(name=f"t_valid{i}") for i in range(tw_depth)]
        t_addr = [Signal(K, name=f"t_addr{i}") for i in range(tw_depth)]
        m.d.sync += [t_valid[0].eq(tw_issuing), t_addr[0].eq(bfly[:K])]
        for i in range(1, tw_depth):
            m.d.sync += [t_valid[i].eq(t_valid[i - 1]), t_addr[i].eq(t_addr[i - 1])]
        t_bank = ~k[0]                            # the stages left the data in bank k mod 2

        loading = Signal()
        m.d.comb += loading.eq((state == LOAD) & self.in_valid)
        lg = Mux(count == 0, self.in_log_n, k)
        load_addr = Signal(K)
        unused_bits = Signal(range(K + 1))
        m.d.comb += unused_bits.eq(K - lg)
        m.d.comb += load_addr.eq(bit_reverse_value(count[:K], K) >> unused_bits)
        storing = Signal()
        m.d.comb += storing.eq(state == STORE)
        out_pending = Signal()
        out_bank = Signal()
        m.d.sync += [out_pending.eq(storing), out_bank.eq(Mux(twiddle_after, ~k[0], k[0]))]
        m.d.comb += self.out_valid.eq(out_pending)
        column = Signal(max(fs.log_n2, 1)) if fs is not None else None

        # -- the lanes ---------------------------------------------------------------------------------
        outs = []
        for c in range(self.lanes):
            banks = []
            for b in range(2):
                mem = Memory(shape=WORD, depth=1 << K, init=[])
                m.submodules[f"lane{c}_bank{b}"] = mem
                banks.append([(mem.read_port(domain="sync"), mem.write_port()) for _ in range(2)])
            rd_u = Mux(w_bank[0], banks[0][0][0].data, banks[1][0][0].data)     # read from the other bank
            rd_v = Mux(w_bank[0], banks[0][1][0].data, banks[1][1][0].data)
            mul = GoldilocksMulPipe(self.multiplier)
            m.submodules[f"lane{c}_mul"] = mul
            u_delay = rd_u
            for i in range(L):
                r = Signal(WORD, name=f"lane{c}_u_delay{i}")
                m.d.sync += r.eq(u_delay)
                u_delay = r
            sum_r = Signal(WORD, name=f"lane{c}_sum")
            dif_r = Signal(WORD, name=f"lane{c}_dif")
            m.d.sync += [sum_r.eq(field_add(u_delay, mul.out)), dif_r.eq(field_sub(u_delay, mul.out))]
            if fs is not None:
                # The twiddle pass: w_n^(j2 k1) = A[e >> log_n2] * B[e mod n2], e accumulated, then the data
                # word (delayed beside the twiddle product) times it through the data multiplier.
                exponent = Signal(fs.log_n, name=f"lane{c}_exponent")
                with m.If(tw_issuing):
                    m.d.sync += exponent.eq(exponent + column + c)
                with m.Else():
                    m.d.sync += exponent.eq(0)
                ta, tb = fs.tables()
                rom_a = Memory(shape=WORD, depth=len(ta), init=ta)
                rom_b = Memory(shape=WORD, depth=len(tb), init=tb)
                m.submodules[f"lane{c}_rom_a"], m.submodules[f"lane{c}_rom_b"] = rom_a, rom_b
                ra, rb = rom_a.read_port(domain="sync"), rom_b.read_port(domain="sync")
                m.d.comb += [ra.addr.eq(exponent[fs.log_n2:]), rb.addr.eq(exponent[:fs.log_n2])]
                tmul = GoldilocksMulPipe(self.multiplier)
                m.submodules[f"lane{c}_twiddle_mul"] = tmul
                m.d.comb += [tmul.a.eq(ra.data), tmul.b.eq(rb.data)]
                y = Mux(k[0], banks[1][0][0].data, banks[0][0][0].data)
                for i in range(L):
                    r = Signal(WORD, name=f"lane{c}_y_delay{i}")
                    m.d.sync += r.eq(y)
                    y = r
                twiddling = state == TWIDDLE
                m.d.comb += [mul.a.eq(Mux(twiddling, y, rd_v)), mul.b.eq(Mux(twiddling, tmul.out, rom_rd.data))]
            else:
                m.d.comb += [mul.a.eq(rd_v), mul.b.eq(rom_rd.data)]
            # -- port wiring: each port is written, or read, at one address (true dual-port RAM) -------
            for b in range(2):
                writing = w_valid[last] & (w_bank[last] == b)
                tw_writing = t_valid[-1] & (t_bank == b) if fs is not None else Const(0, 1)
                for p in range(2):
                    rd, wr = banks[b][p]
                    waddr = w_u[last] if p == 0 else w_v[last]
                    wdata = sum_r if p == 0 else dif_r
                    raddr = addr_u if p == 0 else addr_v
                    en = writing
                    if p == 0:
                        en = writing | tw_writing
                        waddr = Mux(tw_writing, t_addr[-1], waddr)
                        wdata = Mux(tw_writing, mul.out, wdata)
                        raddr = Mux(storing, count[:K], Mux(state == TWIDDLE, bfly[:K], raddr))
                    if b == 0 and p == 0:
                        # bank 0 port 0 also takes the loaded words
                        en = en | loading
                        waddr = Mux(loading, load_addr, waddr)
                        wdata = Mux(loading, self.in_data[WORD * c:WORD * (c + 1)], wdata)
                    # One address per port, shared by its read and write sides: a true dual-port block RAM.
                    port_addr = Signal(K, name=f"lane{c}_bank{b}_port{p}_addr")
                    m.d.comb += port_addr.eq(Mux(en, waddr, raddr))
                    m.d.comb += [wr.en.eq(en), wr.addr.eq(port_addr), wr.data.eq(wdata), rd.addr.eq(port_addr)]
            outs.append(Mux(out_bank, banks[1][0][0].data, banks[0][0][0].data))
        m.d.comb += self.out_data.eq(Cat(*outs))

        # -- control -----------------------------------------------------------------------------------
        with m.If(state == LOAD):
            with m.If(self.in_valid):
                with m.If(count == 0):
                    m.d.sync += k.eq(self.in_log_n)
                    if fs is not None:
                        m.d.sync += [column.eq(self.in_column), twiddle_after.eq(self.in_twiddle)]
                with m.If(count == (Const(1, K + 2) << lg) - 1):
                    m.d.sync += [state.eq(COMPUTE), count.eq(0), stage.eq(0), bfly.eq(0)]
                with m.Else():
                    m.d.sync += count.eq(count + 1)
        with m.Elif(state == COMPUTE):
            with m.If(bfly == half + depth - 1):
                m.d.sync += bfly.eq(0)
                with m.If(stage == k - 1):
                    m.d.sync += [state.eq(Mux(twiddle_after, TWIDDLE, STORE)), stage.eq(0)]
                with m.Else():
                    m.d.sync += stage.eq(stage + 1)
            with m.Else():
                m.d.sync += bfly.eq(bfly + 1)
        with m.Elif(state == TWIDDLE):
            with m.If(bfly == n + tw_depth - 1):
                m.d.sync += [bfly.eq(0), state.eq(STORE)]
            with m.Else():
                m.d.sync += bfly.eq(bfly + 1)
        with m.Else():                            # STORE
            with m.If(count == n - 1):
                m.d.sync += [state.eq(LOAD), count.eq(0)]
            with m.Else():
                m.d.sync += count.eq(count + 1)
        return m


@dataclass(frozen=True)
class NttClusterDesign(GoldilocksWordDesign):
    """``cores`` cores under one controller computing the 4-step transform of 2^(log_n1 + log_n2) points
    (seed 003: 8 cores per controller, 2^24 = 2^12 x 2^12).  Pass 1 loads ``cores`` columns at a time (one
    line of the memory bus: one word per core), transforms them, applies the 4-step twiddles and stores them;
    pass 2 does the rows.  The memory is the harness's model (:class:`modforge.zk.ntt_cycles.ClusterMemory`),
    its bandwidth and burst latency runtime parameters."""

    cores: int = 8
    log_n1: int = 12
    log_n2: int = 12
    mul_cycles: int = 6
    dsp_bits: int = 17
    modulus: int = P
    bits: int | None = None

    arch = CLUSTER_ARCH

    def __post_init__(self) -> None:
        self.check_field()
        require_range("cores", self.cores, 1, 64)
        require_range("log_n1", self.log_n1, 1, MAX_LOG_N)
        require_range("log_n2", self.log_n2, 1, MAX_LOG_N)
        for name, log in (("log_n1", self.log_n1), ("log_n2", self.log_n2)):
            if (1 << log) % self.cores:
                raise ParameterError(name, f"2^{log} is not a multiple of cores = {self.cores} (each pass gives "
                                           f"every core one sub-transform per group)")
        self.core                 # validates mul_cycles and dsp_bits

    @cached_property
    def core(self) -> NttCoreDesign:
        return NttCoreDesign(log_n=max(self.log_n1, self.log_n2), mul_cycles=self.mul_cycles, dsp_bits=self.dsp_bits)

    @property
    def log_n(self) -> int:
        return self.log_n1 + self.log_n2

    @property
    def twiddle_pipeline(self) -> int:
        """The twiddle pass's pipeline: the read, the twiddle product, the data product."""
        return 2 * self.mul_cycles + 1

    def four_step_cycles(self, memory: ClusterMemory = ClusterMemory()) -> dict:
        return cluster_four_step_cycles(self.core.cycle_model(), self.log_n1, self.log_n2, self.cores,
                                        self.twiddle_pipeline, memory)

    def latency(self) -> int:
        """Cycles of one complete 4-step with the default memory (one bus line per cycle, no latency)."""
        return self.four_step_cycles()["cycles"]

    def cycles_per_op(self) -> int:
        return self.latency()

    def resources(self) -> dict[str, Any]:
        mul = self.core.multiplier.resources()
        a, b = FourStepTwiddles(self.log_n1, self.log_n2).tables()
        return {"dsp": 2 * self.cores * mul["dsp"], "dsp_tile": mul["dsp_tile"], "cores": self.cores,
                "multipliers": 2 * self.cores, "adders": 2 * self.cores,
                "ram_bits": self.cores * 2 * (1 << self.core.log_n) * WORD,
                "rom_bits": (len(self.core.twiddles()) + self.cores * (len(a) + len(b))) * WORD,
                "roms": 1 + 2 * self.cores, "pipeline": self.core.pipeline, "twiddle_pipeline": self.twiddle_pipeline,
                "bus_bits": self.cores * WORD, "depth_estimate_ps": self.core.multiplier.depth_estimate_ps()}

    def describe(self) -> str:
        return (f"NTT cluster: {self.cores} cores under one controller, 4-step of 2^{self.log_n} = 2^{self.log_n1} x "
                f"2^{self.log_n2} points, {self.cores * WORD}-bit memory bus, multiplier latency {self.mul_cycles}")

    def build(self) -> NttEngine:
        return NttEngine(self.core.log_n, self.cores, self.core.multiplier, self.core.twiddles(),
                         FourStepTwiddles(self.log_n1, self.log_n2))

    def harness_source(self) -> str:
        from .ntt_harness import cluster_harness_source

        return cluster_harness_source(self)

    def simulate(self, **kwargs: Any) -> dict[str, Any]:
        from .ntt_harness import simulate_cluster

        kwargs = refuse_kept_vectors(kwargs)
        if self.log_n > MAX_SIM_LOG_N:
            # The default design is the seed's 2^24 points: its 4-step would run for hours in Verilator.
            raise ParameterError("log_n1", f"a 4-step of 2^{self.log_n} points is too long to simulate (at most "
                                           f"2^{MAX_SIM_LOG_N}); choose --opt log_n1=8 --opt log_n2=8, say")
        return simulate_cluster(self, **kwargs)


def design_from_options(modulus: int, bits: int | None, options: dict[str, Any]) -> NttCoreDesign:
    return NttCoreDesign(modulus=modulus, bits=bits,
                         **checked_options(ARCH, {"log_n", "mul_cycles", "dsp_bits"}, options, "mul_cycles"))


def cluster_from_options(modulus: int, bits: int | None, options: dict[str, Any]) -> NttClusterDesign:
    known = {"cores", "log_n1", "log_n2", "mul_cycles", "dsp_bits"}
    return NttClusterDesign(modulus=modulus, bits=bits, **checked_options(CLUSTER_ARCH, known, options, "mul_cycles"))
