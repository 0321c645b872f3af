"""The seed's MSM model and its controller against independent oracles.

Oracles: the naive sum of double-and-add products (``naive_msm``, Jacobian, no windows, no Edwards);
the scalar itself for the digit decomposition; hand-derived cycle counts for the controller.
Pure-Python curve arithmetic is slow, so most random cases use a layout of narrow windows (few
buckets); the seed's own layout runs on the named edge cases.
"""

from __future__ import annotations

import random

import pytest
from modforge.zk import bls12_377 as g
from modforge.zk.edwards import EDWARDS
from modforge.zk.msm_controller import (
    ControllerParams,
    digit_rows,
    ideal_cycles,
    simulate,
)
from modforge.zk.msm_model import (
    SEED_LAYOUT,
    MsmParams,
    msm,
    naive_msm,
    reduce_scalar,
    sample_points,
    signed_digits,
)

P = g.BLS12_377
R = P.r
NARROW = MsmParams(windows=42)  # 253 bits in 42 windows: 1 of 7 bits and 41 of 6, 32 buckets or fewer
SEED = 20261127


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> random.Random:
    seed = SEED + sum(map(ord, request.node.name))
    print(f"seed={seed}")
    return random.Random(seed)


@pytest.fixture(scope="module")
def pool() -> list[tuple[int, int]]:
    return sample_points(24, random.Random(SEED))


# --------------------------------------------------------------------------------------------- layout


def test_seed_layout_is_derived_as_the_seed_states() -> None:
    # the seed: 20 windows, 13 of 13 bits and 7 of 12 bits, over 253-bit scalars
    assert SEED_LAYOUT.scalar_bits == 253
    assert sorted(SEED_LAYOUT.widths) == [12] * 7 + [13] * 13
    assert sum(SEED_LAYOUT.widths) == 253
    assert SEED_LAYOUT.bucket_counts == tuple(2 ** (w - 1) for w in SEED_LAYOUT.widths)
    assert SEED_LAYOUT.offsets[-1] + SEED_LAYOUT.widths[-1] == 253
    assert SEED_LAYOUT.top_digit_bound <= SEED_LAYOUT.bucket_counts[-1]


def test_too_many_windows_are_refused() -> None:
    with pytest.raises(ValueError, match="fewer than 2 bits"):
        _ = MsmParams(windows=200).widths


def _scalar_edges(params: MsmParams) -> list[int]:
    edges = [0, 1, 2, R - 1, R - 2, params.half_r, params.half_r + 1, R]
    for offset, width in zip(params.offsets, params.widths, strict=True):
        edges += [1 << (offset + width - 1), (1 << (offset + width)) - 1 & ((1 << 252) - 1)]
    return edges


@pytest.mark.parametrize("params", [SEED_LAYOUT, NARROW], ids=["seed", "narrow"])
def test_signed_digits_reconstruct_the_scalar(params: MsmParams, rng: random.Random) -> None:
    for s in _scalar_edges(params) + [rng.randrange(R) for _ in range(300)]:
        reduced, negate = reduce_scalar(params, s)
        assert (R - reduced if negate else reduced) % R == s % R
        digits = signed_digits(params, reduced)
        assert sum(d << off for d, off in zip(digits, params.offsets, strict=True)) == reduced, s
        for d, count in zip(digits, params.bucket_counts, strict=True):
            assert -count <= d <= count, s


# --------------------------------------------------------------------------------------------- MSM


def _edge_instances(pool: list[tuple[int, int]]) -> dict[str, tuple[list, list[int]]]:
    a, b, c = pool[0], pool[1], pool[2]
    neg_a = g.affine_neg(P, a)
    ex = EDWARDS.exceptional_points
    return {
        "empty": ([], []),
        "one point": ([a], [12345]),
        "zero scalars": ([a, b, c], [0, 0, 0]),
        "scalar r-1": ([a, b], [R - 1, 1]),
        "scalar r and above": ([a, b], [R, R + 5]),
        "all scalars equal": (pool[:6], [0xDEADBEEF] * 6),
        "repeated points": ([a, a, a, b, b], [3, 5, R - 7, 11, 13]),
        "P beside -P": ([a, neg_a, b], [99, 99, 2]),
        "P beside -P, cancelling": ([a, neg_a], [7, 7]),
        "infinity among inputs": ([a, None, b], [5, 6, 7]),
        "exceptional points": ([a, ex[0], ex[1], ex[3], b], [3, 1, 2, 5, 4]),
        "half r and next": ([a, b], [(R - 1) // 2, (R + 1) // 2]),
        "not a power of two": (pool[:7], [2**252 + i for i in range(7)]),
    }


@pytest.mark.parametrize("case", list(_edge_instances([(0, 0)] * 3)))
def test_edge_cases_seed_layout(case: str, pool: list[tuple[int, int]]) -> None:
    points, scalars = _edge_instances(pool)[case]
    result, trace = msm(points, scalars, SEED_LAYOUT)
    assert result == naive_msm(points, scalars)
    assert g.is_on_curve(P, result)
    host = [i for i, pt in enumerate(points) if pt is None or pt in EDWARDS.exceptional_points]
    assert trace.host_points == host


def test_random_instances_narrow_layout(pool: list[tuple[int, int]], rng: random.Random) -> None:
    for _ in range(12):
        n = rng.randrange(1, len(pool) + 1)
        points = rng.sample(pool, n)
        scalars = [rng.randrange(R) for _ in range(n)]
        result, _ = msm(points, scalars, NARROW)
        assert result == naive_msm(points, scalars), (points, scalars)


def test_trace_counts_every_bucket_addition(pool: list[tuple[int, int]], rng: random.Random) -> None:
    scalars = [rng.randrange(R) for _ in range(8)]
    _, trace = msm(pool[:8], scalars, NARROW)
    nonzero = sum(1 for row in trace.digits for d in row if d)
    assert trace.bucket_additions == nonzero > 0
    for row, ws in zip(trace.buckets, trace.window_sums, strict=True):
        assert len(row) in NARROW.bucket_counts and g.is_on_curve(P, ws)


# --------------------------------------------------------------------------------------------- controller


def test_distinct_buckets_never_stall() -> None:
    params = ControllerParams(msm=NARROW, adder_latency=10)
    # digit 1 in window 0 only for point 0, digit 2 for point 1 ...: every bucket different
    rows = [tuple([k + 1] + [0] * (NARROW.windows - 1)) for k in range(20)]
    report = simulate(params, rows)
    assert (report.stalls, report.bubbles, report.issued) == (0, 0, 20)
    assert report.cycles == 20 + 10 == ideal_cycles(params, 1) - NARROW.windows + 20


@pytest.mark.parametrize("latency,depth,n", [(10, 4, 9), (238, 4, 7), (5, 1, 6)])
def test_one_hot_bucket_issues_once_per_latency(latency: int, depth: int, n: int) -> None:
    # every point hits bucket 0 of window 0: issues at cycles 0, L, 2L, ... so n L + 1 cycles in all
    params = ControllerParams(msm=NARROW, adder_latency=latency, fifo_depth=depth)
    rows = [tuple([1] + [0] * (NARROW.windows - 1))] * n
    report = simulate(params, rows, record=True)
    assert report.cycles == n * latency + 1
    assert report.stalls == n - 1 and report.issued == n
    assert [c for c, _, _ in report.schedule or []] == [k * latency for k in range(n)]
    assert report.max_fifo <= depth


def test_schedule_is_hazard_free_complete_and_drives_the_model(
    pool: list[tuple[int, int]], rng: random.Random
) -> None:
    params = ControllerParams(msm=NARROW, adder_latency=40, fifo_depth=2)
    scalars = [rng.randrange(R) for _ in range(16)] + [5] * 8  # repeats force conflicts
    report = simulate(params, digit_rows(NARROW, scalars), record=True)
    schedule = report.schedule or []
    digits = list(digit_rows(NARROW, scalars))
    wanted = sorted((i, w) for i, row in enumerate(digits) for w, d in enumerate(row) if d)
    assert sorted((i, w) for _, i, w in schedule) == wanted  # as many out as went in
    last_issue: dict[tuple[int, int], int] = {}
    for cycle, i, w in schedule:
        key = (w, abs(digits[i][w]))
        assert cycle - last_issue.get(key, -params.adder_latency) >= params.adder_latency
        last_issue[key] = cycle
    assert report.stalls > 0 and report.cycles >= report.issued + params.adder_latency
    points = pool[:24]
    by_schedule, _ = msm(points, scalars, NARROW, schedule=[(i, w) for _, i, w in schedule])
    assert by_schedule == naive_msm(points, scalars)


def test_seed_operating_point_small() -> None:
    # 2^10 random scalars, the seed's layout, latency and FIFO depth: utilisation close to 1
    params = ControllerParams()
    rng = random.Random(SEED)
    report = simulate(params, digit_rows(params.msm, (rng.randrange(R) for _ in range(1024))))
    assert report.issued + report.bubbles == report.cycles - params.adder_latency
    assert 0.95 < report.utilisation <= 1024 * 20 / ideal_cycles(params, 1024)
    assert report.max_fifo <= params.fifo_depth
