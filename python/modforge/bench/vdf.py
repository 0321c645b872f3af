"""``bench vdf``: nanoseconds per modular squaring, ours and the anchors', in one run.

Protocol, per width:

1. a fixed, reproducible modulus (the VDF Alliance's at 1024 bits, otherwise
   ``deterministic_modulus(bits)``) and base x derived from a hash;
2. calibration: each implementation gets its own k (squarings per run) so one
   run lasts about ``seconds``; the calibration runs double as warm-up;
3. ``repeats`` rounds, round-robin over all implementations, the order rotated
   each round, the whole process (and the anchors' processes) pinned to one
   core; each run yields ns/k twice: by the thread's CPU time (the default
   figure: other processes on a shared machine do not inflate it) and by the
   wall clock (kept beside it; the two agree on an idle machine);
4. every result is checked: each run must equal gmpy2's ``powmod(x, 2^k, N)``
   for its k (a disagreement is an error, and the command exits 1);
5. statistics per implementation: median, min/max and quartiles of ns per
   squaring, and ``ratio_vs_best_anchor`` = (median of the fastest of natively
   built GMP and OpenSSL) / (this median): the speed-up over the best anchor,
   so 3.0 means three times faster and 0.5 twice as slow; and the *paired*
   speed-up, the median over the rounds of (the anchor's run) / (this run) in
   the same round, which a machine whose speed drifts between rounds (a
   shared VM) moves much less than the ratio of two medians.
"""

from __future__ import annotations

import gc
import hashlib
import os
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Callable

from ..arith.base import ParameterError
from ..inttext import brief, parse_int
from . import anchors as anchors_mod
from .impls import ANCHOR, OURS, EngineImpl, Gmpy2Impl, Impl, ImplFailed, PipeImpl

SCHEMA = "modforge.bench.vdf/1"
DEFAULT_BITS = (1024, 2048, 3072, 4096)
# The native backends the engine is meant to have; a missing one is reported.
EXPECTED_BACKENDS = ("portable", "adx", "ifma", "avx512f", "fma", "avx2")
# Anchors the ratios are taken against (the fastest of these, per width).
REFERENCE_ANCHORS = anchors_mod.NATIVE_ANCHORS
FALLBACK_REFERENCE = Gmpy2Impl.name
# Below this CPU-time / wall-time share a run is suspicious (work on another
# thread escapes the thread CPU clock) and is reported under "warnings".
CPU_SHARE_FLOOR = 0.25

Notice = Callable[[str], None]


@dataclass(frozen=True)
class VdfBenchParams:
    """One benchmark's settings; everything else is derived from them."""

    bits: tuple[int, ...] = DEFAULT_BITS
    repeats: int = 7
    seconds: float = 0.3      # target duration of one run (k squarings) on `clock`
    pin: bool = True          # pin to one core (os.sched_setaffinity) when the OS allows it
    clock: str = "cpu"        # what the figures count: "cpu" (thread CPU time) or "wall"
    min_k: int = 16           # never fewer squarings per run

    def __post_init__(self) -> None:
        if not self.bits:
            raise ParameterError("bits", "give at least one width")
        for b in self.bits:
            if not isinstance(b, int) or not 64 <= b <= 16384:
                raise ParameterError("bits", f"each width must be an integer from 64 to 16384, got {brief(b)}")
        if len(set(self.bits)) != len(self.bits):
            raise ParameterError("bits", f"widths repeat: {', '.join(map(str, self.bits))}")
        if not isinstance(self.repeats, int) or self.repeats < 1:
            raise ParameterError("repeats", f"must be at least 1, got {self.repeats!r}")
        if not self.seconds > 0 or self.seconds > 60:
            raise ParameterError("seconds", f"must be in (0, 60], got {self.seconds!r}")
        if self.clock not in ("cpu", "wall"):
            raise ParameterError("clock", f"must be 'cpu' or 'wall', got {self.clock!r}")
        if self.min_k < 1:
            raise ParameterError("min_k", f"must be at least 1, got {self.min_k!r}")

    @property
    def target_ns(self) -> int:
        return int(self.seconds * 1e9)


def parse_bits(text: str) -> tuple[int, ...]:
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.append(parse_int(part, "bits"))
        except ParameterError as exc:
            raise ParameterError("bits", f"not a comma-separated list of integers: {brief(text)} ({exc.problem})") \
                from None
    return tuple(out)


# ---------------------------------------------------------------- inputs


def modulus_for(bits: int) -> tuple[int, str]:
    """The fixed modulus of a width, and where it comes from."""
    from ..data import deterministic_modulus, vdf_alliance_modulus

    if bits == 1024:
        n = vdf_alliance_modulus()
        if n.bit_length() == 1024:
            return n, "vdf_alliance_2019"
    return deterministic_modulus(bits), f"deterministic_modulus({bits}, seed=0)"


def base_for(bits: int, modulus: int) -> int:
    """A fixed base 1 < x < N with no structure (SHA-256 stream of the width)."""
    stream = b""
    counter = 0
    while len(stream) * 8 < bits + 64:
        stream += hashlib.sha256(f"modforge-bench-x:{bits}:{counter}".encode()).digest()
        counter += 1
    x = int.from_bytes(stream, "big") % modulus
    return x if x > 1 else 3


def oracle(x: int, k: int, modulus: int) -> int:
    import gmpy2

    return int(gmpy2.powmod(x, gmpy2.mpz(1) << k, modulus))


# ---------------------------------------------------------------- statistics


def summarize(samples: list[float]) -> dict:
    """Median and spread (min, max, quartiles) of ns-per-squaring samples."""
    if not samples:
        raise ValueError("no samples")
    s = sorted(samples)
    if len(s) >= 2:
        q1, _, q3 = statistics.quantiles(s, n=4, method="inclusive")
    else:
        q1 = q3 = s[0]
    median = statistics.median(s)
    return {"median": median, "min": s[0], "max": s[-1], "q1": q1, "q3": q3,
            "rel_range": (s[-1] - s[0]) / median if median else None}


def paired_ratios(reference: list[float], samples: list[float]) -> list[float]:
    """Per-round speed-ups: round i's reference run over round i's run (both lists in round order)."""
    return [a / b for a, b in zip(reference, samples) if b > 0]


def add_ratios(rows: list[dict]) -> dict[int, str | None]:
    """Set ``ratio_vs_best_anchor`` on every row; return each width's reference anchor.

    The reference is the fastest (lowest median) of the natively built anchors
    at that width; without any, gmpy2 stands in, and the rows say so.  Rows
    with per-round ``samples`` (one per round, in round order, as the run
    records them) also get ``paired_ratio_vs_best_anchor``, the median of the
    per-round speed-ups, and ``paired_ratio_range`` (their min and max).
    """
    best: dict[int, str | None] = {}
    for bits in sorted({r["bits"] for r in rows}):
        at = [r for r in rows if r["bits"] == bits]
        pool = [r for r in at if r["impl"] in REFERENCE_ANCHORS] or \
               [r for r in at if r["impl"] == FALLBACK_REFERENCE]
        ref = min(pool, key=lambda r: r["ns_per_sqr_median"]) if pool else None
        best[bits] = ref["impl"] if ref else None
        for r in at:
            r["ratio_reference"] = best[bits]
            r["ratio_vs_best_anchor"] = (ref["ns_per_sqr_median"] / r["ns_per_sqr_median"]) if ref else None
            pairs = (paired_ratios(ref["samples"], r["samples"])
                     if ref and ref.get("samples") and len(ref["samples"]) == len(r.get("samples") or ()) else [])
            r["paired_ratio_vs_best_anchor"] = statistics.median(pairs) if pairs else None
            r["paired_ratio_range"] = [min(pairs), max(pairs)] if pairs else None
    return best


# ---------------------------------------------------------------- implementations


def engine_impls() -> tuple[list[Impl], list[dict]]:
    """Every engine backend this machine runs; a notice for each expected one that it does not."""
    from ..engine import available_backends, backend_names

    available = available_backends()
    impls: list[Impl] = [EngineImpl(name) for name in available]
    skipped = []
    # "auto" is a choice, not a backend; "sim:<design>" runs a simulated RTL design (not a speed target).
    registered = [n for n in backend_names() if n != "auto" and not n.startswith("sim:") and "<" not in n]
    for name in registered:
        if name not in available:
            skipped.append({"impl": f"engine-{name}", "why": "backend registered but not supported here "
                                                             "(CPU lacks its instructions, or it did not load)"})
    for name in EXPECTED_BACKENDS:
        if name not in registered:
            skipped.append({"impl": f"engine-{name}", "why": "backend not in this build of the engine yet"})
    return impls, skipped


def gather_impls(env: anchors_mod.AnchorEnv | None, notice: Notice) -> tuple[list[Impl], list[dict]]:
    """Ours, gmpy2 and the native anchors (``env=None``: no native anchors)."""
    impls, skipped = engine_impls()
    impls.append(Gmpy2Impl())
    if env is None:
        skipped += [{"impl": name, "why": "native anchors not requested"} for name in anchors_mod.NATIVE_ANCHORS]
        return impls, skipped
    programs, unavailable = anchors_mod.collect(env, notice)
    for p in programs:
        impls.append(PipeImpl(p.name, p.argv, p.detail, p.build))
    for exc in unavailable:
        skipped += [{"impl": name, "why": exc.why} for name in exc.impls]
    return impls, skipped


# ---------------------------------------------------------------- measuring


def _loadavg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


class _Pinned:
    """Pin this process to one CPU for the duration (children started inside inherit it)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.cpu: int | None = None
        self._saved: set[int] | None = None

    def __enter__(self) -> "_Pinned":
        if self.enabled and hasattr(os, "sched_setaffinity"):
            try:
                self._saved = os.sched_getaffinity(0)
                self.cpu = max(self._saved)  # the last one: cpu 0 takes most interrupts
                os.sched_setaffinity(0, {self.cpu})
            except OSError:
                self.cpu = None
        return self

    def pin_child(self, pid: int | None) -> None:
        if self.cpu is not None and pid is not None:
            try:
                os.sched_setaffinity(pid, {self.cpu})
            except OSError:
                pass

    def __exit__(self, *exc: object) -> None:
        if self._saved is not None:
            try:
                os.sched_setaffinity(0, self._saved)
            except OSError:
                pass


def calibrate(impl: Impl, x: int, target_ns: int, min_k: int, clock: str = "cpu") -> int:
    """Squarings per run so that one run lasts about ``target_ns`` on ``clock`` (runs until it knows)."""
    k = min_k
    while True:
        wall, cpu, _ = impl.run(x, k)
        ns = cpu if clock == "cpu" else wall
        ns = max(ns, 1)
        if ns >= target_ns / 4 or k >= 1 << 40:
            break
        k = k * max(2, min(64, int(target_ns / 4 / ns) + 1))
    return max(min_k, round(k * target_ns / ns))


class Progress:
    """What the runner reports to; the CLI plugs a rich progress bar in."""

    def start(self, total: int) -> None: ...

    def step(self, what: str) -> None: ...


def run_vdf_bench(params: VdfBenchParams, impls: list[Impl], skipped: list[dict] | None = None,
                  progress: Progress | None = None, notice: Notice | None = None) -> dict:
    """Measure every implementation at every width; return the JSON-ready document.

    ``doc["errors"]`` lists every result that disagreed with gmpy2 (the caller
    exits 1 when it is not empty).  Implementations that fail at a width are
    recorded under ``skipped`` and left out of that width (or, if their process
    died, of the rest of the run).
    """
    from .machine import git_commit, machine_info

    progress = progress or Progress()
    notice = notice or (lambda _msg: None)
    skipped = list(skipped or [])
    errors: list[dict] = []
    warnings: list[dict] = []
    rows: list[dict] = []
    widths: list[dict] = []
    live = list(impls)
    progress.start(len(params.bits) * len(live) * (params.repeats + 2))
    started = time.time()
    load_start = _loadavg()

    with _Pinned(params.pin) as pinned:
        for impl in list(live):
            if isinstance(impl, PipeImpl):
                try:
                    impl.start()
                except ImplFailed as exc:
                    skipped.append({"impl": impl.name, "why": str(exc)})
                    notice(f"skipped {impl.name}: {exc}")
                    impl.close()
                    live.remove(impl)
                    continue
                pinned.pin_child(impl.pid)
        gc_was = gc.isenabled()
        gc.disable()
        try:
            for bits in params.bits:
                modulus, source = modulus_for(bits)
                x = base_for(bits, modulus)
                here: list[tuple[Impl, int]] = []
                def failure(impl: Impl, exc: ImplFailed, running: bool) -> None:
                    # A backend of ours that breaks while squaring is a bug (an error, exit 1);
                    # one that refuses a width, or an outside anchor that breaks, is skipped.
                    if running and impl.kind == OURS:
                        errors.append({"bits": bits, "impl": impl.name, "why": f"{impl.name} failed at {bits} "
                                                                                f"bits: {exc}"})
                    else:
                        skipped.append({"impl": impl.name, "bits": bits, "why": str(exc)})
                        notice(f"skipped {impl.name} at {bits} bits: {exc}")
                    if isinstance(impl, PipeImpl) and impl in live:
                        live.remove(impl)

                for impl in list(live):
                    try:
                        impl.prepare(modulus)
                    except ImplFailed as exc:
                        failure(impl, exc, running=False)
                        continue
                    try:
                        here.append((impl, calibrate(impl, x, params.target_ns, params.min_k, params.clock)))
                    except ImplFailed as exc:
                        failure(impl, exc, running=True)
                    progress.step(f"{bits} bits: calibrating {impl.name}")
                samples: dict[str, dict[str, list[float]]] = {i.name: {"wall": [], "cpu": []} for i, _ in here}
                results: dict[str, set[int]] = {i.name: set() for i, _ in here}
                failed: set[str] = set()
                for rnd in range(params.repeats):
                    shift = rnd % len(here) if here else 0
                    for impl, k in here[shift:] + here[:shift]:
                        if impl.name in failed:
                            continue
                        try:
                            wall, cpu, value = impl.run(x, k)
                        except ImplFailed as exc:
                            failed.add(impl.name)
                            failure(impl, exc, running=True)
                            continue
                        samples[impl.name]["wall"].append(wall / k)
                        samples[impl.name]["cpu"].append(cpu / k)
                        results[impl.name].add(value)
                        progress.step(f"{bits} bits: round {rnd + 1}/{params.repeats}, {impl.name}")
                for impl, k in here:
                    if impl.name in failed:
                        continue
                    expected = oracle(x, k, modulus)
                    wrong = sorted(v for v in results[impl.name] if v != expected)
                    progress.step(f"{bits} bits: checking {impl.name}")
                    if wrong:
                        errors.append({"bits": bits, "impl": impl.name, "k": k, "x": hex(x),
                                       "expected": hex(expected), "got": [hex(v) for v in wrong[:3]],
                                       "why": f"{impl.name} disagrees with gmpy2 at {bits} bits "
                                              f"(x^(2^{k}) mod N)"})
                        continue
                    mine = samples[impl.name]
                    st = summarize(mine[params.clock])
                    other = "wall" if params.clock == "cpu" else "cpu"
                    cpu_share = statistics.median(mine["cpu"]) / max(statistics.median(mine["wall"]), 1e-9)
                    if cpu_share < CPU_SHARE_FLOOR:
                        warnings.append({"bits": bits, "impl": impl.name,
                                         "why": f"its thread's CPU time is {cpu_share:.0%} of the wall time: it may "
                                                "compute on another thread (CPU-time figures would flatter it; "
                                                "compare with --clock wall) or the machine is overloaded"})
                    rows.append({
                        "bits": bits, "impl": impl.name, "kind": impl.kind, "detail": impl.detail,
                        "k": k, "runs": len(mine[params.clock]), "clock": params.clock,
                        "ns_per_sqr_median": st["median"],
                        "spread": {key: st[key] for key in ("min", "max", "q1", "q3", "rel_range")},
                        f"{other}_ns_per_sqr_median": statistics.median(mine[other]),
                        "cpu_over_wall": cpu_share,
                        "samples": mine[params.clock], "verified": True,
                    })
                widths.append({"bits": bits, "modulus_source": source, "modulus": hex(modulus), "x": hex(x)})
        finally:
            if gc_was:
                gc.enable()
            for impl in impls:
                impl.close()

    best = add_ratios(rows)
    for w in widths:
        w["best_anchor"] = best.get(w["bits"])
    anchors_seen = {}
    for impl in impls:
        if impl.kind == ANCHOR and any(r["impl"] == impl.name for r in rows):
            anchors_seen[impl.name] = {"impl": impl.name, "detail": impl.detail, "version": impl.version,
                                       "build": getattr(impl, "build", {})}
    return {
        "schema": SCHEMA,
        "machine": machine_info(os.environ.get("CC") or "cc"),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "commit": git_commit(),
        "params": asdict(params) | {"bits": list(params.bits)},
        "pinned_cpu": pinned.cpu,
        # 1-minute load average before and after: figures taken on a busy machine say so.
        "load_average": {"start": load_start, "end": _loadavg()},
        "widths": widths,
        "anchors": list(anchors_seen.values()),
        "results": rows,
        "skipped": skipped,
        "errors": errors,
        "warnings": warnings,
        "ratio_definition": "ratio_vs_best_anchor = median ns/sqr of ratio_reference / median ns/sqr of impl "
                            "(speed-up over the fastest natively built anchor; >1 is faster); "
                            "paired_ratio_vs_best_anchor = median over rounds of ratio_reference's run / impl's "
                            "run in the same round (paired_ratio_range: their min and max)",
    }

