"""MSM file formats: the encodings against their byte-level definitions, every rejection named, and
arkworks' own deserializer as the oracle when its anchor program is in the benchmark cache."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest

from modforge.arith.base import ParameterError
from modforge.zk import bls12_377 as g
from modforge.zk import msm_files as f
from modforge.zk.edwards import EDWARDS
from modforge.zk.msm_api import random_instance
from modforge.zk.msm_model import naive_msm

P = g.BLS12_377
SEED = 20261127


@pytest.fixture(scope="module")
def instance() -> tuple[list[g.Affine], list[int]]:
    points, scalars = random_instance(6, SEED)
    points[2] = None
    points[4] = g.affine_neg(P, points[4])  # both signs of y appear
    return points, scalars


def test_byte_layouts_follow_the_two_definitions() -> None:
    gen = P.generator
    ark = f.encode_points([gen], "ark")
    assert ark[:8] == (1).to_bytes(8, "little")
    assert ark[8:56] == gen[0].to_bytes(48, "little")
    larger = gen[1] > P.q - gen[1]
    assert ark[8 + 95] >> 7 == int(larger) and ark[8 + 48: 8 + 95] == gen[1].to_bytes(48, "little")[:47]
    assert f.encode_points([None], "ark", compressed=True)[8:] == bytes(47) + bytes([0x40])
    raw = f.encode_points([gen, None], "gnark")
    assert raw[:48] == gen[0].to_bytes(48, "big") and raw[48:96] == gen[1].to_bytes(48, "big")
    assert raw[96] == 0x40 and not any(raw[97:])
    assert f.encode_scalars([1, 2], "gnark") == (1).to_bytes(32, "big") + (2).to_bytes(32, "big")
    assert f.encode_scalars([1], "ark") == (1).to_bytes(8, "little") + (1).to_bytes(32, "little")


@pytest.mark.parametrize("fmt,compressed", [("ark", False), ("ark", True), ("gnark", False)])
def test_round_trip(tmp_path: Path, instance, fmt: str, compressed: bool) -> None:
    points, scalars = instance
    (tmp_path / "p").write_bytes(f.encode_points(points, fmt, compressed=compressed))
    (tmp_path / "s").write_bytes(f.encode_scalars(scalars, fmt))
    assert f.read_points(tmp_path / "p", fmt) == points
    assert f.read_scalars(tmp_path / "s", fmt) == scalars


def _bad(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "bad.bin"
    path.write_bytes(data)
    return path


def test_rejections_name_the_file_the_index_and_the_reason(tmp_path: Path, instance) -> None:
    points, _ = instance
    good = f.encode_points(points[:2], "gnark")
    off_curve = bytearray(good)
    off_curve[96 + 95] ^= 1
    outside = g.random_curve_point(P, random.Random(SEED))
    assert not g.in_subgroup(P, outside)
    cases = {
        "191 bytes is not a whole number of 96-byte raw points": good[:-1],
        "point 1: not on the curve": bytes(off_curve),
        "point 0: a coordinate is not below q": P.q.to_bytes(48, "big") + bytes(48),
        "point 0: flags 0b100 are not those of a raw": bytes([0x80]) + bytes(95),
        "point 0: infinity flag with non-zero coordinates": bytes([0x40]) + bytes(94) + b"\x01",
        "point 1: not in the prime-order subgroup G1": good[:96] + f.encode_gnark_point(outside),
        "point 0: not in the prime-order subgroup G1 ": f.encode_gnark_point(EDWARDS.exceptional_points[1]),
    }
    for reason, data in cases.items():
        path = _bad(tmp_path, data)
        with pytest.raises(ParameterError, match=f"^{re.escape(str(path))}: {reason.strip()}"):
            f.read_points(path, "gnark")
    # the same points are accepted when the caller trusts them
    assert f.read_points(_bad(tmp_path, good[:96] + f.encode_gnark_point(outside)), "gnark", trusted=True)[1] == outside


def test_ark_rejections(tmp_path: Path, instance) -> None:
    points, _ = instance
    data = f.encode_points(points, "ark")
    with pytest.raises(ParameterError, match="the count says 6 elements, so 584 or 296 bytes, but the file has 583"):
        f.read_points(_bad(tmp_path, data[:-1]), "ark")
    with pytest.raises(ParameterError, match="too short for the 8-byte count"):
        f.read_points(_bad(tmp_path, b"\x01"), "ark")
    no_point = next(x for x in range(2, 100) if g.lift_x(P, x) is None)
    with pytest.raises(ParameterError, match="point 0: no point has this x"):
        f.read_points(_bad(tmp_path, (1).to_bytes(8, "little") + no_point.to_bytes(48, "little")), "ark")
    big = f.encode_scalars([1, P.r, P.r + 3], "ark")
    with pytest.raises(ParameterError, match=r"scalar 1: not below r \(ask for reduction"):
        f.read_scalars(_bad(tmp_path, big), "ark")
    assert f.read_scalars(_bad(tmp_path, big), "ark", reduce=True) == [1, 0, 3]
    with pytest.raises(ParameterError, match="not a whole number of 32-byte scalars"):
        f.read_scalars(_bad(tmp_path, bytes(33)), "gnark")
    with pytest.raises(ParameterError, match="format"):
        f.read_points(_bad(tmp_path, bytes(96)), "json")


def _cached_ark_anchor() -> Path | None:
    from modforge.bench.anchors import AnchorEnv, AnchorUnavailable
    from modforge.bench.msm import build_ark

    try:
        return Path(build_ark(AnchorEnv.from_environ(build=False), lambda _: None).argv[0])
    except AnchorUnavailable:
        return None


@pytest.mark.parametrize("compressed", [False, True])
def test_arkworks_reads_our_ark_files_and_agrees(tmp_path: Path, instance, compressed: bool) -> None:
    exe = _cached_ark_anchor()
    if exe is None:
        pytest.skip("the arkworks anchor is not built (run `modforge bench msm` once)")
    points, scalars = instance
    (tmp_path / "p").write_bytes(f.encode_points(points, "ark", compressed=compressed))
    (tmp_path / "s").write_bytes(f.encode_scalars(scalars, "ark"))
    out = subprocess.run([str(exe), str(tmp_path / "p"), str(tmp_path / "s"), "1", "1", "ark"], capture_output=True,
                         text=True, check=True).stdout.split()
    expect = naive_msm(points, scalars)
    assert expect is not None
    assert int(out[out.index("x") + 1], 16) == expect[0] and int(out[out.index("y") + 1], 16) == expect[1]


@pytest.mark.parametrize("fmt,compressed", [("ark", False), ("ark", True), ("gnark", False)])
def test_files_are_summed_block_by_block(tmp_path: Path, fmt: str, compressed: bool) -> None:
    """msm_files reads a block of points at a time; any block size gives the naive sum of the whole file,
    including blocks that end on the point at infinity, a zero scalar, or a last short block."""
    from modforge.zk.msm_api import msm_files

    points, scalars = random_instance(23, SEED + 1)
    points[4] = None
    scalars[5] = 0
    points[9] = g.affine_neg(P, points[8])          # P beside -P, across a block boundary for block 9
    scalars[9] = scalars[8]
    (tmp_path / "p").write_bytes(f.encode_points(points, fmt, compressed=compressed))
    (tmp_path / "s").write_bytes(f.encode_scalars(scalars, fmt))
    expected = naive_msm(points, scalars)
    seen = []
    for block in (1, 5, 9, 23, 1000):
        result, n = msm_files(tmp_path / "p", tmp_path / "s", fmt, block=block,
                              progress=lambda done, total: seen.append((done, total)))
        assert n == 23 and result == expected, block
    assert seen[:5] == [(1, 23), (2, 23), (3, 23), (4, 23), (5, 23)] and seen[-1] == (23, 23)
    (tmp_path / "p0").write_bytes(f.encode_points([], fmt))
    (tmp_path / "s0").write_bytes(f.encode_scalars([], fmt))
    assert msm_files(tmp_path / "p0", tmp_path / "s0", fmt, block=4) == (None, 0)


def test_block_reads_name_the_index_in_the_whole_file(tmp_path: Path) -> None:
    from modforge.zk.msm_api import msm_files

    points, scalars = random_instance(12, SEED + 2)
    off_curve = (points[10][0], (points[10][1] + 1) % P.q)
    raw = f.encode_points(points[:10] + [off_curve] + points[11:], "gnark")
    (tmp_path / "p").write_bytes(raw)
    (tmp_path / "s").write_bytes(f.encode_scalars(scalars, "gnark"))
    with pytest.raises(f.MsmFileError, match=r"point 10: "):
        msm_files(tmp_path / "p", tmp_path / "s", "gnark", block=4)
    (tmp_path / "p").write_bytes(f.encode_points(points, "gnark"))
    big = scalars[:7] + [P.r] + scalars[8:]
    (tmp_path / "s").write_bytes(f.encode_scalars(big, "gnark"))
    with pytest.raises(f.MsmFileError, match=r"scalar 7: not below r"):
        msm_files(tmp_path / "p", tmp_path / "s", "gnark", block=4)
    assert msm_files(tmp_path / "p", tmp_path / "s", "gnark", block=4, reduce=True)[0] == \
        naive_msm(points, [s % P.r for s in big])
    (tmp_path / "s").write_bytes(f.encode_scalars(scalars[:11], "gnark"))
    with pytest.raises(ParameterError, match="11 scalars for 12 points"):
        msm_files(tmp_path / "p", tmp_path / "s", "gnark")
    # A malformed encoding in a later block (the native path decodes the raw bytes itself) and a point
    # outside G1: both named by their index in the whole file, on the native and the model path.
    bad_flag = bytearray(f.encode_points(points, "gnark"))
    bad_flag[96 * 9] |= 0x80
    (tmp_path / "p").write_bytes(bytes(bad_flag))
    (tmp_path / "s").write_bytes(f.encode_scalars(scalars, "gnark"))
    for backend in ("auto", "model"):
        with pytest.raises(f.MsmFileError, match=r"point 9: "):
            msm_files(tmp_path / "p", tmp_path / "s", "gnark", block=4, backend=backend)
    # An infinity flag over non-zero coordinates (the engine's decoder reads the flag alone).
    bad_inf = bytearray(f.encode_points(points, "gnark"))
    bad_inf[96 * 5] = (bad_inf[96 * 5] & 0x1F) | 0x40
    (tmp_path / "p").write_bytes(bytes(bad_inf))
    for backend in ("auto", "model"):
        with pytest.raises(f.MsmFileError, match=r"point 5: infinity flag with non-zero coordinates"):
            msm_files(tmp_path / "p", tmp_path / "s", "gnark", block=4, backend=backend)
    outside = g.random_curve_point(P, random.Random(SEED))
    assert not g.in_subgroup(P, outside)
    (tmp_path / "p").write_bytes(f.encode_points(points[:6] + [outside] + points[7:], "gnark"))
    for backend in ("auto", "model"):
        with pytest.raises(f.MsmFileError, match=r"point 6: not in the prime-order subgroup"):
            msm_files(tmp_path / "p", tmp_path / "s", "gnark", block=4, backend=backend)
    assert msm_files(tmp_path / "p", tmp_path / "s", "gnark", block=4, trusted=True)[0] == \
        naive_msm(points[:6] + [outside] + points[7:], scalars)
    (tmp_path / "p").write_bytes(f.encode_points(points, "gnark"))
    # A file cut short after it was opened: the block read says so instead of summing fewer points.
    pf = f.PointsFile(tmp_path / "p", "gnark")
    (tmp_path / "p").write_bytes(raw[: 96 * 6])
    with pytest.raises(f.MsmFileError, match="while being read"):
        pf.points(4, 4)
