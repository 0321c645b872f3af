"""Durations as people type them (``90s``, ``10m``, ``2h``, ``1d``, ``1h30m``) and as we print them."""

from __future__ import annotations

import math
import re

from ..arith.base import ParameterError

UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0, "y": 365.25 * 86400.0}
MAX_SECONDS = 1000 * UNITS["y"]      # beyond any puzzle or checkpoint interval; keeps counts finite
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhdwy])")


def parse_duration(text: str, param: str = "duration") -> float:
    """Seconds in ``text``: a plain number (seconds) or number+unit parts, e.g. ``1h30m``; positive."""
    t = text.strip().lower().replace(" ", "")
    if not t:
        raise ParameterError(param, "empty duration")
    try:
        seconds = float(t)
    except ValueError:
        pos = 0
        seconds = 0.0
        for m in _PART.finditer(t):
            if m.start() != pos:
                break
            seconds += float(m.group(1)) * UNITS[m.group(2)]
            pos = m.end()
        if pos != len(t) or pos == 0:
            raise ParameterError(param, f"not a duration: {text!r} (examples: 90s, 10m, 2h, 1d, 1h30m)") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ParameterError(param, f"must be positive, got {text!r}")
    if seconds > MAX_SECONDS:
        raise ParameterError(param, f"too long: {text!r} (at most 1000y)")
    return seconds


def format_duration(seconds: float | None) -> str:
    """Short human form: ``850ms``, ``42s``, ``3m12s``, ``5h04m``, ``12d03h``, ``2.5y``."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    if seconds < 0:
        seconds = 0.0
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    if seconds < 365.25 * 86400:
        return f"{s // 86400}d{(s % 86400) // 3600:02d}h"
    return f"{seconds / UNITS['y']:.1f}y"


def format_count(value: float) -> str:
    """Counts with SI prefixes: ``950``, ``12.3k``, ``4.56M``, ``7.97T``."""
    for factor, suffix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g}{suffix}"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.3g}"
