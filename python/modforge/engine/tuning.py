"""Which backend ``auto`` picks, per modulus width, and why.

The choice comes from measured data.  ``tuning.json`` beside this file (written by
``benchmarks/native_tune.py --write``) records the CPU it was measured on (name and
instruction-set features), the compiler and the date.  On that CPU it decides.  On any
other CPU it would be a guess (a machine without IFMA may well have a GMP faster than
our ``adx``), so ``auto`` measures instead: the first time a width is asked for, the
candidate backends take turns squaring for about 4 ms each, ROUNDS rounds with the order
rotated, and each is ranked by its best round (load only ever adds time: with the other
core busy, medians moved up to 4x while the best rounds stayed in order).  A measurement
that contradicts an order known to hold (``adx`` is ``portable``'s loop with MULX/ADX, so
never much slower; on AMD Zen 3 ``adx`` is well ahead of GMP up to 1024 bits) or whose
rounds spread too far is taken again, up to MEASURE_ATTEMPTS times.  The ranking is kept
in ``$XDG_CACHE_HOME/modforge/tuning/`` under the CPU's identity, with the date, the best
and median figures and any doubt, for every later process; it is measured again when it
is older than MAX_AGE_DAYS, or when it was doubtful (still implausible after every
attempt) and older than DOUBTFUL_MAX_AGE_HOURS.  After the measured choice the default
order below applies.  :func:`explain` says which backend was picked and why (shown by
``timelock info`` and ``vdf eval``).

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
import statistics
import time
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ..arith.base import ParameterError

# Fastest first when no measurement says otherwise.
DEFAULT_PREFERENCE = ("ifma", "avx512f", "fma", "avx2", "adx", "portable", "gmp", "python")
# The widths `auto` measures at (a modulus takes the next one up) and the backends it compares.
WIDTHS = (256, 512, 768, 1024, 1536, 2048, 3072, 4096)
CANDIDATES = ("ifma", "avx512f", "fma", "avx2", "adx", "portable", "gmp")
RUN_SECONDS = 0.004          # per timed run; each backend runs once per round
ROUNDS = 7                   # rounds of interleaved runs, the order rotated each round
MEASURE_ATTEMPTS = 3         # measurements of one width before a doubtful one is kept as it is
CACHE_FORMAT = "modforge-machine-tuning"
CACHE_VERSION = 2            # 2: several rounds, best and median, dates and doubts per width
MODES = ("auto", "static", "measure")
MAX_AGE_DAYS = 30            # a ranking older than this is measured again (a new GMP, microcode, ...)
DOUBTFUL_MAX_AGE_HOURS = 1   # a doubtful one again after this (not in every process: it may be the truth)
# A faster-by-construction backend measured this much slower than the other is implausible; so is a
# backend whose median round took this many times its best (the machine was busy while it was timed).
PLAUSIBLE_SLACK = 1.15
NOISY_SPREAD = 2.0

# (faster, slower, widths, why): orders that hold on every CPU that runs both.
STRUCTURAL_ORDERS = (
    ("adx", "portable", (WIDTHS[0], WIDTHS[-1]), "adx is portable's loop with MULX/ADX instructions"),
)
# Per CPU family (vendor, family): orders measured on it, wide enough apart to be a sanity check.  Zen 3
# (AMD EPYC, family 25 model 1, 2026-11-27, best of 9 interleaved rounds while another job ran): adx
# 51/116/372 ns against GMP 65/189/667 at 256/512/1024 bits; above that they come within 10 % of each other.
KNOWN_ORDERS = {
    ("AuthenticAMD", "25"): (("adx", "gmp", (256, 1024), "measured on AMD Zen 3: adx 1.3-1.8x ahead of GMP"),),
}

_session: dict[int, list[str]] = {}      # width -> ranking, measured or read in this process
_session_why: dict[int, dict] = {}       # width -> how that ranking came about (see explain)


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
def cpu_family() -> tuple[str, str]:
    """(vendor, family) from /proc/cpuinfo, e.g. ("AuthenticAMD", "25") for Zen 3; empty strings elsewhere."""
    vendor = family = ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "vendor_id" and not vendor:
                vendor = value.strip()
            elif key.strip() == "cpu family" and not family:
                family = value.strip()
    except OSError:
        pass
    return vendor, family


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
        for field in ("ranked", "candidates", "ns_per_squaring", "median_ns", "measured_at", "doubt"):
            if not isinstance(doc.get(field), dict):
                return {}
        return doc
    except (OSError, ValueError, RecursionError):
        return {}           # measured again and rewritten


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


def _age_hours(stamp: object) -> float | None:
    try:
        then = datetime.datetime.fromisoformat(str(stamp))
        if then.tzinfo is None:
            return None
        return (_now() - then).total_seconds() / 3600
    except ValueError:
        return None


def _valid_ranking(doc: dict, width: int, candidates: list[str]) -> list[str] | None:
    """The cached ranking at ``width`` if it was measured over exactly ``candidates``, is not too old, and its
    figures still pass the sanity checks (a doubtful one only for DOUBTFUL_MAX_AGE_HOURS)."""
    key = str(width)
    ranked = doc.get("ranked", {}).get(key)
    measured = doc.get("candidates", {}).get(key)
    if not (isinstance(ranked, list) and isinstance(measured, list) and sorted(measured) == sorted(candidates)
            and all(isinstance(name, str) for name in ranked)):
        return None
    age = _age_hours(doc["measured_at"].get(key))
    if age is None or age < 0 or age > 24 * MAX_AGE_DAYS:
        return None
    best, median = doc["ns_per_squaring"].get(key), doc["median_ns"].get(key)
    if not (isinstance(best, dict) and isinstance(median, dict)):
        return None
    try:
        problem = doubt(best, median, width)
    except (TypeError, ValueError):
        return None
    if problem is not None and age > DOUBTFUL_MAX_AGE_HOURS:
        return None
    return ranked


def doubt(best: dict[str, float], median: dict[str, float], width: int,
          family: tuple[str, str] | None = None) -> str | None:
    """Why the figures at ``width`` (ns per squaring: each backend's best and median round) look wrong, or None.

    Wrong means a known order reversed by more than PLAUSIBLE_SLACK (structural, or measured on this CPU
    family), or a backend whose median round is NOISY_SPREAD times its best (timed while the machine was busy).
    """
    orders = STRUCTURAL_ORDERS + KNOWN_ORDERS.get(family if family is not None else cpu_family(), ())
    for faster, slower, (low, high), why in orders:
        if low <= width <= high and faster in best and slower in best \
                and float(best[faster]) > PLAUSIBLE_SLACK * float(best[slower]):
            return (f"{faster} measured {best[faster]:.0f} ns, slower than {slower} at {best[slower]:.0f} ns "
                    f"({why})")
    for name in best:
        if name in median and float(median[name]) > NOISY_SPREAD * float(best[name]):
            return (f"{name}'s rounds spread from {best[name]:.0f} to a median of {median[name]:.0f} ns "
                    f"(the machine was busy)")
    return None


def measure_width(candidates: list[str], width: int) -> dict | None:
    """Time ``candidates`` at ``width`` until the figures pass :func:`doubt` (at most MEASURE_ATTEMPTS times;
    the rounds of all attempts pool); None when nothing could be timed."""
    samples: dict[str, list[float]] = {}
    problem = None
    attempts = 0
    for attempts in range(1, MEASURE_ATTEMPTS + 1):
        got = time_backends(candidates, width)
        if not got:
            break
        for name, values in got.items():
            samples.setdefault(name, []).extend(values)
        samples = {name: values for name, values in samples.items() if name in got}   # failed since: out
        best = {name: min(values) for name, values in samples.items()}
        median = {name: statistics.median(values) for name, values in samples.items()}
        problem = doubt(best, median, width)
        if problem is None:
            break
    if not samples:
        return None
    return {"best": best, "median": median, "doubt": problem, "attempts": attempts,
            "rounds": min(len(v) for v in samples.values())}


def machine_ranking(bits: int, available: list[str], fresh: bool = False) -> list[str]:
    """Candidates ranked by this machine's own measurement at ``bits``'s width: measured once (``fresh``:
    whatever the cache holds; also when the cached one is old or doubtful), then cached in memory and on disk."""
    width = width_for(bits)
    if width not in _session:
        identity = this_machine()
        path = cache_path(identity)
        candidates = [name for name in CANDIDATES if name in available]
        doc = _read_cache(path, identity)
        ranked = None if fresh else _valid_ranking(doc, width, candidates)
        key = str(width)
        if ranked is None:
            got = measure_width(candidates, width)
            if got is None:
                return []           # nothing could be timed: the default order, and no ranking kept
            ranked = sorted(got["best"], key=got["best"].get)
            doc = doc or {"format": CACHE_FORMAT, "version": CACHE_VERSION, "identity": identity, "ranked": {},
                          "candidates": {}, "ns_per_squaring": {}, "median_ns": {}, "measured_at": {}, "doubt": {}}
            doc["ranked"][key] = ranked
            doc["candidates"][key] = candidates
            doc["ns_per_squaring"][key] = {k: round(v, 1) for k, v in got["best"].items()}
            doc["median_ns"][key] = {k: round(v, 1) for k, v in got["median"].items()}
            doc["measured_at"][key] = _now().isoformat()
            doc["doubt"][key] = got["doubt"]
            doc["date"] = doc["measured_at"][key]
            source = "measured now"
            try:
                from ..fileio import atomic_write

                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(path, json.dumps(doc, indent=1) + "\n")
            except OSError:
                pass        # an unwritable cache: measured again by the next process, no harm
        else:
            source = "cached"
        _session[width] = ranked
        _session_why[width] = {"source": source, "date": doc["measured_at"].get(key),
                               "ns_per_squaring": doc["ns_per_squaring"].get(key),
                               "median_ns": doc["median_ns"].get(key), "doubt": doc["doubt"].get(key)}
    return [name for name in _session[width] if name in available]


def time_backends(names: list[str], bits: int) -> dict[str, list[float]]:
    """ns per squaring at ``bits`` for each backend that takes the width, one figure per round: ROUNDS
    rounds, the backends taking turns within each (the order rotated), so a moment of load falls on all."""
    runs = {name: run for name in names for run in [_timed_run(name, bits)] if run is not None}
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for round_ in range(ROUNDS):
        order = list(runs)
        order = order[round_ % len(order):] + order[:round_ % len(order)] if order else order
        for name in order:
            if name not in runs:
                continue
            try:
                samples[name].append(runs[name]())
            except Exception:       # noqa: BLE001 - a backend that fails here is not a candidate
                del runs[name], samples[name]
    return samples


# ---------------------------------------------------------------------------------------------- explaining
def explain(bits: int, picked: str, requested: str = "auto") -> dict:
    """Why ``picked`` serves a ``bits``-wide modulus: ``{"backend", "requested", "source", "text", ...}``.

    ``source`` is ``requested`` (a --backend), ``shipped`` (tuning.json on its own CPU, or GMP outside the
    native widths), ``static`` (MODFORGE_TUNING=static), ``measured`` (this machine's ranking; with its
    figures, date and any doubt) or ``default`` (the fixed order: nothing measured).
    """
    out: dict = {"backend": picked, "requested": requested}
    if requested != "auto":
        return {**out, "source": "requested", "text": f"{picked}: asked for with --backend"}
    data = _measured()
    width = width_for(bits) if WIDTHS[0] <= bits <= WIDTHS[-1] else None
    mode = _mode()
    if width is None:
        return {**out, "source": "shipped", "text": f"{picked}: auto; {bits} bits is outside the native "
                                                    f"backends' {WIDTHS[0]}-{WIDTHS[-1]} bits"}
    if mode == "static" or (mode == "auto" and {k: data.get(k) for k in ("cpu", "cpu_features")}
                            == _cpu_identity()):
        why = "MODFORGE_TUNING=static: " if mode == "static" else ""
        return {**out, "source": "static" if mode == "static" else "shipped",
                "text": f"{picked}: auto; {why}the shipped tuning data (measured on {data.get('cpu')}, "
                        f"{data.get('date')}), then the default order"}
    info = _session_why.get(width)
    ranking = _session.get(width)
    if not info or not ranking:
        return {**out, "source": "default", "text": f"{picked}: auto; the default order (nothing could be "
                                                    f"measured here)"}
    best = info.get("ns_per_squaring") or {}
    figures = ", ".join(f"{name} {best[name]:.0f}" for name in sorted(best, key=best.get))
    text = (f"{picked}: auto; {info['source']} on this machine ({str(info.get('date'))[:10]}) at {width} bits: "
            f"{figures} ns/squaring, each its best of {ROUNDS} or more interleaved rounds")
    if ranking[0] != picked:
        text += f"; {ranking[0]} does not take this modulus"
    if info.get("doubt"):
        text += f"; doubtful ({info['doubt']}), measured again after {DOUBTFUL_MAX_AGE_HOURS} h"
    return {**out, "source": "measured", "text": text, "width": width, "ns_per_squaring": best,
            "median_ns": info.get("median_ns"), "date": info.get("date"), "doubt": info.get("doubt")}


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

