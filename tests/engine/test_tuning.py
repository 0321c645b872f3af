"""``backend="auto"``: the shipped tuning data on its own CPU, this machine's measurement elsewhere."""

from __future__ import annotations

import json

import pytest

from modforge.arith.base import ParameterError
from modforge.engine import ModRing, tuning
from modforge.engine.backends import available_backends

OTHER_CPU = {"cpu": "Some Other CPU", "cpu_features": {"adx": True, "bmi2": True}}
ELSEWHERE = {**OTHER_CPU, "gmp": "6.3.0", "modforge": "0.1.0"}
THIS_MACHINE = tuning.this_machine
FAKE_NS = {"gmp": 10.0, "portable": 30.0, "adx": 20.0, "ifma": 40.0, "avx512f": 50.0}  # no default's order
ALL = ["gmp", "portable", "adx", "ifma", "avx512f", "python"]


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """An empty cache, no rankings in memory, auto mode, and a record of the timings asked for."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("MODFORGE_TUNING", "auto")
    monkeypatch.setattr(tuning, "_session", {})
    timed: list[tuple[tuple[str, ...], int]] = []

    def fake(names, bits):
        timed.append((tuple(names), bits))
        return {name: FAKE_NS[name] for name in names}

    monkeypatch.setattr(tuning, "time_backends", fake)
    return timed


def _elsewhere(monkeypatch) -> None:
    monkeypatch.setattr(tuning, "_cpu_identity", lambda: OTHER_CPU)
    monkeypatch.setattr(tuning, "this_machine", lambda: ELSEWHERE)


def _static_order(bits: int, avail: list[str]) -> list[str]:
    """What the shipped data and the default order give (the expectation when nothing is measured)."""
    ranked = tuning._shipped_ranking(tuning._measured(), bits, avail)
    return list(dict.fromkeys(ranked + [b for b in tuning.DEFAULT_PREFERENCE if b in avail] + ["python"]))


def test_on_the_shipped_data_cpu_nothing_is_measured(fresh, monkeypatch, tmp_path) -> None:
    shipped = tuning._measured()
    monkeypatch.setattr(tuning, "_cpu_identity", lambda: {k: shipped[k] for k in ("cpu", "cpu_features")})
    avail = available_backends()
    assert tuning.ranked_backends(2048, avail) == _static_order(2048, avail)
    assert fresh == [] and not (tmp_path / "modforge" / "tuning").exists()


def test_elsewhere_auto_measures_once_per_width_and_keeps_the_ranking(fresh, monkeypatch) -> None:
    _elsewhere(monkeypatch)
    assert tuning.ranked_backends(1000, ALL) == ["gmp", "adx", "portable", "ifma", "avx512f", "python"]
    assert fresh == [(tuple(tuning.CANDIDATES), 1024)]
    assert tuning.ranked_backends(1024, ALL)[0] == "gmp" and len(fresh) == 1      # same width: no new timing
    doc = json.loads(tuning.cache_path(ELSEWHERE).read_text())
    assert doc["identity"] == ELSEWHERE and doc["ranked"]["1024"] == ["gmp", "adx", "portable", "ifma", "avx512f"]
    assert doc["ns_per_squaring"]["1024"]["gmp"] == 10.0 and doc["date"]
    # Another process: read from the file, nothing timed.
    monkeypatch.setattr(tuning, "_session", {})
    assert tuning.ranked_backends(1024, ALL)[0] == "gmp" and len(fresh) == 1
    # Another set of candidates (a rebuilt extension without IFMA, say): measured again.
    monkeypatch.setattr(tuning, "_session", {})
    assert tuning.ranked_backends(1024, ["portable", "gmp", "python"])[:2] == ["gmp", "portable"]
    assert fresh[-1] == (("portable", "gmp"), 1024)


@pytest.mark.parametrize("damage", [
    "", "{", "[]", "null", '{"format": "modforge-machine-tuning"}',
    '{"format": "modforge-machine-tuning", "version": 1, "identity": IDENTITY, "ranked": 3}',
    '{"format": "modforge-machine-tuning", "version": 1, "identity": IDENTITY, "ranked": {}, '
    '"candidates": {}, "ns_per_squaring": []}',
    '{"format": "modforge-machine-tuning", "version": 1, "identity": IDENTITY, "ranked": {"512": "gmp"}, '
    '"candidates": {"512": ["adx", "gmp"]}, "ns_per_squaring": {}}',
    '{"format": "modforge-machine-tuning", "version": 1, "identity": IDENTITY, "ranked": {"512": [1]}, '
    '"candidates": {"512": ["adx", "gmp"]}, "ns_per_squaring": {}}',
])
def test_a_damaged_or_foreign_cache_is_measured_again(fresh, monkeypatch, damage) -> None:
    _elsewhere(monkeypatch)
    path = tuning.cache_path(ELSEWHERE)
    path.parent.mkdir(parents=True)
    path.write_text(damage.replace("IDENTITY", json.dumps(ELSEWHERE)))
    assert tuning.ranked_backends(512, ["gmp", "adx", "python"])[0] == "gmp"
    assert fresh == [(("adx", "gmp"), 512)]
    assert json.loads(path.read_text())["ranked"]["512"] == ["gmp", "adx"]


def test_static_never_measures_and_measure_always_does(fresh, monkeypatch) -> None:
    _elsewhere(monkeypatch)
    monkeypatch.setenv("MODFORGE_TUNING", "static")
    avail = available_backends()
    assert tuning.ranked_backends(2048, avail) == _static_order(2048, avail) and fresh == []
    monkeypatch.setenv("MODFORGE_TUNING", "auto")
    assert tuning.ranked_backends(2048, ["gmp", "adx", "python"])[0] == "gmp"      # measured: cached now
    assert len(fresh) == 1
    monkeypatch.setattr(tuning, "_session", {})
    monkeypatch.setenv("MODFORGE_TUNING", "measure")
    tuning.ranked_backends(2048, ["gmp", "adx", "python"])
    assert len(fresh) == 2                                       # the cache held 2048: measured anyway
    monkeypatch.setenv("MODFORGE_TUNING", "fastest")
    with pytest.raises(ParameterError, match="MODFORGE_TUNING"):
        tuning.ranked_backends(2048, avail)


@pytest.mark.parametrize("bits", [3, 64, 255, 4097, 8192])
def test_outside_the_measured_widths_the_shipped_ranges_apply(fresh, monkeypatch, bits) -> None:
    _elsewhere(monkeypatch)
    assert tuning.ranked_backends(bits, ["gmp", "adx", "python"]) == _static_order(bits, ["gmp", "adx", "python"])
    assert fresh == []


def test_a_failing_measurement_never_stops_a_ring(fresh, monkeypatch) -> None:
    _elsewhere(monkeypatch)
    monkeypatch.setattr(tuning, "time_backends", lambda names, bits: 1 / 0)
    avail = available_backends()
    assert tuning.ranked_backends(2048, avail) == [b for b in tuning.DEFAULT_PREFERENCE if b in avail] + \
        (["python"] if "python" not in avail else [])


def test_a_backend_that_fails_while_timed_is_left_out(monkeypatch) -> None:
    runs = {"adx": lambda: 5.0, "gmp": lambda: 1 / 0}
    monkeypatch.setattr(tuning, "_timed_run", lambda name, bits: runs.get(name))
    assert tuning.time_backends(["adx", "gmp", "ifma"], 1024) == {"adx": 5.0}


def test_a_relative_cache_home_is_ignored(monkeypatch, tmp_path) -> None:
    from modforge.fileio import user_cache_dir

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert user_cache_dir("tuning").is_absolute() and "relative" not in str(user_cache_dir("tuning"))


def test_a_real_measurement_ranks_what_the_backends_really_do(monkeypatch, tmp_path) -> None:
    """No fake timings: every candidate is timed, the cache records them, and ModRing(auto) takes the
    fastest; at 2048 bits ifma is about 3x anything else where it runs, avx512f about 1.3x where it is the
    best this CPU has (no IFMA)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("MODFORGE_TUNING", "measure")
    monkeypatch.setattr(tuning, "_session", {})
    avail = available_backends()
    ranked = tuning.ranked_backends(2048, avail)
    if "ifma" in avail:
        assert ranked[0] == "ifma"
    elif "avx512f" in avail:
        assert ranked[0] == "avx512f"
    ns = json.loads(tuning.cache_path(THIS_MACHINE()).read_text())["ns_per_squaring"]["2048"]
    assert set(ns) == {b for b in tuning.CANDIDATES if b in avail} and ns[ranked[0]] == min(ns.values())
    ring = ModRing(tuning.tuning_modulus(2000), backend="auto")
    assert ring.backend == ranked[0] and ring.sqr_n(3, 50) == pow(3, 1 << 50, ring.modulus)


def test_when_nothing_can_be_timed_no_ranking_is_kept(fresh, monkeypatch) -> None:
    _elsewhere(monkeypatch)
    monkeypatch.setattr(tuning, "time_backends", lambda names, bits: {})
    avail = ["gmp", "adx", "python"]
    assert tuning.ranked_backends(1024, avail) == ["adx", "gmp", "python"]          # the default order
    assert not tuning.cache_path(ELSEWHERE).exists() and 1024 not in tuning._session
