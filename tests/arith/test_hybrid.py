"""Hybrid reduction (seed 001, Sec. III-V, Algorithm 1, Table I).

The numbers typed in here are the seed's printed figures (Sec. V, Table I);
everything else is checked against ``a*b % m``, ``pow`` or an independent
re-derivation in the test.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from modforge.arith import hybrid as H
from modforge.arith.base import ParameterError


def modulus_of(bits: int, seed: int, odd: bool = True) -> int:
    rng = random.Random(seed)
    m = rng.getrandbits(bits) | (1 << (bits - 1))
    return m | 1 if odd else m & ~1


# ---------------------------------------------------------------------------
# The paper's figures
# ---------------------------------------------------------------------------

def test_sec_v_2048_bit_example():
    d = H.HybridDesign(bits=2048, steps=3, beta=9)
    assert d.widths == [4096, 3073, 2562, 2306]
    first = d.fold_steps[0]
    assert (first.k, first.low_bits) == (1024, 3072)          # P_0^H 1024 bits, C_0 = 2^3072 mod M
    assert d.fold_steps[2].k == 257 and d.fold_steps[2].low_bits == 2048 + 257   # C = 2^(2048+257)
    assert d.high_bits == 258
    assert d.table_count == 29
    assert d.table_entries == 2 ** 9
    assert d.cost().table_entry_bits == 2048
    assert d.m20k_per_table == 52
    assert d.m20k_tables == 1508
    assert d.adder_tree_inputs == 30
    assert d.coarse_bits == 2053 and d.gamma == 5
    assert d.fine_address_bits == 6
    assert d.fine_rom_width == 4108


def test_sec_v_multiplier_shapes_and_sweet_spots():
    d = H.HybridDesign(bits=2048, steps=3)
    assert [d.sweet_spot(l) for l in range(5)] == [130, 258, 514, 1026, 2050]
    assert [st.sweet_spot for st in d.fold_steps] == [1026, 514, 258]
    assert [st.trim_bits for st in d.fold_steps] == [0, 0, 0]
    # Sec. VIII-D: the first stage is a 1024 x 2048 multiplier.
    assert d.cost().extra["fold_multipliers"][0] == (2048, 1024)


# Table I, Agilex7 rows "ours": (n, steps, reduction DSPs, reduction M20Ks, multiplier DSPs, total DSPs).
TABLE_I = [
    (256, 1, 30, 105, 45, 75),
    (512, 1, 90, 377, 135, 225),
    (512, 2, 150, 195, 135, 285),
    (1024, 2, 450, 754, 405, 855),
    (1024, 3, 570, 390, 405, 975),
    (2048, 3, 1710, 1508, 1215, 2925),   # the paper prints 1586 M20K: tables (1508) plus delay lines
]


@pytest.mark.parametrize("n, steps, dsps, m20k, mult_dsps, total_dsps", TABLE_I)
def test_table_i(n, steps, dsps, m20k, mult_dsps, total_dsps):
    d = H.HybridDesign(bits=n, steps=steps)
    assert d.reduction_dsps == dsps
    assert d.m20k_tables == m20k
    assert d.multiplier_dsps == mult_dsps
    cost = H.build(modulus_of(n, n), steps=steps).cost()
    assert cost.word_products == total_dsps
    assert cost.extra["reduction_dsps"] == dsps and cost.extra["m20k_tables"] == m20k
    assert sum(cost.extra["fold_dsps"]) == dsps
    assert cost.extra["coarse_bound_bits"] <= d.coarse_bits


def test_table_i_default_steps():
    assert [H.HybridDesign(bits=n).step_count for n in (256, 512, 1024, 2048)] == [1, 1, 2, 3]


def test_sweet_spot_example_of_sec_iv():
    d = H.HybridDesign(bits=2048)
    assert d.mult_sweet_spot(516) == 514
    n = 2048
    w = n + 1032                     # k = 516
    assert d.high_part_bits(w) == 516
    u = d.find_trim_size(w, n, 514)
    assert u == 4                    # "may return u_w = 4, which yields k' = 514"
    assert (w - u - n) // 2 == 514
    # Table I's k values all sit at most 2 bits below a sweet spot: no trim.
    assert [d.mult_sweet_spot(k) for k in (128, 129, 256, 257, 512, 1024)] == [130, 130, 258, 258, 514, 1026]
    # Beyond trim_limit (one 26-bit tile chunk) above 514 the next sweet spot is used instead.
    assert d.mult_sweet_spot(514 + 26) == 514 and d.mult_sweet_spot(514 + 27) == 1026
    assert H.HybridDesign(bits=2048, trim_limit=0).mult_sweet_spot(516) == 1026


# ---------------------------------------------------------------------------
# Floor (Algorithm 1) versus ceil (Sec. V text)
# ---------------------------------------------------------------------------

def test_floor_and_ceil_on_the_2048_bit_example():
    fl = H.HybridDesign(bits=2048, steps=3, high_part_rounding="floor")
    ce = H.HybridDesign(bits=2048, steps=3, high_part_rounding="ceil")
    assert fl.widths == ce.widths == [4096, 3073, 2562, 2306]
    assert [s.k for s in fl.fold_steps] == [1024, 512, 257]
    assert [s.k for s in ce.fold_steps] == [1024, 513, 257]   # Sec. V: "P_1^H ... 513 bits"
    assert ce.fold_steps[1].low_bits == 2048 + 512             # Sec. V: C_1 = 2^(2048+512) mod M
    assert fl.fold_steps[1].low_bits == 2048 + 513
    # Every cost figure agrees; only the k dimension of the middle fold multiplier differs.
    ignore = {"fold_k": None, "fold_multipliers": None}
    assert fl.cost().as_dict() | ignore == ce.cost().as_dict() | ignore


def test_floor_and_ceil_widths_agree_unless_ceil_trims():
    """max(n+k, w-k) = n + ceil((w-n)/2) for either rounding, so widths differ only through a trim."""
    rng = random.Random(11)
    for case in range(400):
        n = rng.randrange(2, 5000)
        fl = H.HybridDesign(bits=n)
        ce = H.HybridDesign(bits=n, steps=fl.step_count, high_part_rounding="ceil")
        trims = any(s.trim_bits for s in fl.fold_steps) or any(s.trim_bits for s in ce.fold_steps)
        if not trims:
            assert fl.widths == ce.widths, f"seed 11 case {case} n={n}"


def test_ceil_can_trim_where_floor_does_not():
    # n = 261: w - n = 261, floor k = 130 = the tile, ceil k = 131 -> trimmed back to 130.
    fl = H.HybridDesign(bits=261, steps=1)
    ce = H.HybridDesign(bits=261, steps=1, high_part_rounding="ceil")
    assert [s.trim_bits for s in fl.fold_steps] == [0]
    assert [s.trim_bits for s in ce.fold_steps] == [1]
    assert fl.widths == [522, 393] and ce.widths == [522, 392]
    assert fl.table_count == 15 and ce.table_count == 16


def test_floor_can_trim_where_ceil_does_not():
    # n = 313: floor k = 156 is 26 bits (trim_limit) above 130 -> trimmed; ceil k = 157 -> the 258 multiplier.
    fl = H.HybridDesign(bits=313, steps=1)
    ce = H.HybridDesign(bits=313, steps=1, high_part_rounding="ceil")
    assert [(s.k, s.sweet_spot, s.trim_bits) for s in fl.fold_steps] == [(130, 130, 313 - 260)]
    assert [(s.k, s.sweet_spot, s.trim_bits) for s in ce.fold_steps] == [(157, 258, 0)]
    assert fl.reduction_dsps < ce.reduction_dsps and fl.m20k_tables > ce.m20k_tables


# ---------------------------------------------------------------------------
# Fine-grain reduction
# ---------------------------------------------------------------------------

def test_fine_reduction_exhaustive_small():
    """Every M with its top bit set and every P_coarse below 2^(n+4): the answer is Q1 or Q2."""
    for n in range(2, 8):
        for m in range(max(3, 1 << (n - 1)), 1 << n):
            for p in range(1 << (n + 4)):
                q, stages, second = H.fine_reduce(p, m, n)
                assert q == p % m, (n, m, p)
                assert stages["Q1"] >= 0 and second == (stages["Q2"] >= 0)


def test_fine_reduction_needs_the_top_bit():
    """With M < 2^(n-1), floor(P/M) can leave {K1, K1+1}."""
    broken = []
    for n in range(4, 9):
        for m in range(3, 1 << (n - 1)):
            for p in range(1 << (n + 2)):
                k1 = H.fine_quotient(p >> (n - 1), m, n)
                assert H.fine_multiples(p >> (n - 1), m, n) == (k1 * m, (k1 + 1) * m)
                if p // m not in (k1, k1 + 1):
                    broken.append((n, m, p))
    assert broken


def test_fine_rom_contents():
    m = modulus_of(300, 1)
    model = H.build(m, steps=2)
    d = model.design
    rom = model.fine_rom()
    assert len(rom) == d.fine_rom_entries == 2 ** (d.gamma + 1)
    for index, (k1m, k2m) in enumerate(rom):
        assert k1m % m == 0 and k2m - k1m == m
        assert k1m <= index << (d.bits - 1) < k2m
        assert k2m < 1 << d.fine_multiple_bits


# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------

def test_tables_are_shifted_multiples():
    m = modulus_of(2048, 5)
    model = H.build(m, steps=3)
    d = model.design
    # 29 tables for the top 258 bits of P_3, at weights 2^(2048 + 9i).
    assert [ch.weight for ch in d.chunks] == [2048 + 9 * i for i in range(29)]
    assert [ch.bits for ch in d.chunks] == [9] * 28 + [6]
    tables = model.tables()
    assert len(tables) == 29
    rng = random.Random(8)
    for t in rng.sample(range(29), 4):
        weight = pow(2, 2048 + 9 * t, m)
        assert tables[t] == tuple(v * weight % m for v in range(512)), t
        for v in rng.sample(range(512), 20):
            assert model.table_entry(t, v) == tables[t][v]
            assert tables[t][v] < m


def test_trimmed_items_get_tables():
    # n = 1040: k = 520 exceeds the 514 sweet spot by 6 bits -> trim u_w = 2080 - 1040 - 1028 = 12 bits.
    d = H.HybridDesign(bits=1040, steps=2)
    first = d.fold_steps[0]
    assert (first.k, first.sweet_spot, first.trim_bits, first.width) == (514, 514, 12, 2068)
    u_chunks = [ch for ch in d.chunks if ch.source == "U0"]
    assert [(ch.weight, ch.bits) for ch in u_chunks] == [(2068, 9), (2077, 3)]
    assert d.table_count == len(u_chunks) + -(-(d.final_width - 1040) // 9)
    m = modulus_of(1040, 9, odd=False)
    model = H.HybridModel(m, d)
    rng = random.Random(9)
    for case in range(200):
        a, b = rng.randrange(m), rng.randrange(m)
        out = model.modmul(a, b)
        assert out.result == a * b % m, f"seed 9 case {case}"
        assert out.stages["U0"] == (a * b) >> 2068


# ---------------------------------------------------------------------------
# The model against the oracle
# ---------------------------------------------------------------------------

def named_edges(m: int, n: int) -> dict[str, int]:
    out = {"zero": 0, "one": 1, "m-1": m - 1, "m-2": m - 2, "half": m >> 1, "top_bit": 1 << (n - 1),
           "below_top_bit": (1 << (n - 1)) - 1, "all_ones_words": ((1 << (64 * ((n - 1) // 64))) - 1) or 1,
           "below_2^n": (1 << n) - 1}
    return {k: v for k, v in out.items() if 0 <= v < m}


def check(model: H.HybridModel, a: int, b: int, msg: str) -> H.Outcome:
    m = model.modulus
    d = model.design
    out = model.modmul(a, b)
    assert out.result == out.raw == a * b % m, msg
    assert out.raw < model.redundant_bound, msg
    assert out.stages["P0"] == a * b, msg
    for i, w in enumerate(d.widths):
        assert out.stages[f"P{i}"] < 1 << w, msg
        assert out.stages[f"P{i}"] % m == a * b % m or any(st.trim_bits for st in d.fold_steps), msg
    assert out.stages["P_coarse"] % m == a * b % m, msg
    assert out.stages["P_coarse"] < d.coarse_bound(m) <= 1 << d.coarse_bits, msg
    assert out.stages["Q1"] == out.stages["P_coarse"] - out.stages["K1"] * m, msg
    assert out.stages["Q2"] == out.stages["Q1"] - m, msg
    return out


EDGE_MODULI = [(1 << 63) + 1, (1 << 64) - 59, 1 << 63, (1 << 256) - 189, (1 << 255) + 95,
               (1 << 1024) - 1, (1 << 2048) - 1, (1 << 2047) + 1, (1 << 4096) - 3]


@pytest.mark.parametrize("rounding", ["floor", "ceil"])
def test_edge_operands(rounding):
    for m in EDGE_MODULI:
        n = m.bit_length()
        for steps in sorted({0, 1, H.HybridDesign(bits=n).step_count}):
            model = H.build(m, steps=steps, high_part_rounding=rounding)
            edges = named_edges(m, n)
            for an, a in edges.items():
                for bn, b in edges.items():
                    check(model, a, b, f"{hex(m)} steps={steps} {an} x {bn}")


@pytest.mark.parametrize("rounding", ["floor", "ceil"])
def test_random_moduli_and_designs(rounding):
    seed = 777 if rounding == "floor" else 778
    rng = random.Random(seed)
    second = set()
    for mi in range(400):
        n = rng.randrange(64, 4097)
        m = modulus_of(n, rng.getrandbits(32), odd=mi % 2 == 0)
        tile_bits = rng.choice((130, 130, 10, 30, 64))
        trim_limit = rng.choice((None, 0, 5, 40))
        beta = rng.randrange(1, 13)
        probe = H.HybridDesign(bits=n, tile_bits=tile_bits, trim_limit=trim_limit, high_part_rounding=rounding)
        steps = rng.randrange(0, min(probe.max_steps, 5) + 1)
        model = H.build(m, steps=steps, beta=beta, tile_bits=tile_bits, trim_limit=trim_limit,
                        high_part_rounding=rounding)
        for case in range(8):
            a, b = rng.randrange(m), rng.randrange(m)
            out = check(model, a, b, f"seed {seed} modulus #{mi} ({n} bits, steps={steps}, beta={beta}, "
                                     f"tile={tile_bits}, trim_limit={trim_limit}) case {case}")
            second.add(out.events["second_candidate"])
    assert second == {0, 1}


def test_small_moduli_exhaustive():
    for m in (3, 5, 6, 7, 8, 11, 13, 16, 29, 31, 61, 64, 97, 127):
        n = m.bit_length()
        for steps in range(H.HybridDesign(bits=n).max_steps + 1):
            for beta in (1, 2, 9):
                model = H.build(m, steps=steps, beta=beta)
                for a in range(m):
                    for b in range(m):
                        assert model.modmul(a, b).result == a * b % m, (m, steps, beta, a, b)


@settings(derandomize=True, max_examples=400)
@given(st.integers(8, 1500), st.integers(0, 2 ** 32), st.sampled_from(H.ROUNDINGS), st.integers(1, 12), st.data())
def test_property(n, seed, rounding, beta, data):
    m = modulus_of(n, seed, odd=seed % 2 == 0)
    steps = data.draw(st.integers(0, min(H.HybridDesign(bits=n).max_steps, 4)))
    model = H.build(m, steps=steps, beta=beta, high_part_rounding=rounding)
    a = data.draw(st.integers(0, m - 1))
    b = data.draw(st.integers(0, m - 1))
    check(model, a, b, f"n={n} seed={seed} steps={steps} beta={beta} {rounding}")


def test_stage_names():
    m = modulus_of(512, 3)
    out = H.build(m, steps=2).modmul(m - 1, m - 2)
    assert {"P0", "P1", "P2", "P_coarse", "K1", "Q1", "Q2"} <= set(out.stages)
    assert "second_candidate" in out.events


def test_max_steps_is_where_folding_stops_narrowing():
    for n in (2, 3, 17, 64, 256, 1000, 2048):
        d = H.HybridDesign(bits=n)
        s = d.max_steps
        widths = H.HybridDesign(bits=n, steps=s).widths
        assert all(b < a for a, b in zip(widths, widths[1:])), n
        assert widths[-1] - n < 4, n          # one more fold would not narrow P


def test_registry_entry():
    (info,) = H.ALGORITHMS
    assert info.name == "hybrid" and info.kind == "modmul"
    for option in ("steps", "beta", "high_part_rounding", "tile_bits"):
        assert option in info.options
    m = modulus_of(700, 2)
    model = info.build(m, steps=2, beta=7, high_part_rounding="ceil", tile_bits=130)
    assert model.modmul(m - 1, m - 1).result == 1


def test_parameter_errors_name_the_parameter():
    m = modulus_of(256, 4)
    with pytest.raises(ParameterError, match=r"^modulus: is 256 bits wide, narrower than the design's 300 bits: "
                                              r"the fine-grain reduction needs the top bit set \(2\^299 <= modulus\)$"):
        H.build(m, bits=300)
    with pytest.raises(ParameterError, match=r"^modulus: is 256 bits wide, wider than the design's 200 bits$"):
        H.build(m, bits=200)
    with pytest.raises(ParameterError, match=r"^steps: 12 folding steps are too many for 2048 bits: after 11 step\(s\) "
                                             r"P is 2051 bits, and a fold narrows P only while at least 4 bits lie "
                                             r"above n; at most 11 step\(s\)$"):
        H.HybridDesign(bits=2048, steps=12)
    with pytest.raises(ParameterError, match=r"^steps: must be non-negative, got -1$"):
        H.HybridDesign(bits=2048, steps=-1)
    with pytest.raises(ParameterError, match=r"^beta: must be positive, got 0$"):
        H.build(m, beta=0)
    with pytest.raises(ParameterError, match=r"^beta: 21-bit table addresses"):
        H.build(m, beta=21)
    with pytest.raises(ParameterError, match=r"^high_part_rounding: must be one of floor, ceil, got 'round'$"):
        H.build(m, high_part_rounding="round")
    with pytest.raises(ParameterError, match=r"^tile_bits: must be at least 5"):
        H.build(m, tile_bits=4)
    model = H.build(m)
    with pytest.raises(ParameterError, match=r"^a: operand out of range: need 0 <= a < modulus, got a value of 256 bits$"):
        model.modmul(m, 1)
    with pytest.raises(ParameterError, match=r"^b: operand out of range: need 0 <= b < modulus, got a negative value$"):
        model.modmul(1, -1)
