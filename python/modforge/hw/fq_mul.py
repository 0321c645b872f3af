# amaranth: UnusedElaboratable=no
"""``fq-mul``: the seed's Fq multiplier as a fully pipelined circuit (seed 003, MSM; model ``zk.fq_mul``).

Stages (one register after each; the count is the latency, derived from the parameters)::

    ko_pre1 .. ko_pre<depth>   Karatsuba-Ofman splits: lo, hi and lo + hi of each operand, level by level
    leaf_dsp                   every leaf's DSP tiles (dsp_bits x dsp_bits products)
    leaf_sum                   each leaf's tiles summed (3:2 tree and one adder)
    ko_post<depth> .. ko_post1 z1 = zm - z0 - z2 and z2 2^2h + z1 2^h + z0, level by level up
    q_dsp, q_sum               the truncated product q1 m (tiles below bit n + 1 - guard_bits dropped)
    r_dsp, r_coarse            the low half of quotient * p, then r = x - quotient p mod 2^coarse_bits
    final                      table[r >> shift] = (j p, (j + 1) p); r - (j + 1) p if not negative, else r - j p

Latency ``2 depth + 7``.  Ports (:mod:`modforge.hw.stream`): ``in_data = a | b << n`` (canonical
operands), ``out_data = result | coarse << n``: the canonical product and the coarse remainder the
model calls ``coarse``, both checked by the harness.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from amaranth.hdl import Cat, Const, Elaboratable, Module, Mux, Signal
from amaranth.lib.memory import Memory

from ..arith.base import ParameterError
from ..zk.fq_mul import FqMul, FqMulParams, KaratsubaNode, tile_slices
from .common import Namer, Op, cpa_delay, fit, sum_operands
from .stream import Pipe, stream_harness, valid_line

ARCH = "fq-mul"


@dataclass(frozen=True)
class FqMulDesign:
    modulus: int = FqMulParams.modulus
    karatsuba_depth: int = 3
    dsp_bits: int = 17
    guard_bits: int = 0
    lut_bits: int | None = None

    arch = ARCH
    synth_method = "flat"            # `hw report`: no pieces the hierarchical partition knows

    def __post_init__(self) -> None:
        try:
            _ = self.model_params
        except ValueError as exc:
            name, _, why = str(exc).partition(": ")
            raise ParameterError(name, why) from None

    @cached_property
    def model_params(self) -> FqMulParams:
        return FqMulParams(modulus=self.modulus, karatsuba_depth=self.karatsuba_depth, dsp_bits=self.dsp_bits,
                           guard_bits=self.guard_bits, lut_bits=self.lut_bits)

    def model(self) -> FqMul:
        return FqMul(self.model_params)

    @property
    def n(self) -> int:
        return self.modulus.bit_length()

    @property
    def design_bits(self) -> int:
        return self.n

    # What the manifest of the scalar designs records; a streaming design has one operand bus.
    @property
    def digit_bits(self) -> int:
        return 2 * self.n

    words = 1
    out_words = 1

    def stages(self) -> list[str]:
        d = self.karatsuba_depth
        return ([f"ko_pre{i + 1}" for i in range(d)] + ["leaf_dsp", "leaf_sum"]
                + [f"ko_post{d - i}" for i in range(d)] + ["q_dsp", "q_sum", "r_dsp", "r_coarse", "final"])

    def latency(self) -> int:
        return len(self.stages())

    def cycles_per_op(self) -> int:
        return 1

    def resources(self) -> dict[str, Any]:
        p = self.model_params
        tiles = p.dsp_tiles()
        return {"dsp": tiles["total"], "dsp_tile": f"{self.dsp_bits}x{self.dsp_bits}", "dsp_by_stage": tiles,
                "karatsuba_leaves": len(p.leaves), "leaf_bits": p.leaf_bits, "quotient_error": p.quotient_error,
                "coarse_bits": p.coarse_bits, "coarse_bound_multiple_of_p": p.quotient_error + 1,
                "lut_bits": p.table_bits, "lut_entries": 1 << p.table_bits,
                "rom_bits": (1 << p.table_bits) * 2 * max(p.coarse_bits, max(hi for _, hi in p.table).bit_length()),
                "stages": self.stages(),
                "depth_estimate_ps": self.depth_estimate_ps()}

    def depth_estimate_ps(self) -> int:
        """The slowest stage under the rough delay model (``common.DELAY_PS``; not a timing result): the top
        recombination, two subtractions and one addition on 2n-bit words, carried in one stage."""
        return 3 * cpa_delay(2 * self.n)

    def describe(self) -> str:
        p = self.model_params
        return (f"{self.n}-bit Fq multiplier: {self.karatsuba_depth} Karatsuba levels, {len(p.leaves)} leaves of "
                f"<= {p.leaf_bits} bits, truncated Barrett, coarse r < {p.quotient_error + 1}p, "
                f"{1 << p.table_bits}-entry table; latency {self.latency()}, one product per cycle")

    def build(self) -> FqMulTop:
        return FqMulTop(self)

    def harness_source(self) -> str:
        return stream_harness("mf_fq_mul", self.latency())

    def simulate(self, **kw: Any) -> dict[str, Any]:
        from .msm_vectors import simulate_fq_mul

        return simulate_fq_mul(self, **kw)


def tile_terms(nm: Namer, a: Op, a_slices, b_value, b_slices, keep, tag: str,
               b_const: int | None = None) -> list[tuple[int, Op]]:
    """The DSP tiles of a x b that ``keep(ao, aw, bo, bw)`` selects, as (weight, unshifted product).

    ``b_const`` makes b a constant (its zero slices need no tile)."""
    out = []
    for ao, aw in a_slices:
        amax = min((1 << aw) - 1, a.max >> ao)
        for bo, bw in b_slices:
            if b_const is not None:
                bmax = (b_const >> bo) & ((1 << bw) - 1)
                bval = Const(bmax, bw)
            else:
                bmax = (1 << bw) - 1
                bval = b_value[bo:bo + bw]
            if not (amax and bmax and keep(ao, aw, bo, bw)):
                continue
            tp = nm.sig(f"{tag}_tp", a.value[ao:ao + aw] * bval, (amax * bmax).bit_length())
            out.append((ao + bo, Op(tp, amax * bmax)))
    return out


def shifted(terms: list[tuple[int, Op]], cap_bits: int | None = None) -> list[Op]:
    """Each (weight, product) as an operand at its weight; ``cap_bits`` keeps it modulo 2^cap_bits."""
    out = []
    for s, t in terms:
        v = Cat(Const(0, s), t.value) if s else t.value
        mx = t.max << s
        if cap_bits is not None:
            v, mx = fit(v, cap_bits), min(mx, (1 << cap_bits) - 1)
        out.append(Op(v, mx))
    return out


def reg_terms(pipe: Pipe, stage: str, groups: list[list[tuple[int, Op]]], along: list[Op]):
    """Register every group's tile products (keeping their weights) and the values travelling along."""
    flat = pipe.reg(stage, [t for g in groups for _, t in g] + along)
    it = iter(flat)
    return [[(s, next(it)) for s, _ in g] for g in groups], list(it)


class FqMulCore(Elaboratable):
    """The datapath alone (no valid): ``a``, ``b`` in, ``result`` and ``coarse`` ``latency`` edges later."""

    def __init__(self, p: FqMulDesign, name: str = "fqm"):
        self.p = p
        self.name = name
        self.a = Signal(p.n, name=f"{name}_a")
        self.b = Signal(p.n, name=f"{name}_b")
        self.result = Signal(p.n, name=f"{name}_result")
        self.coarse = Signal(p.model_params.coarse_bits, name=f"{name}_coarse")

    def _split(self, pipe: Pipe, nodes: list[KaratsubaNode], pairs: list[tuple[Op, Op]], level: int):
        """One Karatsuba level down: each (a, b) becomes its (lo, hi, mid) operand pairs, registered."""
        nm = self.nm
        children, ops = [], []
        for node, (a, b) in zip(nodes, pairs):
            h = node.split
            lo, hi, mid = node.children()
            children += [lo, hi, mid]
            for x in (a, b):
                xl = Op(x.value[:h], min(x.max, (1 << h) - 1))
                xh = Op(x.value[h:], x.max >> h)
                xm_max = xl.max + xh.max
                xm = Op(nm.sig(f"{self.name}_pre{level}", xl.value + xh.value, xm_max.bit_length()), xm_max)
                ops.append((xl, xh, xm))
        flat = []
        for i in range(0, len(ops), 2):
            (al, ah, am), (bl, bh, bm) = ops[i], ops[i + 1]
            flat += [al, bl, ah, bh, am, bm]
        flat = pipe.reg(f"ko_pre{level}", flat)
        return children, [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.p
        mp = p.model_params
        nm = self.nm = Namer(m)
        pipe = Pipe(m, self.name)
        n, dsp = p.n, p.dsp_bits
        nodes = [mp.tree]
        pairs = [(Op(self.a, mp.modulus - 1), Op(self.b, mp.modulus - 1))]
        levels: list[list[KaratsubaNode]] = []
        for level in range(1, p.karatsuba_depth + 1):
            levels.append(nodes)
            nodes, pairs = self._split(pipe, nodes, pairs, level)
        # Leaves: DSP tiles, registered, then summed.
        groups = [tile_terms(nm, a, tile_slices(leaf.a_max.bit_length(), dsp), b.value,
                             tile_slices(leaf.b_max.bit_length(), dsp), lambda *_: True, f"{self.name}_leaf")
                  for leaf, (a, b) in zip(nodes, pairs)]
        groups, _ = reg_terms(pipe, "leaf_dsp", groups, [])
        prods = [sum_operands(nm, shifted(g), f"{self.name}_leafsum", cap=leaf.a_max * leaf.b_max)
                 for leaf, g in zip(nodes, groups)]
        prods = pipe.reg("leaf_sum", prods)
        # Karatsuba recombination, level by level back up.
        for level in range(p.karatsuba_depth, 0, -1):
            up = []
            for i, node in enumerate(levels[level - 1]):
                z0, z2, zm = prods[3 * i:3 * i + 3]
                h = node.split
                z1_bits = max(zm.max.bit_length(), 1)
                z1 = nm.sig(f"{self.name}_z1_{level}", (zm.value - z0.value - z2.value)[:z1_bits], z1_bits)
                pmax = node.a_max * node.b_max
                low = Cat(fit(z0.value, 2 * h), z2.value)
                total = nm.sig(f"{self.name}_post{level}", (low + Cat(Const(0, h), z1))[:pmax.bit_length()],
                               pmax.bit_length())
                up.append(Op(total, pmax))
            prods = pipe.reg(f"ko_post{level}", up)
        x = prods[0]
        # Barrett quotient: the kept tiles of q1 m.
        q1 = Op(x.value[n - 1:], x.max >> (n - 1))
        kept = set(mp.quotient_tiles())
        qt = tile_terms(nm, q1, tile_slices(mp.q1_bits, dsp), None, tile_slices(mp.m.bit_length(), dsp),
                        lambda *t: t in kept, f"{self.name}_q", b_const=mp.m)
        (qt,), (x,) = reg_terms(pipe, "q_dsp", [qt], [x])
        q2 = sum_operands(nm, shifted(qt), f"{self.name}_qsum")
        quotient_max = (mp.modulus - 1) ** 2 // mp.modulus   # the quotient never exceeds floor(x / p)
        quotient = Op(nm.sig(f"{self.name}_quot", q2.value[n + 1:], quotient_max.bit_length()), quotient_max)
        cb = mp.coarse_bits
        xlow = Op(x.value[:cb], min(x.max, (1 << cb) - 1))
        quotient, xlow = pipe.reg("q_sum", [quotient, xlow])
        # Low half of quotient * p, then the coarse remainder.
        rt = tile_terms(nm, quotient, tile_slices(mp.q1_bits, dsp), None, tile_slices(n, dsp),
                        lambda ao, aw, bo, bw: ao + bo < cb, f"{self.name}_r", b_const=mp.modulus)
        (rt,), (xlow,) = reg_terms(pipe, "r_dsp", [rt], [xlow])
        cap = (1 << cb) - 1
        qp = sum_operands(nm, shifted(rt, cb), f"{self.name}_rsum")
        coarse = nm.sig(f"{self.name}_coarse_c", (xlow.value - qp.value)[:cb], cb)
        (coarse_r,) = pipe.reg("r_coarse", [Op(coarse, cap)])
        # Final: the table of multiples of p, two subtractions and the multiplexer.
        tw = max(cb, max(hi for _, hi in mp.table).bit_length())     # (j + 1) p may pass 2^coarse_bits
        rom = Memory(shape=2 * tw, depth=1 << mp.table_bits, init=[lo | (hi << tw) for lo, hi in mp.table])
        m.submodules[f"{self.name}_table"] = rom
        port = rom.read_port(domain="comb")
        m.d.comb += port.addr.eq(coarse_r.value[mp.shift:cb])
        low_mult, high_mult = port.data[:tw], port.data[tw:]
        minus_high = nm.sig(f"{self.name}_minus_high", coarse_r.value - high_mult, tw + 1)
        minus_low = nm.sig(f"{self.name}_minus_low", coarse_r.value - low_mult, cb)
        result = Mux(minus_high[tw], minus_low, minus_high)[:n]
        res, crs = pipe.reg("final", [Op(result, mp.modulus - 1), coarse_r])
        m.d.comb += [self.result.eq(res.value), self.coarse.eq(crs.value)]
        if pipe.stages != p.stages():
            raise AssertionError(f"fq-mul stages {pipe.stages} differ from the declared {p.stages()}")
        return m


class FqMulTop(Elaboratable):
    """``mf_fq_mul``: :class:`FqMulCore` behind the streaming interface."""

    def __init__(self, p: FqMulDesign):
        self.p = p
        n, cb = p.n, p.model_params.coarse_bits
        self.in_valid = Signal(name="in_valid")
        self.in_data = Signal(2 * n, name="in_data")
        self.out_valid = Signal(name="out_valid")
        self.out_data = Signal(n + cb, name="out_data")

    def ports(self) -> list[Signal]:
        return [self.in_valid, self.in_data, self.out_valid, self.out_data]

    def elaborate(self, platform) -> Module:
        m = Module()
        n = self.p.n
        m.submodules.core = core = FqMulCore(self.p)
        m.d.comb += [core.a.eq(self.in_data[:n]), core.b.eq(self.in_data[n:]),
                     self.out_valid.eq(valid_line(m, self.in_valid, self.p.latency())),
                     self.out_data.eq(Cat(core.result, core.coarse))]
        return m


def design_from_options(modulus: int, bits: int | None, options: dict[str, Any]) -> FqMulDesign:
    known = {"karatsuba_depth", "dsp_bits", "guard_bits", "lut_bits"}
    for key in options:
        if key not in known:
            raise ParameterError(key, f"is not a parameter of {ARCH}; known: {', '.join(sorted(known))}")
    if bits is not None and bits != modulus.bit_length():
        raise ParameterError("bits", f"{ARCH} is as wide as its modulus ({modulus.bit_length()} bits), not {bits}")
    return FqMulDesign(modulus=modulus, **options)
