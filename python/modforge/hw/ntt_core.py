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
from ..zk.ntt_cycles import FpgaNttDesign, core_transform_cycles
from .common import require_range
from .goldilocks_mul import P, WORD, GoldilocksMulDesign, GoldilocksMulPipe

ARCH = "ntt-core"
MAX_LOG_N = 16          # 2^16 words per bank: 4 Mbit; the seed's cores are 2^12


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


@dataclass(frozen=True)
class NttCoreDesign:
    """One core: transforms of up to 2^log_n points (the size itself a runtime input)."""

    log_n: int = 12
    mul_cycles: int = 6
    dsp_bits: int = 17
    modulus: int = P
    bits: int | None = None

    arch = ARCH
    word_bits = WORD
    digit_bits = WORD
    words = 1
    out_words = 1
    design_bits = WORD

    def __post_init__(self) -> None:
        if self.modulus != P:
            raise ParameterError("modulus", f"{ARCH} is for the Goldilocks prime {hex(P)} only, got {hex(self.modulus)}")
        if self.bits not in (None, WORD):
            raise ParameterError("bits", f"{ARCH} works on {WORD}-bit words, not {self.bits}")
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

    def build(self) -> "NttCore":
        return NttCore(self)

    # -- the streaming harness (modforge.hw.ntt_harness) -------------------------------------------
    def harness_source(self) -> str:
        from .ntt_harness import core_harness_source

        return core_harness_source(self)

    def simulate(self, **kwargs: Any) -> dict[str, Any]:
        from .ntt_harness import simulate_core

        return simulate_core(self, **kwargs)


class NttCore(Elaboratable):
    """Ports (all synchronous to ``clk``; ``rst`` synchronous, active high)::

        in_valid  1      a word of the transform being loaded (taken when in_ready is 1)
        in_ready  1      the core is idle or loading
        in_log_n  w      the transform's log2 size, 1 .. log_n; read with the first word
        in_data   64     the word, a canonical field element, natural order
        out_valid 1      out_data holds the next word of the result (natural order)
        out_data  64
    """

    def __init__(self, design: NttCoreDesign):
        self.design = design
        K = design.log_n
        self.in_valid = Signal(name="in_valid")
        self.in_ready = Signal(name="in_ready")
        self.in_log_n = Signal(range(K + 1), name="in_log_n")
        self.in_data = Signal(WORD, name="in_data")
        self.out_valid = Signal(name="out_valid")
        self.out_data = Signal(WORD, name="out_data")

    def ports(self) -> list[Signal]:
        return [self.in_valid, self.in_ready, self.in_log_n, self.in_data, self.out_valid, self.out_data]

    def elaborate(self, platform) -> Module:
        d = self.design
        K = d.log_n
        L = d.mul_cycles
        m = Module()

        # -- state ------------------------------------------------------------------------------------
        LOAD, COMPUTE, STORE = 0, 1, 2
        state = Signal(2, init=LOAD)
        k = Signal(range(K + 1))                 # this transform's log2 size
        count = Signal(K + 1)                     # words loaded / stored
        stage = Signal(range(max(K, 2)))
        bfly = Signal(K + 1)                      # cycle within a stage: butterflies, then the drain
        n = Signal(K + 2)
        half = Signal(K + 1)
        m.d.comb += [n.eq(Const(1, K + 2) << k), half.eq(n[1:])]
        m.d.comb += self.in_ready.eq(state == LOAD)

        # -- RAMs: two banks of 2^K words, two ports each (one address per port: true dual-port) --------
        banks = []
        for b in range(2):
            mem = Memory(shape=WORD, depth=1 << K, init=[])
            m.submodules[f"bank{b}"] = mem
            ports = [(mem.read_port(domain="sync"), mem.write_port()) for _ in range(2)]
            banks.append(ports)
        rom = Memory(shape=WORD, depth=len(d.twiddles()), init=d.twiddles())
        m.submodules.twiddle_rom = rom
        rom_rd = rom.read_port(domain="sync")

        # -- butterfly addresses (stage s, butterfly b: u at (b with a 0 inserted at bit s), v = u + 2^s) --
        mask = Signal(K)
        m.d.comb += mask.eq((Const(1, K + 1) << stage) - 1)
        b_low = bfly[:K] & mask
        addr_u = Signal(K)
        m.d.comb += addr_u.eq(((bfly[:K] & ~mask) << 1)[:K] | b_low)
        addr_v = Signal(K)
        m.d.comb += addr_v.eq(addr_u | (mask + 1)[:K])
        issuing = Signal()
        m.d.comb += issuing.eq((state == COMPUTE) & (bfly < half))
        if K > 1:
            rom_shift = Signal(range(K))
            m.d.comb += rom_shift.eq(K - 1 - stage)
            m.d.comb += rom_rd.addr.eq((b_low << rom_shift)[:K - 1])
        else:
            m.d.comb += rom_rd.addr.eq(0)
        read_bank = stage[0]

        # -- the write side: the butterfly's addresses travel with it through the pipeline -------------
        depth = L + 2
        w_valid = [Signal(name=f"w_valid{i}") for i in range(depth)]
        w_u = [Signal(K, name=f"w_u{i}") for i in range(depth)]
        w_v = [Signal(K, name=f"w_v{i}") for i in range(depth)]
        w_bank = [Signal(name=f"w_bank{i}") for i in range(depth)]
        m.d.sync += [w_valid[0].eq(issuing), w_u[0].eq(addr_u), w_v[0].eq(addr_v), w_bank[0].eq(~read_bank)]
        for i in range(1, depth):
            m.d.sync += [w_valid[i].eq(w_valid[i - 1]), w_u[i].eq(w_u[i - 1]), w_v[i].eq(w_v[i - 1]),
                         w_bank[i].eq(w_bank[i - 1])]

        # -- data path: the read (1 cycle), t = v * w (L cycles), u + t and u - t registered (1 cycle) --
        rd_u = Mux(w_bank[0], banks[0][0][0].data, banks[1][0][0].data)     # read from the other bank
        rd_v = Mux(w_bank[0], banks[0][1][0].data, banks[1][1][0].data)
        m.submodules.mul = mul = GoldilocksMulPipe(d.multiplier)
        m.d.comb += [mul.a.eq(rd_v), mul.b.eq(rom_rd.data)]
        u_delay = rd_u
        for i in range(L):
            r = Signal(WORD, name=f"u_delay{i}")
            m.d.sync += r.eq(u_delay)
            u_delay = r
        sum_r = Signal(WORD)
        dif_r = Signal(WORD)
        m.d.sync += [sum_r.eq(field_add(u_delay, mul.out)), dif_r.eq(field_sub(u_delay, mul.out))]

        # -- load and store ------------------------------------------------------------------------
        loading = Signal()
        m.d.comb += loading.eq((state == LOAD) & self.in_valid)
        lg = Mux(count == 0, self.in_log_n, k)
        load_addr = Signal(K)
        unused_bits = Signal(range(K + 1))
        m.d.comb += unused_bits.eq(K - lg)
        m.d.comb += load_addr.eq(bit_reverse_value(count[:K], K) >> unused_bits)
        final_bank = k[0]
        storing = Signal()
        m.d.comb += storing.eq(state == STORE)
        out_pending = Signal()
        out_bank = Signal()
        m.d.sync += [out_pending.eq(storing), out_bank.eq(final_bank)]
        m.d.comb += [self.out_valid.eq(out_pending),
                     self.out_data.eq(Mux(out_bank, banks[1][0][0].data, banks[0][0][0].data))]

        # -- port wiring: each port is written, or read, at one address ------------------------------
        last = depth - 1
        for b in range(2):
            writing = w_valid[last] & (w_bank[last] == b)
            for p in range(2):
                rd, wr = banks[b][p]
                waddr = w_u[last] if p == 0 else w_v[last]
                wdata = sum_r if p == 0 else dif_r
                raddr = addr_u if p == 0 else addr_v
                if b == 0 and p == 0:
                    # bank 0 port 0 also takes the loaded words
                    m.d.comb += [wr.en.eq(writing | loading), wr.addr.eq(Mux(loading, load_addr, waddr)),
                                 wr.data.eq(Mux(loading, self.in_data, wdata))]
                else:
                    m.d.comb += [wr.en.eq(writing), wr.addr.eq(waddr), wr.data.eq(wdata)]
                if p == 0:
                    raddr = Mux(storing, count[:K], raddr)
                m.d.comb += rd.addr.eq(Mux(writing, wr.addr, raddr))

        # -- control -------------------------------------------------------------------------------
        with m.If(state == LOAD):
            with m.If(self.in_valid):
                with m.If(count == 0):
                    m.d.sync += k.eq(self.in_log_n)
                with m.If(count == (Const(1, K + 2) << lg) - 1):
                    m.d.sync += [state.eq(COMPUTE), count.eq(0), stage.eq(0), bfly.eq(0)]
                with m.Else():
                    m.d.sync += count.eq(count + 1)
        with m.Elif(state == COMPUTE):
            with m.If(bfly == half + depth - 1):
                m.d.sync += bfly.eq(0)
                with m.If(stage == k - 1):
                    m.d.sync += [state.eq(STORE), stage.eq(0)]
                with m.Else():
                    m.d.sync += stage.eq(stage + 1)
            with m.Else():
                m.d.sync += bfly.eq(bfly + 1)
        with m.Elif(state == STORE):
            with m.If(count == n - 1):
                m.d.sync += [state.eq(LOAD), count.eq(0)]
            with m.Else():
                m.d.sync += count.eq(count + 1)
        with m.Else():                           # the fourth code of the state register: back to idle
            m.d.sync += [state.eq(LOAD), count.eq(0)]
        return m


def design_from_options(modulus: int, bits: int | None, options: dict[str, Any]) -> NttCoreDesign:
    known = {"log_n", "mul_cycles", "dsp_bits", "cycles"}
    for key in options:
        if key not in known:
            raise ParameterError(key, f"is not a parameter of {ARCH}; known: {', '.join(sorted(known - {'cycles'}))}")
    options = dict(options)
    if "cycles" in options:              # --cycles: the multiplier's latency, as for goldilocks-mul
        if "mul_cycles" in options and options["mul_cycles"] != options["cycles"]:
            raise ParameterError("cycles", "contradicts --opt mul_cycles: give one")
        options["mul_cycles"] = options.pop("cycles")
    return NttCoreDesign(modulus=modulus, bits=bits, **options)
