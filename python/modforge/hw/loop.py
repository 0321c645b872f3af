# amaranth: UnusedElaboratable=no
"""The control shared by the fixed-latency designs (``ozturk``, ``san-montgomery``).

Interface (all ports synchronous to ``clk``; ``rst`` is synchronous, active high)::

    in_valid   1           start: take in_x (and in_y) and in_count when in_ready is 1
    in_ready   1           the design is idle
    in_count   32          operations to chain (0 counts as 1); each result is fed back
    in_x       words*D     operand digits, digit i at bits [i*D, (i+1)*D)
    in_y       words*D     second operand (multipliers only; a chain squares the result)
    out_valid  1           out_z holds a new result this cycle
    out_z      outs*D      the redundant result digits (the loop register itself)

Timing: the operand enters the first stage in the cycle ``in_valid`` is high (no input
register), so the first result is visible ``latency`` rising edges later, and each chained
result ``latency`` edges after the previous one.  Pipeline registers inside the loop are
free-running; only the loop register has an enable (the last stage of an operation).
"""

from __future__ import annotations

from amaranth.hdl import Elaboratable, Module, Mux, Signal

from .common import Namer, Op, Stager, fit, pack, unpack


class LoopDesign(Elaboratable):
    """Subclasses set ``words``, ``out_words``, ``feedback_words``, ``digit_bits``, ``two_operands``,
    ``cuts`` and ``cycles`` and implement :meth:`datapath`."""

    words: int
    out_words: int
    feedback_words: int
    digit_bits: int
    two_operands: bool = False
    cycles: int = 1
    cuts: frozenset[str] = frozenset()

    def _make_ports(self) -> None:
        D = self.digit_bits
        self.in_valid = Signal(name="in_valid")
        self.in_ready = Signal(name="in_ready")
        self.in_count = Signal(32, name="in_count")
        self.in_x = Signal(self.words * D, name="in_x")
        self.in_y = Signal(self.words * D, name="in_y") if self.two_operands else None
        self.out_valid = Signal(name="out_valid")
        self.out_z = Signal(self.out_words * D, name="out_z")

    def ports(self) -> list[Signal]:
        out = [self.in_valid, self.in_ready, self.in_count, self.in_x]
        if self.in_y is not None:
            out.append(self.in_y)
        return out + [self.out_valid, self.out_z]

    def datapath(self, m: Module, nm: Namer, st: Stager, x: list[Op], y: list[Op]) -> list[Op]:
        raise NotImplementedError

    def input_ops(self, digits: list) -> list[Op]:
        dmax = (1 << self.digit_bits) - 1
        return [Op(v, dmax) for v in digits]

    def elaborate(self, platform) -> Module:
        m = Module()
        D = self.digit_bits
        L = self.cycles
        busy = Signal()
        left = Signal(32)
        phase = Signal(range(max(L, 2)))
        state = Signal(self.out_words * D, reset_less=True)
        start = Signal()
        m.d.comb += [self.in_ready.eq(~busy), start.eq(self.in_valid & ~busy),
                     self.out_z.eq(state)]

        fb = unpack(state, D, self.out_words)[: self.feedback_words]
        fb = fb + [0] * (self.words - len(fb))
        x_bus = Signal(self.words * D)
        m.d.comb += x_bus.eq(Mux(busy, pack(fb, D), self.in_x))
        x = self.input_ops(unpack(x_bus, D, self.words))
        if self.two_operands:
            y_bus = Signal(self.words * D)
            m.d.comb += y_bus.eq(Mux(busy, pack(fb, D), self.in_y))
            y = self.input_ops(unpack(y_bus, D, self.words))
        else:
            y = x
        nm = Namer(m)
        self.namer = nm                       # read by modforge.hw.tiles after elaboration
        st = Stager(m, self.cuts)
        result = self.datapath(m, nm, st, x, y)
        result_bus = pack([fit(r.value, D) for r in result] + [0] * (self.out_words - len(result)), D)

        last_stage = Signal()
        m.d.comb += last_stage.eq((busy | start) & (phase == L - 1))
        remaining = Mux(start, Mux(self.in_count == 0, 1, self.in_count), left)
        m.d.sync += self.out_valid.eq(last_stage)
        with m.If(busy | start):
            m.d.sync += phase.eq(Mux(phase == L - 1, 0, phase + 1))
        with m.If(last_stage):
            m.d.sync += [state.eq(result_bus), left.eq(remaining - 1), busy.eq(remaining != 1)]
        with m.Elif(start):
            m.d.sync += [left.eq(remaining), busy.eq(1)]
        return m
