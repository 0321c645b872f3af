"""``modforge.zk.msm(points, scalars)``: multi-scalar multiplication over BLS12-377 G1.

Backends:

* ``native``: the Rust engine (native/crates/modforge-msm) through the Python binding, when the
  installed ``modforge._native`` has it;
* ``model``: the seed's model (``msm_model``) with a window layout sized for the input (the seed's
  20 windows waste time on running sums below ~2^12 points);
* ``seed``: the model with the seed's exact layout (20 windows, 13 x 13 + 7 x 12 bits);
* ``auto`` (default): ``native`` if present, else ``model``.

Points are affine ``(x, y)`` tuples of ints (``None`` for the point at infinity); scalars are ints.
Unless ``trusted``, every point is checked to be on the curve and in G1; a scalar outside [0, r) is an
error unless ``reduce`` asks for it to be taken mod r.  The result is affine (None for infinity).

Timing: no backend is constant time in the scalars (bucket indices are memory addresses and the
additions depend on them); see docs/zk-msm.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..arith.base import ParameterError
from . import bls12_377 as g
from .bls12_377 import BLS12_377, Affine
from .msm_model import SEED_LAYOUT, MsmParams
from .msm_model import msm as model_msm

BACKENDS = ("auto", "native", "model", "seed")
MASK64 = (1 << 64) - 1


def _native() -> Any | None:
    try:
        from .. import _native  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _native if hasattr(_native, "msm_bls12_377") else None


def available_backends() -> list[str]:
    return ["native", "model", "seed"] if _native() is not None else ["model", "seed"]


def model_layout(n: int) -> MsmParams:
    """Windows of about log2(n) - 2 bits (at least 4): the model's cost balance for n points."""
    width = max(4, min(13, int(math.log2(max(n, 1))) - 2))
    return MsmParams(windows=math.ceil(BLS12_377.r_bits / width))


def validate(points: Sequence[Affine], scalars: Sequence[int], *, trusted: bool, reduce: bool) -> list[int]:
    if len(points) != len(scalars):
        raise ParameterError("scalars", f"{len(scalars)} scalars for {len(points)} points")
    r = BLS12_377.r
    out = []
    for i, s in enumerate(scalars):
        if not isinstance(s, int):
            raise ParameterError("scalars", f"scalar {i} is not an integer")
        if not 0 <= s < r:
            if not reduce:
                raise ParameterError("scalars", f"scalar {i} is not in [0, r) (pass reduce=True to take it mod r)")
            s %= r
        out.append(s)
    if not trusted:
        for i, p in enumerate(points):
            if not g.is_on_curve(BLS12_377, p):
                raise ParameterError("points", f"point {i} is not on the curve")
            if not g.in_subgroup(BLS12_377, p):
                raise ParameterError("points", f"point {i} is not in the prime-order subgroup G1")
    return out


def msm(
    points: Sequence[Affine],
    scalars: Sequence[int],
    *,
    threads: int | None = None,
    backend: str = "auto",
    trusted: bool = False,
    reduce: bool = False,
) -> Affine:
    """sum s_i P_i over BLS12-377 G1 (see the module docstring)."""
    if backend not in BACKENDS:
        raise ParameterError("backend", f"{backend!r} is not one of {', '.join(BACKENDS)}")
    if threads is not None and threads < 1:
        raise ParameterError("threads", "must be at least 1")
    reduced = validate(points, scalars, trusted=trusted, reduce=reduce)
    native = _native()
    if backend == "native" and native is None:
        raise ParameterError("backend", "the native engine is not built into this installation")
    if backend in ("auto", "native") and native is not None:
        from .msm_files import encode_gnark_point

        pts = b"".join(encode_gnark_point(p) for p in points)
        scs = b"".join(s.to_bytes(32, "big") for s in reduced)
        # the binding takes gnark raw bytes and returns None or the affine (x, y) as hex strings
        result = native.msm_bls12_377(pts, scs, threads or 0)
        return None if result is None else (int(result[0], 16), int(result[1], 16))
    layout = SEED_LAYOUT if backend == "seed" else model_layout(len(points))
    return model_msm(points, reduced, layout)[0]


# Points per block when the inputs come from files: 2^22 points are ~0.4 GB raw and ~1.5 GB decoded, so a
# file of 2^26 points (6.4 GB) runs in a few GB.  Smaller inputs are one block: one MSM, as before.
FILE_BLOCK_POINTS = 1 << 22


def msm_files(
    points_path: Any,
    scalars_path: Any,
    fmt: str = "ark",
    *,
    threads: int | None = None,
    backend: str = "auto",
    trusted: bool = False,
    reduce: bool = False,
    block: int = FILE_BLOCK_POINTS,
    progress: Any = None,
) -> tuple[Affine, int]:
    """sum s_i P_i over the points and scalars of two files (:mod:`modforge.zk.msm_files` formats), read and
    validated ``block`` points at a time: the MSM is linear, so the sum of the blocks' MSMs is the MSM of
    the whole and memory stays bounded by one block whatever the files' size.  Returns (result, n).
    ``progress(done, total)`` is called after each block."""
    from .msm_files import PointsFile, ScalarsFile

    if block < 1:
        raise ParameterError("block", "must be at least 1")
    pf = PointsFile(points_path, fmt, trusted=trusted)
    sf = ScalarsFile(scalars_path, fmt, reduce=reduce)
    if pf.n != sf.n:
        raise ParameterError(str(scalars_path), f"{sf.n} scalars for {pf.n} points in {points_path}")
    native = _native() if backend in ("auto", "native") else None
    if backend == "native" and native is None:
        raise ParameterError("backend", "the native engine is not built into this installation")
    total: Affine = None
    for start in range(0, pf.n, block):
        if native is not None and fmt == "gnark" and not reduce:
            part, count = _native_raw_block(native, pf, sf, start, block, trusted, threads)
        else:
            points = pf.points(start, block)
            scalars = sf.scalars(start, block)
            part = msm(points, scalars, threads=threads, backend=backend, trusted=True, reduce=reduce)
            count = len(points)
        total = g.affine_add(BLS12_377, total, part)
        if progress is not None:
            progress(start + count, pf.n)
    if pf.n == 0:       # the empty sum, through the backend's own checks
        total = msm([], [], threads=threads, backend=backend, trusted=True, reduce=reduce)
    return total, pf.n


# byte -> 1 when its top three bits are gnark's infinity flag 0b010, else 0
_INFINITY_FIRST_BYTE = bytes(1 if b >> 5 == 0b010 else 0 for b in range(256))


def _native_raw_block(native: Any, pf: Any, sf: Any, start: int, block: int, trusted: bool,
                      threads: int | None) -> tuple[Affine, int]:
    """One block of gnark raw files straight to the engine: the file's bytes are its input, so no Python
    object is made per point (half the memory of decoding in Python; docs/zk-msm.md).  The same checks as
    ``msm_files.decode_gnark_point``: every scalar below r (a byte comparison, big-endian), an infinity
    flag only with zero coordinates (checked here: the engine's decoder reads the flag alone), each other
    point's flags, coordinates below q and curve equation (the engine's decoder) and, unless trusted, G1
    membership; an error names the index in the whole file."""
    import re

    from .msm_files import MsmFileError

    raw = pf.block(start, block)
    sraw = sf.block(start, block)
    r_bytes = BLS12_377.r.to_bytes(32, "big")
    for i in range(0, len(sraw), 32):
        if sraw[i:i + 32] >= r_bytes:
            raise MsmFileError(sf.path, f"scalar {start + i // 32}: not below r (ask for reduction mod r to accept it)")

    # Points flagged as infinity (0b010 in the top bits of their first byte) are few: find them through
    # the first bytes alone, then check that the rest of each is zero.
    marks = raw[0::96].translate(_INFINITY_FIRST_BYTE)
    k = marks.find(1)
    while k != -1:
        if raw[k * 96] & 0x1F or any(raw[k * 96 + 1: (k + 1) * 96]):
            raise MsmFileError(pf.path, f"point {start + k}: infinity flag with non-zero coordinates")
        k = marks.find(1, k + 1)

    def indexed(exc: ValueError) -> MsmFileError:
        found = re.search(r"point (\d+): (.*)", str(exc))
        if found is None:
            return MsmFileError(pf.path, str(exc))
        return MsmFileError(pf.path, f"point {start + int(found.group(1))}: {found.group(2)}")

    try:
        if not trusted:
            bad = native.g1_first_invalid(raw, threads or 0)
            if bad is not None:
                raise MsmFileError(pf.path, f"point {start + bad[0]}: {bad[1]}")
        result = native.msm_bls12_377(raw, sraw, threads or 0)
    except ValueError as exc:
        if isinstance(exc, MsmFileError):
            raise
        raise indexed(exc) from None
    part = None if result is None else (int(result[0], 16), int(result[1], 16))
    return part, len(raw) // 96


# ---------------------------------------------------------------------------------------------------
# the reproducible random instance (the same as native/crates/modforge-msm/src/instance.rs)


class SplitMix64:
    def __init__(self, seed: int):
        self.state = seed & MASK64

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def scalar(self) -> int:
        """Uniform below r: four words, the top one cut to 61 bits, rejected while >= r."""
        while True:
            w = [self.next() for _ in range(4)]
            s = w[0] | w[1] << 64 | w[2] << 128 | (w[3] >> 3) << 192
            if s < BLS12_377.r:
                return s


def random_instance(n: int, seed: int) -> tuple[list[Affine], list[int]]:
    """n points [(a + i b) mod r] G and n scalars from the seeded stream (a, b its first two draws)."""
    if n < 0:
        raise ParameterError("n", "must be non-negative")
    rng = SplitMix64(seed)
    a, b = rng.scalar(), rng.scalar()
    scalars = [rng.scalar() for _ in range(n)]
    step = g.mul(BLS12_377, BLS12_377.generator, b)
    acc = g.jacobian_mul(BLS12_377, g.to_jacobian(BLS12_377.generator), a)
    points: list[Affine] = []
    for _ in range(n):
        points.append(g.to_affine_jacobian(BLS12_377, acc))
        acc = g.jacobian_add_affine(BLS12_377, acc, step)
    return points, scalars
