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
the default order: reproducible; the test suite runs so), ``measure`` measures afresh, once
per process and width, whatever the cache holds and whatever the CPU.  A cached ranking is
used only under the same identity (CPU, GMP version, modforge version) and over the same
candidate backends; delete the file (or run once with ``measure``) to measure again.
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
DEFAULT_PREFERENCE = ("ifma", "avx512f", "adx", "portable", "gmp", "python")
# The widths `auto` measures at (a modulus takes the next one up) and the backends it compares.
WIDTHS = (256, 512, 768, 1024, 1536, 2048, 3072, 4096)
CANDIDATES = ("ifma", "avx512f", "adx", "portable", "gmp")
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
def _cpu_identity() -> dict:
    """CPU name and the features the native dispatch reads: what the shipped data records."""
    try:
        from .. import native

        features = dict(native.cpu_features()) if native.available() else {}
    except ImportError:
        features = {}
    return {"cpu": cpu_name(), "cpu_features": features}


@lru_cache(maxsize=1)
def this_machine() -> dict:
    """The identity a measurement is kept under: the CPU, and the GMP and modforge it measured."""
    import gmpy2

    return {**_cpu_identity(), "gmp": gmpy2.mp_version(), "modforge": _version()}


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
    shipped_applies = {k: data.get(k) for k in ("cpu", "cpu_features")} == _cpu_identity()
    # Outside the measured widths (the native backends take 256 to 4096 bits) the shipped ranges say GMP.
    if mode == "static" or (mode == "auto" and shipped_applies) or not WIDTHS[0] <= bits <= WIDTHS[-1]:
        order += _shipped_ranking(data, bits, available)
    else:
        try:
            order += machine_ranking(bits, available, fresh=mode == "measure")
        except Exception:           # noqa: BLE001 - a choice of speed must never stop a computation
            pass
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
    """The cached document for this identity, or {} when there is none (missing, damaged, another identity)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(doc, dict) or (doc.get("format"), doc.get("version"), doc.get("identity")) != \
                (CACHE_FORMAT, CACHE_VERSION, identity):
            return {}
        for field in ("ranked", "candidates", "ns_per_squaring"):
            if not isinstance(doc.get(field), dict):
                return {}
        return doc
    except (OSError, ValueError, RecursionError):
        return {}           # measured again and rewritten


def _valid_ranking(doc: dict, width: int, candidates: list[str]) -> list[str] | None:
    """The cached ranking at ``width`` if it was measured over exactly ``candidates``."""
    ranked = doc.get("ranked", {}).get(str(width))
    measured = doc.get("candidates", {}).get(str(width))
    if not (isinstance(ranked, list) and isinstance(measured, list) and sorted(measured) == sorted(candidates)
            and all(isinstance(name, str) for name in ranked)):
        return None
    return ranked


def machine_ranking(bits: int, available: list[str], fresh: bool = False) -> list[str]:
    """Candidates ranked by this machine's own measurement at ``bits``'s width: measured once (``fresh``:
    whatever the cache holds), then cached in memory and on disk."""
    width = width_for(bits)
    if width not in _session:
        identity = this_machine()
        path = cache_path(identity)
        candidates = [name for name in CANDIDATES if name in available]
        doc = _read_cache(path, identity)
        ranked = None if fresh else _valid_ranking(doc, width, candidates)
        if ranked is None:
            times = time_backends(candidates, width)
            if not times:
                return []           # nothing could be timed: the default order, and no ranking kept
            ranked = sorted(times, key=times.get)
            doc = doc or {"format": CACHE_FORMAT, "version": CACHE_VERSION, "identity": identity,
                          "ranked": {}, "candidates": {}, "ns_per_squaring": {}}
            doc["ranked"][str(width)] = ranked
            doc["candidates"][str(width)] = candidates
            doc["ns_per_squaring"][str(width)] = {k: round(v, 1) for k, v in times.items()}
            doc["date"] = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
            try:
                from ..fileio import atomic_write

                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(path, json.dumps(doc, indent=1) + "\n")
            except OSError:
                pass        # an unwritable cache: measured again by the next process, no harm
        _session[width] = ranked
    return [name for name in _session[width] if name in available]


def time_backends(names: list[str], bits: int) -> dict[str, float]:
    """ns per squaring at ``bits`` for each backend that takes the width: the best of RUNS rounds, the
    backends taking turns within each round (so a moment of load falls on all of them)."""
    runs = {name: run for name in names for run in [_timed_run(name, bits)] if run is not None}
    best = {name: float("inf") for name in runs}
    for _ in range(RUNS):
        for name, run in list(runs.items()):
            try:
                best[name] = min(best[name], run())
            except Exception:       # noqa: BLE001 - a backend that fails here is not a candidate
                del runs[name], best[name]
    return best


def tuning_modulus(bits: int) -> int:
    """An odd modulus of exactly ``bits`` bits, the same on every machine (no structure a backend favours)."""
    digest = hashlib.shake_256(f"modforge-tuning:{bits}".encode()).digest(bits // 8 + 1)
    n = int.from_bytes(digest, "big") % (1 << bits)
    return n | (1 << (bits - 1)) | 1


def _timed_run(name: str, bits: int):
    """A function timing one run of ``name`` at ``bits`` (ns per squaring, about RUN_SECONDS), or None when
    the backend cannot take the width or fails."""
    from .registry import resolve

    n = tuning_modulus(bits)
    try:
        backend = resolve(name)(n)
        x = n // 3
        k = 16
        while True:                               # grow k until one run takes a millisecond
            start = time.perf_counter()
            backend.sqr_n(x, k)
            elapsed = time.perf_counter() - start
            if elapsed >= 1e-3 or k >= 1 << 24:
                break
            k *= 4
    except Exception:               # noqa: BLE001 - outside its widths, or broken: not a candidate
        return None
    k = max(1, int(k * RUN_SECONDS / max(elapsed, 1e-9)))

    def run() -> float:
        start = time.perf_counter()
        backend.sqr_n(x, k)
        return (time.perf_counter() - start) / k * 1e9

    return run

