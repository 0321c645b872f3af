# amaranth: UnusedElaboratable=no
"""The repeated pieces of a design as separate modules, for hierarchical synthesis.

A flat 1024-bit design is too large to synthesise in one piece on a 2-core machine (issue 4's
facts: a flat 1024-bit multiplier did not finish in 18 minutes and 10 GB).  Its cost is,
however, almost all in a few kinds of repeated tiles: the DSP product, the column compressor
trees (one per distinct column shape) and, for Ozturk, the ROMs.  :func:`tiles` elaborates
the design in Python only (no Verilog of the whole) and returns each distinct tile once with
the number of times it occurs; :func:`tile_rtl` turns them into Verilog modules, each with the
same do-not-edit header, ready for ``modforge hw report`` to synthesise and sum.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

from amaranth.hdl import Elaboratable, Module, Signal
from amaranth.lib.memory import Memory

from .common import Namer, Op, Stager, compress_columns, tree_levels


class DspTile(Elaboratable):
    """One ``a x b`` product of at most ``dsp_bits`` bits each: one DSP block."""

    def __init__(self, bits: int):
        self.a = Signal(bits, name="a")
        self.b = Signal(bits, name="b")
        self.p = Signal(2 * bits, name="p")

    def ports(self) -> list[Signal]:
        return [self.a, self.b, self.p]

    def elaborate(self, platform) -> Module:
        m = Module()
        m.d.comb += self.p.eq(self.a * self.b)
        return m


class ColumnTree(Elaboratable):
    """A column's carry-save tree and its final short adder, for operands bounded by ``maxima``."""

    def __init__(self, maxima: tuple[int, ...]):
        self.maxima = maxima
        self.inputs = [Signal(max(v.bit_length(), 1), name=f"in{i}") for i, v in enumerate(maxima)]
        self.sum = Signal(max(sum(maxima).bit_length(), 1), name="sum")

    def ports(self) -> list[Signal]:
        return [*self.inputs, self.sum]

    def elaborate(self, platform) -> Module:
        m = Module()
        nm = Namer(m)
        ops = [Op(s, v) for s, v in zip(self.inputs, self.maxima)]
        sums, _ = compress_columns(nm, Stager(m, ()), [ops], "col", tree_levels(len(ops)))
        m.d.comb += self.sum.eq(sums[0].value)
        return m


class Rom(Elaboratable):
    def __init__(self, entries: list[int], width: int):
        self.entries = entries
        self.addr = Signal(max((len(entries) - 1).bit_length(), 1), name="addr")
        self.data = Signal(width, name="data")

    def ports(self) -> list[Signal]:
        return [self.addr, self.data]

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.rom = rom = Memory(shape=len(self.data), depth=len(self.entries), init=self.entries)
        port = rom.read_port(domain="comb")
        m.d.comb += [port.addr.eq(self.addr), self.data.eq(port.data)]
        return m


@dataclass(frozen=True)
class Tile:
    name: str
    count: int
    make: Callable[[], Any]
    kind: str


def tiles(design: Any) -> list[Tile]:
    """Distinct tiles of ``design`` and how often each occurs (column trees grouped by operand widths)."""
    top = design.build()
    top.elaborate(None)
    top._MustUse__silence = True
    out = [Tile(f"dsp{design.dsp_bits}x{design.dsp_bits}", design.resources()["dsp"],
                lambda: DspTile(design.dsp_bits), "dsp")]
    # Columns grouped by their operands' widths (an operand bounded by v is synthesised as bitlen(v) bits).
    shapes = Counter(tuple(sorted((max(v.bit_length(), 1) for v in maxes), reverse=True))
                     for _, maxes in top.namer.columns if len(maxes) > 1)
    for i, (widths, count) in enumerate(sorted(shapes.items(), key=lambda kv: (-len(kv[0]), kv[0]))):
        maxima = tuple((1 << w) - 1 for w in widths)
        out.append(Tile(f"column{i}_h{len(widths)}", count, lambda mx=maxima: ColumnTree(mx), "column"))
    if design.arch == "ozturk":
        model = design.model()
        for j, off, w in design.tables():
            entries = list(model.table(j, off)[: 1 << w])
            out.append(Tile(f"rom_{j}_{off}", 1, lambda e=entries: Rom(e, design.design_bits), "rom"))
    return out


def tile_rtl(design: Any) -> dict[str, dict[str, Any]]:
    """Each tile as its own Verilog module: name -> {count, kind, verilog}."""
    from amaranth.back import verilog

    from .flow import header, top_name

    out = {}
    for t in tiles(design):
        elab = t.make()
        name = f"{top_name(design)}_{t.name}"
        text = verilog.convert(elab, ports=elab.ports(), emit_src=False, name=name)
        out[t.name] = {"count": t.count, "kind": t.kind, "module": name, "verilog": header(design, "//") + text}
    return out
