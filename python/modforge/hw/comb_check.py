"""A linear-time replacement for Amaranth's combinational-cycle check.

Amaranth 0.5 checks a netlist for combinational loops bit by bit before it
writes RTLIL (``amaranth.hdl._nir.Netlist.check_comb_cycles``).  An arithmetic
operator (``+``, ``-``, ``*``, comparisons, shifts) tells that check that each
of its output bits depends on every input bit, so a ``w``-bit adder costs
``w * 2w`` edge visits: quadratic in the width.  The wide adders of the large
designs (the hybrid multiplier's 4,096-bit Karatsuba recombination at 2,048
bits, the 377-bit field multipliers of the MSM adder, seven of them) made that
check most of a generation that ran for over half an hour.

The check here walks the same bit-level graph with one change: an operator
whose every output bit depends on every input bit gets one hub node between
its outputs and its inputs (``out -> hub -> in``), so the cell costs
``w_out + w_in`` edges instead of their product.  A path through the hub is a
path of the original graph and the other way round, so the graph has a cycle
exactly when Amaranth's has one.  When it finds one, Amaranth's own check is
run to raise its usual error (``CombinationalCycle``, with the source
locations of the loop); otherwise the netlist goes on unchanged.
"""

from __future__ import annotations

from typing import Any

_HUB_SHIFT = 1 << 62      # hub node ids, disjoint from Amaranth's nets (cell << 16 | bit, or negative)
_installed = False


def _all_to_all(cell: Any, operator_class: type) -> bool:
    """True when each output bit of ``cell`` depends on all its input bits (Operator.comb_edges_to)."""
    if not isinstance(cell, operator_class):
        return False
    if len(cell.inputs) == 1:
        return cell.operator != "~"
    if len(cell.inputs) == 2:
        return cell.operator not in ("&", "|", "^")
    return False                  # the multiplexer "m": each output bit has its own three inputs


def has_comb_cycle(netlist: Any) -> bool:
    """Whether the netlist's bit-level combinational graph has a cycle (iterative DFS, hubs as above)."""
    from amaranth.hdl import _nir

    cells = netlist.cells
    connections = netlist.connections
    hub_inputs: dict[int, list[int]] = {}

    def successors(node: int) -> list[int]:
        # Nets are ints (amaranth.hdl._nir.Net): 0 and 1 constants, negative "late" nets (a signal's
        # driver, in netlist.connections), otherwise cell << 16 | bit.
        if node >= _HUB_SHIFT:                          # a hub: every input net of its operator
            return hub_inputs[node]
        if node < 0:
            return [int(connections[_nir.Net(node)])]
        if node < 2:
            return []
        cell_index = node >> 16
        cell = cells[cell_index]
        if _all_to_all(cell, _nir.Operator):
            hub = _HUB_SHIFT + cell_index
            if hub not in hub_inputs:
                hub_inputs[hub] = [int(n) for value in cell.inputs for n in value]
            return [hub]
        return [int(src) for src, _ in cell.comb_edges_to(node & 0xFFFF)]

    done: set[int] = set()
    on_path: set[int] = set()

    def visit(root: int) -> bool:
        if root in done:
            return False
        stack = [(root, iter(successors(root)))]
        on_path.add(root)
        while stack:
            node, pending = stack[-1]
            for nxt in pending:
                if nxt in on_path:
                    return True
                if nxt not in done:
                    on_path.add(nxt)
                    stack.append((nxt, iter(successors(nxt))))
                    break
            else:
                stack.pop()
                on_path.discard(node)
                done.add(node)
        return False

    for cell_index, cell in enumerate(cells):
        for net in cell.output_nets(cell_index):
            if visit(int(net)):
                return True
    for value in netlist.signals.values():
        for net in value:
            if visit(int(net)):
                return True
    return False


def install() -> None:
    """Make Amaranth's netlist builder use the linear check (idempotent; Amaranth 0.5 only)."""
    global _installed
    if _installed:
        return
    from amaranth.hdl import _nir

    original = _nir.Netlist.check_comb_cycles

    def check_comb_cycles(self: Any) -> None:
        if has_comb_cycle(self):
            original(self)                   # Amaranth's own walk names the loop and raises
            raise AssertionError("modforge.hw.comb_check found a combinational cycle that Amaranth's "
                                 "check does not see; please report this")

    check_comb_cycles.__doc__ = original.__doc__
    check_comb_cycles.original = original     # type: ignore[attr-defined]
    _nir.Netlist.check_comb_cycles = check_comb_cycles
    _installed = True
