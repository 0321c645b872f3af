# amaranth: UnusedElaboratable=no
"""San's low-latency Montgomery multiplier on Ozturk's RBR products (seed 002, Alg. 4 via Alg. 6).

The datapath, for operands of ``k+1`` digits of ``d+1`` bits and ``R = 2^(d k)``::

    x, y -> t = polmul(x, y)                     (k+1)^2 digit products, column trees, one split
    t[0..k-1] -> q = polmul(tl, M') digits 0..k-1  products with i + j <= k-1 only
    q[0..k-1] -> res = polmul(ql, M) digits >= k-1 products with i + j >= k-4 only
    carry = ceil((t[k-1] + res[k-1]) / 2^d)      the exact low carry (0..4), not the listing's +1
    E[i] = t[k+i] + res[k+i] (+ carry at i = 0), z[i] = lo(E[i]) + hi(E[i-1])

Bit for bit the model is :meth:`modforge.arith.montgomery.OzturkMontgomery.monpro` on digit
vectors.  Digit products wider than one DSP (d = 32, 64) are built from ``dsp_bits`` tiles.
``cycles = 1`` is the seed's single-cycle variant (Table I); larger values place registers
between the layers (Table II's multi-cycle variants); a chain feeds ``z`` back as both
operands (a squaring by the multiplier, ``monpro(z, z)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from amaranth.hdl import Module

from ..arith.base import ParameterError
from ..arith.montgomery import OzturkMontgomery, OzturkMontParams
from .common import (DELAY_PS, Layer, PipelinedOp, Namer, Op, Stager, column_heights, compress_columns, const_op, cpa_delay,
                     product_columns, rbr_split, require_range, split_digit, tiles_per_product,
                     tree_levels, word_product)
from .loop import LoopDesign

ARCH = "san-montgomery"


@dataclass(frozen=True)
class SanDesign(PipelinedOp):
    modulus: int
    word_bits: int = 16
    digits: int | None = None
    cycles: int = 1
    dsp_bits: int = 17

    arch = ARCH

    def __post_init__(self) -> None:
        require_range("dsp_bits", self.dsp_bits, 2, 64)
        require_range("cycles", self.cycles, 1)
        self.model_params
        self.schedule

    @cached_property
    def model_params(self) -> OzturkMontParams:
        return OzturkMontParams(modulus=self.modulus, word_bits=self.word_bits, digits=self.digits)

    def model(self) -> OzturkMontgomery:
        return OzturkMontgomery(self.model_params)

    @property
    def design_bits(self) -> int:
        return self.modulus.bit_length()

    @property
    def k(self) -> int:
        return self.model_params.k

    @property
    def digit_bits(self) -> int:
        return self.word_bits + 1

    @property
    def words(self) -> int:
        return self.k + 1

    @property
    def out_words(self) -> int:
        return self.k + 3

    def t_pairs(self) -> list[tuple[int, int]]:
        w = self.words
        return [(i, j) for i in range(w) for j in range(w)]

    def q_pairs(self) -> list[tuple[int, int]]:
        k = self.k
        return [(i, j) for i in range(k) for j in range(k) if i + j <= k - 1]

    def res_pairs(self) -> list[tuple[int, int]]:
        k = self.k
        return [(i, j) for i in range(k) for j in range(k) if i + j >= k - 4]

    def heights(self) -> dict[str, int]:
        k = self.k
        return {"t": max(column_heights(self.t_pairs(), 2 * k + 3)),
                "q": max(column_heights(self.q_pairs(), k)),
                "r": max(column_heights(self.res_pairs(), 2 * k + 3))}

    def layers(self) -> list[Layer]:
        d = self.word_bits
        tiles = tiles_per_product(self.digit_bits, self.digit_bits, self.dsp_bits)
        h = self.heights()
        out = [Layer("mux", DELAY_PS["mux"])]
        for stage in ("t", "q", "r"):
            out.append(Layer(f"{stage}_dsp", DELAY_PS["dsp"]))
            if tiles > 1:
                out.append(Layer(f"{stage}_tile", DELAY_PS["csa"] * tree_levels(tiles) + cpa_delay(2 * self.digit_bits)))
            lv = tree_levels(h[stage])
            out += [Layer(f"{stage}tree_tree{i + 1}", DELAY_PS["csa"]) for i in range(lv)]
            out += [Layer(f"{stage}tree_cpa", cpa_delay(d + lv + 3)), Layer(f"{stage}_split", DELAY_PS["split"])]
        out += [Layer("e_add", cpa_delay(d + 3)), Layer("z_split", DELAY_PS["split"])]
        return out

    def resources(self) -> dict[str, Any]:
        tiles = tiles_per_product(self.digit_bits, self.digit_bits, self.dsp_bits)
        prods = {"t": len(self.t_pairs()), "q": len(self.q_pairs()), "res": len(self.res_pairs())}
        h = self.heights()
        return {
            "dsp": sum(prods.values()) * tiles,
            "dsp_tile": f"{self.dsp_bits}x{self.dsp_bits}",
            "tiles_per_digit_product": tiles,
            "digit_products": prods,
            "tree_heights": h,
            "tree_levels": {s: tree_levels(v) for s, v in h.items()},
            "state_bits": self.out_words * self.digit_bits,
            "pipeline_cuts": sorted(self.schedule[0], key=[l.name for l in self.layers()].index),
            "depth_estimate_ps": self.depth_estimate_ps(),
        }

    def describe(self) -> str:
        return (f"{self.design_bits}-bit San/Ozturk Montgomery multiplier: k = {self.k}, {self.words} digits of "
                f"{self.word_bits}+1 bits, {self.cycles} cycle(s) per product")

    def build(self) -> "SanMultiplier":
        return SanMultiplier(self)


class SanMultiplier(LoopDesign):
    two_operands = True

    def __init__(self, p: SanDesign):
        self.p = p
        self.words = p.words
        self.out_words = p.out_words
        self.feedback_words = p.words
        self.digit_bits = p.digit_bits
        self.cycles = p.cycles
        self.cuts = p.schedule[0]
        self._make_ports()

    def _products(self, nm: Namer, st: Stager, stage: str, pairs, a: list[Op], b: list[Op],
                  along: list[Op]) -> tuple[list[tuple[int, Op, bool]], list[Op]]:
        p = self.p
        prods = [(i + j, word_product(nm, a[i], b[j], p.dsp_bits, f"{stage}{i}_{j}"), False) for i, j in pairs]
        vals = st.cut_ops(f"{stage}_dsp", [pr for _, pr, _ in prods] + along)
        if tiles_per_product(p.digit_bits, p.digit_bits, p.dsp_bits) > 1:
            vals = st.cut_ops(f"{stage}_tile", vals)
        n = len(prods)
        return [(dg, v, dbl) for (dg, _, dbl), v in zip(prods, vals[:n])], vals[n:]

    def datapath(self, m: Module, nm: Namer, st: Stager, x: list[Op], y: list[Op]) -> list[Op]:
        p = self.p
        d, k = p.word_bits, p.k
        h = p.heights()
        xy = st.cut_ops("mux", x + y)
        x, y = xy[:p.words], xy[p.words:]
        ncols = 2 * k + 3
        # t = polmul(x, y): every digit.
        prods, _ = self._products(nm, st, "t", p.t_pairs(), x, y, [])
        sums, _ = compress_columns(nm, st, product_columns(prods, ncols, d), "ttree", tree_levels(h["t"]))
        t = st.cut_ops("t_split", rbr_split(nm, sums, d, "t"))
        keep = t[k - 1:]                       # t[k-1] (carry) and t[k..2k+2] (E) travel along
        # q = polmul(tl, M') digits 0..k-1.
        mp = [const_op(v) for v in p.model_params.mp_digits]
        prods, keep = self._products(nm, st, "q", p.q_pairs(), t, mp, keep)
        sums, keep = compress_columns(nm, st, product_columns(prods, k, d), "qtree", tree_levels(h["q"]), keep)
        q = rbr_split(nm, sums, d, "q", top_unmasked=False)
        qk = st.cut_ops("q_split", q + keep)
        q, keep = qk[:k], qk[k:]
        # res = polmul(ql, M) digits k-1 .. 2k+2.
        mm = [const_op(v) for v in p.model_params.m_digits]
        prods, keep = self._products(nm, st, "r", p.res_pairs(), q, mm, keep)
        sums, keep = compress_columns(nm, st, product_columns(prods, ncols, d), "rtree", tree_levels(h["r"]), keep)
        res = rbr_split(nm, sums, d, "res")
        rk = st.cut_ops("r_split", res[k - 1:] + keep)
        res_hi, t_hi = rk[:k + 4], rk[k + 4:]
        # Exact low carry: ceil((t[k-1] + res[k-1]) / 2^d), then E and the last split.
        top = Op(nm.sig("low_top", t_hi[0].value + res_hi[0].value, (t_hi[0].max + res_hi[0].max).bit_length()),
                 t_hi[0].max + res_hi[0].max)
        carry_max = -(-top.max // (1 << d))
        carry = Op(nm.sig("low_carry", (top.value >> d) + (top.value[:d] != 0), carry_max.bit_length()), carry_max)
        e = []
        for i in range(k + 3):
            a, b = t_hi[1 + i], res_hi[1 + i]
            extra = carry if i == 0 else None
            total = a.max + b.max + (extra.max if extra else 0)
            val = a.value + b.value + (extra.value if extra else 0)
            e.append(Op(nm.sig(f"e{i}", val, total.bit_length()), total))
        e = st.cut_ops("e_add", e)
        z = [split_digit(nm, e[i], e[i - 1] if i else None, d, f"z{i}") for i in range(k + 3)]
        return z


def design_from_options(modulus: int, bits: int | None, options: dict[str, Any]) -> SanDesign:
    known = {"word_bits", "digits", "cycles", "dsp_bits"}
    for key in options:
        if key not in known:
            raise ParameterError(key, f"is not a parameter of {ARCH}; known: {', '.join(sorted(known))}")
    if bits is not None and modulus.bit_length() > bits:
        raise ParameterError("modulus", f"is {modulus.bit_length()} bits wide, wider than --bits {bits}")
    if bits is not None and bits != modulus.bit_length():
        # Its width is the modulus' (R = 2^(d k)); a wider --bits would otherwise be ignored silently.
        raise ParameterError("bits", f"{ARCH} is as wide as its modulus ({modulus.bit_length()} bits), not "
                                     f"{bits}; leave --bits out, or widen the datapath with --opt digits=K")
    digits, word_bits = options.get("digits"), options.get("word_bits", 16)
    if isinstance(digits, int) and isinstance(word_bits, int) and 0 < digits * word_bits < modulus.bit_length():
        raise ParameterError("digits", f"{digits} digit(s) of {word_bits} bits hold {digits * word_bits} bits, fewer "
                                       f"than the modulus' {modulus.bit_length()}: leave digits out or raise it")
    return SanDesign(modulus=modulus, **options)
