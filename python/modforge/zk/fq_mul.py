"""The seed's Fq multiplier, bit-exact: Karatsuba-Ofman down to DSP tiles, truncated Barrett, a LUT and a mux.

Seed 003 (003_5c7e6dc92c5cc8aa.txt, "MSM": "we made a number of optimizations ... across the full stack
of the solution, including finite field operations"; the authors' write-up describes the multiplier as
Karatsuba-Ofman levels over DSP-sized leaves and a Barrett reduction whose products are truncated, with
the last small reduction done by a lookup table).  The arithmetic, for a modulus p of n bits and canonical
inputs a, b < p:

1. **Product.** ``x = a b`` by ``depth`` Karatsuba-Ofman levels: an operand of w bits is cut at
   h = ceil(w/2); ``z0 = lo lo'``, ``z2 = hi hi'``, ``z1 = (lo + hi)(lo' + hi') - z0 - z2`` and
   ``x = z2 2^(2h) + z1 2^h + z0``.  The 3^depth leaves are products of DSP tiles
   (``dsp_bits x dsp_bits`` each), summed.
2. **Quotient, truncated.** Barrett with ``m = floor(2^(2n) / p)``: ``q1 = x >> (n - 1)`` and
   ``q = (q1 m) >> (n + 1)``, where of the tile products of ``q1 m`` only those reaching bit
   ``n + 1 - guard_bits`` or above are summed (the rest, the bottom of the product, are dropped).
   ``q`` undershoots ``floor(x / p)`` by at most ``2 + ceil(dropped_max / 2^(n + 1))``.
3. **Coarse remainder.** ``r = x - q p`` modulo ``2^coarse_bits``, the low half only: the tiles of
   ``q p`` entirely above bit ``coarse_bits`` are not built.  ``r < coarse_bound`` (a few p): the
   *coarse* result.
4. **Final reduction.** The top ``lut_bits`` of ``r`` address a table of the multiples
   ``j p <= address 2^shift < (j + 1) p`` (both are stored); ``r - (j + 1) p`` if it is not negative,
   else ``r - j p``: a lookup table and a two-way multiplexer, canonical in [0, p).

:class:`FqMulParams` holds the four knobs; every bound, width and table is derived from it, and
:meth:`FqMul.mul` returns the named intermediate values so that the RTL (``modforge.hw.fq_mul``) can be
checked stage by stage.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .bls12_377 import BLS12_377

SEED = "003_5c7e6dc92c5cc8aa.txt MSM (the Fq multiplier of the pipelined point adder)"


def tile_slices(width: int, dsp_bits: int) -> list[tuple[int, int]]:
    """(offset, width) of the DSP-sized slices of a ``width``-bit operand, least significant first."""
    out, at = [], 0
    while at < width:
        out.append((at, min(dsp_bits, width - at)))
        at += dsp_bits
    return out


@dataclass(frozen=True)
class KaratsubaNode:
    """One multiplication of the Karatsuba tree: operands bounded by ``a_max`` and ``b_max``."""

    a_max: int
    b_max: int
    depth: int            # levels still to split below this node

    @property
    def width(self) -> int:
        return max(self.a_max.bit_length(), self.b_max.bit_length(), 1)

    @property
    def split(self) -> int:
        return (self.width + 1) // 2

    def children(self) -> tuple[KaratsubaNode, KaratsubaNode, KaratsubaNode]:
        """(lo, hi, mid) sub-products: their operand bounds follow from the split."""
        h = self.split
        mask = (1 << h) - 1
        lo = KaratsubaNode(min(self.a_max, mask), min(self.b_max, mask), self.depth - 1)
        hi = KaratsubaNode(self.a_max >> h, self.b_max >> h, self.depth - 1)
        mid = KaratsubaNode(lo.a_max + hi.a_max, lo.b_max + hi.b_max, self.depth - 1)
        return lo, hi, mid

    def leaves(self) -> list[KaratsubaNode]:
        if self.depth == 0:
            return [self]
        return [leaf for child in self.children() for leaf in child.leaves()]


@dataclass(frozen=True)
class FqMulParams:
    """The multiplier's knobs; everything else is derived."""

    modulus: int = BLS12_377.q
    karatsuba_depth: int = 3
    dsp_bits: int = 17
    guard_bits: int = 0
    lut_bits: int | None = None          # address bits of the final table (default: the fewest that work)
    seed: str = SEED

    def __post_init__(self) -> None:
        if self.modulus < 3 or self.modulus % 2 == 0:
            raise ValueError(f"modulus: must be odd and at least 3, got {self.modulus}")
        if not 0 <= self.karatsuba_depth <= 6:
            raise ValueError(f"karatsuba_depth: must be between 0 and 6, got {self.karatsuba_depth}")
        if not 2 <= self.dsp_bits <= 64:
            raise ValueError(f"dsp_bits: must be between 2 and 64, got {self.dsp_bits}")
        if not 0 <= self.guard_bits <= self.n + 1:
            raise ValueError(f"guard_bits: must be between 0 and {self.n + 1}, got {self.guard_bits}")
        if self.lut_bits is not None and not self.min_lut_bits <= self.lut_bits <= 12:
            raise ValueError(f"lut_bits: must be between {self.min_lut_bits} and 12, got {self.lut_bits}")

    @property
    def n(self) -> int:
        return self.modulus.bit_length()

    # -- product -----------------------------------------------------------------------------------
    @cached_property
    def tree(self) -> KaratsubaNode:
        top = self.modulus - 1
        return KaratsubaNode(top, top, self.karatsuba_depth)

    @cached_property
    def leaves(self) -> list[KaratsubaNode]:
        return self.tree.leaves()

    def leaf_tiles(self, leaf: KaratsubaNode) -> int:
        return (len(tile_slices(leaf.a_max.bit_length(), self.dsp_bits))
                * len(tile_slices(leaf.b_max.bit_length(), self.dsp_bits)))

    @cached_property
    def leaf_bits(self) -> int:
        """The widest leaf operand (the leaf size the depth gives)."""
        return max(leaf.width for leaf in self.leaves)

    # -- Barrett -------------------------------------------------------------------------------------
    @cached_property
    def m(self) -> int:
        return (1 << (2 * self.n)) // self.modulus

    @property
    def q1_bits(self) -> int:
        return self.n + 1                  # x < p^2 < 2^(2n), so x >> (n - 1) < 2^(n + 1)

    @property
    def quotient_cut(self) -> int:
        """Tile products of q1 m wholly below this bit are dropped."""
        return max(self.n + 1 - self.guard_bits, 0)

    def quotient_tiles(self) -> list[tuple[int, int, int, int]]:
        """(q1 offset, q1 width, m offset, m width) of the kept tiles of q1 m (m's zero slices need none)."""
        out = []
        for ao, aw in tile_slices(self.q1_bits, self.dsp_bits):
            for bo, bw in tile_slices(self.m.bit_length(), self.dsp_bits):
                mslice = (self.m >> bo) & ((1 << bw) - 1)
                if mslice and ao + aw + bo + bw > self.quotient_cut:
                    out.append((ao, aw, bo, bw))
        return out

    @cached_property
    def dropped_max(self) -> int:
        """The largest value the dropped tiles of q1 m could have summed to."""
        kept = set(self.quotient_tiles())
        total = 0
        for ao, aw in tile_slices(self.q1_bits, self.dsp_bits):
            for bo, bw in tile_slices(self.m.bit_length(), self.dsp_bits):
                if (ao, aw, bo, bw) not in kept:
                    total += ((1 << aw) - 1) * ((self.m >> bo) & ((1 << bw) - 1)) << (ao + bo)
        return total

    @cached_property
    def quotient_error(self) -> int:
        """How far q may undershoot floor(x / p): Barrett's 2, plus what the dropped tiles can take."""
        return 2 + -(-self.dropped_max // (1 << (self.n + 1)))

    @cached_property
    def coarse_bound(self) -> int:
        """r = x - q p is below this (exclusive): (quotient_error + 1) p."""
        return (self.quotient_error + 1) * self.modulus

    @cached_property
    def coarse_bits(self) -> int:
        return (self.coarse_bound - 1).bit_length()

    def remainder_tiles(self) -> list[tuple[int, int, int, int]]:
        """(q offset, q width, p offset, p width) of the tiles of q p that reach below ``coarse_bits``."""
        out = []
        for ao, aw in tile_slices(self.q1_bits, self.dsp_bits):
            for bo, bw in tile_slices(self.n, self.dsp_bits):
                pslice = (self.modulus >> bo) & ((1 << bw) - 1)
                if pslice and ao + bo < self.coarse_bits:
                    out.append((ao, aw, bo, bw))
        return out

    # -- final reduction -------------------------------------------------------------------------------
    @cached_property
    def min_lut_bits(self) -> int:
        """Fewest address bits with a table step 2^shift <= p, so one more subtraction is enough."""
        shift = self.n - 1                                   # 2^(n-1) <= p
        return max(self.coarse_bits - shift, 1)

    @property
    def table_bits(self) -> int:
        return self.lut_bits if self.lut_bits is not None else self.min_lut_bits

    @property
    def shift(self) -> int:
        return self.coarse_bits - self.table_bits

    @cached_property
    def table(self) -> tuple[tuple[int, int], ...]:
        """Entry a: (j p, (j + 1) p) with j = floor(a 2^shift / p)."""
        return tuple(((a << self.shift) // self.modulus * self.modulus,
                      ((a << self.shift) // self.modulus + 1) * self.modulus)
                     for a in range(1 << self.table_bits))

    # -- cost --------------------------------------------------------------------------------------
    def dsp_tiles(self) -> dict[str, int]:
        leaves = sum(self.leaf_tiles(leaf) for leaf in self.leaves)
        return {"karatsuba_leaves": leaves, "quotient": len(self.quotient_tiles()),
                "remainder": len(self.remainder_tiles()),
                "total": leaves + len(self.quotient_tiles()) + len(self.remainder_tiles())}


@dataclass(frozen=True)
class MulTrace:
    """The named values of one multiplication (what the RTL computes, stage by stage)."""

    a: int
    b: int
    product: int
    q1: int
    quotient: int
    coarse: int
    address: int
    took_upper: bool           # the mux chose r - (j + 1) p
    result: int


class FqMul:
    def __init__(self, params: FqMulParams = FqMulParams()):
        self.params = params

    @cached_property
    def _dropped_by_slice(self) -> list[tuple[int, int, int]]:
        """(q1 offset, q1 width, the constant D) per q1 slice: the dropped tiles of that slice sum to
        slice * D (D is the sum of the m slices the slice's dropped tiles take, at their weights)."""
        p = self.params
        kept = set(p.quotient_tiles())
        out = []
        for ao, aw in tile_slices(p.q1_bits, p.dsp_bits):
            d = sum(((p.m >> bo) & ((1 << bw) - 1)) << bo for bo, bw in tile_slices(p.m.bit_length(), p.dsp_bits)
                    if (ao, aw, bo, bw) not in kept)
            out.append((ao, aw, d))
        return out

    def karatsuba(self, node: KaratsubaNode, a: int, b: int) -> int:
        """a b by the tree under ``node``.  A leaf's DSP tiles cover both operands whole, so their sum is the
        leaf's product: the model multiplies there (the tile list sizes the RTL, :meth:`FqMulParams.leaf_tiles`)."""
        if node.depth == 0:
            return a * b
        h = node.split
        lo, hi, mid = node.children()
        mask = (1 << h) - 1
        z0 = self.karatsuba(lo, a & mask, b & mask)
        z2 = self.karatsuba(hi, a >> h, b >> h)
        z1 = self.karatsuba(mid, (a & mask) + (a >> h), (b & mask) + (b >> h)) - z0 - z2
        return (z2 << (2 * h)) + (z1 << h) + z0

    def mul(self, a: int, b: int) -> MulTrace:
        p = self.params
        if not (0 <= a < p.modulus and 0 <= b < p.modulus):
            raise ValueError("operands must be canonical (below the modulus)")
        x = self.karatsuba(p.tree, a, b)
        q1 = x >> (p.n - 1)
        # The kept tiles of q1 m: the whole product less the dropped tiles, slice by slice.
        q2 = q1 * p.m - sum((((q1 >> ao) & ((1 << aw) - 1)) * d) << ao for ao, aw, d in self._dropped_by_slice)
        quotient = q2 >> (p.n + 1)
        # The tiles of quotient * p that reach below coarse_bits are, modulo 2^coarse_bits, the whole product:
        # every tile left out sits at or above that bit.
        mask = (1 << p.coarse_bits) - 1
        coarse = (x - quotient * p.modulus) & mask
        address = coarse >> p.shift
        low, high = p.table[address]
        upper = coarse >= high
        result = coarse - (high if upper else low)
        return MulTrace(a, b, x, q1, quotient, coarse, address, upper, result)

    def __call__(self, a: int, b: int) -> int:
        return self.mul(a, b).result
