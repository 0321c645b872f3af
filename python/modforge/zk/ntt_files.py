"""The NTT's data outside Python: files of little-endian u64 elements, the seeded random inputs the
command and the benchmark's anchors share, and the output digest.

``random_elements(count, seed)`` is the splitmix64 stream from ``seed``, each word reduced mod p: the
anchor program (python/modforge/bench/harness/ntt_anchor) generates the same numbers in Rust, so that
every implementation transforms the same input without shipping it across a pipe.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from ..arith.base import ParameterError
from .goldilocks import GOLDILOCKS

P = GOLDILOCKS.p
WORD_BYTES = 8
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def random_elements(count: int, seed: int) -> np.ndarray:
    """``count`` canonical elements: splitmix64(seed) outputs 1..count, each mod p."""
    if not 0 <= seed < 2**64:
        raise ParameterError("seed", f"must be an unsigned 64-bit integer, got {seed}")
    with np.errstate(over="ignore"):
        state = np.uint64(seed) + _GOLDEN * np.arange(1, count + 1, dtype=np.uint64)
        z = (state ^ (state >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        z ^= z >> np.uint64(31)
    z %= np.uint64(P)
    return z


def read_elements(path: str | Path) -> np.ndarray:
    """The u64 words of a file (little-endian), as a writable array without a second copy."""
    data = bytearray(Path(path).read_bytes())
    if len(data) % WORD_BYTES:
        raise ParameterError("in", f"{str(path)!r} holds {len(data)} bytes, not a whole number of 8-byte "
                                   f"little-endian elements")
    return np.frombuffer(data, dtype="<u8")


def element_bytes(array: np.ndarray) -> bytes:
    """The little-endian bytes of ``array`` (what --out writes)."""
    return np.ascontiguousarray(array, dtype="<u8").tobytes()


def digest(array: np.ndarray) -> str:
    """SHA-256 of the little-endian bytes, in hex: the output's fingerprint in --json."""
    return hashlib.sha256(memoryview(np.ascontiguousarray(array, dtype="<u8")).cast("B")).hexdigest()
