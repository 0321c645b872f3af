"""Data shipped with the package (public puzzle parameters) and the reproducible moduli every layer uses
(commands, benchmarks, the hardware flow), kept here so that none of them imports from the command line."""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from importlib import resources

from ..arith.base import ParameterError


@lru_cache(maxsize=1)
def known_puzzles() -> dict:
    """The public parameters of well-known squaring tasks (VDF Alliance, LCS35, CSAIL2019)."""
    with resources.files(__name__).joinpath("known-puzzles.json").open("r", encoding="utf-8") as fh:
        return json.load(fh)


def vdf_alliance_modulus() -> int:
    return int(known_puzzles()["vdf_alliance_2019"]["N"])


# The bit-exact models are Python: wider than this, one command runs for minutes (and --bits 10^20 never ends).
MAX_MODEL_BITS = 16384


def check_model_bits(bits: int, param: str = "bits") -> int:
    if not 3 <= bits <= MAX_MODEL_BITS:
        raise ParameterError(param, f"must be between 3 and {MAX_MODEL_BITS} bits, got {bits if bits < 1 << 64 else 'more'}")
    return bits


def deterministic_modulus(bits: int, seed: int = 0, odd: bool = True) -> int:
    """An exactly ``bits``-bit modulus from SHA-256 of (bits, seed): reproducible, unstructured."""
    check_model_bits(bits)
    stream = b""
    counter = 0
    while len(stream) * 8 < bits:
        stream += hashlib.sha256(f"modforge-modulus:{bits}:{seed}:{counter}".encode()).digest()
        counter += 1
    value = int.from_bytes(stream, "big") >> (len(stream) * 8 - bits)
    value |= 1 << (bits - 1)
    if odd:
        value |= 1
    return value
