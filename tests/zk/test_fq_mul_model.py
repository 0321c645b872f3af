"""The seed's Fq multiplier model (zk/fq_mul.py) against Python's a * b % p, the independent oracle.

Edges first (0, 1, p - 1, all-ones runs at every Karatsuba split), then seeded random operands, at the
seed's depth and at the other depths and truncations the hardware generator accepts.  The derived bounds
are checked to hold (the coarse remainder stays below its bound) and to be reached (each reachable table
entry and both multiplexer branches are taken).
"""

from __future__ import annotations

import random

import pytest
from modforge.zk.bls12_377 import BLS12_377
from modforge.zk.fq_mul import FqMul, FqMulParams, tile_slices

Q = BLS12_377.q


def edges(p: FqMulParams):
    q = p.modulus
    out = [(0, 0), (0, q - 1), (1, 1), (1, q - 1), (q - 1, q - 1), (q - 1, 2), ((q - 1) // 2, 2)]
    for k in range(1, p.n):
        v = (1 << k) - 1
        if v < q:
            out += [(v, v), (v, q - 1)]
    return out


@pytest.mark.parametrize("depth,guard", [(3, 0), (0, 0), (1, 5), (2, 17), (4, 0), (3, 378)])
def test_model_equals_a_times_b_mod_q(depth: int, guard: int) -> None:
    params = FqMulParams(karatsuba_depth=depth, guard_bits=guard)
    model = FqMul(params)
    seed = 4100 + depth
    rng = random.Random(seed)
    cases = edges(params) + [(rng.randrange(Q), rng.randrange(Q)) for _ in range(1500)]
    for a, b in cases:
        t = model.mul(a, b)
        assert t.product == a * b, f"seed {seed}: Karatsuba product of {a:#x} {b:#x}"
        assert t.result == a * b % Q, f"seed {seed}: {a:#x} * {b:#x}"
        assert 0 <= t.coarse < params.coarse_bound and t.coarse % Q == t.result
        assert 0 <= a * b // Q - t.quotient <= params.quotient_error


def test_every_reachable_table_entry_and_branch_is_taken() -> None:
    params = FqMulParams()
    model = FqMul(params)
    rng = random.Random(4200)
    seen = {(t.address, t.took_upper) for t in (model.mul(rng.randrange(Q), rng.randrange(Q)) for _ in range(5000))}
    # The bound allows addresses up to (coarse_bound - 1) >> shift; a quotient 2 or 3 short is rare, so only
    # the addresses of r < 2p are sure to be reached in a few thousand products: 0 .. 3 for this q.
    bound = (params.coarse_bound - 1) >> params.shift
    assert {a for a, _ in seen} <= set(range(bound + 1))
    assert set(range(((2 * Q) >> params.shift) + 1)) <= {a for a, _ in seen}, seen
    assert {u for _, u in seen} == {True, False}


def test_derived_parameters() -> None:
    p = FqMulParams()
    # 377 bits, 3 levels: 27 leaves of at most 49 bits, 3 x 3 tiles of 17 bits each.
    assert p.n == 377 and len(p.leaves) == 27 and p.leaf_bits == 49
    assert all(p.leaf_tiles(leaf) == 9 for leaf in p.leaves)
    assert p.m == (1 << 754) // Q
    # The truncation costs nothing here: q undershoots by at most 3, r < 4p, a table of 8 entries.
    assert p.quotient_error == 3 and p.coarse_bound == 4 * Q and p.table_bits == 3
    tiles = p.dsp_tiles()
    assert tiles["karatsuba_leaves"] == 243
    assert tiles["total"] == 243 + len(p.quotient_tiles()) + len(p.remainder_tiles())
    # Dropping the bottom of q1 m saves tiles: none are dropped when every tile is kept.
    assert len(FqMulParams(guard_bits=378).quotient_tiles()) > len(p.quotient_tiles())
    assert tile_slices(49, 17) == [(0, 17), (17, 17), (34, 15)]


@pytest.mark.parametrize("kw,name", [({"modulus": 10}, "modulus"), ({"karatsuba_depth": 7}, "karatsuba_depth"),
                                     ({"dsp_bits": 1}, "dsp_bits"), ({"guard_bits": 400}, "guard_bits"),
                                     ({"lut_bits": 1}, "lut_bits")])
def test_bad_parameters_are_refused(kw: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        FqMulParams(**kw)


def test_operands_must_be_canonical() -> None:
    with pytest.raises(ValueError):
        FqMul().mul(Q, 1)


@pytest.mark.parametrize("kw", [{}, {"guard_bits": 9}, {"karatsuba_depth": 1, "modulus": (1 << 61) - 1}])
def test_the_models_shortcuts_equal_the_tile_sums_the_rtl_builds(kw: dict) -> None:
    """The model takes the quotient as q1 m less the dropped tiles and the coarse remainder modulo
    2^coarse_bits from the whole q p; the RTL sums the kept tiles one by one.  Same values."""
    p = FqMulParams(**kw)
    model = FqMul(p)
    rng = random.Random(4300)
    for _ in range(300):
        t = model.mul(rng.randrange(p.modulus), rng.randrange(p.modulus))
        q2 = sum((((t.q1 >> ao) & ((1 << aw) - 1)) * ((p.m >> bo) & ((1 << bw) - 1))) << (ao + bo)
                 for ao, aw, bo, bw in p.quotient_tiles())
        assert q2 >> (p.n + 1) == t.quotient
        qp = sum((((t.quotient >> ao) & ((1 << aw) - 1)) * ((p.modulus >> bo) & ((1 << bw) - 1))) << (ao + bo)
                 for ao, aw, bo, bw in p.remainder_tiles())
        assert (t.product - qp) & ((1 << p.coarse_bits) - 1) == t.coarse
