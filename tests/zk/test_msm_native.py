"""The native engine (through its runner program) against the model, bit for bit on the affine
result, and against the gnark-crypto and arkworks anchors when they are in the benchmark cache.

The runner is built with cargo into the benchmark cache, once per source change (the tests are
skipped when cargo is missing); the Python binding is not needed.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from modforge.bench.msm import native_source_dir
from modforge.zk import bls12_377 as g
from modforge.zk.edwards import EDWARDS
from modforge.zk.msm_api import model_layout, random_instance
from modforge.zk.msm_files import encode_points, encode_scalars
from modforge.zk.msm_model import SEED_LAYOUT, msm, naive_msm, sample_points

P = g.BLS12_377
R = P.r
SEED = 20261127


@pytest.fixture(scope="module")
def runner() -> Path:
    """The runner as `bench msm` builds it: in the benchmark cache, keyed by the sources (built once)."""
    from modforge.bench.anchors import AnchorEnv, AnchorUnavailable
    from modforge.bench.msm import build_ours

    if native_source_dir() is None or shutil.which("cargo") is None:
        pytest.skip("no cargo or no native/crates here")
    try:
        return Path(build_ours(AnchorEnv.from_environ(), lambda _: None).argv[0])
    except AnchorUnavailable as exc:
        pytest.fail(f"our runner does not build: {exc.why}")


def run_native(runner: Path, tmp: Path, points, scalars, threads: int = 1, window: int | None = None) -> g.Affine:
    (tmp / "p").write_bytes(encode_points(points, "gnark"))
    (tmp / "s").write_bytes(encode_scalars(scalars, "gnark"))
    argv = [str(runner), "run", str(tmp / "p"), str(tmp / "s"), str(threads), "1"]
    if window is not None:
        argv.append(str(window))
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
    if "infinity" in out:
        return None
    return int(out[out.index("x") + 1], 16), int(out[out.index("y") + 1], 16)


def _edges(pool):
    a, b = pool[0], pool[1]
    ex = EDWARDS.exceptional_points
    return {
        "empty": ([], []),
        "one point": ([a], [7]),
        "zero scalars": (pool[:3], [0, 0, 0]),
        "scalar r-1": ([a, b], [R - 1, R - 1]),
        "all scalars equal": (pool[:9], [R // 3] * 9),
        "repeated points": ([a, a, a, b], [1, 1, 1, 5]),
        "P beside -P": ([a, g.affine_neg(P, a), b], [42, 42, 1]),
        "infinity among inputs": ([a, None, b], [3, 4, 5]),
        "exceptional points (trusted, outside G1)": ([a, ex[0], ex[1], ex[2], b], [3, 5, 7, 11, 13]),
        "not a power of two": (pool[:13], list(range(R - 13, R))),
    }


@pytest.mark.parametrize("case", list(_edges([None, None])))
def test_edge_cases_match_the_seed_model(runner: Path, tmp_path: Path, case: str) -> None:
    pool = sample_points(16, random.Random(SEED))
    points, scalars = _edges(pool)[case]
    expect = naive_msm(points, scalars)
    assert msm(points, scalars, SEED_LAYOUT)[0] == expect
    for threads, window in ((1, None), (2, 3), (1, 13)):
        assert run_native(runner, tmp_path, points, scalars, threads, window) == expect, (case, threads, window)


def test_random_instances_match_the_model(runner: Path, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    pool = sample_points(64, rng)
    for round_ in range(25):
        n = rng.randrange(1, 65)
        points = [rng.choice(pool) for _ in range(n)]
        scalars = [rng.choice([rng.randrange(R), rng.randrange(1 << 20), R - 1 - rng.randrange(1 << 20)]) for _ in range(n)]
        expect = msm(points, scalars, model_layout(n))[0]
        assert run_native(runner, tmp_path, points, scalars, 1 + round_ % 2) == expect, f"seed={SEED} round={round_}"


def test_4096_points_bit_for_bit(runner: Path, tmp_path: Path) -> None:
    points, scalars = random_instance(1 << 12, SEED)
    model = msm(points, scalars, model_layout(len(points)))[0]
    assert run_native(runner, tmp_path, points, scalars, 2) == model
    # the runner's own instance generator agrees with the Python one
    subprocess.run([str(runner), "gen", "40", str(SEED), str(tmp_path / "gp"), str(tmp_path / "gs")], check=True)
    small_points, small_scalars = random_instance(40, SEED)
    assert (tmp_path / "gp").read_bytes() == encode_points(small_points, "gnark")
    assert (tmp_path / "gs").read_bytes() == encode_scalars(small_scalars, "gnark")


def _cached(builder_name: str) -> list[str] | None:
    from modforge.bench import msm as bench_msm
    from modforge.bench.anchors import AnchorEnv, AnchorUnavailable

    try:
        return list(getattr(bench_msm, builder_name)(AnchorEnv.from_environ(build=False), lambda _: None).argv)
    except AnchorUnavailable:
        return None


def _anchor_result(argv: list[str], tmp: Path) -> g.Affine:
    out = subprocess.run([*argv, str(tmp / "p"), str(tmp / "s"), "1", "1"], capture_output=True, text=True,
                         check=True).stdout.split()
    if "infinity" in out:
        return None
    return int(out[out.index("x") + 1], 16), int(out[out.index("y") + 1], 16)


def test_200_instances_against_gnark_and_arkworks(runner: Path, tmp_path: Path) -> None:
    """The acceptance check: our engine equals gnark-crypto's and arkworks' results on 200 random
    instances from 1 to 2^14 points and on the edge cases (the anchors as `bench msm` built them)."""
    anchors = [a for a in (_cached("build_gnark"), _cached("build_ark")) if a is not None]
    if not anchors:
        pytest.skip("no anchor in the benchmark cache (run `modforge bench msm` once)")
    pool = sample_points(16, random.Random(SEED))
    for case, (points, scalars) in _edges(pool).items():
        if case == "empty":
            continue  # the anchors' MultiExp/msm refuse or special-case empty input; ours: tested above
        expect = naive_msm(points, scalars)
        (tmp_path / "p").write_bytes(encode_points(points, "gnark"))
        (tmp_path / "s").write_bytes(encode_scalars(scalars, "gnark"))
        assert run_native(runner, tmp_path, points, scalars) == expect, case
        for argv in anchors:
            assert _anchor_result(argv, tmp_path) == expect, (case, argv[0])
    rng = random.Random(SEED)
    for k in range(200):
        n = int(2 ** rng.uniform(0, 14))
        seed = rng.randrange(1 << 32)
        subprocess.run([str(runner), "gen", str(n), str(seed), str(tmp_path / "p"), str(tmp_path / "s")], check=True)
        ours = subprocess.run([str(runner), "run", str(tmp_path / "p"), str(tmp_path / "s"), str(1 + k % 2), "1"],
                              capture_output=True, text=True, check=True).stdout.split()
        mine = None if "infinity" in ours else (int(ours[ours.index("x") + 1], 16), int(ours[ours.index("y") + 1], 16))
        for argv in anchors:
            assert _anchor_result(argv, tmp_path) == mine, f"instance {k}: n={n} seed={seed} {argv[0]}"
