"""``backend="auto"``: the shipped tuning data on its own CPU, this machine's measurement elsewhere."""

from __future__ import annotations

import json

import pytest

from modforge.arith.base import ParameterError
from modforge.engine import ModRing, tuning
from modforge.engine.backends import available_backends

ELSEWHERE = {"cpu": "Some Other CPU", "cpu_features": {"adx": True, "bmi2": True}}
THIS_MACHINE = tuning.this_machine


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """An empty cache, no rankings in memory, and a record of the backends timed."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("MODFORGE_TUNING", raising=False)
    monkeypatch.setattr(tuning, "_session", {})
    timed: list[tuple[str, int]] = []
    fake = {"gmp": 10.0, "portable": 30.0, "adx": 20.0, "ifma": 40.0}     # an order no default would give
    monkeypatch.setattr(tuning, "time_backend", lambda name, bits: timed.append((name, bits)) or fake[name])
    return timed


def _elsewhere(monkeypatch) -> None:
    monkeypatch.setattr(tuning, "this_machine", lambda: ELSEWHERE)


def test_on_the_shipped_data_cpu_nothing_is_measured(fresh, monkeypatch, tmp_path) -> None:
    shipped = tuning._measured()
    monkeypatch.setattr(tuning, "this_machine", lambda: {"cpu": shipped["cpu"], "cpu_features": shipped["cpu_features"]})
    avail = available_backends()
    assert tuning.ranked_backends(2048, avail)[0] == tuning._shipped_ranking(shipped, 2048, avail)[0]
    assert fresh == [] and not (tmp_path / "modforge" / "tuning").exists()


def test_elsewhere_auto_measures_once_per_width_and_keeps_the_ranking(fresh, monkeypatch, tmp_path) -> None:
    _elsewhere(monkeypatch)
    avail = ["gmp", "portable", "adx", "ifma", "python"]
    assert tuning.ranked_backends(1000, avail) == ["gmp", "adx", "portable", "ifma", "python"]
    assert sorted(fresh) == sorted((name, 1024) for name in tuning.CANDIDATES)
    assert tuning.ranked_backends(1024, avail)[0] == "gmp" and len(fresh) == 4      # same width: no new timing
    path = tuning.cache_path(ELSEWHERE)
    doc = json.loads(path.read_text())
    assert doc["identity"] == ELSEWHERE and doc["ranked"]["1024"] == ["gmp", "adx", "portable", "ifma"]
    assert doc["ns_per_squaring"]["1024"]["gmp"] == 10.0 and doc["date"]
    # Another process: read from the file, nothing timed.
    monkeypatch.setattr(tuning, "_session", {})
    assert tuning.ranked_backends(1024, avail)[0] == "gmp" and len(fresh) == 4
    # A backend this machine lacks drops out of the ranking, the rest keep their order.
    assert tuning.ranked_backends(1024, ["portable", "gmp", "python"])[:2] == ["gmp", "portable"]


@pytest.mark.parametrize("damage", ["", "{", "[]", '{"format": "modforge-machine-tuning"}',
                                    '{"format": "modforge-machine-tuning", "version": 1, "ranked": 3}'])
def test_a_damaged_or_foreign_cache_is_measured_again(fresh, monkeypatch, damage) -> None:
    _elsewhere(monkeypatch)
    path = tuning.cache_path(ELSEWHERE)
    path.parent.mkdir(parents=True)
    path.write_text(damage)
    assert tuning.ranked_backends(512, ["gmp", "adx", "python"])[0] == "gmp"
    assert sorted(fresh) == [("adx", 512), ("gmp", 512)]
    assert json.loads(path.read_text())["ranked"]["512"] == ["gmp", "adx"]


def test_static_never_measures_and_measure_always_does(fresh, monkeypatch) -> None:
    _elsewhere(monkeypatch)
    monkeypatch.setenv("MODFORGE_TUNING", "static")
    avail = available_backends()
    assert tuning.ranked_backends(2048, avail)[0] == tuning._shipped_ranking(tuning._measured(), 2048, avail)[0]
    assert fresh == []
    monkeypatch.setenv("MODFORGE_TUNING", "measure")
    monkeypatch.setattr(tuning, "this_machine", THIS_MACHINE)
    assert tuning.ranked_backends(2048, ["gmp", "adx", "python"])[0] == "gmp" and fresh
    monkeypatch.setenv("MODFORGE_TUNING", "fastest")
    with pytest.raises(ParameterError, match="MODFORGE_TUNING"):
        tuning.ranked_backends(2048, avail)


def test_above_the_measured_widths_the_shipped_ranges_apply(fresh, monkeypatch) -> None:
    _elsewhere(monkeypatch)
    assert tuning.ranked_backends(8192, ["gmp", "adx", "python"])[0] == "gmp" and fresh == []


def test_a_real_measurement_ranks_what_the_backends_really_do(monkeypatch, tmp_path) -> None:
    """No fake timings: at 2048 bits ifma is about 3x anything else here, gmp (the gmpy2 wheel's) last
    of the native-or-gmp candidates except portable; whatever the order, every candidate is ranked and
    ModRing(auto) takes the first."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("MODFORGE_TUNING", "measure")
    monkeypatch.setattr(tuning, "_session", {})
    avail = available_backends()
    ranked = tuning.ranked_backends(2048, avail)
    assert set(ranked) == set(avail) | {"python"} and ranked[-1] == "python"
    if "ifma" in avail:
        assert ranked[0] == "ifma"
    ns = json.loads(tuning.cache_path(tuning.this_machine()).read_text())["ns_per_squaring"]["2048"]
    assert ns[ranked[0]] == min(ns.values())
    ring = ModRing(tuning.tuning_modulus(2000), backend="auto")
    assert ring.backend == ranked[0] and ring.sqr_n(3, 50) == pow(3, 1 << 50, ring.modulus)
