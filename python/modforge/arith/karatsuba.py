"""Integer multipliers: schoolbook, recursive additive Karatsuba, the 130-bit tile.

Seed: 001_dfb497c295201f64.txt (Gribok, Langhammer, Pasca, "FPGA Modular
Multipliers using Hybrid Reduction Techniques"), Sec. VI ("2048-bit Karatsuba
growth analysis", Fig. 3) and Sec. VII ("130-bit multiplier tile
implementation", Fig. 4); the DSP counts of the "Multiplier" rows of Table I.

Three pieces, each usable alone:

* :func:`schoolbook_multiply` - operands cut into ``w``-bit words, every word
  of one operand times every word of the other (``words_a * words_b`` word
  products), summed column by column.
* :func:`karatsuba_tree` / :func:`karatsuba_multiply` - the additive
  Karatsuba recursion of Sec. VI.  An ``s``-bit operand is split at
  ``h = ceil(s/2)``: the high part keeps ``s - h`` bits, the low part ``h``
  bits, and the middle product ``(a_H + a_L)(b_H + b_L)`` is ``h + 1`` bits
  wide.  This is the split the seed prints: 2048 -> 1024, 1024, 1025 and
  1025 -> 512, 513, 514.  The tree of multiplier sizes is recorded; its
  widest leaf for an input of ``2**p`` bits and ``l`` levels is at most
  ``2**(p-l) + 2`` (attained for ``2 <= l <= p``), 130 bits for 2048 bits and
  4 levels.
* :class:`TileParams` / :func:`tile_products` / :func:`tile_recombine` - the
  "Karatsuba-by-5" tile of Sec. VII: five 26-bit chunks, the 15 products
  ``P_ii = X_i*Y_i`` and ``D_ij = (X_i - X_j)(Y_i - Y_j)`` (signed, so each is
  a 27x27 signed DSP product), recombined with the coefficient of
  ``2**(26*c)`` that the seed prints for ``c = 0..8``.

The registered "karatsuba" model multiplies two ``n``-bit operands with the
recursion down to leaves of at most ``leaf_bits`` (130) bits, each leaf
computed by one tile: ``3**levels`` tiles, 15 DSPs each (45 / 135 / 405 / 1215
for 256 / 512 / 1024 / 2048 bits, Table I).  Being a plain multiplier
(``kind="multiplier"``), its ``Outcome.result`` is the product reduced by
Python's ``%`` (the oracle's job) and ``Outcome.stages["product"]`` is the
product itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from .base import Cost, Outcome, ParameterError, check_operand, require_int, require_modulus, require_positive
from .registry import AlgorithmInfo


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _mask(bits: int) -> int:
    return (1 << bits) - 1


# ---------------------------------------------------------------------------
# Schoolbook
# ---------------------------------------------------------------------------

def schoolbook_column_heights(words_a: int, words_b: int) -> list[int]:
    """Word-product halves landing in each ``w``-bit column (adder-tree heights).

    The product ``A_i * B_j`` (``2w`` bits) sits at column ``i + j`` and spills
    into column ``i + j + 1``.
    """
    heights = [0] * (words_a + words_b)
    for i in range(words_a):
        for j in range(words_b):
            heights[i + j] += 1
            heights[i + j + 1] += 1
    return heights


def schoolbook_multiply(x: int, y: int, word_bits: int, words_x: int, words_y: int) -> tuple[int, int]:
    """``x * y`` on ``word_bits``-bit words; returns ``(product, word products used)``.

    Every word of ``x`` times every word of ``y``: ``words_x * words_y`` word
    products, each added into its column.
    """
    require_positive("word_bits", word_bits)
    if x < 0 or x >> (word_bits * words_x):
        raise ParameterError("x", f"must fit in {words_x} words of {word_bits} bits")
    if y < 0 or y >> (word_bits * words_y):
        raise ParameterError("y", f"must fit in {words_y} words of {word_bits} bits")
    mask = _mask(word_bits)
    xs = [(x >> (word_bits * i)) & mask for i in range(words_x)]
    ys = [(y >> (word_bits * j)) & mask for j in range(words_y)]
    columns = [0] * (words_x + words_y)
    count = 0
    for i, xi in enumerate(xs):
        for j, yj in enumerate(ys):
            columns[i + j] += xi * yj
            count += 1
    total = 0
    for c in range(len(columns) - 1, -1, -1):
        total = (total << word_bits) + columns[c]
    return total, count


@dataclass(frozen=True)
class SchoolbookParams:
    """A plain multiplier on ``word_bits``-bit words for ``bits``-bit operands.

    ``bits`` is the design width ``n`` (defaults to the modulus width).
    """

    modulus: int
    bits: int | None = None
    word_bits: int = 64

    def __post_init__(self) -> None:
        require_positive("bits", self.design_bits)
        require_positive("word_bits", self.word_bits)
        require_modulus(self.modulus, max_bits=self.design_bits)

    @property
    def design_bits(self) -> int:
        return self.bits if self.bits is not None else require_int("modulus", self.modulus).bit_length()

    @property
    def words(self) -> int:
        """``ceil(n / w)`` words per operand."""
        return _ceil_div(self.design_bits, self.word_bits)

    @property
    def word_products(self) -> int:
        return self.words * self.words

    def cost(self) -> Cost:
        return Cost(word_products=self.word_products, product_bits=self.word_bits,
                    adder_tree_inputs=max(schoolbook_column_heights(self.words, self.words)),
                    extra={"words": self.words, "word_bits": self.word_bits})


class SchoolbookMultiplier:
    """Schoolbook ``a * b``; ``result`` is the product reduced by the oracle."""

    def __init__(self, params: SchoolbookParams):
        self.params = params
        self.modulus = params.modulus

    def modmul(self, a: int, b: int) -> Outcome:
        check_operand("a", a, self.modulus)
        check_operand("b", b, self.modulus)
        w = self.params.words
        product, count = schoolbook_multiply(a, b, self.params.word_bits, w, w)
        return Outcome(result=product % self.modulus, raw=product,
                       stages={"product": product}, events={"word_products": count})

    def cost(self) -> Cost:
        return self.params.cost()

    @property
    def redundant_bound(self) -> int:
        """``raw`` is the product of two operands below ``m``: at most ``(m-1)**2``."""
        return (self.modulus - 1) ** 2 + 1


# ---------------------------------------------------------------------------
# The Karatsuba-by-5 tile (Sec. VII)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class TileParams:
    """The Sec. VII tile: ``chunks`` chunks of ``chunk_bits`` bits (5 x 26 = 130)."""

    chunk_bits: int = 26
    chunks: int = 5

    def __post_init__(self) -> None:
        require_positive("chunk_bits", self.chunk_bits)
        require_positive("chunks", self.chunks)

    @classmethod
    def for_leaf(cls, leaf_bits: int, chunks: int = 5) -> "TileParams":
        """The smallest tile of ``chunks`` equal chunks covering ``leaf_bits`` bits."""
        require_positive("leaf_bits", leaf_bits)
        return cls(chunk_bits=_ceil_div(leaf_bits, chunks), chunks=chunks)

    @property
    def tile_bits(self) -> int:
        return self.chunk_bits * self.chunks

    @cached_property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """The ``(i, j)`` of the ``D_ij``: ``i`` in ``1..chunks-1``, ``j < i``."""
        return tuple((i, j) for i in range(1, self.chunks) for j in range(i))

    @cached_property
    def product_names(self) -> tuple[str, ...]:
        """``P00 .. P44`` then ``D10, D20, D21, ... D43``: the order of the DSP products."""
        return tuple(f"P{i}{i}" for i in range(self.chunks)) + tuple(f"D{i}{j}" for i, j in self.pairs)

    @cached_property
    def recombination(self) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
        """Per column ``c``: positions (in :attr:`product_names`) added and subtracted."""
        index = {name: pos for pos, name in enumerate(self.product_names)}
        return tuple((tuple(index[p] for p in plus), tuple(index[d] for d in minus))
                     for plus, minus in (self.coefficient_terms(c) for c in range(self.coefficient_count)))

    @property
    def product_count(self) -> int:
        """``chunks`` squares-of-a-kind ``P_ii`` plus one ``D_ij`` per pair: 15 for 5 chunks."""
        return self.chunks + len(self.pairs)

    @property
    def dsp_operand_bits(self) -> int:
        """Signed operand width of a DSP product: a chunk difference needs a sign bit (27)."""
        return self.chunk_bits + 1

    @property
    def coefficient_count(self) -> int:
        """Columns ``2**(chunk_bits*c)``, ``c = 0 .. 2*(chunks-1)``: 9 for 5 chunks."""
        return 2 * self.chunks - 1

    def coefficient_terms(self, c: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Names added and subtracted in the coefficient of ``2**(chunk_bits*c)``.

        ``X_i Y_j + X_j Y_i = P_ii + P_jj - D_ij``, so column ``c`` is the sum,
        over the pairs ``i > j`` with ``i + j = c``, of ``P_ii + P_jj - D_ij``,
        plus ``P_hh`` when ``c = 2h``.
        """
        plus: list[int] = []
        minus: list[str] = []
        if c % 2 == 0 and c // 2 < self.chunks:
            plus.append(c // 2)
        for i, j in self.pairs:
            if i + j == c:
                plus.extend((i, j))
                minus.append(f"D{i}{j}")
        return tuple(f"P{i}{i}" for i in sorted(plus)), tuple(minus)


def tile_cost(tile: TileParams) -> Cost:
    """One tile: ``product_count`` signed ``dsp_operand_bits`` x ``dsp_operand_bits`` products.

    ``adder_tree_inputs`` is the largest number of products one coefficient
    sums (7 for the middle column of the 5-chunk tile).
    """
    terms = [len(plus) + len(minus) for plus, minus in tile.recombination]
    return Cost(word_products=tile.product_count, product_bits=tile.dsp_operand_bits,
                adder_tree_inputs=max(terms),
                extra={"tile_bits": tile.tile_bits, "chunk_bits": tile.chunk_bits, "chunks": tile.chunks,
                       "signed": True, "coefficients": tile.coefficient_count})


def _tile_product_list(tile: TileParams, x: int, y: int) -> list[int]:
    """The DSP products in :attr:`TileParams.product_names` order."""
    for name, v in (("x", x), ("y", y)):
        if v < 0 or v >> tile.tile_bits:
            raise ParameterError(name, f"must fit in the {tile.tile_bits}-bit tile")
    cb = tile.chunk_bits
    mask = _mask(cb)
    xs = [(x >> (cb * i)) & mask for i in range(tile.chunks)]
    ys = [(y >> (cb * i)) & mask for i in range(tile.chunks)]
    out = [xs[i] * ys[i] for i in range(tile.chunks)]
    lo, hi = -(1 << cb), 1 << cb   # the signed DSP operand range: chunk_bits + 1 bits
    for i, j in tile.pairs:
        dx, dy = xs[i] - xs[j], ys[i] - ys[j]
        assert lo <= dx < hi and lo <= dy < hi, "chunk difference wider than the signed DSP operand"
        out.append(dx * dy)
    return out


def tile_products(tile: TileParams, x: int, y: int) -> dict[str, int]:
    """The tile's DSP products: ``P_ii`` and the signed ``D_ij``, by name."""
    return dict(zip(tile.product_names, _tile_product_list(tile, x, y)))


def _coefficients(tile: TileParams, values: list[int]) -> list[int]:
    return [sum(values[p] for p in plus) - sum(values[d] for d in minus) for plus, minus in tile.recombination]


def tile_coefficients(tile: TileParams, products: dict[str, int]) -> list[int]:
    """The column sums (coefficients of ``2**(chunk_bits*c)``) from the named products."""
    return _coefficients(tile, [products[name] for name in tile.product_names])


def _sum_columns(tile: TileParams, coefficients: list[int]) -> int:
    total = 0
    for coefficient in reversed(coefficients):
        total = (total << tile.chunk_bits) + coefficient
    return total


def tile_recombine(tile: TileParams, products: dict[str, int]) -> int:
    """Sum the coefficients at their weights: the tile's product."""
    return _sum_columns(tile, tile_coefficients(tile, products))


def tile_multiply(tile: TileParams, x: int, y: int) -> int:
    """``x * y`` for operands of at most ``tile_bits`` bits, through the tile's products."""
    return _sum_columns(tile, _coefficients(tile, _tile_product_list(tile, x, y)))


# ---------------------------------------------------------------------------
# Recursive additive Karatsuba (Sec. VI)
# ---------------------------------------------------------------------------

def split_sizes(bits: int) -> tuple[int, int, int]:
    """``(high, low, middle)`` operand widths of one Karatsuba split of ``bits``-bit operands.

    The low part takes ``ceil(bits/2)`` bits, the high part the rest, and the
    middle product's operands ``a_H + a_L`` are one bit wider than the low part.
    """
    if bits < 2:
        raise ParameterError("levels", f"cannot split {bits}-bit operands further")
    low = _ceil_div(bits, 2)
    return bits - low, low, low + 1


@dataclass(frozen=True)
class KaratsubaNode:
    """One multiplier of the recursion: its operand width and its (high, low, middle) children."""

    bits: int
    children: tuple["KaratsubaNode", ...] = ()

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def leaves(self) -> list[int]:
        """Leaf operand widths, high-low-middle order, depth first."""
        if self.is_leaf:
            return [self.bits]
        return [b for child in self.children for b in child.leaves()]

    def sizes_by_level(self) -> list[list[int]]:
        """Operand widths of every multiplier at each depth (``[0]`` is the root)."""
        levels: list[list[int]] = []
        frontier = [self]
        while frontier:
            levels.append([node.bits for node in frontier])
            frontier = [child for node in frontier for child in node.children]
        return levels

    def distinct_sizes_by_level(self) -> list[list[int]]:
        """Distinct widths per depth, ascending: the boxes of the seed's Fig. 3."""
        return [sorted(set(level)) for level in self.sizes_by_level()]


@lru_cache(maxsize=None)
def karatsuba_tree(bits: int, levels: int) -> KaratsubaNode:
    """The tree of multiplier sizes of a ``levels``-deep recursion on ``bits``-bit operands."""
    require_positive("bits", bits)
    require_int("levels", levels)
    if levels < 0:
        raise ParameterError("levels", f"must be non-negative, got {levels}")
    if levels > max_levels(bits):
        raise ParameterError("levels", f"{levels} levels split {bits}-bit operands below one bit; "
                                       f"at most {max_levels(bits)} levels")
    if levels == 0:
        return KaratsubaNode(bits)
    return KaratsubaNode(bits, tuple(karatsuba_tree(b, levels - 1) for b in split_sizes(bits)))


def max_levels(bits: int) -> int:
    """Deepest recursion whose narrowest (high-part) operands still have a bit."""
    return bits.bit_length() - 1


def widest_leaf(bits: int, levels: int) -> int:
    """Widest leaf multiplier: follow the middle product, ``s -> ceil(s/2) + 1``."""
    return max(karatsuba_tree(bits, levels).leaves())


def leaf_bound(p: int, levels: int) -> int:
    """The seed's bound ``2**(p-l) + 2`` on the leaves of a ``2**p``-bit multiplier (``l <= p``)."""
    if not 0 <= levels <= p:
        raise ParameterError("levels", f"the bound is stated for 0 <= levels <= p = {p}")
    return (1 << (p - levels)) + 2


def max_input_bits(levels: int, leaf_bits: int) -> int:
    """Widest operand whose ``levels``-deep tree has every leaf within ``leaf_bits``.

    ``f(0) = leaf_bits`` and ``f(l+1) = 2*f(l) - 2``, because the widest child
    of ``s`` is the middle one, ``ceil(s/2) + 1`` bits: 130, 258, 514, 1026,
    2050, ... for the 130-bit tile.  These are the multiplier "sweet spots" of
    the hybrid reduction (Sec. IV).
    """
    if leaf_bits < 3:
        raise ParameterError("leaf_bits", f"must be at least 3 (a 3-bit operand's middle product is 3 bits wide), "
                                          f"got {leaf_bits}")
    f = leaf_bits
    for _ in range(levels):
        f = 2 * f - 2
    return f


def levels_for(bits: int, leaf_bits: int) -> int:
    """Fewest levels that bring every leaf of a ``bits``-bit multiplier within ``leaf_bits``."""
    require_positive("bits", bits)
    levels = 0
    while max_input_bits(levels, leaf_bits) < bits:
        levels += 1
    return levels


def karatsuba_multiply(x: int, y: int, tree: KaratsubaNode, leaf_multiply) -> tuple[int, int]:
    """``x * y`` by the recursion ``tree``; ``leaf_multiply(x, y, bits)`` does the leaves.

    Returns ``(product, leaf multiplications)``.
    """
    if x < 0 or x >> tree.bits or y < 0 or y >> tree.bits:
        raise ParameterError("x", f"operands must fit in {tree.bits} bits")
    counter = [0]

    def rec(a: int, b: int, node: KaratsubaNode) -> int:
        if node.is_leaf:
            counter[0] += 1
            return leaf_multiply(a, b, node.bits)
        high, low, middle = node.children
        h = low.bits
        m = _mask(h)
        a_l, a_h, b_l, b_h = a & m, a >> h, b & m, b >> h
        p_h = rec(a_h, b_h, high)
        p_l = rec(a_l, b_l, low)
        p_m = rec(a_h + a_l, b_h + b_l, middle)
        return (p_h << (2 * h)) + ((p_m - p_h - p_l) << h) + p_l

    return rec(x, y, tree), counter[0]


LEAF_KINDS = ("tile", "schoolbook", "direct")


@dataclass(frozen=True)
class KaratsubaParams:
    """A recursive Karatsuba multiplier for ``bits``-bit operands (default: modulus width).

    ``leaf_bits`` bounds the leaves (130: the Sec. VII tile); ``levels`` is
    derived from it (the fewest levels that fit) unless given.  ``leaf`` says
    how leaves are multiplied: ``"tile"`` (Karatsuba-by-``tile_chunks``, 5 x 26
    bits for 130), ``"schoolbook"`` on ``leaf_word_bits``-bit words, or
    ``"direct"`` (one leaf-sized product).
    """

    modulus: int
    bits: int | None = None
    leaf_bits: int = 130
    levels: int | None = None
    leaf: str = "tile"
    tile_chunks: int = 5
    leaf_word_bits: int = 27

    def __post_init__(self) -> None:
        require_positive("bits", self.design_bits)
        require_modulus(self.modulus, max_bits=self.design_bits)
        require_positive("leaf_bits", self.leaf_bits)
        max_input_bits(0, self.leaf_bits)      # leaf_bits >= 3
        if self.leaf not in LEAF_KINDS:
            raise ParameterError("leaf", f"must be one of {', '.join(LEAF_KINDS)}, got {self.leaf!r}")
        require_positive("tile_chunks", self.tile_chunks)
        require_positive("leaf_word_bits", self.leaf_word_bits)
        if self.levels is not None:
            require_int("levels", self.levels)
            karatsuba_tree(self.design_bits, self.levels)  # checks the depth
            if self.widest_leaf > self.leaf_bits:
                raise ParameterError("levels", f"{self.levels} levels leave {self.widest_leaf}-bit leaves, wider than "
                                               f"leaf_bits = {self.leaf_bits}; need at least "
                                               f"{levels_for(self.design_bits, self.leaf_bits)}")

    @property
    def design_bits(self) -> int:
        return self.bits if self.bits is not None else require_int("modulus", self.modulus).bit_length()

    @property
    def depth(self) -> int:
        """Recursion levels: given, or the fewest with leaves within ``leaf_bits``."""
        return self.levels if self.levels is not None else levels_for(self.design_bits, self.leaf_bits)

    @cached_property
    def tree(self) -> KaratsubaNode:
        return karatsuba_tree(self.design_bits, self.depth)

    @property
    def leaf_count(self) -> int:
        """``3**levels`` leaf multipliers."""
        return 3 ** self.depth

    @property
    def widest_leaf(self) -> int:
        return max(self.tree.leaves())

    @cached_property
    def tile(self) -> TileParams:
        return TileParams.for_leaf(self.leaf_bits, self.tile_chunks)

    def leaf_word_products(self, leaf_bits: int) -> int:
        """Word products one leaf of ``leaf_bits`` bits costs."""
        if self.leaf == "tile":
            return self.tile.product_count
        if self.leaf == "schoolbook":
            return _ceil_div(leaf_bits, self.leaf_word_bits) ** 2
        return 1

    @property
    def product_bits(self) -> int:
        if self.leaf == "tile":
            return self.tile.dsp_operand_bits
        if self.leaf == "schoolbook":
            return self.leaf_word_bits
        return self.widest_leaf

    def cost(self) -> Cost:
        leaves = self.tree.leaves()
        return Cost(
            word_products=sum(self.leaf_word_products(b) for b in leaves),
            product_bits=self.product_bits,
            extra={"levels": self.depth, "leaf_count": len(leaves), "widest_leaf": self.widest_leaf,
                   "tiles": len(leaves) if self.leaf == "tile" else 0,
                   "leaf": self.leaf,
                   "tree_sizes": self.tree.distinct_sizes_by_level()})


class KaratsubaMultiplier:
    """Recursive additive Karatsuba ``a * b`` with tile (or schoolbook / direct) leaves."""

    def __init__(self, params: KaratsubaParams):
        self.params = params
        self.modulus = params.modulus

    def _leaf(self, x: int, y: int, bits: int) -> int:
        p = self.params
        if p.leaf == "tile":
            return tile_multiply(p.tile, x, y)
        if p.leaf == "schoolbook":
            words = _ceil_div(bits, p.leaf_word_bits)
            return schoolbook_multiply(x, y, p.leaf_word_bits, words, words)[0]
        return x * y

    def multiply(self, x: int, y: int) -> tuple[int, int]:
        """``(x * y, leaf multiplications)`` for ``x, y < 2**bits``."""
        return karatsuba_multiply(x, y, self.params.tree, self._leaf)

    def modmul(self, a: int, b: int) -> Outcome:
        check_operand("a", a, self.modulus)
        check_operand("b", b, self.modulus)
        product, leaves = self.multiply(a, b)
        return Outcome(result=product % self.modulus, raw=product,
                       stages={"product": product}, events={"leaf_multiplications": leaves})

    def cost(self) -> Cost:
        return self.params.cost()

    @property
    def redundant_bound(self) -> int:
        """``raw`` is the product of two operands below ``m``: at most ``(m-1)**2``."""
        return (self.modulus - 1) ** 2 + 1


def _edge_cases(model) -> dict[str, tuple[int, int]]:
    m = model.modulus
    n = m.bit_length()
    alternating = int("10" * n, 2) >> n
    return {"alternating": (min(alternating, m - 1), min(alternating >> 1, m - 1)),
            "top_bit": (min(1 << (n - 1), m - 1), m - 1)}


def build_schoolbook(modulus: int, **options) -> SchoolbookMultiplier:
    return SchoolbookMultiplier(SchoolbookParams(modulus=modulus, **options))


def build_karatsuba(modulus: int, **options) -> KaratsubaMultiplier:
    return KaratsubaMultiplier(KaratsubaParams(modulus=modulus, **options))


ALGORITHMS = [
    AlgorithmInfo(
        name="schoolbook",
        family="karatsuba",
        seed="001_dfb497c295201f64.txt Sec. VI (the 4-product schoolbook baseline)",
        summary="Plain integer multiplier on w-bit words (result reduced by the oracle)",
        cost_formula="words = ceil(n/w); word products words^2 of w x w bits; adder tree 2*words-1 inputs",
        build=build_schoolbook,
        kind="multiplier",
        options={"bits": "design width n (default: modulus width)", "word_bits": "w (64)"},
        edge_cases=_edge_cases,
    ),
    AlgorithmInfo(
        name="karatsuba",
        family="karatsuba",
        seed="001_dfb497c295201f64.txt Sec. VI (recursion, Fig. 3), Sec. VII (130-bit Karatsuba-by-5 tile)",
        summary="Recursive additive Karatsuba down to <=130-bit leaves, each a 15-DSP tile (result reduced by the oracle)",
        cost_formula="levels = fewest with widest leaf <= leaf_bits (f(0)=leaf_bits, f(l+1)=2f(l)-2); "
                     "tiles 3^levels; DSPs 15 per tile (27x27 signed)",
        build=build_karatsuba,
        kind="multiplier",
        options={"bits": "design width n (default: modulus width)", "leaf_bits": "widest leaf (130, the tile)",
                 "levels": "recursion depth (default: derived from leaf_bits)",
                 "leaf": "tile | schoolbook | direct (tile)", "leaf_word_bits": "schoolbook leaf word (27)"},
        edge_cases=_edge_cases,
    ),
]
