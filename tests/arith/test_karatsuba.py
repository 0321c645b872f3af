"""Schoolbook, recursive Karatsuba and the Karatsuba-by-5 tile (seed 001, Sec. VI-VII).

Oracles: Python's ``x * y`` (and ``a * b % m``).  The only numbers typed in
are the seed's printed figures (Fig. 3 sizes, the Sec. VII formula, Table I
multiplier DSPs).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from modforge.arith import karatsuba as K
from modforge.arith.base import ParameterError

TILE = K.TileParams()
CHUNK_MAX = (1 << 26) - 1
ONES130 = (1 << 130) - 1


# ---------------------------------------------------------------------------
# The 130-bit tile
# ---------------------------------------------------------------------------

def tile_edge_operands() -> dict[str, int]:
    ops = {
        "zero": 0, "one": 1, "all_ones": ONES130, "top_bit": 1 << 129,
        "alternating_10": int("10" * 65, 2), "alternating_01": int("01" * 65, 2),
        "even_chunks_max": sum(CHUNK_MAX << (26 * i) for i in (0, 2, 4)),
        "odd_chunks_max": sum(CHUNK_MAX << (26 * i) for i in (1, 3)),
        "runs_of_13": int(("1" * 13 + "0" * 13) * 5, 2),
    }
    for i in range(5):
        ops[f"chunk{i}_max"] = CHUNK_MAX << (26 * i)
        ops[f"chunk{i}_one"] = 1 << (26 * i)
        ops[f"all_but_chunk{i}"] = ONES130 ^ (CHUNK_MAX << (26 * i))
    return ops


# The recombination exactly as Sec. VII prints it: coefficient of 2^(26c).
PRINTED_FORMULA = {
    8: (["P44"], []),
    7: (["P33", "P44"], ["D43"]),
    6: (["P22", "P33", "P44"], ["D42"]),
    5: (["P11", "P22", "P33", "P44"], ["D41", "D32"]),
    4: (["P00", "P11", "P22", "P33", "P44"], ["D40", "D31"]),
    3: (["P00", "P11", "P22", "P33"], ["D30", "D21"]),
    2: (["P00", "P11", "P22"], ["D20"]),
    1: (["P00", "P11"], ["D10"]),
    0: (["P00"], []),
}


def printed_formula_value(products: dict[str, int]) -> int:
    return sum((sum(products[p] for p in plus) - sum(products[d] for d in minus)) << (26 * c)
               for c, (plus, minus) in PRINTED_FORMULA.items())


def test_tile_has_exactly_the_15_products_of_sec_vii():
    expected = {f"P{i}{i}" for i in range(5)} | {f"D{i}{j}" for i in range(1, 5) for j in range(i)}
    products = K.tile_products(TILE, 12345, 67890)
    assert set(products) == expected
    assert len(products) == 15 == TILE.product_count
    assert TILE.tile_bits == 130 and TILE.chunk_bits == 26
    # 26-bit chunks: a difference needs a sign bit, so the DSP is 27x27 signed.
    assert TILE.dsp_operand_bits == 27
    cost = K.tile_cost(TILE)
    assert (cost.word_products, cost.product_bits) == (15, 27)
    assert cost.adder_tree_inputs == max(len(p) + len(d) for p, d in PRINTED_FORMULA.values())


def test_tile_coefficients_are_the_printed_formula():
    for c, (plus, minus) in PRINTED_FORMULA.items():
        got_plus, got_minus = TILE.coefficient_terms(c)
        assert sorted(got_plus) == sorted(plus), c
        assert sorted(got_minus) == sorted(minus), c


def test_tile_edge_operands_exhaustive():
    ops = tile_edge_operands()
    for xn, x in ops.items():
        for yn, y in ops.items():
            products = K.tile_products(TILE, x, y)
            assert K.tile_recombine(TILE, products) == x * y, (xn, yn)
            assert printed_formula_value(products) == x * y, (xn, yn)
            for name, v in products.items():
                # |product| of two 27-bit signed operands of magnitude < 2^26.
                assert abs(v) <= CHUNK_MAX * CHUNK_MAX, (xn, yn, name)
                if name.startswith("P"):
                    assert v >= 0


def test_tile_coefficients_are_column_sums():
    """Each recombined coefficient is the true column sum sum_{i+j=c} X_i Y_j (never negative)."""
    rng = random.Random(7)
    for case in range(300):
        x, y = rng.getrandbits(130), rng.getrandbits(130)
        xs = [(x >> (26 * i)) & CHUNK_MAX for i in range(5)]
        ys = [(y >> (26 * i)) & CHUNK_MAX for i in range(5)]
        columns = [sum(xs[i] * ys[c - i] for i in range(5) if 0 <= c - i < 5) for c in range(9)]
        assert K.tile_coefficients(TILE, K.tile_products(TILE, x, y)) == columns, f"seed 7 case {case}"


def test_tile_random():
    seed = 20240130
    rng = random.Random(seed)
    for case in range(3000):
        if case % 2:
            x, y = rng.getrandbits(130), rng.getrandbits(130)
        else:   # chunks drawn from {0, max, random}: stresses the signed differences
            pick = lambda: sum(rng.choice((0, CHUNK_MAX, rng.getrandbits(26))) << (26 * i) for i in range(5))
            x, y = pick(), pick()
        products = K.tile_products(TILE, x, y)
        assert K.tile_recombine(TILE, products) == x * y, f"seed {seed} case {case}: x={x:#x} y={y:#x}"
        assert printed_formula_value(products) == x * y, f"seed {seed} case {case}"


def test_tile_rejects_wide_operands():
    with pytest.raises(ParameterError, match=r"^x: must fit in the 130-bit tile$"):
        K.tile_products(TILE, 1 << 130, 1)
    with pytest.raises(ParameterError, match=r"^y: must fit in the 130-bit tile$"):
        K.tile_products(TILE, 1, -1)


@settings(derandomize=True, max_examples=300)
@given(st.integers(0, ONES130), st.integers(0, ONES130))
def test_tile_property(x, y):
    assert K.tile_multiply(TILE, x, y) == x * y


@settings(derandomize=True, max_examples=100)
@given(st.integers(1, 40), st.integers(1, 8), st.data())
def test_other_tiles_property(chunk_bits, chunks, data):
    tile = K.TileParams(chunk_bits=chunk_bits, chunks=chunks)
    assert tile.product_count == chunks * (chunks + 1) // 2
    x = data.draw(st.integers(0, (1 << tile.tile_bits) - 1))
    y = data.draw(st.integers(0, (1 << tile.tile_bits) - 1))
    assert K.tile_multiply(tile, x, y) == x * y


# ---------------------------------------------------------------------------
# The recursion tree (Sec. VI, Fig. 3)
# ---------------------------------------------------------------------------

def brute_leaves(bits: int, levels: int) -> list[int]:
    """Independent re-derivation: low part ceil(s/2), high the rest, middle one wider than low."""
    if levels == 0:
        return [bits]
    low = (bits + 1) // 2
    return brute_leaves(bits - low, levels - 1) + brute_leaves(low, levels - 1) + brute_leaves(low + 1, levels - 1)


def test_fig3_sizes_for_2048_bits_4_levels():
    tree = K.karatsuba_tree(2048, 4)
    assert [c.bits for c in tree.children] == [1024, 1024, 1025]
    middle = tree.children[2]
    assert [c.bits for c in middle.children] == [512, 513, 514]
    widest = middle.children[2]
    assert [c.bits for c in widest.children] == [257, 257, 258]
    assert [c.bits for c in widest.children[2].children] == [129, 129, 130]
    assert K.widest_leaf(2048, 4) == 130
    assert len(tree.leaves()) == 81 == 3 ** 4
    assert tree.sizes_by_level()[1] == [1024, 1024, 1025]
    assert tree.distinct_sizes_by_level()[-1] == [128, 129, 130]


@pytest.mark.parametrize("p", range(2, 13))
def test_leaf_bound_2_pow_p_minus_l_plus_2(p):
    for levels in range(1, p + 1):
        leaves = K.karatsuba_tree(1 << p, levels).leaves()
        assert leaves == brute_leaves(1 << p, levels), (p, levels)
        widest = max(leaves)
        bound = (1 << (p - levels)) + 2
        assert K.leaf_bound(p, levels) == bound
        assert widest <= bound, (p, levels)
        if levels >= 2:
            assert widest == bound, f"bound not attained for p={p} l={levels}"
        else:
            assert widest == bound - 1, (p, levels)   # one level: 2^(p-1) + 1


@pytest.mark.parametrize("leaf_bits", [3, 5, 26, 130, 131])
def test_max_input_bits_is_the_largest_fitting_size(leaf_bits):
    for levels in range(0, 6):
        f = K.max_input_bits(levels, leaf_bits)
        assert max(brute_leaves(f, levels)) <= leaf_bits, (leaf_bits, levels)
        assert max(brute_leaves(f + 1, levels)) > leaf_bits, (leaf_bits, levels)
    assert [K.max_input_bits(l, 130) for l in range(5)] == [130, 258, 514, 1026, 2050]


def test_levels_for_table_i_widths():
    # Sec. VIII-A: 256 -> 1 level, 512 -> 2, 1024 -> 3, 2048 -> 4 (Sec. VI).
    assert [K.levels_for(n, 130) for n in (256, 512, 1024, 2048)] == [1, 2, 3, 4]
    assert K.levels_for(130, 130) == 0 and K.levels_for(131, 130) == 1


def test_tree_depth_is_checked():
    with pytest.raises(ParameterError, match=r"^levels: 5 levels split 16-bit operands below one bit; at most 4 levels$"):
        K.karatsuba_tree(16, 5)
    with pytest.raises(ParameterError, match=r"^levels: must be non-negative, got -1$"):
        K.karatsuba_tree(16, -1)


def test_karatsuba_multiply_random_sizes_and_leaves():
    seed = 99
    rng = random.Random(seed)
    leaf_kinds = {
        "tile": lambda x, y, bits: K.tile_multiply(TILE, x, y),
        "direct": lambda x, y, bits: x * y,
    }
    for case in range(300):
        bits = rng.randrange(2, 3000)
        levels = rng.randrange(0, min(K.max_levels(bits), 6) + 1)
        tree = K.karatsuba_tree(bits, levels)
        x, y = rng.getrandbits(bits), rng.getrandbits(bits)
        if case % 3 == 0:
            x = (1 << bits) - 1
        kind = "tile" if max(tree.leaves()) <= 130 else "direct"
        product, count = K.karatsuba_multiply(x, y, tree, leaf_kinds[kind])
        assert product == x * y, f"seed {seed} case {case}: bits={bits} levels={levels}"
        assert count == 3 ** levels


# ---------------------------------------------------------------------------
# Schoolbook
# ---------------------------------------------------------------------------

def test_schoolbook_counts_words_a_times_words_b():
    seed = 5
    rng = random.Random(seed)
    for case in range(300):
        w = rng.choice((8, 16, 27, 32, 64))
        wa, wb = rng.randrange(1, 20), rng.randrange(1, 20)
        x, y = rng.getrandbits(w * wa), rng.getrandbits(w * wb)
        product, count = K.schoolbook_multiply(x, y, w, wa, wb)
        assert product == x * y, f"seed {seed} case {case}"
        assert count == wa * wb, f"seed {seed} case {case}"


def test_schoolbook_column_heights():
    heights = K.schoolbook_column_heights(4, 4)
    # Column c gets the pairs with i+j = c (low halves) and i+j = c-1 (high halves).
    expected = [sum(1 for i in range(4) for j in range(4) if i + j in (c, c - 1)) for c in range(8)]
    assert heights == expected
    assert max(heights) == 2 * 4 - 1


# ---------------------------------------------------------------------------
# The registered multipliers
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("n, levels, dsps", [(256, 1, 45), (512, 2, 135), (1024, 3, 405), (2048, 4, 1215)])
def test_table_i_multiplier_dsps(n, levels, dsps):
    model = K.build_karatsuba((1 << n) - 1)
    cost = model.cost()
    assert cost.extra["levels"] == levels
    assert cost.extra["tiles"] == 3 ** levels
    assert cost.extra["widest_leaf"] <= 130
    assert cost.word_products == dsps
    assert cost.product_bits == 27


def test_schoolbook_cost():
    model = K.build_schoolbook((1 << 2048) - 1, word_bits=64)
    cost = model.cost()
    assert cost.word_products == 32 * 32 and cost.extra["words"] == 32
    assert cost.adder_tree_inputs == 63


def test_karatsuba_leaf_kinds_cost():
    m = (1 << 1024) - 1
    sb = K.build_karatsuba(m, leaf="schoolbook", leaf_word_bits=27).cost()
    leaves = K.karatsuba_tree(1024, 3).leaves()
    assert sb.word_products == sum(((b + 26) // 27) ** 2 for b in leaves)
    direct = K.build_karatsuba(m, leaf="direct").cost()
    assert direct.word_products == 27 and direct.product_bits == 130


def named_edges(m: int) -> dict[str, int]:
    n = m.bit_length()
    out = {"zero": 0, "one": 1, "m-1": m - 1, "m-2": m - 2, "top_bit": 1 << (n - 1),
           "all_ones_words": ((1 << (64 * ((n - 1) // 64))) - 1) or 1,
           "below_2^(n-1)": (1 << (n - 1)) - 1, "alternating": int("10" * n, 2) >> (n + 1)}
    return {k: v for k, v in out.items() if 0 <= v < m}


EDGE_MODULI = [(1 << 64) - 59, (1 << 64) - 2, (1 << 130) - 5, (1 << 258) - 1, (1 << 1024) + 643,
               (1 << 2047) + 1, (1 << 2048) - 1, (1 << 4096) - 2]


def random_moduli(seed: int, count: int) -> list[int]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        bits = rng.randrange(64, 4097)
        m = rng.getrandbits(bits) | (1 << (bits - 1))
        m = m | 1 if i % 2 == 0 else m & ~1    # odd and even
        out.append(m)
    return out


@pytest.mark.parametrize("name, options", [("schoolbook", {}), ("schoolbook", {"word_bits": 27}),
                                           ("karatsuba", {}), ("karatsuba", {"leaf": "schoolbook"}),
                                           ("karatsuba", {"leaf_bits": 64})])
def test_multiplier_models_against_oracle(name, options):
    build = K.build_schoolbook if name == "schoolbook" else K.build_karatsuba
    for m in EDGE_MODULI:
        model = build(m, **options)
        edges = named_edges(m)
        for an, a in edges.items():
            for bn, b in edges.items():
                out = model.modmul(a, b)
                assert out.stages["product"] == out.raw == a * b, (hex(m), an, bn)
                assert out.result == a * b % m, (hex(m), an, bn)
                assert out.raw < model.redundant_bound
    seed = 1234
    rng = random.Random(seed)
    for mi, m in enumerate(random_moduli(seed, 120)):
        model = build(m, **options)
        for case in range(5):
            a, b = rng.randrange(m), rng.randrange(m)
            out = model.modmul(a, b)
            msg = f"seed {seed} modulus #{mi} ({m.bit_length()} bits) case {case}"
            assert out.raw == a * b, msg
            assert out.result == a * b % m, msg
            assert out.raw < model.redundant_bound, msg


@settings(derandomize=True, max_examples=60)
@given(st.integers(3, 1 << 700), st.data())
def test_karatsuba_model_property(m, data):
    model = K.build_karatsuba(m)
    a = data.draw(st.integers(0, m - 1))
    b = data.draw(st.integers(0, m - 1))
    out = model.modmul(a, b)
    assert out.raw == a * b and out.result == a * b % m
    assert out.events["leaf_multiplications"] == 3 ** model.params.depth


def test_registry_entries():
    infos = {a.name: a for a in K.ALGORITHMS}
    assert set(infos) == {"schoolbook", "karatsuba"}
    for info in infos.values():
        assert info.kind == "multiplier"
        assert "001_dfb497c295201f64" in info.seed
    model = infos["karatsuba"].build((1 << 300) + 7, leaf_bits=130)
    assert model.modmul(3, 5).result == 15
    assert infos["schoolbook"].build(1009, word_bits=4).modmul(1000, 1000).result == 1000 * 1000 % 1009


def test_parameter_errors_name_the_parameter():
    m = (1 << 256) + 1
    model = K.build_karatsuba(m)
    with pytest.raises(ParameterError, match=r"^a: operand out of range: need 0 <= a < modulus, got a value of 257 bits$"):
        model.modmul(m, 1)
    with pytest.raises(ParameterError, match=r"^b: operand out of range: need 0 <= b < modulus, got a negative value$"):
        model.modmul(1, -1)
    with pytest.raises(ParameterError, match=r"^modulus: is 257 bits wide, wider than the design's 200 bits$"):
        K.build_karatsuba(m, bits=200)
    with pytest.raises(ParameterError, match=r"^levels: 1 levels leave 130-bit leaves, wider than leaf_bits = 64; need at least 3$"):
        K.build_karatsuba(m, leaf_bits=64, levels=1)
    with pytest.raises(ParameterError, match=r"^leaf_bits: must be at least 3"):
        K.build_karatsuba(m, leaf_bits=2)
    with pytest.raises(ParameterError, match=r"^leaf: must be one of tile, schoolbook, direct, got 'fft'$"):
        K.build_karatsuba(m, leaf="fft")
    with pytest.raises(ParameterError, match=r"^word_bits: must be positive, got 0$"):
        K.build_schoolbook(m, word_bits=0)
    with pytest.raises(ParameterError, match=r"^a: operand out of range"):
        K.build_schoolbook(m).modmul(m + 5, 0)
