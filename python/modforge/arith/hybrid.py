"""Intel's hybrid modular reduction: folding steps, table-based coarse reduction, fine-grain ROM.

Seed: 001_dfb497c295201f64.txt (Gribok, Langhammer, Pasca, "FPGA Modular
Multipliers using Hybrid Reduction Techniques"): Sec. III-A (folding),
Sec. III-B (lookup-table coarse reduction), Sec. III-C and Fig. 1 (fine-grain
reduction), Sec. IV and Algorithm 1 (the iteration, sweet spots, trimming),
Sec. V (the 2048-bit worked example, Fig. 2) and the reduction rows of
Table I.  The multipliers themselves are :mod:`modforge.arith.karatsuba`.

The modulus ``M`` is a constant of ``n`` bits with its top bit set
(``2**(n-1) <= M < 2**n``); ``n`` defines the design.  One operation:

1. ``P_0 = X*Y`` (``w_0 = 2n`` bits).
2. ``s`` folding steps.  Step ``i`` on a ``w``-bit ``P_i``: ``k`` is half of
   the ``w - n`` bits above ``n`` (rounded down as in Algorithm 1, or up as in
   the Sec. V text: ``high_part_rounding``); ``g = mult_sweet_spot(k)`` is the
   multiplier size used.  If ``k > g`` the top ``u_w = find_trim_size(w, n,
   g)`` bits of ``P_i`` are set aside as an item ``U`` of weight
   ``2**(w-u_w)`` for the tables, and ``w``, ``k`` are recomputed.  Then
   ``P_i^H`` (top ``k`` bits) times the constant ``C_i = 2**(w-k) mod M`` plus
   ``P_i^L`` (low ``w - k`` bits) is ``P_{i+1}``, of ``max(n+k, w-k) + 1``
   bits.  The constants are precomputed from ``M`` (Python's ``pow``), as the
   hardware generator does.
3. Table-based coarse reduction: the bits of ``P_s`` above ``n`` and every
   ``U`` item are cut into ``beta``-bit chunks; chunk ``v`` of weight
   ``2**e`` looks up ``(v * 2**e) mod M`` (``n`` bits) in a table of
   ``2**beta`` entries.  ``P_coarse`` = low ``n`` bits of ``P_s`` + all
   looked-up entries: ``c + 1`` terms, so ``P_coarse < (c+1) 2**n <=
   2**(n+gamma)`` with ``gamma = ceil(log2(c+1))``.
4. Fine-grain reduction: the ``gamma + 1`` bits of ``P_coarse`` from bit
   ``n-1`` up index a ROM holding ``K1*M`` and ``K2*M`` (``K2 = K1 + 1``);
   ``Q1 = P_coarse - K1*M`` and ``Q2 = P_coarse - K2*M`` are formed in
   parallel and ``Q = Q2`` unless ``Q2 < 0``.

Why the answer is always ``Q1`` or ``Q2``.  Let ``j = P_coarse >> (n-1)`` be
the ROM address, so ``j*2**(n-1) <= P_coarse < (j+1)*2**(n-1)``, and store
``K1 = floor(j*2**(n-1) / M)``.  Then ``K1*M <= j*2**(n-1) <= P_coarse``, and
``P_coarse < (j+1)*2**(n-1) < (K1+1)*M + 2**(n-1) <= (K1+2)*M`` because
``M >= 2**(n-1)``.  Hence ``K1 <= floor(P_coarse/M) <= K1 + 1``: ``Q1`` lies
in ``[0, 2M)``, and ``Q2 = Q1 - M`` is the answer exactly when it is not
negative.  With ``M < 2**(n-1)`` a window of ``2**(n-1)`` can span more than
one multiple of ``M`` and two candidates no longer suffice - the reason the
modulus must fill its ``n`` bits.  Each multiple is below ``2**(n+gamma+1)``,
so the ROM is ``2**(gamma+1)`` words of ``2*(n+gamma+1)`` bits.

Sweet spots and trimming (Algorithm 1 leaves ``mult_sweet_spot`` and
``find_trim_size`` informal; this model fixes them, see
``docs/algorithms/hybrid.md``):

* the sweet spots are the operand sizes a recursive Karatsuba over the
  ``tile_bits`` tile serves exactly: ``f(0) = tile_bits``, ``f(l+1) = 2 f(l) -
  2`` (130, 258, 514, 1026, 2050, ...), :func:`karatsuba.max_input_bits`;
* ``mult_sweet_spot(k)`` is the largest sweet spot below ``k`` when ``k``
  exceeds it by at most ``trim_limit`` bits (default: one tile chunk,
  ``ceil(tile_bits/5)`` = 26), and otherwise the smallest sweet spot
  ``>= k``.  The seed's example ``k = 516 -> g = 514`` is the first case;
  every configuration of Table I is the second (``k`` is at most 2 bits
  below a sweet spot there);
* ``find_trim_size(w, n, g) = (w - n) - 2g``, the fewest bits whose removal
  makes ``(w' - n)/2 <= g`` exactly as the seed writes it (``u_w = 4`` for
  ``w - n = 1032``); after trimming ``k = g`` under both roundings.

The fold multiplier of step ``i`` is ``n x k``; it is costed as ``ceil(n/g)``
Karatsuba multipliers of ``g x g`` bits, each ``3**levels(g)`` tiles of 15
DSPs.  Tables are costed in M20K blocks used as ``m20k_depth x m20k_width``
(512 x 40, the "9 x 40" mode): ``ceil(2**beta / 512) * ceil(n / 40)`` blocks
per table.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from . import karatsuba
from .base import Cost, Outcome, ParameterError, check_operand, require_int, require_modulus, require_positive
from .registry import AlgorithmInfo

ROUNDINGS = ("floor", "ceil")

#: Largest table address width accepted (2**20 entries per table).
MAX_BETA = 20


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _mask(bits: int) -> int:
    return (1 << bits) - 1


# ---------------------------------------------------------------------------
# Fine-grain reduction (Sec. III-C, Fig. 1)
# ---------------------------------------------------------------------------

def fine_quotient(index: int, modulus: int, bits: int) -> int:
    """``K1 = floor(index * 2**(bits-1) / M)``: computed by the generator, not the datapath."""
    return (index << (bits - 1)) // modulus


def fine_multiples(index: int, modulus: int, bits: int) -> tuple[int, int]:
    """The ROM word at ``index``: ``(K1*M, K2*M)`` with ``K2 = K1 + 1``."""
    k1 = fine_quotient(index, modulus, bits)
    return k1 * modulus, (k1 + 1) * modulus


def fine_reduce(p_coarse: int, modulus: int, bits: int,
                rom=None) -> tuple[int, dict[str, int], bool]:
    """Two trial subtractions selected by the sign of ``Q2``.

    Returns ``(Q, stages, second_candidate)``.  ``rom(index)`` returns
    ``(K1, K1*M, K2*M)`` (default: computed on the spot, as the generator
    would).  Correct for every ``p_coarse >= 0`` when ``2**(bits-1) <= modulus
    < 2**bits``.
    """
    index = p_coarse >> (bits - 1)
    if rom is None:
        k1 = fine_quotient(index, modulus, bits)
        k1m, k2m = fine_multiples(index, modulus, bits)
    else:
        k1, k1m, k2m = rom(index)
    q1 = p_coarse - k1m
    q2 = p_coarse - k2m
    second = q2 >= 0
    stages = {"fine_index": index, "K1": k1, "Q1": q1, "Q2": q2}
    return (q2 if second else q1), stages, second


# ---------------------------------------------------------------------------
# The design: every width and count is a function of these parameters
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class FoldStep:
    """One multiplier-based folding step of Algorithm 1."""

    index: int
    width_in: int        # w on entry
    trim_bits: int       # u_w (0: no trim)
    width: int           # w after trimming
    k: int               # bits of P_i^H
    sweet_spot: int      # g
    levels: int          # Karatsuba levels of the g-bit multiplier
    tiles: int           # ceil(n/g) * 3**levels
    width_out: int       # bits of P_{i+1}

    @property
    def low_bits(self) -> int:
        """Bits of ``P_i^L`` (``w - k``); also the exponent of ``C_i = 2**(w-k) mod M``."""
        return self.width - self.k

    @property
    def constant_exponent(self) -> int:
        return self.width - self.k


@dataclass(frozen=True)
class Chunk:
    """A ``bits``-wide slice of a reduction item, weight ``2**weight``; one table each."""

    source: str
    position: int
    weight: int
    bits: int


@dataclass(frozen=True)
class HybridDesign:
    """Geometry of an ``n``-bit hybrid reducer (no modulus needed).

    ``steps``: folding steps ``s`` (default :meth:`default_steps`); ``beta``:
    table address bits; ``high_part_rounding``: ``"floor"`` (Algorithm 1) or
    ``"ceil"`` (the Sec. V text) for ``k``; ``tile_bits``: the Karatsuba leaf
    tile (130); ``trim_limit``: most bits ``k`` may exceed a sweet spot and
    still be trimmed down to it (default one tile chunk, ``ceil(tile_bits/5)``);
    ``m20k_depth`` x ``m20k_width``: the memory block mode used for tables.
    """

    bits: int
    steps: int | None = None
    beta: int = 9
    high_part_rounding: str = "floor"
    tile_bits: int = 130
    trim_limit: int | None = None
    m20k_depth: int = 512
    m20k_width: int = 40

    def __post_init__(self) -> None:
        n = require_positive("bits", self.bits)
        if n < 2:
            raise ParameterError("bits", f"must be at least 2, got {n}")
        beta = require_positive("beta", self.beta)
        if beta > MAX_BETA:
            raise ParameterError("beta", f"{beta}-bit table addresses mean 2^{beta} entries per table; "
                                         f"at most {MAX_BETA} is supported")
        if self.high_part_rounding not in ROUNDINGS:
            raise ParameterError("high_part_rounding", f"must be one of {', '.join(ROUNDINGS)}, "
                                                       f"got {self.high_part_rounding!r}")
        tile = require_positive("tile_bits", self.tile_bits)
        if tile < 5:
            raise ParameterError("tile_bits", f"must be at least 5 (five chunks of at least one bit), got {tile}")
        if self.trim_limit is not None:
            require_int("trim_limit", self.trim_limit)
            if self.trim_limit < 0:
                raise ParameterError("trim_limit", f"must be non-negative, got {self.trim_limit}")
        require_positive("m20k_depth", self.m20k_depth)
        require_positive("m20k_width", self.m20k_width)
        if self.steps is not None:
            s = require_int("steps", self.steps)
            if s < 0:
                raise ParameterError("steps", f"must be non-negative, got {s}")
            limit = self.max_steps
            if s > limit:
                raise ParameterError(
                    "steps", f"{s} folding steps are too many for {n} bits: after {limit} step(s) P is "
                             f"{self._plan(limit)[-1].width_out if limit else 2 * n} bits, and a fold narrows P "
                             f"only while at least 4 bits lie above n; at most {limit} step(s)")

    # -- sweet spots and trimming ----------------------------------------
    @property
    def tile(self) -> karatsuba.TileParams:
        return karatsuba.TileParams.for_leaf(self.tile_bits)

    @property
    def effective_trim_limit(self) -> int:
        """``trim_limit``, by default one chunk of the tile (26 bits for 130)."""
        return self.trim_limit if self.trim_limit is not None else self.tile.chunk_bits

    def sweet_spot(self, level: int) -> int:
        """``f(level)``: 130, 258, 514, 1026, 2050 ... for the 130-bit tile."""
        return karatsuba.max_input_bits(level, self.tile_bits)

    def sweet_spot_level(self, g: int) -> int:
        return karatsuba.levels_for(g, self.tile_bits)

    def mult_sweet_spot(self, k: int) -> int:
        """The multiplier size ``g`` a ``k``-bit high part is folded with.

        The largest sweet spot below ``k`` if ``k`` exceeds it by at most
        ``trim_limit`` bits (then ``k > g`` and Algorithm 1 trims), otherwise
        the smallest sweet spot ``>= k``.
        """
        require_positive("k", k)
        level = 0
        while self.sweet_spot(level) < k:
            level += 1
        up = self.sweet_spot(level)
        if level > 0:
            down = self.sweet_spot(level - 1)
            if k - down <= self.effective_trim_limit:
                return down
        return up

    def find_trim_size(self, w: int, n: int, g: int) -> int:
        """``u_w``: fewest top bits to set aside so that ``(w - u_w - n) / 2 <= g``."""
        return max(0, (w - n) - 2 * g)

    def high_part_bits(self, w: int) -> int:
        """``k``: half of the ``w - n`` bits above ``n``, rounded as ``high_part_rounding`` says."""
        over = w - self.bits
        return over // 2 if self.high_part_rounding == "floor" else _ceil_div(over, 2)

    # -- the folding plan ------------------------------------------------
    def _fold(self, index: int, w: int) -> FoldStep | None:
        """Step ``index`` from a ``w``-bit value, or None if it would not narrow it."""
        n = self.bits
        if w - n < 4:
            return None
        k = self.high_part_bits(w)
        g = self.mult_sweet_spot(k)
        trim = 0
        width = w
        if k > g:
            trim = self.find_trim_size(w, n, g)
            width = w - trim
            k = self.high_part_bits(width)
            assert k <= g
        width_out = max(k + n, width - k) + 1
        levels = self.sweet_spot_level(g)
        return FoldStep(index=index, width_in=w, trim_bits=trim, width=width, k=k, sweet_spot=g,
                        levels=levels, tiles=_ceil_div(n, g) * 3 ** levels, width_out=width_out)

    def _plan(self, steps: int) -> tuple[FoldStep, ...]:
        out = []
        w = 2 * self.bits
        for i in range(steps):
            step = self._fold(i, w)
            if step is None:
                raise ParameterError("steps", f"step {i} cannot narrow a {w}-bit value for {self.bits} bits")
            out.append(step)
            w = step.width_out
        return tuple(out)

    @cached_property
    def max_steps(self) -> int:
        """Most folding steps that each narrow ``P`` (one needs ``w - n >= 4``)."""
        w = 2 * self.bits
        count = 0
        while True:
            step = self._fold(count, w)
            if step is None or step.width_out >= w:
                return count
            w = step.width_out
            count += 1

    def default_steps(self) -> int:
        """Fewest steps (at least one) leaving at most ``2 * tile_bits`` bits above ``n`` for the tables.

        Gives Table I's choices for 256, 512 (1 step), 1024 (2) and 2048 (3);
        capped by :attr:`max_steps`.
        """
        limit = self.max_steps
        w = 2 * self.bits
        for s in range(limit + 1):
            if s >= 1 and w - self.bits <= 2 * self.tile_bits:
                return s
            if s < limit:
                w = self._fold(s, w).width_out
        return limit

    @property
    def step_count(self) -> int:
        return self.steps if self.steps is not None else self.default_steps()

    @cached_property
    def fold_steps(self) -> tuple[FoldStep, ...]:
        return self._plan(self.step_count)

    @property
    def widths(self) -> list[int]:
        """``[w_0, ..., w_s]``: bits of ``P_0 .. P_s``."""
        return [2 * self.bits] + [st.width_out for st in self.fold_steps]

    @property
    def final_width(self) -> int:
        return self.widths[-1]

    # -- table-based coarse reduction ----------------------------------------
    @cached_property
    def chunks(self) -> tuple[Chunk, ...]:
        """Every table-indexing slice: the trimmed ``U`` items, then the top of ``P_s``."""
        out: list[Chunk] = []

        def cut(source: str, low_weight: int, bits: int) -> None:
            for j in range(_ceil_div(bits, self.beta)):
                out.append(Chunk(source, j, low_weight + j * self.beta, min(self.beta, bits - j * self.beta)))

        for st in self.fold_steps:
            if st.trim_bits:
                cut(f"U{st.index}", st.width, st.trim_bits)
        cut(f"P{self.step_count}", self.bits, self.final_width - self.bits)
        return tuple(out)

    @property
    def high_bits(self) -> int:
        """Bits of ``P_s`` above ``n`` (258 for the 2048-bit example)."""
        return self.final_width - self.bits

    @property
    def table_count(self) -> int:
        """``c``: one table per chunk (``ceil((w_s - n)/beta)`` plus the chunks of ``U`` items)."""
        return len(self.chunks)

    @property
    def table_entries(self) -> int:
        return 1 << self.beta

    @property
    def m20k_per_table(self) -> int:
        """``ceil(2**beta / depth) * ceil(n / width)``: 52 for 2048 bits in 512 x 40 mode."""
        return _ceil_div(self.table_entries, self.m20k_depth) * _ceil_div(self.bits, self.m20k_width)

    @property
    def m20k_tables(self) -> int:
        return self.table_count * self.m20k_per_table

    @property
    def adder_tree_inputs(self) -> int:
        """``c + 1`` terms: the low ``n`` bits of ``P_s`` and one entry per table."""
        return self.table_count + 1

    @property
    def gamma(self) -> int:
        """``ceil(log2(c + 1))``: bits of ``P_coarse`` above ``n``."""
        return self.table_count.bit_length()

    @property
    def coarse_bits(self) -> int:
        return self.bits + self.gamma

    # -- fine-grain ROM ---------------------------------------------------
    @property
    def fine_address_bits(self) -> int:
        return self.gamma + 1

    @property
    def fine_rom_entries(self) -> int:
        return 1 << self.fine_address_bits

    @property
    def fine_multiple_bits(self) -> int:
        """``K2*M < 2**(n+gamma) + M <= 2**(n+gamma+1)``."""
        return self.bits + self.gamma + 1

    @property
    def fine_rom_width(self) -> int:
        """Two multiples per word: ``2*(n + gamma + 1)`` (4108 for 2048 bits)."""
        return 2 * self.fine_multiple_bits

    # -- DSPs -------------------------------------------------------------
    @property
    def reduction_tiles(self) -> int:
        return sum(st.tiles for st in self.fold_steps)

    @property
    def reduction_dsps(self) -> int:
        return self.reduction_tiles * self.tile.product_count

    @property
    def multiplier_levels(self) -> int:
        """Levels of the main ``n x n`` Karatsuba multiplier over the tile."""
        return karatsuba.levels_for(self.bits, self.tile_bits)

    @property
    def multiplier_tiles(self) -> int:
        return 3 ** self.multiplier_levels

    @property
    def multiplier_dsps(self) -> int:
        return self.multiplier_tiles * self.tile.product_count

    def coarse_bound(self, modulus: int) -> int:
        """Exclusive bound on ``P_coarse``: ``2**n - 1`` plus ``c`` entries of at most ``M - 1``."""
        return (1 << self.bits) + self.table_count * (modulus - 1)

    def cost(self, modulus: int | None = None) -> Cost:
        extra = {
            "steps": self.step_count,
            "fold_widths": self.widths,
            "fold_k": [st.k for st in self.fold_steps],
            "fold_multipliers": [(self.bits, st.k) for st in self.fold_steps],
            "fold_sweet_spots": [st.sweet_spot for st in self.fold_steps],
            "fold_levels": [st.levels for st in self.fold_steps],
            "fold_trims": [st.trim_bits for st in self.fold_steps],
            "fold_tiles": [st.tiles for st in self.fold_steps],
            "fold_dsps": [st.tiles * self.tile.product_count for st in self.fold_steps],
            "reduction_dsps": self.reduction_dsps,
            "multiplier_tiles": self.multiplier_tiles,
            "multiplier_dsps": self.multiplier_dsps,
            "high_bits": self.high_bits,
            "m20k_per_table": self.m20k_per_table,
            "m20k_tables": self.m20k_tables,
            "gamma": self.gamma,
            "coarse_bits": self.coarse_bits,
            "fine_rom_address_bits": self.fine_address_bits,
            "fine_rom_entries": self.fine_rom_entries,
            "fine_rom_width": self.fine_rom_width,
        }
        if modulus is not None:
            # Bits of the largest possible P_coarse (the exact bound: coarse_bound(M)).
            extra["coarse_bound_bits"] = (self.coarse_bound(modulus) - 1).bit_length()
        return Cost(word_products=self.multiplier_dsps + self.reduction_dsps,
                    product_bits=self.tile.dsp_operand_bits,
                    adder_tree_inputs=self.adder_tree_inputs,
                    table_count=self.table_count, table_entries=self.table_entries,
                    table_entry_bits=self.bits, extra=extra)


# ---------------------------------------------------------------------------
# The model for one constant modulus
# ---------------------------------------------------------------------------

class HybridModel:
    """Bit-exact hybrid modular multiplier for a constant modulus of ``design.bits`` bits."""

    def __init__(self, modulus: int, design: HybridDesign):
        n = design.bits
        modulus = require_modulus(modulus, max_bits=n)
        if modulus.bit_length() < n:
            raise ParameterError("modulus", f"is {modulus.bit_length()} bits wide, narrower than the design's {n} "
                                            f"bits: the fine-grain reduction needs the top bit set "
                                            f"(2^{n - 1} <= modulus)")
        self.design = design
        self.modulus = modulus
        # Generator-time constants, derived from M.
        self.constants = tuple(pow(2, st.constant_exponent, modulus) for st in design.fold_steps)
        self._weights = tuple(pow(2, ch.weight, modulus) for ch in design.chunks)
        self._entries: dict[tuple[int, int], int] = {}
        self._rom: dict[int, tuple[int, int, int]] = {}

    # -- tables --------------------------------------------------------------
    def table_entry(self, table: int, v: int) -> int:
        """``(v * 2**weight) mod M`` for chunk ``table`` (cached on first use)."""
        key = (table, v)
        entry = self._entries.get(key)
        if entry is None:
            entry = (v * self._weights[table]) % self.modulus     # precomputation, not datapath
            self._entries[key] = entry
        return entry

    def table(self, table: int) -> tuple[int, ...]:
        """The whole ``2**beta``-entry table of chunk ``table``, by running sums."""
        if not 0 <= table < len(self._weights):
            raise ParameterError("table", f"no table {table}; there are {len(self._weights)}")
        weight = self._weights[table]
        entries = [0] * self.design.table_entries
        acc = 0
        for v in range(1, self.design.table_entries):
            acc += weight
            if acc >= self.modulus:
                acc -= self.modulus
            entries[v] = acc
        return tuple(entries)

    def tables(self) -> list[tuple[int, ...]]:
        return [self.table(t) for t in range(self.design.table_count)]

    # -- fine ROM -------------------------------------------------------------
    def rom_word(self, index: int) -> tuple[int, int, int]:
        """``(K1, K1*M, K2*M)`` at ``index`` (cached); the ROM stores the two multiples."""
        word = self._rom.get(index)
        if word is None:
            n = self.design.bits
            word = (fine_quotient(index, self.modulus, n),) + fine_multiples(index, self.modulus, n)
            self._rom[index] = word
        return word

    def fine_rom(self) -> list[tuple[int, int]]:
        return [fine_multiples(i, self.modulus, self.design.bits) for i in range(self.design.fine_rom_entries)]

    # -- one operation --------------------------------------------------------
    def reduce(self, product: int) -> Outcome:
        """Reduce ``P_0`` (``0 <= P_0 < 2**(2n)``) modulo ``M``."""
        d = self.design
        n = d.bits
        if not 0 <= product < 1 << (2 * n):
            raise ParameterError("product", f"must satisfy 0 <= product < 2^{2 * n}")
        stages: dict[str, int] = {"P0": product}
        items: dict[str, int] = {}
        p = product
        for st, c in zip(d.fold_steps, self.constants):
            if st.trim_bits:
                u = p >> st.width
                items[f"U{st.index}"] = u
                stages[f"U{st.index}"] = u
                p &= _mask(st.width)
            high = p >> st.low_bits
            low = p & _mask(st.low_bits)
            p = high * c + low
            assert p >> st.width_out == 0, "fold output wider than its stage width"
            stages[f"P{st.index + 1}"] = p
        items[f"P{d.step_count}"] = p >> n
        coarse = p & _mask(n)
        mask = _mask(d.beta)
        for t, ch in enumerate(d.chunks):
            v = (items[ch.source] >> (ch.position * d.beta)) & mask
            coarse += self.table_entry(t, v)
        assert coarse >> d.coarse_bits == 0, "P_coarse wider than n + gamma"
        stages["P_coarse"] = coarse
        q, fine, second = fine_reduce(coarse, self.modulus, n, self.rom_word)
        stages.update(fine)
        assert 0 <= q < self.modulus, "fine-grain reduction left the range"
        return Outcome(result=q, raw=q, stages=stages, events={"second_candidate": int(second)})

    def modmul(self, a: int, b: int) -> Outcome:
        check_operand("a", a, self.modulus)
        check_operand("b", b, self.modulus)
        return self.reduce(a * b)

    def cost(self) -> Cost:
        return self.design.cost(self.modulus)

    @property
    def redundant_bound(self) -> int:
        """The fine-grain stage returns the canonical residue: ``raw < M``."""
        return self.modulus


def _edge_cases(model: HybridModel) -> dict[str, tuple[int, int]]:
    m = model.modulus
    n = model.design.bits
    return {"top_bit": (min(1 << (n - 1), m - 1), m - 1),
            "below_2n": (m - 1, m - 2), "half": (m >> 1, (m >> 1) + 1)}


def build(modulus: int, *, bits: int | None = None, **options) -> HybridModel:
    n = bits if bits is not None else require_int("modulus", modulus).bit_length()
    return HybridModel(modulus, HybridDesign(bits=n, **options))


ALGORITHMS = [
    AlgorithmInfo(
        name="hybrid",
        family="hybrid",
        seed="001_dfb497c295201f64.txt Sec. III-V, Algorithm 1, Fig. 1-2, Table I",
        summary="Constant-modulus hybrid reduction: s Karatsuba folding steps, beta-bit table coarse reduction, "
                "2-candidate fine-grain ROM; canonical output",
        cost_formula="k=floor((w-n)/2), g=sweet spot (f(0)=130, f(l+1)=2f(l)-2), w'=max(n+k,w-k)+1; "
                     "DSPs 15*ceil(n/g)*3^levels(g) per step (+15*3^levels(n) multiplier); "
                     "c=ceil((w_s-n)/beta) tables of 2^beta x n bits, ceil(n/40) M20K each; "
                     "gamma=ceil(log2(c+1)); fine ROM 2^(gamma+1) x 2(n+gamma+1) bits",
        build=build,
        options={"bits": "design width n (default: modulus width; the modulus must fill it)",
                 "steps": "folding steps s (default: fewest leaving <= 2*tile_bits bits for the tables)",
                 "beta": "table address bits (9)",
                 "high_part_rounding": "floor (Algorithm 1) | ceil (Sec. V text)",
                 "tile_bits": "Karatsuba leaf tile (130)",
                 "trim_limit": "bits k may exceed a sweet spot and be trimmed (default ceil(tile_bits/5))"},
        edge_cases=_edge_cases,
    ),
]
