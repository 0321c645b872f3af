"""Fixed-base MSM over BLS12-377 G1: precompute a table of the points once, then run many MSMs.

``precompute(points)`` builds, for every point P and c-bit window w, the shifted copy [2^(c w)] P, so
that every window of an MSM shares one bucket set (native/crates/modforge-msm/src/fixed.rs explains
why that is faster).  The table lives in Rust; ``MsmTable.save``/``load_table`` keep it in a file
(format: docs/zk-msm.md, "Table file"), written atomically.

    from modforge.zk.msm_table import precompute, load_table
    table = precompute(points)            # points: [(x, y) or None], checked for G1 unless trusted
    table.save("key.msmt")
    result = load_table("key.msmt").msm(scalars)

The table needs the native engine (there is no Python twin: the model's MSM is the reference the
native results are tested against).  Memory: ceil(254 / c) points per input point, 104 bytes each in
memory and 96 in the file (13 x at c = 20).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..arith.base import ParameterError
from .bls12_377 import Affine
from .msm_api import validate
from .msm_files import MsmFileError, _read, encode_gnark_point


def _native_table() -> Any:
    try:
        from .. import _native  # type: ignore[attr-defined]
    except ImportError:
        _native = None
    table = getattr(_native, "MsmTable", None)
    if table is None:
        raise ParameterError("table", "fixed-base tables need the native engine, which this installation lacks")
    return table


def _affine(result: tuple[str, str] | None) -> Affine:
    return None if result is None else (int(result[0], 16), int(result[1], 16))


class MsmTable:
    """A fixed-base table of n points (see the module docstring); build it with :func:`precompute`."""

    def __init__(self, native: Any):
        self._native = native

    @property
    def n(self) -> int:
        return self._native.n

    @property
    def window(self) -> int:
        """The window width c in bits."""
        return self._native.window

    @property
    def windows(self) -> int:
        """Shifted copies per point: ceil(254 / c)."""
        return self._native.windows

    @property
    def memory_bytes(self) -> int:
        return self._native.memory_bytes

    def msm(self, scalars: Sequence[int], *, threads: int | None = None, reduce: bool = False) -> Affine:
        """sum s_i P_i over the table's points; scalars in [0, r) (taken mod r if ``reduce``)."""
        if threads is not None and threads < 1:
            raise ParameterError("threads", "must be at least 1")
        if len(scalars) != self.n:
            raise ParameterError("scalars", f"{len(scalars)} scalars for a table of {self.n} points")
        reduced = validate([None] * len(scalars), scalars, trusted=True, reduce=reduce)
        raw = b"".join(s.to_bytes(32, "big") for s in reduced)
        return _affine(self._native.msm(raw, threads or 0))

    def to_bytes(self) -> bytes:
        return self._native.to_bytes()

    def save(self, path: str | os.PathLike) -> None:
        from ..fileio import atomic_write

        atomic_write(path, self.to_bytes())


def precompute(points: Sequence[Affine], *, window: int | None = None, threads: int | None = None,
               trusted: bool = False) -> MsmTable:
    """The table of ``points`` for c-bit windows (``window``: 2 to 22, default the cost model's)."""
    native = _native_table()
    if window is not None and not 2 <= window <= 22:
        raise ParameterError("window", "must be between 2 and 22")
    validate(points, [0] * len(points), trusted=trusted, reduce=False)
    raw = b"".join(encode_gnark_point(p) for p in points)
    return MsmTable(native.precompute(raw, window, threads or 0))


def table_from_bytes(data: bytes, *, trusted: bool = False, threads: int | None = None,
                     name: str = "table") -> MsmTable:
    """Parse a table (checked: header, length, every entry on the curve, window structure; and every
    point in G1 unless ``trusted``).  A bad table raises :class:`MsmFileError` naming ``name``."""
    native = _native_table()
    try:
        table = native.from_bytes(data, threads or 0)
    except ValueError as exc:
        raise MsmFileError(name, str(exc)) from None
    if not trusted:
        bad = table.first_outside_subgroup(threads or 0)
        if bad is not None:
            raise MsmFileError(name, f"point {bad}: not in the prime-order subgroup G1")
    return MsmTable(table)


def load_table(path: str | os.PathLike, *, trusted: bool = False, threads: int | None = None) -> MsmTable:
    """Read a table file written by :meth:`MsmTable.save` (or ``modforge msm precompute``)."""
    return table_from_bytes(_read(path), trusted=trusted, threads=threads, name=str(path))
