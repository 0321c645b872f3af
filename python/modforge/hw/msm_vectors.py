"""Test vectors of the seed-003 MSM designs, from the models, in the streaming harness's format.

``v NAME INHEX OUTHEX`` per operation (:mod:`modforge.hw.stream`).  Named edge cases first, then
seeded random operands.  Every expected value is the bit-exact model's, and the model is checked here
against an independent oracle before the simulator runs (Python's ``a * b % p`` for the multiplier).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..fileio import atomic_write


def fq_mul_edges(design: Any) -> Iterator[tuple[str, int, int]]:
    """0, 1, p - 1, powers of two and all-ones runs (every carry out of a Karatsuba half and of the
    pre-adds), and operands whose products land in each table entry and each multiplexer branch."""
    p = design.modulus
    n = design.n
    yield "zero", 0, 0
    yield "zero_times_max", 0, p - 1
    yield "one", 1, 1
    yield "one_times_max", 1, p - 1
    yield "max_squared", p - 1, p - 1
    yield "max_times_two", p - 1, 2 % p
    yield "half", (p - 1) // 2, 2
    splits = sorted({node.split for level in _levels(design.model_params.tree) for node in level})
    for k in range(1, n):
        v = (1 << k) - 1
        if v < p and (k in splits or k + 1 in splits or k % 17 == 0 or k == n - 1):
            yield f"ones_{k}", v, v
            yield f"ones_{k}_times_max", v, p - 1
    for k in splits:
        for v in (1 << k, ((1 << k) - 1) << k, (1 << (2 * k)) - 1):
            if v < p:
                yield f"split_{k}_{v.bit_length()}", v, p - 1
    # A half of all ones in every operand of a level: every pre-add carries.
    ones = (1 << (n - 1)) - 1
    yield "all_ones_below_top", ones % p, ones % p
    yield "alternating", int("10" * (n // 2), 2) % p, int("01" * (n // 2), 2) % p


def _levels(root) -> list[list]:
    out, level = [], [root]
    while level and level[0].depth > 0:
        out.append(level)
        level = [c for node in level for c in node.children()]
    return out


def fq_mul_vectors(design: Any, count: int, seed: int) -> tuple[list[str], dict[str, Any]]:
    """Vector lines and what they cover: edges, then random operands, then a search that forces every
    (table address, branch) the random ones did not reach among the reachable ones."""
    model = design.model()
    p = design.modulus
    n = design.n
    mp = design.model_params
    lines: list[str] = []
    cover: dict[str, int] = {}
    edges: list[str] = []

    def add(name: str, a: int, b: int) -> None:
        t = model.mul(a, b)
        if t.result != a * b % p or t.product != a * b or not 0 <= t.coarse < mp.coarse_bound:
            raise AssertionError(f"fq-mul model disagrees with a * b mod p on {name}: a={a:#x} b={b:#x}")
        key = f"address{t.address}_{'upper' if t.took_upper else 'lower'}"
        cover[key] = cover.get(key, 0) + 1
        lines.append(f"v {name} {format(a | (b << n), 'x')} {format(t.result | (t.coarse << n), 'x')}")

    for name, a, b in fq_mul_edges(design):
        edges.append(name)
        add(name, a, b)
    rng = random.Random(seed)
    for i in range(count):
        add(f"random{i}", rng.randrange(p), rng.randrange(p))
    # Force the branches a quotient off by 1, 2, 3 gives: search products just above multiples of p.
    wanted = {f"address{a}_{b}" for a in range(1 << mp.table_bits) for b in ("upper", "lower")}
    searched = 0
    while (wanted - set(cover)) and searched < 20000:
        searched += 1
        a, b = rng.randrange(1, p), rng.randrange(1, p)
        t = model.mul(a, b)
        key = f"address{t.address}_{'upper' if t.took_upper else 'lower'}"
        if key not in cover:
            edges.append(f"forced_{key}")
            add(f"forced_{key}", a, b)
    return lines, {"edge_cases": edges, "coverage": dict(sorted(cover.items()))}


def simulate_fq_mul(design: Any, *, vectors: int = 1000, seed: int = 1, opt: str = "-O0",
                    keep_vectors: Path | None = None, overwrite: bool = True) -> dict[str, Any]:
    from .flow import header
    from .stream import run_harness

    def write(path: Path) -> dict[str, Any]:
        lines, info = fq_mul_vectors(design, vectors, seed)
        atomic_write(path, header(design, "#") + "\n".join(lines) + "\n")
        return {"vectors": len(lines), "outputs": len(lines), "edge_cases": info["edge_cases"],
                "model": {"coverage": info["coverage"]}}

    return run_harness(design, write, seed=seed, opt=opt, keep_vectors=keep_vectors, overwrite=overwrite)


def adder_vectors(design: Any, count: int, seed: int) -> tuple[list[str], dict[str, Any]]:
    """Bucket + point pairs: the identity bucket, P + (-P), P + P (the unified formula doubles), then
    random buckets (random projective scalings of random G1 points) and random points.  Each expected
    sum is ``EdwardsForm.bucket_add``'s, and its affine value is checked against the affine Edwards
    addition law here (the independent oracle)."""
    from ..zk.msm_model import sample_points
    from ..zk.edwards import ToyEdwards

    ed = design.edwards
    q = design.modulus
    n = design.n
    rng = random.Random(seed)
    if isinstance(ed, ToyEdwards):
        pts = [ed.random_point(rng) for _ in range(max(count, 4) + 2)]
    else:
        pts = [ed.to_edwards(pt) for pt in sample_points(max(count, 4) + 2, rng)]
    lines: list[str] = []
    edges: list[str] = []

    def bucket_of_point(pt, z: int):
        x, y = pt
        return ed.to_bucket((x * z % q, y * z % q, z, x * y % q * z % q))

    def add(name: str, bucket, pt_affine_bucket, point_affine) -> None:
        pre = ed.precompute(point_affine)
        got = ed.bucket_add(bucket, pre)
        want = ed.affine_add(pt_affine_bucket, point_affine)
        if ed.extended_to_affine(ed.bucket_to_extended(got)) != want:
            raise AssertionError(f"bucket_add disagrees with the affine addition law on {name}")
        data = sum(v << (i * n) for i, v in enumerate(bucket + pre))
        lines.append(f"v {name} {format(data, 'x')} {format(sum(v << (i * n) for i, v in enumerate(got)), 'x')}")

    identity = (0, 1)
    p0, p1 = pts[0], pts[1]
    neg_p0 = (-p0[0] % q, p0[1])
    for name, bucket_pt, z, point in (
            ("identity_plus_p", identity, 1, p0), ("identity_scaled_plus_p", identity, rng.randrange(1, q), p1),
            ("p_plus_minus_p", p0, 1, neg_p0), ("p_plus_minus_p_scaled", p0, rng.randrange(1, q), neg_p0),
            ("p_plus_p", p0, 1, p0), ("p_plus_p_scaled", p1, rng.randrange(1, q), p1),
            ("identity_plus_identity", identity, 1, identity),
            ("p_plus_identity", p0, rng.randrange(1, q), identity)):
        edges.append(name)
        add(name, bucket_of_point(bucket_pt, z), bucket_pt, point)
    for i in range(count):
        add(f"random{i}", bucket_of_point(pts[i + 2], rng.randrange(1, q)), pts[i + 2], pts[(i * 7 + 3) % len(pts)])
    return lines, {"edge_cases": edges}


def simulate_msm_adder(design: Any, *, vectors: int = 200, seed: int = 1, opt: str = "-O0",
                       keep_vectors: Path | None = None, overwrite: bool = True) -> dict[str, Any]:
    from .flow import header
    from .stream import run_harness

    def write(path: Path) -> dict[str, Any]:
        lines, info = adder_vectors(design, vectors, seed)
        atomic_write(path, header(design, "#") + "\n".join(lines) + "\n")
        return {"vectors": len(lines), "outputs": len(lines), "edge_cases": info["edge_cases"]}

    return run_harness(design, write, seed=seed, opt=opt, keep_vectors=keep_vectors, overwrite=overwrite)


def controller_stream(design: Any, count: int, seed: int):
    """(point values, digit rows) of ``count`` points.  Standin: random values and digits, with forced
    hazards - a quarter of the points repeat the digits of the point before (every bucket of the row is in
    flight), and one run of identical rows long enough to fill a stall FIFO.  Edwards: random G1 points and
    scalars, the MSM layout's signed digits (``msm_model``)."""
    rng = random.Random(seed)
    layout = design.layout
    if design.adder == "edwards" and not design.adder_modulus:
        from ..zk.msm_model import MsmParams, sample_points

        params = MsmParams(windows=design.windows)
        points = sample_points(count, rng)
        scalars = [rng.randrange(params.curve.r) for _ in range(count)]
        # Forced hazards, as for the stand-in: a quarter of the points repeat the scalar of the point before
        # (each of its buckets is then hit again one point later, in flight if the windows are fewer than
        # the loop latency), and a run long enough to fill a stall FIFO.
        for i in range(1, count):
            if rng.random() < 0.25 or 100 <= i < 100 + 4 * design.fifo_depth:
                scalars[i] = scalars[i - 1]
        return points, scalars
    if design.adder == "edwards":               # a test field: points of its ToyEdwards curve
        values = [design.adder_design.edwards.random_point(rng) for _ in range(count)]
    else:
        values = [rng.randrange(1 << design.standin_bits) for _ in range(count)]
    rows: list[tuple[int, ...]] = []
    for i in range(count):
        if rows and (rng.random() < 0.25 or 100 <= i < 100 + 4 * design.fifo_depth):
            rows.append(rows[-1])
            continue
        row = []
        for width in layout.widths:
            half = 1 << (width - 1)
            d = 0 if rng.random() < 0.1 else rng.choice([k for k in range(-half, half + 1) if k])
            row.append(d)
        rows.append(tuple(row))
    return values, rows


def controller_vectors(design: Any, count: int, seed: int) -> tuple[list[str], dict[str, Any]]:
    from ..zk.msm_controller import simulate

    cp = design.controller_params()
    n = design.design_bits
    lines: list[str] = []
    if design.adder == "edwards" and design.adder_modulus:
        # The model's additions in the controller model's issue order, and the affine sums as the oracle.
        ed = design.adder_design.edwards
        q = design.modulus
        points, rows = controller_stream(design, count, seed)
        report = simulate(cp, rows, record=True)
        pre = [ed.precompute(pt) for pt in points]
        buckets = [[ed.bucket_identity] * c for c in design.layout.bucket_counts]
        affine = [[(0, 1)] * c for c in design.layout.bucket_counts]
        for _, i, w in report.schedule:
            d = rows[i][w]
            addend = pre[i] if d > 0 else ed.precomputed_neg(pre[i])
            buckets[w][abs(d) - 1] = ed.bucket_add(buckets[w][abs(d) - 1], addend)
            pt = points[i] if d > 0 else (-points[i][0] % q, points[i][1])
            affine[w][abs(d) - 1] = ed.affine_add(affine[w][abs(d) - 1], pt)
        for w, row in enumerate(buckets):
            for b, value in enumerate(row):
                if ed.extended_to_affine(ed.bucket_to_extended(value)) != affine[w][b]:
                    raise AssertionError(f"bucket ({w}, {b}): the model's sum differs from the affine sum")
        for i, row in enumerate(rows):
            data = format(sum(v << (k * n) for k, v in enumerate(pre[i])), "x")
            lines += [f"p {data} {w} {d}" for w, d in enumerate(row) if d]
        encode = lambda b: sum(v << (k * n) for k, v in enumerate(b))
        model = {"buckets_checked_against_affine_sums": True}
    elif design.adder == "edwards":
        from ..zk.msm_model import MsmParams, msm, naive_msm

        params = MsmParams(windows=design.windows)
        points, scalars = controller_stream(design, count, seed)
        _, trace = msm(points, scalars, params)
        report = simulate(cp, trace.digits, record=True)
        result, trace = msm(points, scalars, params, schedule=[(i, w) for _, i, w in report.schedule])
        ed = design.adder_design.edwards
        q = design.modulus
        for i, (point, row) in enumerate(zip(points, trace.digits)):
            x_e, y_e = ed.to_edwards(point)
            if trace.negated[i]:
                x_e = -x_e % q
            pre = ed.precompute((x_e, y_e))
            data = format(sum(v << (k * n) for k, v in enumerate(pre)), "x")
            lines += [f"p {data} {w} {d}" for w, d in enumerate(row) if d]
        buckets = trace.buckets
        encode = lambda b: sum(v << (k * n) for k, v in enumerate(b))
        model = {"msm_checked_against_naive": False}
        if count <= 64:             # the naive oracle is slow; the tests run it on small streams
            model["msm_checked_against_naive"] = result == naive_msm(points, scalars)
            if not model["msm_checked_against_naive"]:
                raise AssertionError("the MSM model's result differs from the naive sum")
    else:
        values, rows = controller_stream(design, count, seed)
        report = simulate(cp, rows)
        mask = (1 << design.standin_bits) - 1
        buckets = [[0] * c for c in design.layout.bucket_counts]
        for v, row in zip(values, rows):
            for w, d in enumerate(row):
                if d:
                    buckets[w][abs(d) - 1] = (buckets[w][abs(d) - 1] + (v if d > 0 else -v)) & mask
                    lines.append(f"p {format(v, 'x')} {w} {d}")
        encode = lambda b: b
        model = {}
    bb = design.bucket_index_bits
    for w, row in enumerate(buckets):
        for b, value in enumerate(row):
            lines.append(f"b {b | (w << bb)} {format(encode(value), 'x')}")
    lines.append(f"s {report.cycles} {report.issued} {report.stalls} {report.bubbles} {report.drain_cycles}")
    model.update({"points": report.points, "pairs": report.issued, "cycles": report.cycles,
                  "issued": report.issued, "stalls": report.stalls, "bubbles": report.bubbles,
                  "drain_cycles": report.drain_cycles, "max_fifo": report.max_fifo,
                  "utilisation": round(report.utilisation, 4), "buckets": sum(len(r) for r in buckets)})
    return lines, model


def simulate_msm_controller(design: Any, *, vectors: int = 1024, seed: int = 1, opt: str = "-O0",
                            keep_vectors: Path | None = None, overwrite: bool = True) -> dict[str, Any]:
    """``vectors`` is the number of points streamed (each gives one pair per non-zero digit)."""
    from .flow import header
    from .stream import run_harness

    def write(path: Path) -> dict[str, Any]:
        lines, model = controller_vectors(design, vectors, seed)
        atomic_write(path, header(design, "#") + "\n".join(lines) + "\n")
        return {"vectors": model["pairs"], "outputs": model["buckets"], "edge_cases": [], "model": model}

    doc = run_harness(design, write, seed=seed, opt=opt, keep_vectors=keep_vectors, overwrite=overwrite,
                      needed=("outputs", "mismatches", "count_mismatches"))
    doc["mismatches"] += doc["harness"]["count_mismatches"]
    doc["counts"] = {k: doc["harness"][k] for k in ("cycles", "issued", "stalls", "bubbles", "drain_cycles")}
    return doc
