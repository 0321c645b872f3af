"""Building blocks shared by the RTL generators.

* **Parameters.** Every design is one frozen dataclass (``ozturk.OzturkDesign`` ...);
  :func:`digest` hashes its fields, and that hash names the generated files and keys
  the simulation cache.
* **Pipeline cuts.** A design lists its combinational *layers* along the loop (input
  mux, DSP products, every carry-save level, carry-propagate adders, digit splits,
  ROM reads) with a rough delay each.  :func:`schedule` places ``cycles - 1``
  registers between layers so that the slowest stage is as short as possible; the
  loop register closes the last stage.  The latency is therefore ``cycles``, a
  function of the parameters and never typed by hand, and the same list gives the
  depth estimate.
* **Arithmetic.** :func:`word_product` is a digit product made of DSP-sized tiles
  (one ``17 x 17`` multiplication by default; wider digits become several tiles and
  a local carry-save sum).  :func:`compress_columns` sums the pieces of every column
  with explicit 3:2 carry-save levels (a 4:2 compressor is two of them) and ends in
  one carry-propagate adder per column, a few more bits than a digit wide.  Nothing
  wider than a column ever ripples.
"""

from __future__ import annotations

from functools import cached_property

import hashlib
import json
from dataclasses import dataclass, fields
from typing import Any, Iterable, NamedTuple

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value

from ..arith.base import ParameterError, require_int

HW_VERSION = "1"          # bump whenever the RTL generated for the same parameters changes
GENERATOR = "modforge.hw"


# ---------------------------------------------------------------------------------------- parameters
def params_dict(params: Any) -> dict[str, Any]:
    """The dataclass fields of a design's parameter value, in declaration order."""
    return {f.name: getattr(params, f.name) for f in fields(params)}


def digest(arch: str, params: Any) -> str:
    """SHA-256 of the architecture name and the parameters (hex)."""
    doc = {"arch": arch, "params": {k: (hex(v) if isinstance(v, int) and not isinstance(v, bool) else v)
                                    for k, v in params_dict(params).items()}}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def require_range(name: str, value: Any, lo: int, hi: int | None = None) -> int:
    value = require_int(name, value)
    if value < lo or (hi is not None and value > hi):
        span = f"at least {lo}" if hi is None else f"between {lo} and {hi}"
        raise ParameterError(name, f"must be {span}, got {value}")
    return value


def tile_widths(width: int, dsp_bits: int) -> list[int]:
    """Cut a ``width``-bit operand into DSP-sized slices, least significant first."""
    out = []
    while width > 0:
        out.append(min(width, dsp_bits))
        width -= dsp_bits
    return out


def tiles_per_product(a_bits: int, b_bits: int, dsp_bits: int) -> int:
    return len(tile_widths(a_bits, dsp_bits)) * len(tile_widths(b_bits, dsp_bits))


# ---------------------------------------------------------------------------------------- pipelining
@dataclass(frozen=True)
class Layer:
    """One combinational layer of a loop: a name (a possible register cut after it) and a delay (ps)."""

    name: str
    delay_ps: int


# Rough UltraScale+-class delays, logic plus local routing, used only to place pipeline cuts and to
# state a depth estimate.  They are not timing numbers: `modforge hw report` (synthesis) is.
DELAY_PS = {"mux": 350, "dsp": 2000, "csa": 400, "cpa_base": 500, "cpa_per_bit": 20, "split": 700,
            "rom": 800, "compare": 600, "tile_cpa_base": 500}


def cpa_delay(width: int) -> int:
    return DELAY_PS["cpa_base"] + DELAY_PS["cpa_per_bit"] * width


def tree_levels(height: int) -> int:
    """3:2 carry-save levels that bring ``height`` operands down to two."""
    levels = 0
    while height > 2:
        height = 2 * (height // 3) + height % 3
        levels += 1
    return levels


def schedule(layers: list[Layer], cycles: int) -> tuple[frozenset[str], int]:
    """Place ``cycles - 1`` cuts between layers minimising the slowest stage.

    Returns (names of the layers followed by a register, slowest stage in ps).  The last
    layer is always followed by the loop register, which is not a cut.
    """
    n = len(layers)
    if cycles > n:
        raise ParameterError("cycles", f"must be at most {n} for these parameters (the loop has {n} layers "
                                       f"to place registers between), got {cycles}")
    delays = [layer.delay_ps for layer in layers]
    prefix = [0]
    for dly in delays:
        prefix.append(prefix[-1] + dly)
    inf = float("inf")
    # best[k][i]: slowest stage when the first i layers form k stages.
    best = [[inf] * (n + 1) for _ in range(cycles + 1)]
    back = [[0] * (n + 1) for _ in range(cycles + 1)]
    best[0][0] = 0
    for k in range(1, cycles + 1):
        for i in range(k, n + 1):
            for j in range(k - 1, i):
                cand = max(best[k - 1][j], prefix[i] - prefix[j])
                if cand < best[k][i]:
                    best[k][i] = cand
                    back[k][i] = j
    cuts = []
    i = n
    for k in range(cycles, 0, -1):
        j = back[k][i]
        if j > 0:
            cuts.append(layers[j - 1].name)
        i = j
    return frozenset(cuts), int(best[cycles][n])


class PipelinedOp:
    """A design whose one operation runs ``cycles`` cycles through the stages ``layers()`` lists.

    The stage registers, the latency and the rough depth all follow from those two.
    """

    cycles: int

    @cached_property
    def schedule(self) -> tuple[frozenset[str], int]:
        return schedule(self.layers(), self.cycles)

    def latency(self) -> int:
        """Rising edges from the operand to its result (and between chained operations)."""
        return self.cycles

    def cycles_per_op(self) -> int:
        return self.cycles

    def depth_estimate_ps(self) -> int:
        """Slowest stage under the rough delay model (not a timing result)."""
        return self.schedule[1]


class Stager:
    """Inserts the scheduled pipeline registers: ``cut(name, values)`` registers ``values`` if the
    schedule put a register after layer ``name``, and returns them unchanged otherwise."""

    def __init__(self, m: Module, cuts: Iterable[str]):
        self.m = m
        self.cuts = frozenset(cuts)
        self.used: list[str] = []

    def active(self, name: str) -> bool:
        return name in self.cuts

    def cut(self, name: str, values: list[Value]) -> list[Value]:
        if name not in self.cuts:
            return values
        self.used.append(name)
        out = []
        for i, v in enumerate(values):
            r = Signal(len(v), name=f"p_{name}_{i}", reset_less=True)
            self.m.d.sync += r.eq(v)
            out.append(r)
        return out

    def cut_ops(self, name: str, ops: list["Op"]) -> list["Op"]:
        vals = self.cut(name, [o.value for o in ops])
        return [Op(v, o.max) for v, o in zip(vals, ops)]


# ---------------------------------------------------------------------------------------- arithmetic
class Op(NamedTuple):
    """A non-negative operand: its value and an exact upper bound (inclusive) on it."""

    value: Value
    max: int

    @property
    def width(self) -> int:
        return max(self.max.bit_length(), 1)


class Namer:
    """Readable, deterministic signal names."""

    def __init__(self, m: Module):
        self.m = m
        self.count: dict[str, int] = {}
        # (tree name, operand maxima) of every column compressed: the tiles of a hierarchical synthesis.
        self.columns: list[tuple[str, tuple[int, ...]]] = []

    def sig(self, prefix: str, value: Value, width: int) -> Signal:
        n = self.count.get(prefix, 0)
        self.count[prefix] = n + 1
        s = Signal(max(width, 1), name=f"{prefix}_{n}")
        self.m.d.comb += s.eq(value)
        return s


def const_op(value: int) -> Op:
    return Op(Const(value, max(value.bit_length(), 1)), value)


def word_product(nm: Namer, a: Op, b: Op, dsp_bits: int, tag: str) -> Op:
    """Exact product of two digits from DSP-sized tiles (``dsp_bits x dsp_bits`` each).

    A digit that fits one DSP gives a single ``*``; a wider one is cut into slices, each
    slice pair is one tile, and the shifted tile products are summed by a local 3:2 tree and
    one ``2(d+r)``-bit adder (the cascade of the DSP columns in an FPGA).
    """
    pmax = a.max * b.max
    if pmax == 0:
        return Op(Const(0, 1), 0)
    aw, bw = a.width, b.width
    if aw <= dsp_bits and bw <= dsp_bits:
        return Op(nm.sig(f"{tag}_p", a.value * b.value, pmax.bit_length()), pmax)
    terms: list[Op] = []
    a_off = 0
    for wa in tile_widths(aw, dsp_bits):
        b_off = 0
        for wb in tile_widths(bw, dsp_bits):
            sa = nm.sig(f"{tag}_ta", a.value[a_off:a_off + wa], wa)
            sb = nm.sig(f"{tag}_tb", b.value[b_off:b_off + wb], wb)
            tmax = min((1 << wa) - 1, a.max >> a_off) * min((1 << wb) - 1, b.max >> b_off)
            if tmax:
                tp = nm.sig(f"{tag}_tp", sa * sb, tmax.bit_length())
                shift = a_off + b_off
                terms.append(Op(Cat(Const(0, shift), tp) if shift else tp, tmax << shift))
            b_off += wb
        a_off += wa
    total = sum_operands(nm, terms, f"{tag}_ts", cap=pmax)
    return Op(total.value, pmax)


def csa(nm: Namer, x: Op, y: Op, z: Op, width: int, tag: str) -> tuple[Op, Op]:
    """One 3:2 carry-save level on ``width``-bit words: sum and shifted majority."""
    widths = sorted((x.width, y.width, z.width), reverse=True)
    sw = min(widths[0], width)
    cw = min(widths[1] + 1, width)
    s = nm.sig(f"{tag}_s", (x.value ^ y.value ^ z.value)[:sw], sw)
    maj = (x.value & y.value) | (x.value & z.value) | (y.value & z.value)
    c = nm.sig(f"{tag}_c", Cat(Const(0, 1), maj)[:cw], cw)
    top = (1 << width) - 1
    return Op(s, min((1 << sw) - 1, top)), Op(c, min(((1 << (cw - 1)) - 1) << 1, top))


def csa_level(nm: Namer, ops: list[Op], width: int, tag: str) -> list[Op]:
    """One level of a Wallace tree over a column: groups of three become two."""
    ops = sorted(ops, key=lambda o: -o.width)
    out: list[Op] = []
    i = 0
    while len(ops) - i >= 3:
        s, c = csa(nm, ops[i], ops[i + 1], ops[i + 2], width, tag)
        out += [s, c]
        i += 3
    out += ops[i:]
    return out


def sum_operands(nm: Namer, ops: list[Op], tag: str, cap: int | None = None) -> Op:
    """Carry-save tree plus one adder, combinational (used inside a tile product)."""
    total = sum(o.max for o in ops)
    if cap is not None:
        total = min(total, cap)
    width = max(total.bit_length(), 1)
    ops = [o for o in ops if o.max]
    while len(ops) > 2:
        ops = csa_level(nm, ops, width, tag)
    if not ops:
        return Op(Const(0, 1), 0)
    if len(ops) == 1:
        return Op(ops[0].value, total)
    return Op(nm.sig(f"{tag}_cpa", (ops[0].value + ops[1].value)[:width], width), total)


def compress_columns(nm: Namer, st: Stager, columns: list[list[Op]], prefix: str, levels: int,
                     along: list[Op] | None = None) -> tuple[list[Op], list[Op]]:
    """Sum every column: ``levels`` 3:2 levels (a cut may follow each), then one short adder each.

    ``levels`` is the tree height the parameters computed (:func:`tree_levels` of the
    tallest column); every column runs through the same number of levels so cuts line up.
    ``along`` are values that travel beside the tree (registered at the same cuts).
    Returns (column sums, ``along`` as delayed).
    """
    along = list(along or [])
    widths = [max(sum(o.max for o in col).bit_length(), 1) for col in columns]
    cols = [[o for o in col if o.max] for col in columns]
    nm.columns += [(prefix, tuple(o.max for o in col)) for col in cols]
    for lvl in range(levels):
        cols = [csa_level(nm, col, w, f"{prefix}_l{lvl}_c{ci}") if len(col) > 2 else col
                for ci, (col, w) in enumerate(zip(cols, widths))]
        flat = [o for col in cols for o in col] + along
        flat = st.cut_ops(f"{prefix}_tree{lvl + 1}", flat)
        it = iter(flat)
        cols = [[next(it) for _ in col] for col in cols]
        along = list(it)
    if any(len(col) > 2 for col in cols):
        raise AssertionError(f"{prefix}: {levels} levels leave a column taller than 2")
    sums = []
    for ci, (col, w) in enumerate(zip(cols, widths)):
        total = sum(o.max for o in col)
        if not col:
            sums.append(Op(Const(0, 1), 0))
        elif len(col) == 1:
            sums.append(Op(col[0].value, total))
        else:
            sums.append(Op(nm.sig(f"{prefix}_sum{ci}", (col[0].value + col[1].value)[:w], w), total))
    out = st.cut_ops(f"{prefix}_cpa", sums + along)
    return out[:len(sums)], out[len(sums):]


def pieces(p: Op, d: int) -> list[Op]:
    """``T0, T1, T2`` of a digit product: bits [0,d), [d,2d) and [2d, ...) (Alg. 3 of seed 002)."""
    mask = (1 << d) - 1
    out = [Op(p.value[:d], min(p.max, mask)), Op(p.value[d:2 * d], min(p.max >> d, mask))]
    out.append(Op(p.value[2 * d:], p.max >> (2 * d)))
    return out


def split_digit(nm: Namer, low: Op | None, high: Op | None, d: int, tag: str, mask_low: bool = True) -> Op:
    """``(low mod 2^d) + (high >> d)``: the one short carry step of RBR (Alg. 3 lines 12-19)."""
    mask = (1 << d) - 1
    terms = []
    if low is not None and low.max:
        terms.append(Op(low.value[:d], min(low.max, mask)) if mask_low else low)
    if high is not None and (high.max >> d):
        terms.append(Op(high.value[d:], high.max >> d))
    if not terms:
        return Op(Const(0, 1), 0)
    if len(terms) == 1:
        return terms[0]
    total = terms[0].max + terms[1].max
    return Op(nm.sig(tag, terms[0].value + terms[1].value, total.bit_length()), total)


def rbr_split(nm: Namer, sums: list[Op], d: int, tag: str, top_unmasked: bool = True) -> list[Op]:
    """Column sums to RBR digits; the top column keeps its high bits (as in ``rbr._compress``)."""
    out = []
    n = len(sums)
    for c in range(n):
        out.append(split_digit(nm, sums[c], sums[c - 1] if c else None, d, f"{tag}{c}",
                               mask_low=not (top_unmasked and c == n - 1)))
    return out


def pack(digits: list[Value], digit_bits: int) -> Value:
    """Digits (LSB first) into one flat bus, ``digit_bits`` each."""
    return Cat(*[Value.cast(x)[:digit_bits] if len(Value.cast(x)) >= digit_bits else
                 Cat(x, Const(0, digit_bits - len(Value.cast(x)))) for x in digits])


def unpack(bus: Value, digit_bits: int, count: int) -> list[Value]:
    return [bus[i * digit_bits:(i + 1) * digit_bits] for i in range(count)]


def fit(value: Value, width: int) -> Value:
    """Zero-extend or truncate to exactly ``width`` bits."""
    v = Value.cast(value)
    if len(v) >= width:
        return v[:width]
    return Cat(v, Const(0, width - len(v)))


def or_reduce(values: list[Value]) -> Value:
    if not values:
        return Const(0, 1)
    return Cat(*values).any()


def mux_select(sel: Value, pairs: list[tuple[int, Value]], width: int) -> Value:
    """AND-OR multiplexer: the value whose code equals ``sel`` (0 if none)."""
    acc = Const(0, width)
    for code, v in pairs:
        acc = acc | Mux(sel == code, fit(v, width), 0)
    return acc


def hex_digits(digits: Iterable[int], digit_bits: int) -> str:
    """Digits (LSB first) packed into one integer, as hex without prefix."""
    total = 0
    for i, x in enumerate(digits):
        if x >> digit_bits:
            raise ValueError(f"digit {i} = {x:#x} does not fit {digit_bits} bits")
        total |= x << (i * digit_bits)
    return format(total, "x")


def unpack_int(value: int, digit_bits: int, count: int) -> tuple[int, ...]:
    mask = (1 << digit_bits) - 1
    return tuple((value >> (digit_bits * i)) & mask for i in range(count))


def product_columns(products: list[tuple[int, Op, bool]], ncols: int, d: int) -> list[list[Op]]:
    """Pieces of (diagonal, product, doubled) into columns ``0..ncols-1`` (pieces beyond are dropped)."""
    cols: list[list[Op]] = [[] for _ in range(ncols)]
    for diag, pr, dbl in products:
        if dbl:
            pr = Op(Cat(Const(0, 1), pr.value), pr.max << 1)
        for s, piece in enumerate(pieces(pr, d)):
            if piece.max and diag + s < ncols:
                cols[diag + s].append(piece)
    return cols


def column_heights(pairs: list[tuple[int, int]], ncols: int, extra: dict[int, int] | None = None) -> list[int]:
    """Pieces per column for digit products on the given (i, j) pairs (three pieces each)."""
    heights = [0] * ncols
    for i, j in pairs:
        for s in range(3):
            if i + j + s < ncols:
                heights[i + j + s] += 1
    for c, n in (extra or {}).items():
        heights[c] += n
    return heights
