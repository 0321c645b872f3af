# amaranth: UnusedElaboratable=no
"""Ozturk's low-latency modular squarer for a fixed modulus (seeds 000 and 002 Sec. I).

The loop, one squaring per ``cycles`` clock cycles::

    state (words RBR digits of d+r bits)
      -> DSP array: words(words+1)/2 digit products, cross terms doubled by a shift
      -> product column trees: carry-save 3:2 levels, one short adder per column
      -> one split at d bits: product digits C_0 .. C_2words            (rbr.polsqr)
      -> digits >= base_words cut into lut_bits chunks, each addressing a ROM
         T[j,o][v] = v * 2^(d j + o) mod M, generated from the modulus
      -> reduction column trees: base digit + one word of every ROM entry
      -> one split at d bits -> state                                   (OzturkModel.reduce)

Bit for bit the model is :meth:`modforge.arith.ozturk.OzturkModel.multiply_digits` of the
state with itself.  ``cycles`` places registers between those layers (see
:func:`modforge.hw.common.schedule`); latency = cycles, one squaring per latency.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from amaranth.hdl import Cat, Const, Module
from amaranth.lib.memory import Memory

from ..arith.base import ParameterError
from ..arith.ozturk import OzturkModel, OzturkParams
from .common import (DELAY_PS, Layer, PipelinedOp, Namer, Op, Stager, compress_columns, cpa_delay, pieces, rbr_split,
                     require_range, fit, split_digit, tiles_per_product, tree_levels, word_product)
from .loop import LoopDesign

ARCH = "ozturk"


@dataclass(frozen=True)
class OzturkDesign(PipelinedOp):
    """One value for the whole design; every derived number is a method of it."""

    modulus: int
    bits: int | None = None
    word_bits: int = 16
    redundant_bits: int = 1
    redundant_words: int = 2
    lut_bits: int = 6
    cycles: int = 1
    dsp_bits: int = 17

    def __post_init__(self) -> None:
        require_range("dsp_bits", self.dsp_bits, 2, 64)
        require_range("cycles", self.cycles, 1)
        self.model_params  # validates the arithmetic parameters
        self.schedule      # validates cycles against the loop's layers

    arch = ARCH

    @cached_property
    def model_params(self) -> OzturkParams:
        return OzturkParams(modulus=self.modulus, bits=self.bits, word_bits=self.word_bits,
                            redundant_bits=self.redundant_bits, redundant_words=self.redundant_words,
                            lut_bits=self.lut_bits)

    def model(self) -> OzturkModel:
        return OzturkModel(self.model_params)

    # -- layout ----------------------------------------------------------------------------------
    @property
    def design_bits(self) -> int:
        return self.model_params.design_bits

    @property
    def digit_bits(self) -> int:
        return self.word_bits + self.redundant_bits

    @property
    def words(self) -> int:
        return self.model_params.words

    @property
    def base_words(self) -> int:
        return self.model_params.base_words

    @property
    def product_digits(self) -> int:
        return 2 * self.words + 1

    def square_pairs(self) -> list[tuple[int, int]]:
        return [(i, j) for i in range(self.words) for j in range(i, self.words)]

    def tables(self) -> list[tuple[int, int, int]]:
        """(product digit, bit offset, address bits) of every ROM."""
        out = []
        for j in self.model_params.reduced_digits:
            off = 0
            for w in self.model_params.chunk_widths():
                out.append((j, off, w))
                off += w
        return out

    def product_heights(self) -> list[int]:
        return self.model_params.rbr.column_heights(square=True)

    def reduction_height(self) -> int:
        return 1 + len(self.tables())

    # -- pipeline ------------------------------------------------------------------------------
    def layers(self) -> list[Layer]:
        d = self.word_bits
        tiles = tiles_per_product(self.digit_bits, self.digit_bits, self.dsp_bits)
        out = [Layer("mux", DELAY_PS["mux"]), Layer("dsp", DELAY_PS["dsp"])]
        if tiles > 1:
            out.append(Layer("tile", DELAY_PS["csa"] * tree_levels(tiles) + cpa_delay(2 * self.digit_bits + 1)))
        pl = tree_levels(max(self.product_heights()))
        out += [Layer(f"ptree_tree{i + 1}", DELAY_PS["csa"]) for i in range(pl)]
        out += [Layer("ptree_cpa", cpa_delay(d + pl + 3)), Layer("psplit", DELAY_PS["split"]),
                Layer("rom", DELAY_PS["rom"])]
        rl = tree_levels(self.reduction_height())
        out += [Layer(f"rtree_tree{i + 1}", DELAY_PS["csa"]) for i in range(rl)]
        out += [Layer("rtree_cpa", cpa_delay(d + rl + 3)), Layer("rsplit", DELAY_PS["split"])]
        return out

    def resources(self) -> dict[str, Any]:
        tiles = tiles_per_product(self.digit_bits, self.digit_bits, self.dsp_bits)
        rom_bits = sum((1 << w) * self.design_bits for _, _, w in self.tables())
        return {
            "dsp": len(self.square_pairs()) * tiles,
            "dsp_tile": f"{self.dsp_bits}x{self.dsp_bits}",
            "digit_products": len(self.square_pairs()),
            "roms": len(self.tables()),
            "rom_bits": rom_bits,
            "product_tree_height": max(self.product_heights()),
            "product_tree_levels": tree_levels(max(self.product_heights())),
            "reduction_tree_height": self.reduction_height(),
            "reduction_tree_levels": tree_levels(self.reduction_height()),
            "state_bits": self.words * self.digit_bits,
            "pipeline_cuts": sorted(self.schedule[0], key=[l.name for l in self.layers()].index),
            "depth_estimate_ps": self.depth_estimate_ps(),
        }

    def describe(self) -> str:
        return (f"{self.design_bits}-bit Ozturk squarer: {self.words} digits of {self.word_bits}+{self.redundant_bits} "
                f"bits, {len(self.tables())} ROMs of {self.lut_bits}-bit address, {self.cycles} cycle(s) per squaring")

    def build(self) -> "OzturkSquarer":
        return OzturkSquarer(self)


class OzturkSquarer(LoopDesign):
    def __init__(self, p: OzturkDesign):
        self.p = p
        self.words = p.words
        self.out_words = p.words
        self.feedback_words = p.words
        self.digit_bits = p.digit_bits
        self.cycles = p.cycles
        self.cuts = p.schedule[0]
        self._make_ports()

    def datapath(self, m: Module, nm: Namer, st: Stager, x: list[Op], y: list[Op]) -> list[Op]:
        p = self.p
        d = p.word_bits
        x = st.cut_ops("mux", x)
        # DSP array: one digit product per pair i <= j; cross products doubled by a shift.
        prods = []
        for i, j in p.square_pairs():
            prod = word_product(nm, x[i], x[j], p.dsp_bits, f"sq{i}_{j}")
            prods.append((i + j, prod, i != j))
        vals = st.cut_ops("dsp", [pr for _, pr, _ in prods])
        if tiles_per_product(p.digit_bits, p.digit_bits, p.dsp_bits) > 1:
            vals = st.cut_ops("tile", vals)
        cols: list[list[Op]] = [[] for _ in range(p.product_digits)]
        for (diag, _, dbl), pr in zip(prods, vals):
            if dbl:
                pr = Op(Cat(Const(0, 1), pr.value), pr.max << 1)
            for s, piece in enumerate(pieces(pr, d)):
                if piece.max:
                    cols[diag + s].append(piece)
        sums, _ = compress_columns(nm, st, cols, "ptree", tree_levels(max(p.product_heights())))
        t = rbr_split(nm, sums, d, "t")
        t = st.cut_ops("psplit", t)
        # Table reduction: ROMs addressed by lut_bits chunks of the upper digits.
        model = p.model()
        base = p.base_words
        entries = []
        for (j, off, w) in p.tables():
            table = model.table(j, off)[: 1 << w]
            rom = Memory(shape=p.design_bits, depth=1 << w, init=list(table))
            m.submodules[f"rom_{j}_{off}"] = rom
            port = rom.read_port(domain="comb")
            m.d.comb += port.addr.eq(fit(t[j].value, off + w)[off:off + w])
            entries.append(Op(port.data, max(table)))
        cut = st.cut_ops("rom", entries + t[:base])       # base digits travel beside the ROM read
        entries, low = cut[:len(entries)], cut[len(entries):]
        rcols: list[list[Op]] = [[low[i]] for i in range(base)]
        mask = (1 << d) - 1
        for e in entries:
            for i in range(base):
                wmax = min(mask, e.max >> (d * i)) if (e.max >> (d * i)) else 0
                if wmax:
                    rcols[i].append(Op(e.value[d * i:d * (i + 1)], wmax))
        rsums, _ = compress_columns(nm, st, rcols, "rtree", tree_levels(p.reduction_height()))
        out = [split_digit(nm, rsums[i], rsums[i - 1] if i else None, d, f"z{i}") for i in range(base)]
        out.append(split_digit(nm, None, rsums[base - 1], d, f"z{base}"))
        for o in out:
            if o.max >> p.digit_bits:
                raise AssertionError("a reduced digit can exceed its width")  # excluded by OzturkParams
        return out


def design_from_options(modulus: int, bits: int | None, options: dict[str, Any]) -> OzturkDesign:
    known = {"word_bits", "redundant_bits", "redundant_words", "lut_bits", "cycles", "dsp_bits"}
    for key in options:
        if key not in known:
            raise ParameterError(key, f"is not a parameter of {ARCH}; known: {', '.join(sorted(known))}")
    return OzturkDesign(modulus=modulus, bits=bits, **options)
