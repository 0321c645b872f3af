"""Which backend ``auto`` picks, per modulus width.

The choice comes from measured data (``tuning.json`` beside this file, written
by ``benchmarks/native_tune.py --write``; it records CPU, compiler and date).
The data is not matched against this CPU: a backend it names is taken when this
machine runs it (on a CPU without IFMA, ``ifma`` drops out), and after the
measured choice the order of preference below applies.  Re-run the tuning on
a machine unlike the one that wrote it.
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


def ranked_backends(bits: int, available: list[str]) -> list[str]:
    """Available backends for a ``bits``-wide modulus, best first: measured choice, then the default order."""
    order: list[str] = []
    for row in _measured().get("best", []):
        if row["min_bits"] <= bits <= row["max_bits"] and row["backend"] in available:
            order.append(row["backend"])
    order += [name for name in DEFAULT_PREFERENCE if name in available]
    order.append("python")
    return list(dict.fromkeys(order))


def choose_backend(bits: int, available: list[str]) -> str:
    return ranked_backends(bits, available)[0]
