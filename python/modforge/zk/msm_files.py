"""MSM input and output files: arkworks' canonical serialization and gnark-crypto's raw encoding.

``ark`` (arkworks ``CanonicalSerialize`` of a ``Vec``): an 8-byte little-endian count, then the
elements.  A G1 point is uncompressed (x then y, 48 bytes each, little-endian, 96 in all) or
compressed (x alone, 48 bytes); the flags sit in the top two bits of the last byte (bit 6: the point
at infinity, bit 7: y is the larger of y and -y); the two forms are told apart by the file size.  A
scalar is 32 bytes little-endian and must be below r.

``gnark`` (gnark-crypto ``RawBytes`` concatenated, no count): a point is x then y, 48 bytes each,
big-endian, with the top three bits of the first byte as flags (0b000 a point, 0b010 the point at
infinity, all other bytes zero); a scalar is 32 bytes big-endian.

Every read checks the length, each flag and coordinate (below q), that the point is on the curve
and, unless the caller trusts the file, that it is in G1 (the fast endomorphism test).  A failure is
a :class:`MsmFileError` naming the file, the index and the reason.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..arith.base import ParameterError
from .bls12_377 import BLS12_377, Affine, Bls12Params, in_subgroup, is_on_curve, sqrt_fq

FORMATS = ("ark", "gnark")
COORD_BYTES = 48
SCALAR_BYTES = 32
ARK_INFINITY = 1 << 6
ARK_NEGATIVE = 1 << 7
GNARK_MASK = 0b111 << 5
GNARK_UNCOMPRESSED = 0b000 << 5
GNARK_INFINITY = 0b010 << 5


class MsmFileError(ParameterError):
    """A malformed MSM input file (exit 2 through the CLI's ParameterError handling)."""

    def __init__(self, path: str | os.PathLike, problem: str):
        super().__init__(str(path), problem)


def _read(path: str | os.PathLike) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise MsmFileError(path, exc.strerror or str(exc)) from None


def _open(path: str | os.PathLike):
    try:
        return open(path, "rb")
    except OSError as exc:
        raise MsmFileError(path, exc.strerror or str(exc)) from None


def _ark_count(path: str | os.PathLike, head: bytes, length: int, sizes: Sequence[int]) -> tuple[int, int]:
    """(count, element size) of an arkworks Vec of ``length`` bytes starting with ``head``, the size chosen
    among ``sizes`` by the file length."""
    if length < 8:
        raise MsmFileError(path, f"{length} bytes: too short for the 8-byte count of an arkworks Vec")
    n = int.from_bytes(head[:8], "little")
    for size in sizes:
        if length == 8 + n * size:
            return n, size
    wanted = " or ".join(str(8 + n * s) for s in sizes)
    raise MsmFileError(path, f"the count says {n} elements, so {wanted} bytes, but the file has {length}")


class _Elements:
    """A file of fixed-size elements read a block at a time (inputs larger than memory are summed by block,
    see :func:`modforge.zk.msm_api.msm_files`): ``n`` elements of ``size`` bytes from byte ``offset``."""

    def __init__(self, path: str | os.PathLike, fmt: str, sizes: Sequence[int], what: str):
        if fmt not in FORMATS:
            raise ParameterError("format", f"{fmt!r} is not one of {', '.join(FORMATS)}")
        self.path, self.fmt = path, fmt
        with _open(path) as fh:
            try:
                length = os.fstat(fh.fileno()).st_size
                head = fh.read(8)
            except OSError as exc:
                raise MsmFileError(path, exc.strerror or str(exc)) from None
        if fmt == "ark":
            self.n, self.size = _ark_count(path, head, length, sizes)
            self.offset = 8
        else:
            self.size, self.offset = sizes[0], 0
            if length % self.size:
                raise MsmFileError(path, f"{length} bytes is not a whole number of {self.size}-byte {what}")
            self.n = length // self.size
        self.length = length

    def block(self, start: int, count: int) -> bytes:
        """The raw bytes of elements ``start`` .. ``start + count - 1``."""
        count = max(0, min(count, self.n - start))
        try:
            with _open(self.path) as fh:
                fh.seek(self.offset + start * self.size)
                data = fh.read(count * self.size)
        except OSError as exc:
            raise MsmFileError(self.path, exc.strerror or str(exc)) from None
        if len(data) != count * self.size:
            raise MsmFileError(self.path, f"ended at byte {self.offset + start * self.size + len(data)} while "
                                          f"being read (it was {self.length} bytes long when opened)")
        return data


def _y_is_larger(curve: Bls12Params, y: int) -> bool:
    return y > curve.q - y


def decode_ark_point(curve: Bls12Params, chunk: bytes) -> Affine | str:
    """One arkworks point (96 or 48 bytes) or the reason it is invalid."""
    q = curve.q
    compressed = len(chunk) == COORD_BYTES
    last = chunk[-1]
    flags = last & (ARK_INFINITY | ARK_NEGATIVE)
    body = chunk[:-1] + bytes([last & ~(ARK_INFINITY | ARK_NEGATIVE) & 0xFF])
    if flags & ARK_INFINITY:
        if flags & ARK_NEGATIVE or any(body):
            return "infinity flag with non-zero coordinates or a sign"
        return None
    if compressed:
        x = int.from_bytes(body, "little")
        if x >= q:
            return "x is not below q"
        y = sqrt_fq(curve, x * x * x + curve.b)
        if y is None:
            return "no point has this x"
        if _y_is_larger(curve, y) != bool(flags & ARK_NEGATIVE):
            y = -y % q
        return x, y
    x = int.from_bytes(chunk[:COORD_BYTES], "little")
    y = int.from_bytes(body[COORD_BYTES:], "little")
    if x >= q or y >= q:
        return "a coordinate is not below q"
    return x, y


def encode_ark_point(curve: Bls12Params, point: Affine, compressed: bool = False) -> bytes:
    if point is None:
        out = bytearray(COORD_BYTES if compressed else 2 * COORD_BYTES)
        out[-1] |= ARK_INFINITY
        return bytes(out)
    x, y = point
    flag = ARK_NEGATIVE if _y_is_larger(curve, y) else 0
    if compressed:
        out = bytearray(x.to_bytes(COORD_BYTES, "little"))
    else:
        out = bytearray(x.to_bytes(COORD_BYTES, "little") + y.to_bytes(COORD_BYTES, "little"))
    out[-1] |= flag
    return bytes(out)


def decode_gnark_point(curve: Bls12Params, chunk: bytes) -> Affine | str:
    flags = chunk[0] & GNARK_MASK
    body = bytes([chunk[0] & ~GNARK_MASK & 0xFF]) + chunk[1:]
    if flags == GNARK_INFINITY:
        return None if not any(body) else "infinity flag with non-zero coordinates"
    if flags != GNARK_UNCOMPRESSED:
        return f"flags {flags >> 5:#05b} are not those of a raw (uncompressed) point"
    x = int.from_bytes(body[:COORD_BYTES], "big")
    y = int.from_bytes(body[COORD_BYTES:], "big")
    if x >= curve.q or y >= curve.q:
        return "a coordinate is not below q"
    return x, y


def encode_gnark_point(point: Affine) -> bytes:
    if point is None:
        return bytes([GNARK_INFINITY]) + bytes(2 * COORD_BYTES - 1)
    return point[0].to_bytes(COORD_BYTES, "big") + point[1].to_bytes(COORD_BYTES, "big")


class PointsFile(_Elements):
    """A points file, decoded and validated block by block (:meth:`points`)."""

    def __init__(self, path: str | os.PathLike, fmt: str = "ark", *, trusted: bool = False,
                 curve: Bls12Params = BLS12_377):
        super().__init__(path, fmt, (2 * COORD_BYTES, COORD_BYTES) if fmt == "ark" else (2 * COORD_BYTES,),
                         "raw points")
        self.trusted, self.curve = trusted, curve

    def points(self, start: int = 0, count: int | None = None) -> list[Affine]:
        """Points ``start`` .. ``start + count - 1`` (all from ``start`` by default), validated: on the curve,
        and in G1 unless ``trusted``; an error names the point's index in the file."""
        count = self.n - start if count is None else count
        data = self.block(start, count)
        curve, size = self.curve, self.size
        decode = decode_ark_point if self.fmt == "ark" else decode_gnark_point
        out: list[Affine] = []
        for i in range(len(data) // size):
            point = decode(curve, data[i * size: (i + 1) * size])
            if isinstance(point, str):
                raise MsmFileError(self.path, f"point {start + i}: {point}")
            out.append(point)
        native = _native_checker() if curve == BLS12_377 and not self.trusted else None
        if native is not None:
            # the same two checks in Rust, on every core: the Python subgroup test costs ~2 ms a point
            raw = data if self.fmt == "gnark" else b"".join(encode_gnark_point(p) for p in out)
            bad = native(raw, 0)
            if bad is not None:
                raise MsmFileError(self.path, f"point {start + bad[0]}: {bad[1]}")
            return out
        for i, point in enumerate(out):
            if not is_on_curve(curve, point):
                raise MsmFileError(self.path, f"point {start + i}: not on the curve")
            if not self.trusted and not in_subgroup(curve, point):
                raise MsmFileError(self.path, f"point {start + i}: not in the prime-order subgroup G1")
        return out


def read_points(
    path: str | os.PathLike, fmt: str = "ark", *, trusted: bool = False, curve: Bls12Params = BLS12_377
) -> list[Affine]:
    """Every point of the file, validated (on the curve; in G1 unless ``trusted``)."""
    return PointsFile(path, fmt, trusted=trusted, curve=curve).points()


def _native_checker():
    try:
        from .. import _native  # type: ignore[attr-defined]
    except ImportError:
        return None
    return getattr(_native, "g1_first_invalid", None)


class ScalarsFile(_Elements):
    """A scalars file, read block by block (:meth:`scalars`)."""

    def __init__(self, path: str | os.PathLike, fmt: str = "ark", *, reduce: bool = False,
                 curve: Bls12Params = BLS12_377):
        super().__init__(path, fmt, (SCALAR_BYTES,), "scalars")
        self.reduce, self.curve = reduce, curve

    def scalars(self, start: int = 0, count: int | None = None) -> list[int]:
        """Scalars ``start`` .. ``start + count - 1``; one >= r is an error unless ``reduce`` (then it is
        taken mod r)."""
        count = self.n - start if count is None else count
        data = self.block(start, count)
        order = "little" if self.fmt == "ark" else "big"
        values = [int.from_bytes(data[i: i + SCALAR_BYTES], order) for i in range(0, len(data), SCALAR_BYTES)]
        r = self.curve.r
        for i, s in enumerate(values):
            if s >= r:
                if not self.reduce:
                    raise MsmFileError(self.path, f"scalar {start + i}: not below r (ask for reduction mod r to "
                                                  f"accept it)")
                values[i] = s % r
        return values


def read_scalars(
    path: str | os.PathLike, fmt: str = "ark", *, reduce: bool = False, curve: Bls12Params = BLS12_377
) -> list[int]:
    """Every scalar of the file; one >= r is an error unless ``reduce`` (then it is taken mod r)."""
    return ScalarsFile(path, fmt, reduce=reduce, curve=curve).scalars()


def encode_points(
    points: Sequence[Affine], fmt: str = "ark", *, compressed: bool = False, curve: Bls12Params = BLS12_377
) -> bytes:
    if fmt == "ark":
        return len(points).to_bytes(8, "little") + b"".join(encode_ark_point(curve, p, compressed) for p in points)
    if compressed:
        raise ParameterError("format", "the gnark raw encoding is uncompressed only")
    return b"".join(encode_gnark_point(p) for p in points)


def encode_scalars(scalars: Sequence[int], fmt: str = "ark") -> bytes:
    if fmt == "ark":
        return len(scalars).to_bytes(8, "little") + b"".join(s.to_bytes(32, "little") for s in scalars)
    return b"".join(s.to_bytes(32, "big") for s in scalars)


def encode_result(point: Affine, fmt: str = "ark", curve: Bls12Params = BLS12_377) -> bytes:
    """One point, as ``--out`` writes it: arkworks' uncompressed G1Affine, or gnark's raw bytes."""
    return encode_ark_point(curve, point) if fmt == "ark" else encode_gnark_point(point)
