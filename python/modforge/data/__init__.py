"""Data shipped with the package (public puzzle parameters)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def known_puzzles() -> dict:
    """The public parameters of well-known squaring tasks (VDF Alliance, LCS35, CSAIL2019)."""
    with resources.files(__name__).joinpath("known-puzzles.json").open("r", encoding="utf-8") as fh:
        return json.load(fh)


def vdf_alliance_modulus() -> int:
    return int(known_puzzles()["vdf_alliance_2019"]["N"])
