"""Durations as typed on the command line, and as printed."""

from __future__ import annotations

import pytest

from modforge.arith.base import ParameterError
from modforge.timelock.durations import format_count, format_duration, parse_duration


@pytest.mark.parametrize("text, seconds", [("90s", 90), ("10m", 600), ("2h", 7200), ("1d", 86400), ("45", 45),
                                           ("1h30m", 5400), ("0.5s", 0.5), ("1.5h", 5400), (" 2m ", 120),
                                           ("1w", 604800)])
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "abc", "10x", "m10", "-5s", "0", "0s", "10m5", "inf"])
def test_bad_durations_name_the_parameter(text: str) -> None:
    with pytest.raises(ParameterError) as exc:
        parse_duration(text, "duration")
    assert str(exc.value).startswith("duration: ")


def test_format_duration_and_count() -> None:
    assert format_duration(0.25) == "250ms"
    assert format_duration(42) == "42s"
    assert format_duration(192) == "3m12s"
    assert format_duration(5 * 3600 + 240) == "5h04m"
    assert format_duration(2.5 * 365.25 * 86400) == "2.5y"
    assert format_duration(None) == "?"
    assert format_count(950) == "950"
    assert format_count(12_300) == "12.3k"
    assert format_count(79_685_186_856_218) == "79.7T"
