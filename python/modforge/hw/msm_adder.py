# amaranth: UnusedElaboratable=no
"""``msm-adder``: the seed's fully pipelined mixed point adder (seed 003, MSM; model ``zk.edwards.bucket_add``).

A bucket in the scaled twisted Edwards form ``(U, V, W, T) = (2(Y-X), 2(Y+X), 4Z, T)`` plus a
precomputed point ``((y-x)/2, (y+x)/2, 4 d x y)`` gives the bucket form of the sum with 7
multiplications and 6 additions (docs/zk-msm.md)::

    mul1      A = U (y-x)/2,  B = V (y+x)/2,  C = T 4dxy        three fq-mul pipelines side by side
    add1      E = B - A, H = B + A, F = W - C, G = W + C         mod q, one register
    mul2      E F, G H, F G, E H                                 four fq-mul pipelines
    add2      (GH - EF, GH + EF, FG, EH)                         mod q, one register

Latency ``2 L + 2`` with ``L`` the multiplier's (``2 depth + 7``); one addition accepted every cycle.
Ports (:mod:`modforge.hw.stream`): ``in_data = U | V << n | W << 2n | T << 3n | ym << 4n | yp << 5n | k << 6n``
(all canonical), ``out_data`` the four canonical coordinates of the sum in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from amaranth.hdl import Cat, Elaboratable, Module, Mux, Signal

from ..arith.base import ParameterError
from ..zk.bls12_377 import BLS12_377
from ..zk.edwards import EDWARDS, EdwardsForm, ToyEdwards
from .common import Namer, Op
from .fq_mul import FqMulCore, FqMulDesign
from .stream import Pipe, stream_harness, valid_line

ARCH = "msm-adder"


@dataclass(frozen=True)
class MsmAdderDesign:
    modulus: int = BLS12_377.q
    karatsuba_depth: int = 3
    dsp_bits: int = 17
    guard_bits: int = 0
    lut_bits: int | None = None

    arch = ARCH
    synth_method = "flat"            # `hw report`: no pieces the hierarchical partition knows

    def __post_init__(self) -> None:
        import gmpy2

        # The datapath is the same over any prime field; BLS12-377's q is the seed's, and a prime p = 3 mod 4
        # gets a small a = -1 twisted Edwards curve of its own (ToyEdwards) so that tests run at CI sizes.
        if self.modulus != BLS12_377.q and not (self.modulus % 4 == 3 and self.modulus > 7
                                               and gmpy2.is_prime(self.modulus)):
            raise ParameterError("modulus", "msm-adder needs BLS12-377's q (leave --modulus out) or a prime "
                                            f"p = 3 mod 4 above 7 for a test curve, got {self.modulus}")
        _ = self.mul                              # builds and checks the multiplier

    @cached_property
    def mul(self) -> FqMulDesign:
        return FqMulDesign(modulus=self.modulus, karatsuba_depth=self.karatsuba_depth, dsp_bits=self.dsp_bits,
                           guard_bits=self.guard_bits, lut_bits=self.lut_bits)

    @cached_property
    def edwards(self) -> EdwardsForm:
        return EDWARDS if self.modulus == BLS12_377.q else ToyEdwards(prime=self.modulus)

    @property
    def n(self) -> int:
        return self.modulus.bit_length()

    @property
    def design_bits(self) -> int:
        return self.n

    @property
    def digit_bits(self) -> int:
        return 7 * self.n

    words = 1
    out_words = 1

    def latency(self) -> int:
        return 2 * self.mul.latency() + 2

    def cycles_per_op(self) -> int:
        return 1

    def resources(self) -> dict[str, Any]:
        r = self.mul.resources()
        return {"dsp": 7 * r["dsp"], "dsp_tile": r["dsp_tile"], "multipliers": 7, "dsp_per_multiplier": r["dsp"],
                "modular_add_sub": 6, "multiplier_latency": self.mul.latency(),
                "rom_bits": 7 * r["rom_bits"], "depth_estimate_ps": self.depth_estimate_ps()}

    def depth_estimate_ps(self) -> int:
        """The slowest stage is a multiplier's (the modular adders are narrower than its wide adders)."""
        return self.mul.depth_estimate_ps()

    def describe(self) -> str:
        field = "BLS12-377" if self.modulus == BLS12_377.q else f"{self.n}-bit test-curve"
        return (f"{field} twisted Edwards mixed adder: 7 fq-mul ({self.karatsuba_depth} Karatsuba levels, "
                f"latency {self.mul.latency()}) and 6 modular add/sub; latency {self.latency()}, "
                f"one addition per cycle")

    def model(self):
        return self.edwards.bucket_add

    def build(self) -> MsmAdderTop:
        return MsmAdderTop(self)

    def harness_source(self) -> str:
        return stream_harness("mf_msm_adder", self.latency())

    def simulate(self, **kw: Any) -> dict[str, Any]:
        from .msm_vectors import simulate_msm_adder

        return simulate_msm_adder(self, **kw)


def mod_add(nm: Namer, a: Op, b: Op, q: int, tag: str) -> Op:
    """a + b mod q for canonical a, b: the sum, or the sum minus q when that does not borrow."""
    n = q.bit_length()
    s = nm.sig(f"{tag}_sum", a.value + b.value, n + 1)
    t = nm.sig(f"{tag}_less_q", s - q, n + 2)
    return Op(Mux(t[n + 1], s, t)[:n], q - 1)


def mod_sub(nm: Namer, a: Op, b: Op, q: int, tag: str) -> Op:
    """a - b mod q for canonical a, b: the difference, plus q when it borrowed."""
    n = q.bit_length()
    d = nm.sig(f"{tag}_diff", a.value - b.value, n + 1)
    e = nm.sig(f"{tag}_plus_q", d[:n] + q, n + 1)
    return Op(Mux(d[n], e[:n], d[:n]), q - 1)


class MsmAdderCore(Elaboratable):
    """The adder's datapath (no valid): bucket and point in, the sum's bucket form ``latency`` edges later."""

    def __init__(self, p: MsmAdderDesign, name: str = "add"):
        self.p = p
        self.name = name
        n = p.n
        self.bucket = [Signal(n, name=f"{name}_b{i}") for i in range(4)]
        self.point = [Signal(n, name=f"{name}_p{i}") for i in range(3)]
        self.out = [Signal(n, name=f"{name}_o{i}") for i in range(4)]

    def _muls(self, m: Module, pairs: list[tuple[Any, Any]], stage: str) -> list[Signal]:
        outs = []
        for i, (a, b) in enumerate(pairs):
            core = FqMulCore(self.p.mul, name=f"{self.name}_{stage}{i}")
            m.submodules[f"{self.name}_{stage}{i}"] = core
            m.d.comb += [core.a.eq(a), core.b.eq(b)]
            outs.append(core.result)
        return outs

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.p
        q = p.modulus
        nm = Namer(m)
        pipe = Pipe(m, self.name)
        u, v, w, t = self.bucket
        ym, yp, k = self.point
        a, b, c = self._muls(m, [(u, ym), (v, yp), (t, k)], "mul1_")
        w_late = pipe.delay("w", w, p.mul.latency())
        op = lambda s: Op(s, q - 1)
        e = mod_sub(nm, op(b), op(a), q, f"{self.name}_e")
        h = mod_add(nm, op(b), op(a), q, f"{self.name}_h")
        f = mod_sub(nm, op(w_late), op(c), q, f"{self.name}_f")
        g = mod_add(nm, op(w_late), op(c), q, f"{self.name}_g")
        e, h, f, g = pipe.reg("add1", [e, h, f, g])
        x3, y3, z3, t3 = self._muls(m, [(e.value, f.value), (g.value, h.value), (f.value, g.value),
                                        (e.value, h.value)], "mul2_")
        out = [mod_sub(nm, op(y3), op(x3), q, f"{self.name}_u"), mod_add(nm, op(y3), op(x3), q, f"{self.name}_v"),
               op(z3), op(t3)]
        out = pipe.reg("add2", out)
        m.d.comb += [o.eq(r.value) for o, r in zip(self.out, out)]
        return m


class MsmAdderTop(Elaboratable):
    """``mf_msm_adder``: :class:`MsmAdderCore` behind the streaming interface."""

    def __init__(self, p: MsmAdderDesign):
        self.p = p
        n = p.n
        self.in_valid = Signal(name="in_valid")
        self.in_data = Signal(7 * n, name="in_data")
        self.out_valid = Signal(name="out_valid")
        self.out_data = Signal(4 * n, name="out_data")

    def ports(self) -> list[Signal]:
        return [self.in_valid, self.in_data, self.out_valid, self.out_data]

    def elaborate(self, platform) -> Module:
        m = Module()
        n = self.p.n
        m.submodules.core = core = MsmAdderCore(self.p)
        fields = [self.in_data[i * n:(i + 1) * n] for i in range(7)]
        m.d.comb += [s.eq(f) for s, f in zip(core.bucket + core.point, fields)]
        m.d.comb += [self.out_valid.eq(valid_line(m, self.in_valid, self.p.latency())),
                     self.out_data.eq(Cat(*core.out))]
        return m


def design_from_options(modulus: int, bits: int | None, options: dict[str, Any]) -> MsmAdderDesign:
    known = {"karatsuba_depth", "dsp_bits", "guard_bits", "lut_bits"}
    for key in options:
        if key not in known:
            raise ParameterError(key, f"is not a parameter of {ARCH}; known: {', '.join(sorted(known))}")
    design = MsmAdderDesign(modulus=modulus, **options)
    if bits is not None and bits != modulus.bit_length():
        raise ParameterError("bits", f"{ARCH} is as wide as its modulus ({modulus.bit_length()} bits), not {bits}")
    return design
