"""The tuning data of ``backend="auto"`` (``tuning.json``, written by
``benchmarks/native_tune.py --write``): its provenance fields and a ``best``
table that covers every width once, with known backends."""

from __future__ import annotations

import json
from importlib import resources

from modforge.engine import backend_names

KNOWN = set(backend_names()) - {"auto"}


def load() -> dict:
    with resources.files("modforge.engine").joinpath("tuning.json").open("r", encoding="utf-8") as fh:
        return json.load(fh)


def test_provenance() -> None:
    data = load()
    for key in ("cpu", "compiler", "date", "generated_by", "measured", "best"):
        assert key in data, key
    assert data["compiler"].startswith("rustc ")
    assert "native_tune.py" in data["generated_by"]


def test_best_covers_the_widths_once() -> None:
    rows = load()["best"]
    assert rows[0]["min_bits"] <= 2
    for prev, row in zip(rows, rows[1:]):
        assert row["min_bits"] == prev["max_bits"] + 1, (prev, row)
    assert rows[-1]["max_bits"] >= 4096
    for row in rows:
        assert row["backend"] in KNOWN, row
        assert row["min_bits"] <= row["max_bits"]
        if row["backend"] in ("adx", "ifma"):
            assert 256 <= row["min_bits"] and row["max_bits"] <= 4096, row


def test_measured_rows_name_the_reference() -> None:
    measured = load()["measured"]
    for bits, row in measured.items():
        assert int(bits) >= 256
        assert "gmp" in row and all(v > 0 for v in row.values())
