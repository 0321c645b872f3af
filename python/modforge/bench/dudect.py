"""``bench ct``: a dudect-style statistical timing test of the RSA private-key path.

Method (Reparaz, Balasch, Verbauwhede, "Dude, is my code constant time?",
DATE 2017): time the operation many times on inputs drawn from two classes,

* class 0, *fixed*: one value chosen once (for ``--target exponent``: the
  exponent 0, every window digit zero);
* class 1, *random*: a fresh uniformly random value for every measurement;

with the class of each measurement chosen by a coin flip (so drifts of the
machine fall on both classes), and compare the two timing distributions with
Welch's t-test.  |t| above 4.5 (dudect's threshold) says the classes are told
apart by timing: the code leaks.  As in dudect the test is also applied to
the measurements cropped at a few percentiles of the pooled distribution
(large outliers from interrupts and neighbours hide small differences), and
the largest |t| counts.  t grows like sqrt(samples) when there is a real
difference, so it is reported at increasing sample counts.

Targets:

* ``input``: the whole checked private operation
  (:func:`modforge.rsa.private_op`: blinding, the two CRT halves, Garner,
  the fault check) on a fixed vs a random representative ``c < n``;
* ``kernel-input``: the kernel alone (:func:`modforge.rsa.exp.resolve_backend`,
  no Garner recombination or fault check in CPython around it), blinding off,
  on a fixed vs a random ``c``;
* ``exponent``: the kernel alone, blinding off, on a fixed random ``c`` and
  the secret exponents ``dp, dq`` fixed at ``2**(exp_bits-1)`` (every window
  digit zero but the top one) vs random with the top bit set.  Both classes
  have the same length, so the conversion of Python integers at the kernel's
  boundary (whose cost depends on the integer's length, a public quantity in
  real use, where blinded exponents always have ``exp_bits`` bits) does not
  show up as a difference.

This is a benchmark, not a CI test: its outcome depends on the machine's
noise, and a meaningful run takes minutes.  A pass at N samples means no
leak large enough to show at N, not that there is none.
"""

from __future__ import annotations

import gc
import math
import os
import time
from dataclasses import dataclass, field
from typing import Callable

from ..arith.base import ParameterError

SCHEMA = "modforge.bench.ct/1"
THRESHOLD = 4.5
CROP_PERCENTILES = (50.0, 90.0, 99.0)
TARGETS = ("input", "kernel-input", "exponent")

Notice = Callable[[str], None]


# ------------------------------------------------------------------------------------------ statistics


@dataclass
class Welford:
    """Running count, mean and sum of squared deviations (numerically stable)."""

    n: int = 0
    mean: float = 0.0
    m2: float = 0.0

    def push(self, x: float) -> None:
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (x - self.mean)

    @property
    def var(self) -> float:
        """Sample variance (n - 1 in the denominator); 0 below two samples."""
        return self.m2 / (self.n - 1) if self.n > 1 else 0.0


def welch_t_from(a: Welford, b: Welford) -> float:
    """Welch's t statistic ``(mean_a - mean_b) / sqrt(var_a/n_a + var_b/n_b)``.

    0.0 when either class has fewer than two samples or both variances are 0
    with equal means; +-inf when the variances are 0 and the means differ.
    """
    if a.n < 2 or b.n < 2:
        return 0.0
    se2 = a.var / a.n + b.var / b.n
    diff = a.mean - b.mean
    if se2 == 0.0:
        return 0.0 if diff == 0 else math.copysign(math.inf, diff)
    return diff / math.sqrt(se2)


def welch_t(a: list[float], b: list[float]) -> float:
    """Welch's t statistic of two samples (see :func:`welch_t_from`)."""
    wa, wb = Welford(), Welford()
    for x in a:
        wa.push(x)
    for x in b:
        wb.push(x)
    return welch_t_from(wa, wb)


def percentile(sorted_values: list[float], pct: float) -> float:
    """Linear-interpolation percentile of already sorted values."""
    if not sorted_values:
        raise ValueError("no values")
    pos = (len(sorted_values) - 1) * pct / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def t_statistics(classes: list[int], times: list[float],
                 crops: tuple[float, ...] = CROP_PERCENTILES) -> dict:
    """t over all measurements and over those below each crop percentile of the pooled times.

    Returns ``{"raw": t, "p50": t, ..., "max_abs_t": m, "worst": name}``.
    """
    if len(classes) != len(times):
        raise ValueError("classes and times differ in length")
    out: dict = {}
    pooled = sorted(times)
    cuts = [("raw", math.inf)] + [(f"p{pct:g}", percentile(pooled, pct)) for pct in crops] if pooled else []
    for name, cut in cuts:
        acc = (Welford(), Welford())
        for c, t in zip(classes, times):
            if t <= cut:
                acc[c].push(t)
        out[name] = welch_t_from(*acc)
    worst = max(cuts, key=lambda nc: abs(out[nc[0]]))[0] if cuts else None
    out["max_abs_t"] = abs(out[worst]) if worst else 0.0
    out["worst"] = worst
    return out


def checkpoints(total: int, first: int = 100) -> list[int]:
    """Sample counts at which t is reported: first, 2x, 5x, 10x, ... and ``total``."""
    marks: list[int] = []
    base = first
    while base < total:
        for f in (1, 2, 5):
            if base * f < total:
                marks.append(base * f)
        base *= 10
    marks.append(total)
    return sorted(set(marks))


# ------------------------------------------------------------------------------------------ the test


@dataclass(frozen=True)
class CtParams:
    bits: int = 1024
    samples: int = 2000
    max_seconds: float = 300.0     # stop early (and say so) once this much wall time has passed
    target: str = "input"
    backend: str = "auto"
    clock: str = "cpu"
    seed: int | None = None        # the coin flips (and fixed value) come from secrets unless a seed is given
    pin: bool = True               # pin to one CPU (the highest-numbered allowed) while measuring
    crops: tuple[float, ...] = field(default=CROP_PERCENTILES)

    def __post_init__(self) -> None:
        # Everything is checked here, before the caller loads or generates the key (seconds to minutes).
        from .rsa import check_key_bits

        check_key_bits(self.bits)
        if self.backend != "leaky":
            from ..rsa import exp as rsa_exp

            rsa_exp.backend_name(self.backend)      # unknown, or native without the extension: ParameterError
        if self.target not in TARGETS:
            raise ParameterError("target", f"must be one of {', '.join(TARGETS)}, got {self.target!r}")
        if not isinstance(self.samples, int) or self.samples < 10:
            raise ParameterError("samples", f"must be at least 10, got {self.samples!r}")
        if not self.max_seconds > 0:
            raise ParameterError("seconds", f"must be positive, got {self.max_seconds!r}")
        if self.clock not in ("cpu", "wall"):
            raise ParameterError("clock", f"must be 'cpu' or 'wall', got {self.clock!r}")


def leaky_halves(c: int, p: int, dp: int, q: int, dq: int, exp_bits: int) -> tuple[int, int]:
    """A deliberately leaky kernel (CPython's ``pow``: sliding windows that skip zero bits, and a
    final subtraction on demand).  Used to show that the test detects a leak; never a real backend."""
    return pow(c, dp, p), pow(c, dq, q)


def run_ct(key, params: CtParams, notice: Notice | None = None) -> dict:
    """Run the test on ``key`` (a :class:`modforge.rsa.RSAPrivateKey`); return the JSON-ready document."""
    import random

    from ..rsa import exp as rsa_exp
    from ..rsa.primitives import private_op
    from .machine import git_commit, machine_info

    notice = notice or (lambda _m: None)
    rng = random.Random(params.seed) if params.seed is not None else random.SystemRandom()
    temp_backend = None
    backend = params.backend
    if backend == "leaky":
        temp_backend = "_bench_ct_leaky"
        rsa_exp.register_backend(temp_backend, leaky_halves)
        backend = temp_backend
    try:
        kernel = rsa_exp.resolve_backend(backend)
        kernel_name = "leaky (CPython pow, test only)" if temp_backend else rsa_exp.backend_name(backend)
        n = key.n
        exp_bits = rsa_exp.exponent_bits(key, 0)
        fixed_c = rng.randrange(2, n - 1)
        clock = time.thread_time_ns if params.clock == "cpu" else time.perf_counter_ns

        top = 1 << (exp_bits - 1)
        # Both classes are prepared by the same steps: draw a random value (kept for class 1, dropped for
        # class 0), then build a *fresh* int object from bytes.  Reusing one object for the fixed class
        # would leave it hot in the cache while random inputs arrive cold, and that alone shows up as a
        # "leak" of a few hundred ns at the kernel's boundary.
        def fresh(value: int) -> int:
            return int.from_bytes(value.to_bytes((value.bit_length() + 7) // 8 or 1, "big"), "big")

        if params.target in ("input", "kernel-input"):
            def prepare(cls: int):
                r = rng.randrange(0, n)
                return fresh(fixed_c if cls == 0 else r)
        else:
            def prepare(cls: int):
                r1, r2 = rng.getrandbits(exp_bits) | top, rng.getrandbits(exp_bits) | top
                return (fresh(top), fresh(top)) if cls == 0 else (fresh(r1), fresh(r2))

        if params.target == "input":
            def op(arg) -> None:
                private_op(key, arg, backend=backend)
        elif params.target == "kernel-input":
            def op(arg) -> None:
                kernel(arg, key.p, key.dp, key.q, key.dq, exp_bits)
        else:
            def op(arg) -> None:
                kernel(fixed_c, key.p, arg[0], key.q, arg[1], exp_bits)

        for _ in range(5):                                      # warm-up, not recorded
            op(prepare(rng.getrandbits(1)))
        marks = checkpoints(params.samples)
        classes: list[int] = []
        times: list[float] = []
        progress: list[dict] = []
        started = time.time()
        deadline = time.monotonic() + params.max_seconds
        from .rsa import _pin

        pinned_cpu, saved_affinity = _pin(params.pin)
        stopped_early = False
        gc_was = gc.isenabled()
        gc.disable()
        try:
            for i in range(params.samples):
                cls = rng.getrandbits(1)
                arg = prepare(cls)
                t0 = clock()
                op(arg)
                t1 = clock()
                classes.append(cls)
                times.append(float(t1 - t0))
                if i + 1 in marks or time.monotonic() > deadline:
                    st = t_statistics(classes, times, params.crops)
                    progress.append({"samples": i + 1, "fixed": classes.count(0), "random": classes.count(1),
                                     **{k: (round(v, 3) if isinstance(v, float) else v) for k, v in st.items()}})
                    notice(f"{i + 1} samples: max |t| = {st['max_abs_t']:.2f} ({st['worst']})")
                    if time.monotonic() > deadline and i + 1 < params.samples:
                        stopped_early = True
                        break
        finally:
            if gc_was:
                gc.enable()
            if saved_affinity is not None:
                try:
                    os.sched_setaffinity(0, saved_affinity)
                except OSError:
                    pass
    finally:
        if temp_backend:
            rsa_exp.unregister_backend(temp_backend)

    final = progress[-1]
    mean = {c: (sum(t for k, t in zip(classes, times) if k == c) / max(classes.count(c), 1)) for c in (0, 1)}
    return {
        "schema": SCHEMA,
        "machine": machine_info(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "commit": git_commit(),
        "params": {"bits": params.bits, "samples": params.samples, "max_seconds": params.max_seconds,
                   "target": params.target, "backend": params.backend, "clock": params.clock,
                   "crops": list(params.crops), "threshold": THRESHOLD, "pin": params.pin},
        "kernel": kernel_name,
        "pinned_cpu": pinned_cpu,
        "exp_bits": exp_bits,
        "samples": len(times),
        "stopped_early": stopped_early,
        "mean_ns": {"fixed": round(mean[0], 1), "random": round(mean[1], 1)},
        "progress": progress,
        "max_abs_t": final["max_abs_t"],
        "leak_detected": final["max_abs_t"] > THRESHOLD,
        "verdict": (f"LEAK: |t| = {final['max_abs_t']:.2f} > {THRESHOLD}" if final["max_abs_t"] > THRESHOLD else
                    f"no leak detected at {len(times)} samples (|t| = {final['max_abs_t']:.2f} <= {THRESHOLD})"),
    }
