# amaranth: UnusedElaboratable=no
"""The Goldilocks field multiplier of seed 003's NTT cores, as generated RTL.

Seed 003 ("NTT"): p = 2^64 - 2^32 + 1; each core "has its own field multiplier and two adders".
The multiplier is the 64 x 64-bit product, built from DSP-sized tiles, then the reduction the field's
shape allows (2^64 = 2^32 - 1 and 2^96 = -1 mod p), which needs only adders.  Bit for bit it is
:func:`modforge.zk.goldilocks.reduce128` of the exact product::

    a, b (64 bits each, any value below 2^64)
      -> tiles: a and b cut into dsp_bits slices, one DSP product per slice pair (16 at 17 bits)
      -> the tile products packed into rows (products on diagonals i+j and i+j+2 do not overlap),
         3:2 carry-save levels, one 128-bit adder: x = a * b                      (layers dsp, mtree_*)
      -> fold_sub: t0 = x_lo - x_hi, minus epsilon = 2^32 - 1 on a borrow        (2^96 = -1)
                   t1 = (x_mid << 32) - x_mid                                     (2^64 = epsilon)
      -> fold_add: t2 = t0 + t1, plus epsilon on a carry out of 64 bits
      -> canon:    t2 + epsilon carries out of 64 bits exactly when t2 >= p; then that sum is t2 - p

``cycles`` (the latency, 1 .. the number of layers) places pipeline registers between those layers with
:func:`modforge.hw.common.schedule`; the output register closes the last one.  The registers are
free-running, so inside an NTT core (:mod:`modforge.hw.ntt_core`) the same data path accepts a product
every cycle.  As a stand-alone architecture (``goldilocks-mul``) it uses the common loop interface of
:mod:`modforge.hw.loop` (``in_x``, ``in_y``; a chain squares its result) so the scalar harness checks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from amaranth.hdl import Cat, Const, Elaboratable, Module, Mux, Signal

from ..arith.base import ParameterError
from ..zk.goldilocks import GOLDILOCKS, GoldilocksParams
from .common import (DELAY_PS, Layer, Namer, Op, PipelinedOp, Stager, compress_columns, cpa_delay, require_range,
                     tile_widths, tree_levels)
from .loop import LoopDesign

ARCH = "goldilocks-mul"
WORD = GOLDILOCKS.word_bits          # 64
HALF = GOLDILOCKS.half_bits          # 32
P = GOLDILOCKS.p
EPSILON = GOLDILOCKS.epsilon         # 2^64 mod p


def product_rows(a_bits: int, b_bits: int, dsp_bits: int) -> list[list[tuple[int, int]]]:
    """The tile pairs (i, j) of each row of the product's carry-save tree.

    Tile (i, j) sits at bit ``dsp_bits * (i + j)`` and is at most ``2 * dsp_bits`` wide, so tiles on
    diagonals ``s`` and ``s + 2`` never overlap: a row takes at most one tile of every other diagonal.
    Row count = sum over the two parities of the longest diagonal of that parity."""
    na, nb = len(tile_widths(a_bits, dsp_bits)), len(tile_widths(b_bits, dsp_bits))
    diagonals: dict[int, list[tuple[int, int]]] = {}
    for i in range(na):
        for j in range(nb):
            diagonals.setdefault(i + j, []).append((i, j))
    rows = []
    for parity in (0, 1):
        diags = [diagonals[s] for s in sorted(diagonals) if s % 2 == parity]
        for r in range(max((len(d) for d in diags), default=0)):
            rows.append([d[r] for d in diags if r < len(d)])
    return rows


class GoldilocksWordDesign:
    """What every seed-003 design shares: the fixed modulus and one 64-bit word as the flow's "digit"
    (the manifest, the header and the report read these)."""

    arch: str
    modulus: int
    bits: int | None
    word_bits = WORD
    digit_bits = WORD
    words = 1
    out_words = 1
    design_bits = WORD

    def check_field(self) -> None:
        if self.modulus != P:
            raise ParameterError("modulus", f"{self.arch} is for the Goldilocks prime p = 2^64 - 2^32 + 1 = "
                                            f"{hex(P)} only, got {hex(self.modulus)}")
        if self.bits not in (None, WORD):
            raise ParameterError("bits", f"{self.arch} works on {WORD}-bit words, not {self.bits}")


def checked_options(arch: str, known: set[str], options: dict[str, Any], cycles_to: str | None = None) -> dict[str, Any]:
    """``options`` with every key known to ``arch``; with ``cycles_to``, ``--cycles`` is that option (the
    multiplier's latency) and may not contradict it."""
    for key in options:
        if key not in known and not (cycles_to and key == "cycles"):
            raise ParameterError(key, f"is not a parameter of {arch}; known: {', '.join(sorted(known))}")
    options = dict(options)
    if cycles_to and "cycles" in options:
        if cycles_to in options and options[cycles_to] != options["cycles"]:
            raise ParameterError("cycles", f"contradicts --opt {cycles_to}: give one")
        options[cycles_to] = options.pop("cycles")
    return options


@dataclass(frozen=True)
class GoldilocksMulDesign(GoldilocksWordDesign, PipelinedOp):
    """The multiplier's parameters; the modulus is Goldilocks' and nothing else (seed 003)."""

    modulus: int = P
    bits: int | None = None
    cycles: int = 6
    dsp_bits: int = 17

    arch = ARCH

    def __post_init__(self) -> None:
        self.check_field()
        require_range("dsp_bits", self.dsp_bits, 2, WORD)
        require_range("cycles", self.cycles, 1)
        self.schedule            # validates cycles against the layers

    def model(self) -> GoldilocksParams:
        return GOLDILOCKS

    @cached_property
    def rows(self) -> list[list[tuple[int, int]]]:
        return product_rows(WORD, WORD, self.dsp_bits)

    def layers(self) -> list[Layer]:
        return mul_layers(self.dsp_bits)

    def resources(self) -> dict[str, Any]:
        tiles = len(tile_widths(WORD, self.dsp_bits)) ** 2
        return {"dsp": tiles, "dsp_tile": f"{self.dsp_bits}x{self.dsp_bits}", "product_rows": len(self.rows),
                "product_tree_levels": tree_levels(len(self.rows)),
                "pipeline_cuts": sorted(self.schedule[0], key=[l.name for l in self.layers()].index),
                "depth_estimate_ps": self.depth_estimate_ps()}

    def describe(self) -> str:
        return (f"Goldilocks multiplier (p = 2^64 - 2^32 + 1): {self.resources()['dsp']} DSP tiles of "
                f"{self.dsp_bits} bits, adder-only reduction, latency {self.cycles} cycle(s)")

    def build(self) -> "GoldilocksMulLoop":
        return GoldilocksMulLoop(self)

    def vector_source(self) -> Any:
        """The harness's vectors (:mod:`modforge.hw.vectors`): edge cases of the reduction, then random."""
        return _vector_source_class()(self)


def mul_layers(dsp_bits: int) -> list[Layer]:
    """The multiplier's combinational layers in order; a register may follow any of them."""
    rows = len(product_rows(WORD, WORD, dsp_bits))
    out = [Layer("dsp", DELAY_PS["dsp"])]
    out += [Layer(f"mtree_tree{i + 1}", DELAY_PS["csa"]) for i in range(tree_levels(rows))]
    out += [Layer("mtree_cpa", cpa_delay(2 * WORD)),
            Layer("fold_sub", 2 * cpa_delay(WORD + 1)),
            Layer("fold_add", 2 * cpa_delay(WORD + 1)),
            Layer("canon", cpa_delay(WORD + 1) + DELAY_PS["mux"])]
    return out


def mul_datapath(nm: Namer, st: Stager, a: Op, b: Op, dsp_bits: int) -> Op:
    """a * b mod p (canonical, 64 bits) for any 64-bit a, b, with the scheduled cuts of ``st``."""
    # Tile products: every multiplication is at most dsp_bits x dsp_bits (the forbidden-operator scan).
    wa, wb = tile_widths(WORD, dsp_bits), tile_widths(WORD, dsp_bits)
    tiles: dict[tuple[int, int], Op] = {}
    for i, w_i in enumerate(wa):
        sa = nm.sig("ta", a.value[dsp_bits * i:dsp_bits * i + w_i], w_i)
        for j, w_j in enumerate(wb):
            sb = nm.sig("tb", b.value[dsp_bits * j:dsp_bits * j + w_j], w_j)
            tmax = ((1 << w_i) - 1) * ((1 << w_j) - 1)
            tiles[i, j] = Op(nm.sig("tp", sa * sb, tmax.bit_length()), tmax)
    keys = list(tiles)
    cut = st.cut_ops("dsp", [tiles[k] for k in keys])
    tiles = dict(zip(keys, cut))
    rows = []
    for row in product_rows(WORD, WORD, dsp_bits):
        parts, top, rmax = [], 0, 0
        for i, j in sorted(row, key=lambda ij: ij[0] + ij[1]):
            shift = dsp_bits * (i + j)
            if shift > top:
                parts.append(Const(0, shift - top))
            t = tiles[i, j]
            parts.append(t.value)
            top = shift + len(t.value)
            rmax += t.max << shift
        rows.append(Op(nm.sig("row", Cat(*parts), top), rmax))
    (x,), _ = compress_columns(nm, st, [rows], "mtree", tree_levels(len(rows)))
    x = nm.sig("x", x.value, 2 * WORD)
    x_lo, x_mid, x_hi = x[:WORD], x[WORD:WORD + HALF], x[WORD + HALF:]
    # fold_sub: 2^96 = -1, so x_hi is subtracted; a borrow wrapped the word by 2^64 = epsilon too many.
    diff = nm.sig("diff", x_lo - x_hi, WORD + 1)
    borrow = diff[WORD]
    t0 = nm.sig("t0", diff[:WORD] - Mux(borrow, EPSILON, 0), WORD)
    # 2^64 = epsilon: x_mid * epsilon as a shift and a subtraction (no multiplier).
    t1 = nm.sig("t1", Cat(Const(0, HALF), x_mid) - x_mid, WORD)
    t0, t1 = st.cut("fold_sub", [t0, t1])
    # fold_add: a carry out of 64 bits is worth epsilon; it cannot carry twice (goldilocks.reduce128).
    total = nm.sig("total", t0 + t1, WORD + 1)
    t2 = nm.sig("t2", total[:WORD] + Mux(total[WORD], EPSILON, 0), WORD)
    (t2,) = st.cut("fold_add", [t2])
    # canon: p + epsilon = 2^64, so t2 + epsilon carries out exactly when t2 >= p, and is then t2 - p.
    up = nm.sig("up", t2 + EPSILON, WORD + 1)
    result = nm.sig("canon", Mux(up[WORD], up[:WORD], t2), WORD)
    return Op(result, P - 1)


class GoldilocksMulPipe(Elaboratable):
    """The multiplier as a free-running pipeline: ``out = a * b mod p`` exactly ``cycles`` edges after
    ``a`` and ``b`` (the scheduled cuts plus the output register), one product accepted every cycle."""

    def __init__(self, design: GoldilocksMulDesign):
        self.design = design
        self.a = Signal(WORD, name="a")
        self.b = Signal(WORD, name="b")
        self.out = Signal(WORD, name="out")

    def elaborate(self, platform) -> Module:
        m = Module()
        nm = Namer(m)
        st = Stager(m, self.design.schedule[0])
        full = (1 << WORD) - 1
        r = mul_datapath(nm, st, Op(self.a, full), Op(self.b, full), self.design.dsp_bits)
        m.d.sync += self.out.eq(r.value)
        return m


class GoldilocksMulLoop(LoopDesign):
    """The stand-alone architecture: the loop interface around :func:`mul_datapath`."""

    two_operands = True

    def __init__(self, p: GoldilocksMulDesign):
        self.p = p
        self.words = 1
        self.out_words = 1
        self.feedback_words = 1
        self.digit_bits = WORD
        self.cycles = p.cycles
        self.cuts = p.schedule[0]
        self._make_ports()

    def datapath(self, m: Module, nm: Namer, st: Stager, x: list[Op], y: list[Op]) -> list[Op]:
        return [mul_datapath(nm, st, x[0], y[0], self.p.dsp_bits)]


def design_from_options(modulus: int, bits: int | None, options: dict[str, Any]) -> GoldilocksMulDesign:
    return GoldilocksMulDesign(modulus=modulus, bits=bits, **checked_options(ARCH, {"cycles", "dsp_bits"}, options))


# ---------------------------------------------------------------------------------------- vectors
# The reduction's three decisions (goldilocks.reduce128): a borrow in fold_sub, a carry in fold_add, the
# subtraction of p in canon.  A carry and the subtraction never meet (after a carry t2 < 2^64 - 2^32 < p),
# so five of the eight combinations exist; every one of them is an edge case.
BRANCHES = [(0, 0, 0), (0, 0, 1), (0, 1, 0), (1, 0, 0), (1, 0, 1), (1, 1, 0)]


def branch_of(a: int, b: int) -> tuple[int, int, int]:
    from ..zk.goldilocks import reduce128

    r = reduce128(a * b)
    return r.borrow, r.carry, int(r.t2 >= P)


def branch_cases(seed: int = 3) -> dict[tuple[int, int, int], tuple[int, int]]:
    """One operand pair per reachable branch combination: a seeded search over operands near the
    boundaries (near p, near 2^64, 32-bit and shifted ones), plus the one combination no search finds in
    reasonable time, borrow and subtraction together, built by hand: x = 2^64 + 2^112, i.e. x_lo = 0,
    x_mid = 1, x_hi = 2^16, so t0 = 2^64 - epsilon - 2^16 and t2 = 2^64 - 2^16 >= p; its factors are
    (2^16 + 1) 2^32 and (2^32 - 2^16 + 1) 2^32."""
    import random

    rng = random.Random(seed)
    found = {(1, 0, 1): ((((1 << 16) + 1) << 32), (((1 << 32) - (1 << 16) + 1) << 32))}

    def operand() -> int:
        kind = rng.randrange(6)
        if kind == 0:
            return rng.randrange(1 << 64)
        if kind == 1:
            return P - 1 - rng.randrange(1 << 34)
        if kind == 2:
            return (1 << 64) - 1 - rng.randrange(1 << 34)
        if kind == 3:
            return rng.randrange(1 << 32) << 32
        if kind == 4:
            return 1 << rng.randrange(64)
        return rng.randrange(1 << 33)

    for _ in range(200_000):
        if len(found) == len(BRANCHES):
            break
        a, b = operand(), operand()
        found.setdefault(branch_of(a, b), (a, b))
    missing = set(BRANCHES) - set(found)
    if missing:
        raise AssertionError(f"no operands found for the reduction branches {sorted(missing)}")
    return found


def _vector_source_class():
    from .vectors import Expected, Source

    class GoldilocksMulSource(Source):
        """Edge cases (0, 1, p - 1, 2^64 - 1, p itself, every branch of the reduction), then random 64-bit
        operands, canonical or not; the expected value is the model's and, independently, ``a * b % p``."""

        has_y = True

        def expect(self, x, y):
            from ..zk.goldilocks import mul

            got = mul(x[0], y[0])
            if got != x[0] * y[0] % P:
                raise AssertionError(f"the model's product of {x[0]:#x} and {y[0]:#x} is not a * b mod p")
            return Expected((got,), 0, self.design.latency())

        def bound(self) -> int:
            return P

        def edge_cases(self):
            top = (1 << WORD) - 1
            cases = [("zero_times_p_minus_1", 0, P - 1), ("one_times_one", 1, 1), ("p_minus_1_squared", P - 1, P - 1),
                     ("one_times_p_minus_1", 1, P - 1), ("one_times_p", 1, P), ("one_times_2_64_minus_1", 1, top),
                     ("all_ones_squared", top, top), ("p_times_all_ones", P, top), ("epsilon_squared", EPSILON, EPSILON),
                     ("two_32_squared", 1 << 32, 1 << 32), ("two_48_squared", 1 << 48, 1 << 48),
                     ("two_63_squared", 1 << 63, 1 << 63), ("zero_times_zero", 0, 0)]
            for key, (a, b) in sorted(branch_cases().items()):
                cases.append(("branch_borrow{}_carry{}_minus_p{}".format(*key), a, b))
            return [(name, (a,), (b,)) for name, a, b in cases]

        def random_operand(self, rng):
            return (rng.randrange(P) if rng.randrange(4) else rng.randrange(1 << WORD),)

        def chain_start(self, x):
            return (x,)

        def chain_value(self, digits):
            return digits[0]

    return GoldilocksMulSource
