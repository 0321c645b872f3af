# amaranth: UnusedElaboratable=no
"""Intel's hybrid-reduction modular multiplier (seed 001): RTL generator.

Seed: 001_dfb497c295201f64.txt (Gribok, Langhammer, Pasca, "FPGA Modular Multipliers using
Hybrid Reduction Techniques"), Algorithm 1 and Sec. III-VII.  The bit-exact model is
:class:`modforge.arith.hybrid.HybridModel` (with :mod:`modforge.arith.karatsuba`); every width,
constant, table and ROM here comes from its :class:`~modforge.arith.hybrid.HybridDesign`, so the
datapath computes the model's ``P_0 .. P_s``, ``P_coarse``, ``Q1``, ``Q2`` and ``Q`` exactly::

    x, y (n bits) -> P_0 = x*y           recursive Karatsuba (Sec. VI) over 130-bit tiles
    P_i -> P_{i+1} = P_i^H * C_i + P_i^L  s folding steps (Sec. III-A): ceil(n/g) g x g Karatsuba
                                          multipliers by the constant C_i = 2^(w-k) mod M
    P_s, U items -> P_coarse             beta-bit chunks address ROMs T[v] = v 2^e mod M (Sec. III-B),
                                          registered read (M20K-like); the c+1 terms summed
    P_coarse -> Q                         gamma+1 top bits address a ROM of (K1 M, K2 M) (Sec. III-C,
                                          Fig. 1); Q2 = P_coarse - K2 M unless negative, else Q1

The tile (Sec. VII, Fig. 4) cuts 130-bit operands into five 26-bit chunks and forms the 15 DSP
products ``P_ii = X_i Y_i`` and the signed ``D_ij = (X_i - X_j)(Y_i - Y_j)``; the coefficient of
``2^(26c)`` is the seed's sum of P's minus D's.  ``dsp = "27x27"`` (Agilex, the seed's target) makes
each product one signed 27 x 27 multiplication; ``dsp = "26x17"`` (UltraScale+ DSP48E2, 27 x 18 signed)
cuts the second operand at 17 bits, two products each.

Every sum is a carry-save tree of 3:2 levels in two's complement modulo ``2^width`` (a subtracted
term is its complement plus a constant), then one carry-propagate adder; the true sums are
non-negative and below ``2^width`` by construction, so the truncated result is exact.  Every layer is
followed by a register (DSP products, each 3:2 level, each adder, each ROM read), values that skip
layers travel through delay registers, and the latency is the sum of the layers the parameters
give (:meth:`HybridHwDesign.latency_breakdown`); the generator checks that the netlist it builds has
exactly that many stages.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

from amaranth.hdl import Cat, ClockSignal, Const, Instance, Module, Mux, Signal, Value, signed, unsigned
from amaranth.lib.memory import Memory

from ..arith import karatsuba
from ..arith.base import ParameterError
from ..arith.hybrid import HybridDesign, HybridModel
from .common import DELAY_PS, Namer, Op, Stager, cpa_delay, csa_level, tree_levels
from .loop import LoopDesign
from .vectors import Expected, Source

ARCH = "hybrid"

#: Signed operand widths of one DSP multiplication: Agilex 27 x 27, UltraScale+ DSP48E2 27 x 18
#: (26 x 17 unsigned, the name the seed's comparison uses).
DSP_SHAPES = {"27x27": (27, 27), "26x17": (27, 18)}


# ---------------------------------------------------------------------------------------- sum plans
class TermSpec(NamedTuple):
    """A term of a sum: ``bits`` wide at bit ``shift``, two's complement if ``signed``, subtracted if
    ``negative``."""

    shift: int
    bits: int
    signed: bool = False
    negative: bool = False


def pack_rows(specs: list[TermSpec], width: int) -> tuple[list[list[int]], int]:
    """Rows of a carry-save sum modulo ``2^width``: which terms share an operand, and the constant.

    Non-negative unsigned terms that do not overlap share a row (a concatenation, free); a signed or
    subtracted term fills its row to the top (sign extension, complement), and each subtracted term
    adds ``2^shift`` to the constant (``-t 2^s = (~t) 2^s + 2^s`` modulo ``2^width``).
    """
    rows: list[list[int]] = []
    ends: list[int] = []
    const = 0
    for i in sorted(range(len(specs)), key=lambda j: (specs[j].shift, j)):
        sp = specs[i]
        if sp.shift >= width:
            continue
        full = sp.signed or sp.negative
        end = width if full else min(width, sp.shift + sp.bits)
        if sp.negative:
            const += 1 << sp.shift
        for r, e in enumerate(ends):
            if not full and e <= sp.shift:
                rows[r].append(i)
                ends[r] = end
                break
        else:
            rows.append([i])
            ends.append(end)
    return rows, const % (1 << width)


def sum_levels(specs: list[TermSpec], width: int) -> int:
    """3:2 levels a sum of these terms takes: rows plus the constant, down to two."""
    rows, const = pack_rows(specs, width)
    return tree_levels(len(rows) + (1 if const else 0))


# ---------------------------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class HybridHwDesign:
    modulus: int
    bits: int
    beta: int = 9
    steps: int | None = None
    high_part_rounding: str = "floor"
    tile_bits: int = 130
    trim_limit: int | None = None
    dsp: str = "27x27"

    arch = ARCH

    def __post_init__(self) -> None:
        if self.dsp not in DSP_SHAPES:
            raise ParameterError("dsp", f"must be one of {', '.join(DSP_SHAPES)}, got {self.dsp!r}")
        self.model_design.fold_steps          # the model checks every geometric parameter
        self.model()                          # ... and the modulus (it must fill its n bits)
        if self.tile.chunk_bits + 1 > DSP_SHAPES[self.dsp][0]:
            raise ParameterError("tile_bits", f"{self.tile_bits}-bit tiles have {self.tile.chunk_bits}-bit chunks; "
                                              f"their differences need {self.tile.chunk_bits + 1}-bit signed DSP "
                                              f"operands, wider than the {self.dsp} DSP's")

    # -- the model's view ------------------------------------------------------------------
    @cached_property
    def model_design(self) -> HybridDesign:
        return HybridDesign(bits=self.bits, steps=self.steps, beta=self.beta,
                            high_part_rounding=self.high_part_rounding, tile_bits=self.tile_bits,
                            trim_limit=self.trim_limit)

    def model(self) -> HybridModel:
        return self._model

    @cached_property
    def _model(self) -> HybridModel:
        return HybridModel(self.modulus, self.model_design)

    # -- the common interface (one n-bit digit per operand) --------------------------------
    @property
    def design_bits(self) -> int:
        return self.bits

    @property
    def word_bits(self) -> int:
        return self.bits

    @property
    def digit_bits(self) -> int:
        return self.bits

    words = 1
    out_words = 1

    @property
    def dsp_bits(self) -> int:
        """Widest DSP operand (what the forbidden-operator scan allows)."""
        return max(DSP_SHAPES[self.dsp])

    @property
    def tile(self) -> karatsuba.TileParams:
        return self.model_design.tile

    @property
    def dsp_per_product(self) -> int:
        """DSP multiplications per tile product: the second operand is cut at ``b - 1`` bits if wider."""
        a_bits, b_bits = DSP_SHAPES[self.dsp]
        return 1 if self.tile.chunk_bits + 1 <= b_bits else 2

    @property
    def b_split(self) -> int | None:
        """Bit at which the second tile operand is cut (None: one DSP per product)."""
        return None if self.dsp_per_product == 1 else DSP_SHAPES[self.dsp][1] - 1

    # -- the sums the datapath makes, and their 3:2 levels ---------------------------------
    def _product_specs(self, plus: bool) -> list[TermSpec]:
        """Terms one tile product puts into its column (two with a split second operand)."""
        cb = self.tile.chunk_bits
        neg = not plus
        if self.b_split is None:
            return [TermSpec(0, 2 * cb if plus else 2 * cb + 2, signed=not plus, negative=neg)]
        s = self.b_split
        return [TermSpec(0, cb + 1 + s + 1, signed=True, negative=neg),
                TermSpec(s, cb + 1 + (cb + 1 - s), signed=True, negative=neg)]

    def coefficient_bits(self, c: int) -> int:
        """Bits of the coefficient of ``2^(26c)``: the sum of the ordered chunk products ``X_i Y_j``, i+j = c."""
        t = self.tile
        pairs = sum(1 for i in range(t.chunks) for j in range(t.chunks) if i + j == c)
        return (pairs * ((1 << t.chunk_bits) - 1) ** 2).bit_length()

    def column_specs(self, c: int) -> list[TermSpec]:
        plus, minus = self.tile.coefficient_terms(c)
        return ([s for _ in plus for s in self._product_specs(True)] +
                [s for _ in minus for s in self._product_specs(False)])

    @cached_property
    def column_levels(self) -> int:
        t = self.tile
        return max(sum_levels(self.column_specs(c), self.coefficient_bits(c)) for c in range(t.coefficient_count))

    def tile_row_specs(self) -> list[TermSpec]:
        t = self.tile
        return [TermSpec(t.chunk_bits * c, self.coefficient_bits(c)) for c in range(t.coefficient_count)]

    @cached_property
    def tile_row_levels(self) -> int:
        return sum_levels(self.tile_row_specs(), 2 * self.tile.tile_bits)

    @cached_property
    def tile_latency(self) -> int:
        """Chunk differences, DSP products, column 3:2 levels and adder, row 3:2 levels and adder."""
        return 1 + 1 + self.column_levels + 1 + self.tile_row_levels + 1

    @staticmethod
    def combine_specs(bits: int) -> list[TermSpec]:
        """``P_L + P_H 2^2h + (P_M - P_H - P_L) 2^h`` of one Karatsuba split of ``bits``-bit operands."""
        hi, h, mid = karatsuba.split_sizes(bits)
        return [TermSpec(0, 2 * h), TermSpec(2 * h, 2 * hi), TermSpec(h, 2 * mid),
                TermSpec(h, 2 * hi, negative=True), TermSpec(h, 2 * h, negative=True)]

    def combine_levels(self, bits: int) -> int:
        return sum_levels(self.combine_specs(bits), 2 * bits)

    def karatsuba_latency(self, node: karatsuba.KaratsubaNode) -> int:
        """A leaf is a tile; a split adds the operand pre-add, the children and the recombination."""
        if node.is_leaf:
            return self.tile_latency
        child = max(self.karatsuba_latency(ch) for ch in node.children)
        return 1 + child + self.combine_levels(node.bits) + 1

    @cached_property
    def main_tree(self) -> karatsuba.KaratsubaNode:
        d = self.model_design
        return karatsuba.karatsuba_tree(self.bits, d.multiplier_levels)

    def fold_tree(self, step) -> karatsuba.KaratsubaNode:
        return karatsuba.karatsuba_tree(step.sweet_spot, step.levels)

    def fold_pieces(self, step) -> list[tuple[int, int]]:
        """``(shift, bits)`` of the pieces of ``C_i`` each g x g multiplier takes."""
        g, n = step.sweet_spot, self.bits
        return [(g * j, min(g, n - g * j)) for j in range(-(-n // g))]

    def fold_specs(self, step) -> list[TermSpec]:
        return ([TermSpec(sh, step.k + b) for sh, b in self.fold_pieces(step)] + [TermSpec(0, step.low_bits)])

    def fold_latency(self, step) -> int:
        return (self.karatsuba_latency(self.fold_tree(step)) + sum_levels(self.fold_specs(step), step.width_out) + 1)

    @property
    def coarse_levels(self) -> int:
        d = self.model_design
        return tree_levels(d.table_count + 1)

    def latency_breakdown(self) -> dict[str, int]:
        """Pipeline stages per block; the loop register that holds the result closes the last one."""
        d = self.model_design
        out = {"multiplier": self.karatsuba_latency(self.main_tree)}
        for st in d.fold_steps:
            out[f"fold{st.index}"] = self.fold_latency(st)
        out["tables"] = 1 + self.coarse_levels + 1       # registered ROM read, 3:2 levels, adder
        out["fine"] = 1 + 1 + 1                           # ROM read, two subtractions, select into the result register
        return out

    def latency(self) -> int:
        return sum(self.latency_breakdown().values())

    def cycles_per_op(self) -> int:
        """The common interface takes one operation at a time (the datapath itself is free-running)."""
        return self.latency()

    # -- resources ----------------------------------------------------------------------
    def resources(self) -> dict[str, Any]:
        d = self.model_design
        per_tile = self.tile.product_count * self.dsp_per_product
        widest_cpa = max([2 * self.bits, d.coarse_bits, d.fine_multiple_bits + 1] + [st.width_out for st in d.fold_steps])
        table_bits = d.table_count * d.table_entries * self.bits
        fine_bits = d.fine_rom_entries * d.fine_rom_width
        return {
            "dsp": (d.multiplier_tiles + d.reduction_tiles) * per_tile,
            "dsp_tile": self.dsp,
            "dsp_multiplier": d.multiplier_tiles * per_tile,
            "dsp_reduction": d.reduction_tiles * per_tile,
            "model_dsp_27x27": {"multiplier": d.multiplier_dsps, "reduction": d.reduction_dsps},
            "tiles": {"multiplier": d.multiplier_tiles, "folds": [st.tiles for st in d.fold_steps]},
            "fold_widths": d.widths, "fold_k": [st.k for st in d.fold_steps],
            "fold_sweet_spots": [st.sweet_spot for st in d.fold_steps],
            "fold_trims": [st.trim_bits for st in d.fold_steps],
            "roms": d.table_count + 1, "tables": d.table_count, "table_entries": d.table_entries,
            "m20k": d.m20k_tables, "m20k_per_table": d.m20k_per_table,
            "rom_bits": table_bits + fine_bits, "table_rom_bits": table_bits, "fine_rom_bits": fine_bits,
            "gamma": d.gamma, "coarse_bits": d.coarse_bits,
            "latency_breakdown": self.latency_breakdown(),
            "tree_levels": {"tile_columns": self.column_levels, "tile_rows": self.tile_row_levels,
                            "tables": self.coarse_levels},
            "widest_adder_bits": widest_cpa,
            # The slowest layer under common.DELAY_PS: the widest carry-propagate adder, in one cycle.
            "depth_estimate_ps": max(DELAY_PS["dsp"], cpa_delay(widest_cpa)),
        }

    def describe(self) -> str:
        d = self.model_design
        return (f"{self.bits}-bit hybrid modular multiplier: {d.step_count} folding step(s), beta = {self.beta}, "
                f"{d.table_count} tables, {self.dsp} DSPs, latency {self.latency()}")

    def table_module(self, t: int) -> str:
        from .common import digest

        return f"mf_hybrid_{self.bits}_{digest(ARCH, self)[:8]}_table{t}"

    def extra_verilog(self) -> str:
        """The coarse-reduction tables as ROM modules: ``2^beta`` words of ``n`` bits, ``T[v] = v 2^e mod M``
        (seed 001 Sec. III-B), read synchronously (a registered output, as an M20K's), contents in an
        ``initial`` block that Quartus, Vivado, Yosys and Verilator all read as ROM contents."""
        d = self.model_design
        n, beta = self.bits, self.beta
        digits = -(-n // 4)
        out = []
        for t in range(d.table_count):
            ch = d.chunks[t]
            lines = [f"// Table {t}: T[v] = v * 2^{ch.weight} mod M, addressed by bits "
                     f"[{ch.position * beta}, {ch.position * beta + ch.bits}) of {ch.source}.",
                     f"module {self.table_module(t)}(clk, addr, data);",
                     "  input clk;", f"  input [{beta - 1}:0] addr;", f"  output reg [{n - 1}:0] data;",
                     f"  reg [{n - 1}:0] rom [0:{d.table_entries - 1}];", "  initial begin"]
            lines += [f"    rom[{v}] = {n}'h{e:0{digits}x};" for v, e in enumerate(self.model().table(t))]
            lines += ["  end", "  always @(posedge clk) data <= rom[addr];", "endmodule", ""]
            out.append("\n".join(lines))
        return "\n".join(out)

    def build(self) -> "HybridMultiplier":
        return HybridMultiplier(self)

    def vector_source(self) -> "HybridSource":
        return HybridSource(self)


# ---------------------------------------------------------------------------------------- the RTL
class W(NamedTuple):
    """A value and the pipeline stage (registers behind it) at which it is valid."""

    value: Value
    stage: int


class Term(NamedTuple):
    value: Value
    spec: TermSpec


def _extend(v: Value, width: int, is_signed: bool) -> Value:
    """``v`` sign- or zero-extended (or truncated) to exactly ``width`` bits."""
    v = Value.cast(v)
    if len(v) >= width:
        return v[:width]
    fill = v[-1].replicate(width - len(v)) if is_signed else Const(0, width - len(v))
    return Cat(v, fill)


class Builder:
    """The datapath: pipeline registers, delay lines, tiles, Karatsuba, folds, tables, fine ROM."""

    def __init__(self, m: Module, nm: Namer, p: HybridHwDesign, rom_instances: bool = True):
        self.m, self.nm, self.p = m, nm, p
        # False: the tables as Amaranth memories (for Amaranth's simulator, which runs no Verilog instances).
        self.rom_instances = rom_instances
        self._delays: dict[tuple[int, int], tuple[Value, Value]] = {}
        # Intermediate values the model also computes, by name: (signal, stage).  Read by the tests.
        self.probes: dict[str, W] = {}

    def name(self, prefix: str) -> str:
        n = self.nm.count.get(prefix, 0)
        self.nm.count[prefix] = n + 1
        return f"{prefix}_{n}"

    def reg(self, v: Value, prefix: str) -> Signal:
        v = Value.cast(v)
        r = Signal(v.shape(), name=self.name(prefix), reset_less=True)
        self.m.d.sync += r.eq(v)
        return r

    def at(self, w: W, stage: int) -> W:
        """``w`` delayed to ``stage`` (shared delay lines: one chain of registers per value)."""
        if w.stage > stage:
            raise AssertionError(f"a value of stage {w.stage} is needed at stage {stage}")
        v, s = w.value, w.stage
        while s < stage:
            key = (id(v), s)
            hit = self._delays.get(key)
            if hit is None:
                hit = (v, self.reg(v, "dly"))
                self._delays[key] = hit
            v = hit[1]
            s += 1
        return W(v, stage)

    # -- sums ------------------------------------------------------------------------------
    def add_terms(self, terms: list[Term], width: int, levels: int, tag: str, stage: int) -> W:
        """Carry-save sum of ``terms`` (valid at ``stage``) modulo ``2^width``: ``levels`` registered 3:2 levels,
        one registered adder."""
        rows, const = pack_rows([t.spec for t in terms], width)
        ops: list[Op] = []
        for row in rows:
            parts: list[Value] = []
            pos = 0
            for i in row:
                v, sp = terms[i]
                if sp.shift > pos:
                    parts.append(Const(0, sp.shift - pos))
                full = sp.signed or sp.negative
                seg = _extend(v, (width if full else min(width, sp.shift + sp.bits)) - sp.shift, sp.signed)
                parts.append(~seg if sp.negative else seg)
                pos = sp.shift + len(seg)
            row_value = Cat(*parts)
            ops.append(Op(row_value, (1 << len(row_value)) - 1))
        if const:
            ops.append(Op(Const(const, width), const))
        if tree_levels(len(ops)) > levels:
            raise AssertionError(f"{tag}: {len(ops)} rows need more than {levels} levels")
        for lvl in range(levels):
            if len(ops) > 2:
                ops = csa_level(self.nm, ops, width, f"{tag}_l{lvl}")
            ops = [Op(self.reg(o.value, f"{tag}_r{lvl}"), o.max) for o in ops]
        if not ops:
            total: Value = Const(0, width)
        elif len(ops) == 1:
            total = _extend(ops[0].value, width, False)
        else:
            total = (_extend(ops[0].value, width, False) + _extend(ops[1].value, width, False))[:width]
        return W(self.reg(total, f"{tag}_sum"), stage + levels + 1)

    # -- the tile (Sec. VII) -------------------------------------------------------------
    def tile(self, x: W, y: W | int, tag: str) -> W:
        """``x * y`` for operands of at most ``tile_bits`` bits: 15 DSP products, columns, rows."""
        p = self.p
        t = p.tile
        cb = t.chunk_bits
        s = x.stage
        xv = _extend(x.value, t.tile_bits, False)
        xs = [xv[cb * i:cb * (i + 1)] for i in range(t.chunks)]
        const_y = isinstance(y, int)
        if const_y:
            ys: list[Any] = [(y >> (cb * i)) & ((1 << cb) - 1) for i in range(t.chunks)]
        else:
            assert y.stage == s
            yv = _extend(y.value, t.tile_bits, False)
            ys = [yv[cb * i:cb * (i + 1)] for i in range(t.chunks)]

        def diff(a, b):
            if isinstance(a, int):
                return a - b
            return (Cat(a, Const(0, 1)).as_signed() - Cat(b, Const(0, 1)).as_signed())[:cb + 1].as_signed()

        # Layer 1: chunks and chunk differences (the DSP pre-adder), registered.
        a_ops: list[Value] = []
        b_ops: list[Any] = []
        signed_ops: list[bool] = []
        for i in range(t.chunks):
            a_ops.append(self.reg(xs[i], f"{tag}_x"))
            b_ops.append(ys[i] if const_y else self.reg(ys[i], f"{tag}_y"))
            signed_ops.append(False)
        for i, j in t.pairs:
            a_ops.append(self.reg(diff(xs[i], xs[j]), f"{tag}_dx"))
            b_ops.append(diff(ys[i], ys[j]) if const_y else self.reg(diff(ys[i], ys[j]), f"{tag}_dy"))
            signed_ops.append(True)
        # Layer 2: the DSP products, registered; each is one or two terms of its columns.
        products: list[list[tuple[Value, int]]] = []        # (value, shift) per product
        for a, b, sg in zip(a_ops, b_ops, signed_ops):
            products.append(self._dsp(a, b, sg, tag))
        # Layers 3..: the coefficient of 2^(cb c) per column, then the rows.
        stage = s + 2
        coeffs: list[Term] = []
        col_results = []
        for c in range(t.coefficient_count):
            plus, minus = t.recombination[c]
            terms = []
            for idx, negative in [(q, False) for q in plus] + [(q, True) for q in minus]:
                sg = signed_ops[idx]
                for v, sh in products[idx]:
                    terms.append(Term(v, TermSpec(sh, len(v), signed=sg or self.p.b_split is not None,
                                                  negative=negative)))
            col_results.append(self.add_terms(terms, p.coefficient_bits(c), p.column_levels, f"{tag}_c{c}", stage))
        for c, w in enumerate(col_results):
            self.probes[f"{tag}_coefficient{c}"] = w
            coeffs.append(Term(w.value, TermSpec(cb * c, p.coefficient_bits(c))))
        stage = col_results[0].stage
        out = self.add_terms(coeffs, 2 * t.tile_bits, p.tile_row_levels, f"{tag}_row", stage)
        assert out.stage == s + p.tile_latency
        return out

    def _dsp(self, a: Value, b: Any, is_signed: bool, tag: str) -> list[tuple[Value, int]]:
        """One tile product as DSP multiplications (registered): ``[(product, shift)]``; none if it is 0."""
        split = self.p.b_split
        if split is None:
            parts = [(b, 0)]
        elif isinstance(b, int):
            parts = [(b & ((1 << split) - 1), 0), (b >> split, split)]
        else:
            parts = [(b[:split], 0), (b[split:], split)]
        out = []
        for bp, sh in parts:
            if isinstance(bp, int):
                if bp == 0:
                    continue
                shape = signed(max(bp.bit_length(), (-bp - 1).bit_length()) + 1) if (is_signed or split) else \
                    unsigned(bp.bit_length())
                bv: Value = Const(bp, shape)
            else:
                bv = bp
            if split is not None:
                # DSP48E2: 27 x 18 signed.  The low part is unsigned (one zero bit on top); the high part
                # carries the sign of a difference; an unsigned chunk has a zero on top.
                av = a.as_signed() if is_signed else Cat(a, Const(0, 1)).as_signed()
                if not isinstance(bp, int):
                    bv = bv.as_signed() if (is_signed and sh) else Cat(bv, Const(0, 1)).as_signed()
                prod = av * bv
            elif is_signed:
                prod = a.as_signed() * (bv if isinstance(bp, int) else bv.as_signed())
            else:
                prod = a * bv
            out.append((self.reg(prod, f"{tag}_dsp"), sh))
        return out

    # -- recursive Karatsuba (Sec. VI) -------------------------------------------------------
    def karatsuba(self, node: karatsuba.KaratsubaNode, a: W, b: W | int, tag: str) -> W:
        """``a * b`` (``node.bits``-bit operands, ``2 node.bits``-bit product)."""
        if node.is_leaf:
            out = self.tile(a, b, tag)
            return W(out.value[:2 * node.bits], out.stage)
        high, low, middle = node.children
        h = low.bits
        s = a.stage
        av = _extend(a.value, node.bits, False)
        a_l, a_h = av[:h], av[h:]
        parts_a = [self.reg(a_h, f"{tag}_ah"), self.reg(a_l, f"{tag}_al"), self.reg(a_h + a_l, f"{tag}_am")]
        if isinstance(b, int):
            b_l, b_h = b & ((1 << h) - 1), b >> h
            parts_b: list[Any] = [b_h, b_l, b_h + b_l]
        else:
            bv = _extend(b.value, node.bits, False)
            bl, bh = bv[:h], bv[h:]
            parts_b = [W(self.reg(bh, f"{tag}_bh"), s + 1), W(self.reg(bl, f"{tag}_bl"), s + 1),
                       W(self.reg(bh + bl, f"{tag}_bm"), s + 1)]
        prods = [self.karatsuba(ch, W(pa, s + 1), pb, f"{tag}{name}")
                 for ch, pa, pb, name in zip(node.children, parts_a, parts_b, "hlm")]
        stage = max(pr.stage for pr in prods)
        p_h, p_l, p_m = (self.at(pr, stage).value for pr in prods)
        specs = self.p.combine_specs(node.bits)
        terms = [Term(v, sp) for v, sp in zip((p_l, p_h, p_m, p_h, p_l), specs)]
        return self.add_terms(terms, 2 * node.bits, self.p.combine_levels(node.bits), f"{tag}_k", stage)

    # -- a folding step (Sec. III-A, Algorithm 1) --------------------------------------------
    def fold(self, step, constant: int, pw: W) -> tuple[W, W | None]:
        p = self.p
        tag = f"f{step.index}"
        u = W(pw.value[step.width:step.width_in], pw.stage) if step.trim_bits else None
        high = pw.value[step.low_bits:step.width]
        low = W(pw.value[:step.low_bits], pw.stage)
        tree = p.fold_tree(step)
        prods = []
        for j, (sh, bits) in enumerate(p.fold_pieces(step)):
            piece = (constant >> sh) & ((1 << bits) - 1)
            if piece == 0:
                continue
            pr = self.karatsuba(tree, W(high, pw.stage), piece, f"{tag}m{j}")
            prods.append((pr, sh, bits))
        stage = pw.stage + p.karatsuba_latency(tree)
        terms = [Term(self.at(pr, stage).value[:step.k + bits], TermSpec(sh, step.k + bits)) for pr, sh, bits in prods]
        terms.append(Term(self.at(low, stage).value, TermSpec(0, step.low_bits)))
        levels = sum_levels(p.fold_specs(step), step.width_out)
        out = self.add_terms(terms, step.width_out, levels, f"{tag}s", stage)
        return out, u

    # -- the whole datapath --------------------------------------------------------------------
    def run(self, x: Value, y: Value) -> tuple[Value, Value, int]:
        """(Q, second-candidate flag, stage) for operands valid at stage 0."""
        p = self.p
        d = p.model_design
        model = p.model()
        n = p.bits
        pw = self.karatsuba(p.main_tree, W(x, 0), W(y, 0), "mul")
        self.probes["P0"] = pw
        items: dict[str, W] = {}
        for st, c in zip(d.fold_steps, model.constants):
            pw, u = self.fold(st, c, pw)
            self.probes[f"P{st.index + 1}"] = pw
            if u is not None:
                items[f"U{st.index}"] = u
        items[f"P{d.step_count}"] = W(pw.value[n:d.final_width], pw.stage)
        # Table-based coarse reduction (Sec. III-B): one ROM per beta-bit chunk, registered read.
        # The tables are instances of ROM modules whose Verilog p.rom_verilog() writes directly: Amaranth
        # would spend most of a generation converting their contents bit by bit.
        t0 = pw.stage
        entries = []
        for t, ch in enumerate(d.chunks):
            item = self.at(items[ch.source], t0).value
            addr = Signal(p.beta, name=f"table{t}_addr")
            data = Signal(n, name=f"table{t}_data")
            self.m.d.comb += addr.eq(item[ch.position * p.beta:ch.position * p.beta + ch.bits])
            if self.rom_instances:
                self.m.submodules[f"table{t}"] = Instance(p.table_module(t), i_clk=ClockSignal(), i_addr=addr,
                                                          o_data=data)
            else:
                rom = Memory(shape=unsigned(n), depth=d.table_entries, init=list(model.table(t)))
                self.m.submodules[f"table{t}"] = rom
                port = rom.read_port(domain="sync")
                self.m.d.comb += [port.addr.eq(addr), data.eq(port.data)]
            entries.append(Term(data, TermSpec(0, n)))
        base = self.at(W(pw.value[:n], t0), t0 + 1)
        coarse = self.add_terms([Term(base.value, TermSpec(0, n))] + entries, d.coarse_bits, p.coarse_levels,
                                "coarse", t0 + 1)
        self.probes["P_coarse"] = coarse
        self.probes["P_s_high"] = items[f"P{d.step_count}"]
        # Fine-grain reduction (Sec. III-C, Fig. 1): ROM of (K1 M, K2 M), two subtractions, the sign of Q2.
        mb = d.fine_multiple_bits
        words = [k1m | (k2m << mb) for k1m, k2m in model.fine_rom()]
        fine = Memory(shape=unsigned(2 * mb), depth=d.fine_rom_entries, init=words)
        self.m.submodules["fine_rom"] = fine
        fport = fine.read_port(domain="comb")
        self.m.d.comb += fport.addr.eq(coarse.value[n - 1:d.coarse_bits])
        mults = self.reg(fport.data, "fine_km")
        pc = self.at(coarse, coarse.stage + 1).value
        e = d.coarse_bits + 2
        q1 = self.reg((_extend(pc, e, False) - _extend(mults[:mb], e, False))[:e], "fine_q1")
        q2 = self.reg((_extend(pc, e, False) - _extend(mults[mb:], e, False))[:e], "fine_q2")
        negative = q2[e - 1]
        q = Mux(negative, q1[:n], q2[:n])
        self.probes["Q1"] = W(q1, coarse.stage + 2)
        self.probes["Q2"] = W(q2, coarse.stage + 2)
        return q, ~negative, coarse.stage + 2


class HybridMultiplier(LoopDesign):
    two_operands = True

    def __init__(self, p: HybridHwDesign):
        self.p = p
        self.words = 1
        self.out_words = 1
        self.feedback_words = 1
        self.digit_bits = p.bits
        self.cycles = p.latency()
        self.cuts = frozenset()
        self._make_ports()
        self.out_flags = Signal(name="out_flags")

    def ports(self) -> list[Signal]:
        return super().ports() + [self.out_flags]

    def datapath(self, m: Module, nm: Namer, st: Stager, x: list[Op], y: list[Op]) -> list[Op]:
        q, second, stage = Builder(m, nm, self.p).run(x[0].value, y[0].value)
        if stage != self.cycles - 1:
            raise AssertionError(f"the datapath has {stage + 1} stages, the parameters say {self.cycles}")
        # Captured every cycle, so it holds the flag of the result the loop register took at the same edge.
        m.d.sync += self.out_flags.eq(second)
        return [Op(q, self.p.modulus - 1)]


# ---------------------------------------------------------------------------------------- vectors
class HybridSource(Source):
    """Vectors from :class:`HybridModel`: edge cases, operands that drive every branch, random."""

    has_y = True
    flag_names = ("second_candidate",)

    def __init__(self, design: HybridHwDesign):
        super().__init__(design)
        d = design.model_design
        self.coverage: dict[str, Any] = {"second_candidate": [0, 0], "fine_index": set(),
                                         "table_max": [0] * d.table_count, "table_nonzero": [0] * d.table_count,
                                         "trim_nonzero": {f"U{st.index}": 0 for st in d.fold_steps if st.trim_bits}}

    def expect(self, x, y):
        out = self.model.modmul(x[0], y[0])
        second = out.events["second_candidate"]
        self._cover(out.stages, second)
        return Expected((out.result,), second, self.design.latency())

    def _cover(self, stages: dict[str, int], second: int) -> None:
        d = self.design.model_design
        cov = self.coverage
        cov["second_candidate"][second] += 1
        cov["fine_index"].add(stages["fine_index"])
        p_s = stages[f"P{d.step_count}"] if d.step_count else stages["P0"]
        items = {f"P{d.step_count}": p_s >> d.bits}
        for st in d.fold_steps:
            if st.trim_bits:
                items[f"U{st.index}"] = stages[f"U{st.index}"]
                cov["trim_nonzero"][f"U{st.index}"] += stages[f"U{st.index}"] != 0
        for t, ch in enumerate(d.chunks):
            v = (items[ch.source] >> (ch.position * d.beta)) & ((1 << ch.bits) - 1)
            cov["table_max"][t] = max(cov["table_max"][t], v)
            cov["table_nonzero"][t] += v != 0

    def bound(self) -> int:
        return self.modulus

    def _patterns(self) -> dict[str, int]:
        """Operands below M whose 26-bit chunks are extreme: all ones, alternating all ones and zero."""
        n, m = self.design.bits, self.modulus
        cb = self.design.tile.chunk_bits
        below_top = (1 << (n - 1)) - 1
        ones = (1 << cb) - 1
        alt = sum(ones << (cb * i) for i in range(0, -(-n // cb), 2)) & below_top
        return {"all_ones_chunks": below_top, "alternating_chunks": alt, "alternating_chunks_inverse": below_top ^ alt,
                "top_bit": min(1 << (n - 1), m - 1)}

    def edge_cases(self):
        m = self.modulus
        pat = self._patterns()
        one = (1,)
        cases = [("zero_times_m_minus_1", (0,), (m - 1,)), ("one_times_one", one, one),
                 ("m_minus_1_squared", (m - 1,), (m - 1,)), ("m_minus_1_times_one", (m - 1,), one),
                 ("top_bit_squared", (pat["top_bit"],), (pat["top_bit"],)),
                 ("all_ones_chunks_squared", (pat["all_ones_chunks"],), (pat["all_ones_chunks"],)),
                 ("all_ones_chunks_times_m_minus_1", (pat["all_ones_chunks"],), (m - 1,)),
                 ("alternating_chunks_times_inverse", (pat["alternating_chunks"],),
                  (pat["alternating_chunks_inverse"],)),
                 ("alternating_chunks_squared", (pat["alternating_chunks"],), (pat["alternating_chunks"],)),
                 ("alternating_inverse_squared", (pat["alternating_chunks_inverse"],),
                  (pat["alternating_chunks_inverse"],))]
        cases += self._searched()
        return cases

    def _searched(self) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
        """Operands found by a seeded search: each fine-reduction candidate, the largest and smallest
        ``P_coarse`` (the top and bottom of the fine ROM), and the largest top chunk of every table."""
        rng = random.Random(0x001)
        m = self.modulus
        d = self.design.model_design
        best: dict[str, tuple[int, int, int]] = {}

        def keep(name: str, score: int, x: int, y: int) -> None:
            if name not in best or score > best[name][0]:
                best[name] = (score, x, y)

        for _ in range(400):
            x, y = rng.randrange(m), rng.randrange(m)
            if rng.randrange(4) == 0:
                x = m - 1 - rng.randrange(1 << 16)
            out = self.model.modmul(x, y)
            pc = out.stages["P_coarse"]
            keep(f"fine_candidate_{'second' if out.events['second_candidate'] else 'first'}", 0, x, y)
            keep("largest_p_coarse", pc, x, y)
            keep("smallest_p_coarse", -pc, x, y)
            keep("largest_top_chunk", out.stages[f"P{d.step_count}"] >> d.bits if d.step_count else 0, x, y)
        return [(name, (x,), (y,)) for name, (_, x, y) in sorted(best.items())]

    def random_operand(self, rng):
        m = self.modulus
        kind = rng.randrange(8)
        if kind == 0:                                   # chunks of all ones or zero, below M
            cb = self.design.tile.chunk_bits
            v = 0
            for i in range(-(-self.design.bits // cb)):
                if rng.randrange(2):
                    v |= ((1 << cb) - 1) << (cb * i)
            return (v % m,) if v >= m else (v,)
        if kind == 1:                                   # near M
            return (m - 1 - rng.randrange(1 << 20),)
        return (rng.randrange(m),)

    def chain_start(self, x):
        return (x % self.modulus,)

    def chain_value(self, digits):
        return digits[0]


# ---------------------------------------------------------------------------------------- options
def design_from_options(modulus: int, bits: int | None, options: dict[str, Any]) -> HybridHwDesign:
    known = {"beta", "steps", "high_part_rounding", "tile_bits", "trim_limit", "dsp"}
    for key in options:
        if key not in known:
            raise ParameterError(key, f"is not a parameter of {ARCH}; known: {', '.join(sorted(known))}")
    n = bits if bits is not None else modulus.bit_length()
    if modulus.bit_length() != n:
        raise ParameterError("modulus", f"is {modulus.bit_length()} bits wide; the {ARCH} design of {n} bits needs "
                                        f"a modulus with its top bit set (2^{n - 1} <= M < 2^{n}: the fine-grain "
                                        f"reduction's two candidates, seed 001 Sec. III-C)")
    return HybridHwDesign(modulus=modulus, bits=n, **options)
