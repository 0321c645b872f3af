"""Which backend ``auto`` picks, per modulus width.

The choice comes from measured data.  ``tuning.json`` beside this file (written by
``benchmarks/native_tune.py --write``) records the CPU it was measured on (name and
instruction-set features), the compiler and the date.  On that CPU it decides.  On any
other CPU it would be a guess (a machine without IFMA may well have a GMP faster than
our ``adx``), so ``auto`` measures instead: the first time a width is asked for, each
candidate backend squares for a few milliseconds at that width (about 60 ms in all),
and the ranking is kept in ``$XDG_CACHE_HOME/modforge/tuning/`` under the CPU's identity,
with the date and the modforge version, for every later process.  After the measured
choice the default order below applies.

``MODFORGE_TUNING`` overrides this: ``static`` never measures (the shipped data, then
the default order: reproducible), ``measure`` measures even on the shipped data's CPU.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import time
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ..arith.base import ParameterError

# Fastest first when no measurement says otherwise.
DEFAULT_PREFERENCE = ("ifma", "adx", "portable", "gmp", "python")
# The widths `auto` measures at (a modulus takes the next one up) and the backends it compares.
WIDTHS = (256, 512, 768, 1024, 1536, 2048, 3072, 4096)
CANDIDATES = ("ifma", "adx", "portable", "gmp")
RUN_SECONDS = 0.004          # per timed run; the best of RUNS runs counts
RUNS = 3
CACHE_FORMAT = "modforge-machine-tuning"
CACHE_VERSION = 1
MODES = ("auto", "static", "measure")

_session: dict[int, list[str]] = {}      # width -> ranking, measured or read in this process


@lru_cache(maxsize=1)
def _measured() -> dict:
    try:
        with resources.files(__package__).joinpath("tuning.json").open("r", encoding="utf-8") as fh:
            return json.load(fh)
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@lru_cache(maxsize=1)
def this_machine() -> dict:
    """The identity tuning data is measured under: CPU name and the features the native dispatch reads."""
    try:
        from .. import native

        features = dict(native.cpu_features()) if native.available() else {}
    except ImportError:
        features = {}
    return {"cpu": cpu_name(), "cpu_features": features}


def _mode() -> str:
    mode = os.environ.get("MODFORGE_TUNING", "auto").strip().lower() or "auto"
    if mode not in MODES:
        raise ParameterError("MODFORGE_TUNING", f"must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def _shipped_ranking(data: dict, bits: int, available: list[str]) -> list[str]:
    return [row["backend"] for row in data.get("best", [])
            if row["min_bits"] <= bits <= row["max_bits"] and row["backend"] in available]


def ranked_backends(bits: int, available: list[str]) -> list[str]:
    """Available backends for a ``bits``-wide modulus, best first: measured choice, then the default order."""
    mode = _mode()
    data = _measured()
    order: list[str] = []
    shipped_applies = {k: data.get(k) for k in ("cpu", "cpu_features")} == this_machine()
    if mode == "static" or (mode == "auto" and shipped_applies) or bits > WIDTHS[-1]:
        order += _shipped_ranking(data, bits, available)
    else:
        order += machine_ranking(bits, available)
    order += [name for name in DEFAULT_PREFERENCE if name in available]
    order.append("python")
    return list(dict.fromkeys(order))


def choose_backend(bits: int, available: list[str]) -> str:
    return ranked_backends(bits, available)[0]


# ------------------------------------------------------------------------------------------------ measuring
def width_for(bits: int) -> int:
    return next(w for w in WIDTHS if w >= bits)


def cache_path(identity: dict) -> Path:
    from ..fileio import user_cache_dir

    key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
    return user_cache_dir("tuning") / f"machine-{key}.json"


def _version() -> str:
    from .. import __version__

    return __version__


def _read_cache(path: Path, identity: dict) -> dict:
    """The cached rankings per width, or {} when there are none for this identity and version."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if (doc.get("format"), doc.get("version"), doc.get("identity"), doc.get("modforge")) != \
                (CACHE_FORMAT, CACHE_VERSION, identity, _version()):
            return {}
        ranked = doc["ranked"]
        if not isinstance(ranked, dict) or not all(isinstance(v, list) for v in ranked.values()):
            return {}
        return doc
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return {}           # missing or damaged: measured again and rewritten


def machine_ranking(bits: int, available: list[str]) -> list[str]:
    """Candidates ranked by this machine's own measurement at ``bits``'s width (measured once, then cached)."""
    width = width_for(bits)
    if width not in _session:
        identity = this_machine()
        path = cache_path(identity)
        doc = _read_cache(path, identity)
        ranked = doc.get("ranked", {}).get(str(width)) if doc else None
        if ranked is None:
            times = {name: ns for name in CANDIDATES if name in available
                     for ns in [time_backend(name, width)] if ns is not None}
            ranked = sorted(times, key=times.get)
            doc = doc or {"format": CACHE_FORMAT, "version": CACHE_VERSION, "identity": identity,
                          "modforge": _version(), "ranked": {}, "ns_per_squaring": {}}
            doc["ranked"][str(width)] = ranked
            doc.setdefault("ns_per_squaring", {})[str(width)] = {k: round(v, 1) for k, v in times.items()}
            doc["date"] = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
            try:
                from ..fileio import atomic_write

                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(path, json.dumps(doc, indent=1) + "\n")
            except OSError:
                pass        # an unwritable cache: measured again by the next process, no harm
        _session[width] = ranked
    return [name for name in _session[width] if name in available]


def tuning_modulus(bits: int) -> int:
    """An odd modulus of exactly ``bits`` bits, the same on every machine (no structure a backend favours)."""
    digest = hashlib.shake_256(f"modforge-tuning:{bits}".encode()).digest(bits // 8 + 1)
    n = int.from_bytes(digest, "big") % (1 << bits)
    return n | (1 << (bits - 1)) | 1


def time_backend(name: str, bits: int) -> float | None:
    """ns per squaring of ``name`` at ``bits``: the best of RUNS runs of about RUN_SECONDS, or None when it
    cannot take the width."""
    from .backends import _resolve

    n = tuning_modulus(bits)
    try:
        backend = _resolve(name)(n)
    except (ValueError, ParameterError, ImportError):
        return None
    x = n // 3
    k = 16
    while True:                                   # grow k until one run takes a millisecond
        start = time.perf_counter()
        backend.sqr_n(x, k)
        elapsed = time.perf_counter() - start
        if elapsed >= 1e-3 or k >= 1 << 24:
            break
        k *= 4
    k = max(1, int(k * RUN_SECONDS / max(elapsed, 1e-9)))
    best = float("inf")
    for _ in range(RUNS):
        start = time.perf_counter()
        backend.sqr_n(x, k)
        best = min(best, time.perf_counter() - start)
    return best / k * 1e9
