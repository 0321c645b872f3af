"""modforge.hw.comb_check: the linear combinational-cycle check finds exactly the loops Amaranth's finds."""

from __future__ import annotations

import pytest
from amaranth.back import verilog
from amaranth.hdl import Elaboratable, Module, Mux, Signal
from amaranth.hdl._ir import build_netlist
from amaranth.hdl._nir import CombinationalCycle
from modforge.hw import comb_check


class _Comb(Elaboratable):
    """A module whose combinational statements are given by ``wire(m, ports)``."""

    def __init__(self, wire, width: int = 64):
        self.a = Signal(width)
        self.b = Signal(width)
        self.sel = Signal()
        self.y = Signal(width)
        self.wire = wire

    def elaborate(self, platform):
        m = Module()
        self.wire(m, self)
        return m

    def ports(self):
        return [self.a, self.b, self.sel, self.y]


def _adder_loop(m, p):           # through a wide adder: the hub path
    t = Signal(len(p.a))
    m.d.comb += [t.eq(p.y + p.a), p.y.eq(t ^ p.b)]


def _bit_loop(m, p):             # bit 1 depends on bit 0 and bit 0 on bit 1, through bitwise operators
    m.d.comb += [p.y[0].eq(p.y[1] & p.a[0]), p.y[1].eq(p.y[0] | p.b[1])]


def _mux_loop(m, p):             # through a multiplexer's data input
    t = Signal(len(p.a))
    m.d.comb += [t.eq(Mux(p.sel, p.y, p.a)), p.y.eq(t + 1)]


def _shifted_chain(m, p):        # no loop: y[i] from y[i-1], a ripple through one signal
    m.d.comb += p.y[0].eq(p.a[0])
    for i in range(1, len(p.y)):
        m.d.comb += p.y[i].eq(p.y[i - 1] ^ p.b[i])


def _wide_arithmetic(m, p):      # no loop: wide operators feeding each other
    t = Signal(2 * len(p.a))
    m.d.comb += [t.eq(p.a * p.b + (p.a << 3)), p.y.eq(t[: len(p.y)] - Mux(p.sel, p.a, p.b))]


def _register_loop(m, p):        # a loop through a flip-flop is not combinational
    m.d.sync += p.y.eq(p.y + p.a)


class _Captured(Exception):
    pass


def _netlist(wire):
    """The netlist as Amaranth has it when it checks for cycles (before its nets are resolved)."""
    from amaranth.hdl import Fragment, _nir

    captured = []

    def capture(self):
        captured.append(self)
        raise _Captured

    top = _Comb(wire)
    saved = _nir.Netlist.check_comb_cycles
    _nir.Netlist.check_comb_cycles = capture
    try:
        build_netlist(Fragment.get(top, None), ports=top.ports())
    except _Captured:
        pass
    finally:
        _nir.Netlist.check_comb_cycles = saved
    return captured[0]


@pytest.mark.parametrize("wire, loop", [(_adder_loop, True), (_bit_loop, True), (_mux_loop, True),
                                        (_shifted_chain, False), (_wide_arithmetic, False),
                                        (_register_loop, False)],
                         ids=["adder-loop", "bit-loop", "mux-loop", "ripple-no-loop", "wide-no-loop",
                              "register-no-loop"])
def test_the_check_agrees_with_amaranths_own(wire, loop):
    netlist = _netlist(wire)
    assert comb_check.has_comb_cycle(netlist) is loop
    from amaranth.hdl import _nir

    original = getattr(_nir.Netlist.check_comb_cycles, "original", _nir.Netlist.check_comb_cycles)
    if loop:
        with pytest.raises(CombinationalCycle):
            original(netlist)
    else:
        original(netlist)


def test_installed_check_still_raises_amaranths_error_with_the_loop():
    comb_check.install()
    with pytest.raises(CombinationalCycle, match="Combinational cycle detected"):
        top = _Comb(_adder_loop)
        verilog.convert(top, ports=top.ports())
    comb_check.install()                       # idempotent
    top = _Comb(_wide_arithmetic)
    text = verilog.convert(top, ports=top.ports())
    assert "module top" in text
