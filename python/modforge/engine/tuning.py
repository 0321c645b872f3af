"""Which backend ``auto`` picks, per modulus width.

The choice comes from measured data (``tuning.json`` beside this file, written
by ``modforge bench``; it records CPU, compiler and date).  Without data for
this machine the order of preference below applies.
"""

from __future__ import annotations

import json
from importlib import resources

# Fastest first when no measurement says otherwise.
DEFAULT_PREFERENCE = ("ifma", "adx", "portable", "gmp", "python")


def _measured() -> dict:
    try:
        with resources.files(__package__).joinpath("tuning.json").open("r", encoding="utf-8") as fh:
            return json.load(fh)
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def choose_backend(bits: int, available: list[str]) -> str:
    data = _measured()
    for row in data.get("best", []):
        if row["min_bits"] <= bits <= row["max_bits"] and row["backend"] in available:
            return row["backend"]
    for name in DEFAULT_PREFERENCE:
        if name in available:
            return name
    return "python"
