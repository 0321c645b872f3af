"""``bench rsa``: RSA private operations per second per core, ours beside OpenSSL and ``cryptography``.

Per key size, in one run, round-robin over ``repeats`` rounds (the order
rotated each round), the process pinned to one CPU (children inherit it):

* ``modforge`` (ours): ``modforge.rsa.sign(key, msg, "pkcs1v15", "sha256")``
  - EMSA-PKCS1-v1_5 encoding, then the checked CRT private operation through
  the kernel ``--backend`` resolves to (``auto``: the native constant-time
  kernel when the engine has it, else the Python one; the document names the
  kernel that ran), exponent blinding on as in normal use;
* ``openssl-speed``: ``openssl speed -seconds S rsaNNNN`` (one process, its
  own key, ``EVP_PKEY_sign`` with PKCS#1 v1.5 padding of a 36-byte input); we
  parse the ``sign/s`` column, which OpenSSL computes over the process's *user
  CPU time*: the figure to set beside our thread CPU time;
* ``openssl-speed-multi1``: the same with ``-multi 1`` (one forked child).
  OpenSSL 3.0's ``-multi`` children divide by *elapsed* time (as ``-elapsed``
  does), so on a loaded machine this figure drops with the load; it is the
  reference for ``--clock wall`` and is kept for comparison otherwise;
* ``cryptography``: a loop of ``private_key.sign(msg, PKCS1v15(), SHA256())``
  (OpenSSL's libcrypto underneath, through the EVP layer).

All three do PKCS#1 v1.5 signatures, so the figures compare like with like.
Ours and cryptography are timed in-process by the thread's CPU time (default;
``--clock wall`` for the wall clock, JSON carries both): a loop of signatures
until ``seconds`` have passed, ops/s = count / time.  Every signature ours
makes is verified with ``cryptography`` after the loop and before the round
counts; a failure is an error (the command exits 1).

Keys are generated once per size with ``cryptography`` (e = 65537) and cached
as PKCS#8 PEM (mode 0600) in ``$MODFORGE_BENCH_CACHE/rsa-keys`` (the variable defaults to
``$XDG_CACHE_HOME/modforge``, as for the anchors), never in the source tree.
"""

from __future__ import annotations

import gc
import os
import re
import shutil
import statistics
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Mapping

from ..arith.base import ParameterError
from ..inttext import brief

SCHEMA = "modforge.bench.rsa/1"
DEFAULT_BITS = (2048, 3072, 4096)
OURS = "modforge"
OPENSSL = "openssl-speed"
OPENSSL_MULTI = "openssl-speed-multi1"
OPENSSL_IMPLS = (OPENSSL, OPENSSL_MULTI)
CRYPTOGRAPHY = "cryptography"
PADDING = "PKCS#1 v1.5, SHA-256"

Notice = Callable[[str], None]


def check_key_bits(bits: int, what: str = "the key size") -> int:
    """A size the RSA code takes; checked before a key of it is generated (an 8192-bit one took minutes
    and was then refused, and cryptography raised below 1024)."""
    if not isinstance(bits, int) or isinstance(bits, bool) or not 1024 <= bits <= 4096 or bits % 8:
        raise ParameterError("bits", f"{what} must be a multiple of 8 from 1024 to 4096, got {brief(bits)}")
    return bits


@dataclass(frozen=True)
class RsaBenchParams:
    bits: tuple[int, ...] = DEFAULT_BITS
    seconds: float = 2.0       # per implementation, size and round
    repeats: int = 3
    openssl: bool = True       # run `openssl speed` (tests turn it off)
    openssl_multi: bool = True # also `openssl speed -multi 1` (wall-clock figure)
    cryptography: bool = True
    pin: bool = True
    clock: str = "cpu"
    backend: str = "auto"

    def __post_init__(self) -> None:
        if not self.bits:
            raise ParameterError("bits", "give at least one key size")
        for b in self.bits:
            check_key_bits(b, "each key size")
        if len(set(self.bits)) != len(self.bits):
            raise ParameterError("bits", f"sizes repeat: {', '.join(map(str, self.bits))}")
        if not isinstance(self.repeats, int) or self.repeats < 1:
            raise ParameterError("repeats", f"must be at least 1, got {self.repeats!r}")
        if not self.seconds > 0 or self.seconds > 600:
            raise ParameterError("seconds", f"must be in (0, 600], got {self.seconds!r}")
        if self.clock not in ("cpu", "wall"):
            raise ParameterError("clock", f"must be 'cpu' or 'wall', got {self.clock!r}")

    @property
    def openssl_seconds(self) -> int:
        """`openssl speed -seconds` takes whole seconds."""
        return max(1, round(self.seconds))


# ------------------------------------------------------------------------------------ keys


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    from .anchors import bench_cache_dir

    return bench_cache_dir("rsa-keys", environ)


def bench_key(bits: int, directory: Path | None = None, notice: Notice | None = None):
    """The cached key of ``bits`` bits (generated with ``cryptography`` on first use): (our key, theirs, path)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    from ..rsa import load_private_key

    directory = directory or cache_dir()
    path = directory / f"rsa-{bits}.pem"
    if not path.exists():
        (notice or (lambda _m: None))(f"generating a {bits}-bit key into {path}")
        directory.mkdir(parents=True, exist_ok=True)
        key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
        os.replace(tmp, path)
    data = path.read_bytes()
    ours = load_private_key(data)
    if ours.bits != bits:
        raise ParameterError("key", f"cached key {path} is {ours.bits} bits, not {bits}: delete it")
    theirs = serialization.load_pem_private_key(data, password=None)
    return ours, theirs, path


# ------------------------------------------------------------------------------------ openssl speed

_TABLE_ROW = re.compile(r"^rsa\s+(\d+)\s+bits\s+([\d.]+)s\s+([\d.]+)s\s+([\d.]+)\s+([\d.]+)\s*$", re.M)
_MULTI_ROW = re.compile(r"^Got: \+F2:\d+:(\d+):([\d.]+):([\d.]+)", re.M)


def parse_openssl_speed(text: str) -> dict[int, dict]:
    """``{bits: {"sign_per_s", "verify_per_s", "sign_s", "verify_s"}}`` from `openssl speed rsa...` output.

    Reads the final table (``rsa 2048 bits 0.000290s 0.000008s 3452.1 118000.2``);
    when it is missing, the ``Got: +F2:...`` lines that ``-multi`` children report.
    """
    out: dict[int, dict] = {}
    for m in _TABLE_ROW.finditer(text):
        out[int(m.group(1))] = {"sign_s": float(m.group(2)), "verify_s": float(m.group(3)),
                                "sign_per_s": float(m.group(4)), "verify_per_s": float(m.group(5))}
    if not out:
        for m in _MULTI_ROW.finditer(text):
            sign, verify = float(m.group(2)), float(m.group(3))
            out[int(m.group(1))] = {"sign_per_s": sign, "verify_per_s": verify,
                                    "sign_s": 1 / sign if sign else None, "verify_s": 1 / verify if verify else None}
    return out


def openssl_version() -> str | None:
    exe = shutil.which("openssl")
    if exe is None:
        return None
    try:
        res = subprocess.run([exe, "version"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return res.stdout.strip() or None


class OpensslFailed(Exception):
    pass


def openssl_argv(bits: int, seconds: int, multi: bool) -> list[str]:
    return ["openssl", "speed", "-seconds", str(seconds), *(["-multi", "1"] if multi else []), f"rsa{bits}"]


def run_openssl_speed(bits: int, seconds: int, cpu: int | None, multi: bool = False) -> tuple[float, str]:
    """``(sign/s, argv as text)`` of one `openssl speed -seconds S [-multi 1] rsaBITS` run, pinned to ``cpu``."""
    exe = shutil.which("openssl")
    if exe is None:
        raise OpensslFailed("openssl is not on PATH")
    argv = [exe, *openssl_argv(bits, seconds, multi)[1:]]
    if cpu is not None and shutil.which("taskset"):
        argv = ["taskset", "-c", str(cpu), *argv]
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=4 * seconds + 120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OpensslFailed(f"{' '.join(argv)}: {exc}") from None
    parsed = parse_openssl_speed(res.stdout + "\n" + res.stderr)
    if res.returncode != 0 or bits not in parsed or not parsed[bits]["sign_per_s"]:
        tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["no output"]
        raise OpensslFailed(f"`{' '.join(argv)}` gave no rsa{bits} sign/s (exit {res.returncode}: {tail[0]})")
    return parsed[bits]["sign_per_s"], " ".join(argv)


# ------------------------------------------------------------------------------------ in-process loops


class WrongSignature(Exception):
    pass


def _message(bits: int, i: int) -> bytes:
    return f"modforge bench rsa {bits} #{i}".encode()


def timed_loop(sign_one: Callable[[int], bytes], seconds: float, clock: str, start_index: int = 0
               ) -> tuple[int, int, int, list[tuple[int, bytes]]]:
    """Sign until ``seconds`` of ``clock`` have passed: (ops, cpu_ns, wall_ns, [(index, signature)])."""
    target = int(seconds * 1e9)
    sigs: list[tuple[int, bytes]] = []
    i = start_index
    w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
    while True:
        sigs.append((i, sign_one(i)))
        i += 1
        w, c = time.perf_counter_ns(), time.thread_time_ns()
        if (c - c0 if clock == "cpu" else w - w0) >= target:
            return len(sigs), c - c0, w - w0, sigs


def summarize(samples: list[float]) -> dict:
    s = sorted(samples)
    q1, q3 = (statistics.quantiles(s, n=4, method="inclusive")[::2] if len(s) >= 2 else (s[0], s[0]))
    med = statistics.median(s)
    return {"median": med, "min": s[0], "max": s[-1], "q1": q1, "q3": q3,
            "rel_range": (s[-1] - s[0]) / med if med else None}


def add_ratios(rows: list[dict], clock: str = "cpu") -> None:
    """Speed ratios of every row (>1: faster): ``ratio_vs[impl]`` = this median ops/s / that one's, for
    every other implementation at the size; ``ratio_vs_openssl`` against the OpenSSL figure on the same
    clock (``openssl-speed``, user CPU time, for ``cpu``; ``openssl-speed-multi1``, elapsed, for ``wall``)
    and ``ratio_vs_cryptography``."""
    openssl_ref = OPENSSL if clock == "cpu" else OPENSSL_MULTI
    for bits in {r["bits"] for r in rows}:
        at = {r["impl"]: r for r in rows if r["bits"] == bits}
        for r in at.values():
            r["ratio_vs"] = {name: r["ops_per_s_median"] / o["ops_per_s_median"]
                             for name, o in at.items() if name != r["impl"] and o["ops_per_s_median"]}
            r["ratio_vs_openssl"] = r["ratio_vs"].get(openssl_ref)
            r["ratio_vs_openssl_reference"] = openssl_ref
            r["ratio_vs_cryptography"] = r["ratio_vs"].get(CRYPTOGRAPHY)


def _cryptography_openssl() -> str | None:
    """The OpenSSL that ``cryptography`` runs on (its wheels bundle their own, often newer than the system's)."""
    try:
        from cryptography.hazmat.backends.openssl.backend import backend

        return backend.openssl_version_text()
    except Exception:  # noqa: BLE001 - informational only
        return None


def _loadavg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _pin(enabled: bool) -> tuple[int | None, set[int] | None]:
    if not enabled or not hasattr(os, "sched_setaffinity"):
        return None, None
    try:
        saved = os.sched_getaffinity(0)
        cpu = max(saved)
        os.sched_setaffinity(0, {cpu})
        return cpu, saved
    except OSError:
        return None, None


def run_rsa_bench(params: RsaBenchParams, key_dir: Path | None = None, notice: Notice | None = None,
                  step: Callable[[str], None] | None = None) -> dict:
    """Measure; return the JSON-ready document (``errors`` non-empty: the caller exits 1)."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    from ..rsa import exp as rsa_exp
    from ..rsa import sign
    from .machine import git_commit, machine_info

    notice = notice or (lambda _m: None)
    step = step or (lambda _m: None)
    kernel = rsa_exp.backend_name(params.backend)        # ParameterError when it cannot run
    skipped: list[dict] = []
    errors: list[dict] = []
    rows: list[dict] = []
    keys: list[dict] = []
    if not params.openssl:
        skipped.append({"impl": OPENSSL, "why": "not requested (--no-openssl)"})
    elif shutil.which("openssl") is None:
        skipped.append({"impl": OPENSSL, "why": "openssl is not on PATH"})
    if not params.cryptography:
        skipped.append({"impl": CRYPTOGRAPHY, "why": "not requested (--no-cryptography)"})
    run_openssl = params.openssl and shutil.which("openssl") is not None
    started = time.time()
    load_start = _loadavg()
    cpu, saved = _pin(params.pin)
    other_clock = "wall" if params.clock == "cpu" else "cpu"
    try:
        for bits in params.bits:
            ours_key, their_key, path = bench_key(bits, key_dir, notice)
            pub = their_key.public_key()
            keys.append({"bits": bits, "path": str(path), "e": ours_key.e})
            impls = [OURS] + ([CRYPTOGRAPHY] if params.cryptography else []) + \
                ([OPENSSL] if run_openssl else []) + ([OPENSSL_MULTI] if run_openssl and params.openssl_multi else [])

            def ours_sign(i: int, _k=ours_key, _b=bits) -> bytes:
                return sign(_k, _message(_b, i), "pkcs1v15", "sha256", backend=params.backend)

            def theirs_sign(i: int, _k=their_key, _b=bits) -> bytes:
                return _k.sign(_message(_b, i), padding.PKCS1v15(), hashes.SHA256())

            # warm-up (and a first cross-check: PKCS#1 v1.5 signatures are deterministic)
            if ours_sign(0) != theirs_sign(0):
                errors.append({"bits": bits, "impl": OURS, "why": f"our {bits}-bit PKCS#1 v1.5 signature "
                                                                  "differs from cryptography's"})
                continue
            samples: dict[str, dict[str, list[float]]] = {i: {"cpu": [], "wall": [], "ops": []} for i in impls}
            next_index = 1
            failed: set[str] = set()
            for rnd in range(params.repeats):
                shift = rnd % len(impls)
                for impl in impls[shift:] + impls[:shift]:
                    if impl in failed:
                        continue
                    step(f"{bits} bits: round {rnd + 1}/{params.repeats}, {impl}")
                    if impl in OPENSSL_IMPLS:
                        try:
                            rate, _argv = run_openssl_speed(bits, params.openssl_seconds, cpu, impl == OPENSSL_MULTI)
                        except OpensslFailed as exc:
                            failed.add(impl)
                            skipped.append({"impl": impl, "bits": bits, "why": str(exc)})
                            notice(f"skipped {impl} at {bits} bits: {exc}")
                            continue
                        # plain: OpenSSL divides by user CPU time; -multi: by elapsed time
                        samples[impl]["cpu" if impl == OPENSSL else "wall"].append(rate)
                        continue
                    fn = ours_sign if impl == OURS else theirs_sign
                    gc_was = gc.isenabled()
                    gc.disable()
                    try:
                        ops, cpu_ns, wall_ns, sigs = timed_loop(fn, params.seconds, params.clock, next_index)
                    finally:
                        if gc_was:
                            gc.enable()
                    next_index += ops
                    if impl == OURS:
                        bad = []
                        for i, sig in sigs:
                            try:
                                pub.verify(sig, _message(bits, i), padding.PKCS1v15(), hashes.SHA256())
                            except InvalidSignature:
                                bad.append(i)
                        if bad:
                            failed.add(impl)
                            errors.append({"bits": bits, "impl": OURS, "kernel": kernel, "messages": bad[:5],
                                           "why": f"{len(bad)} of {ops} {bits}-bit signatures by modforge "
                                                  f"({kernel} kernel) do not verify with cryptography"})
                            continue
                    samples[impl]["cpu"].append(ops / (cpu_ns / 1e9))
                    samples[impl]["wall"].append(ops / (wall_ns / 1e9))
                    samples[impl]["ops"].append(ops)
            for impl in impls:
                if impl in failed:
                    continue
                mine = samples[impl]
                clock = {OPENSSL: "cpu", OPENSSL_MULTI: "wall"}.get(impl, params.clock)
                st = summarize(mine[clock])
                row = {
                    "bits": bits, "impl": impl, "kind": "ours" if impl == OURS else "anchor",
                    "detail": {OURS: f"modforge.rsa.sign pkcs1v15/sha256, {kernel} kernel, 64-bit exponent "
                                     "blinding, Bellcore check",
                               CRYPTOGRAPHY: "private_key.sign(PKCS1v15(), SHA256())",
                               OPENSSL: " ".join(openssl_argv(bits, params.openssl_seconds, False)),
                               OPENSSL_MULTI: " ".join(openssl_argv(bits, params.openssl_seconds, True))}[impl],
                    "padding": PADDING if impl not in OPENSSL_IMPLS else
                    "PKCS#1 v1.5 padding of a 36-byte input (EVP_PKEY_sign)",
                    "clock": {OPENSSL: "cpu (openssl's user CPU time of the process)",
                              OPENSSL_MULTI: "wall (openssl -multi: elapsed time)"}.get(impl, params.clock),
                    "runs": len(mine[clock]),
                    "ops_per_s_median": st["median"],
                    "us_per_op_median": 1e6 / st["median"],
                    "spread": {k: st[k] for k in ("min", "max", "q1", "q3", "rel_range")},
                    "samples": mine[clock],
                }
                if impl not in OPENSSL_IMPLS:
                    row[f"{other_clock}_ops_per_s_median"] = statistics.median(mine[other_clock])
                    row["ops_timed"] = sum(mine["ops"])
                if impl == OURS:
                    row["kernel"] = kernel
                    row["verified"] = True
                rows.append(row)
    finally:
        if saved is not None:
            try:
                os.sched_setaffinity(0, saved)
            except OSError:
                pass
    add_ratios(rows, params.clock)
    import cryptography

    return {
        "schema": SCHEMA,
        "machine": machine_info(os.environ.get("CC") or "cc"),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "commit": git_commit(),
        "params": asdict(params) | {"bits": list(params.bits), "openssl_seconds": params.openssl_seconds},
        "pinned_cpu": cpu,
        "load_average": {"start": load_start, "end": _loadavg()},
        "kernel": kernel,
        "versions": {"openssl": openssl_version() if run_openssl else None, "cryptography": cryptography.__version__,
                     "cryptography_openssl": _cryptography_openssl()},
        "keys": keys,
        "results": rows,
        "skipped": skipped,
        "errors": errors,
        "ratio_definition": "ratio_vs[X] = median ops/s of impl / median ops/s of X (>1: faster than X); "
                            "ratio_vs_openssl uses ratio_vs_openssl_reference, the OpenSSL figure on the same clock",
    }


# ------------------------------------------------------------------------------------ printing


def _rounded(value, digits: int = 1):
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: _rounded(v, 3 if (k.startswith("ratio") or k == "rel_range" or k in RATIO_KEYS) else digits)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v, digits) for v in value]
    return value


RATIO_KEYS = (OURS, OPENSSL, OPENSSL_MULTI, CRYPTOGRAPHY)  # keys of ratio_vs


def to_json(doc: dict) -> str:
    """ops/s to 0.1, ratios to 3 decimals."""
    import json

    out = dict(doc)
    out["results"] = _rounded(doc["results"])
    return json.dumps(out, indent=1)


def to_markdown(doc: dict) -> str:
    p = doc["params"]
    m = doc["machine"]
    lines = [f"Measured {doc['date']} at commit `{(doc.get('commit') or '?')[:12]}` on {m['cpu_model']}, "
             f"pinned to CPU {doc.get('pinned_cpu')}, {p['repeats']} rounds of ~{p['seconds']} s per implementation "
             f"(openssl: -seconds {p['openssl_seconds']}); our kernel: `{doc['kernel']}`; ops/s by "
             f"{'thread CPU time' if p['clock'] == 'cpu' else 'wall time'} (openssl: its user CPU time); "
             f"load average {doc['load_average']['start']} -> {doc['load_average']['end']}.", "",
             "| bits | implementation | median ops/s | min - max | IQR | us/op | ours / this |",
             "|---:|---|---:|---:|---:|---:|---:|"]
    for bits in p["bits"]:
        at = [r for r in doc["results"] if r["bits"] == bits]
        ours = next((r for r in at if r["impl"] == OURS), None)
        for r in sorted(at, key=lambda r: -r["ops_per_s_median"]):
            s = r["spread"]
            iqr = (s["q3"] - s["q1"]) / r["ops_per_s_median"] * 100
            ratio = ours["ops_per_s_median"] / r["ops_per_s_median"] if ours else None
            name = f"**{r['impl']}** ({r['kernel']})" if r["impl"] == OURS else r["impl"]
            lines.append(f"| {bits} | {name} | {r['ops_per_s_median']:,.1f} | {s['min']:,.1f} - {s['max']:,.1f} "
                         f"| {iqr:.1f}% | {r['us_per_op_median']:,.0f} | "
                         f"{f'{ratio:.3f}x' if ratio is not None else '-'} |")
    for s in doc["skipped"]:
        lines.append(f"* skipped {s['impl']}{' at %s bits' % s['bits'] if 'bits' in s else ''}: {s['why']}")
    return "\n".join(lines) + "\n"


def _ops(value: float) -> str:
    """Operations per second, to a tenth below 100 (4096-bit keys), whole above."""
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def print_table(doc: dict, console) -> None:
    from rich.table import Table

    p = doc["params"]
    console.print(f"[bold]modforge bench rsa[/bold]  {doc['date']}  commit {(doc.get('commit') or '?')[:12]}  "
                  f"kernel [bold]{doc['kernel']}[/bold]  "
                  + (f"pinned to CPU {doc['pinned_cpu']}" if doc.get("pinned_cpu") is not None else "not pinned")
                  + f"; load {doc['load_average']['start']} -> {doc['load_average']['end']}")
    console.print(f"{p['repeats']} rounds, ~{p['seconds']} s per run; private ops/s per core by "
                  f"{'thread CPU time' if p['clock'] == 'cpu' else 'wall time'} (openssl: its own user-time "
                  f"figure); {PADDING} signatures; every one of ours verified with cryptography; "
                  f"x openssl / x crypto = ours over openssl speed / cryptography")
    from rich import box

    # Short headers and a light box, so the table reads whole in 80 columns (docs/benchmarks.md explains
    # the columns; the Markdown table keeps the long names).
    table = Table(box=box.SIMPLE_HEAD)
    for col, just in (("bits", "right"), ("implementation", "left"), ("ops/s", "right"),
                      ("min - max", "right"), ("us/op", "right"), ("x openssl", "right"),
                      ("x crypto", "right")):
        table.add_column(col, justify=just, overflow="fold")
    for bits in p["bits"]:
        for r in sorted((r for r in doc["results"] if r["bits"] == bits), key=lambda r: -r["ops_per_s_median"]):
            s = r["spread"]
            ro, rc = r.get("ratio_vs_openssl"), r.get("ratio_vs_cryptography")
            table.add_row(str(bits), r["impl"] + (f" ({r['kernel']})" if r["impl"] == OURS else ""),
                          _ops(r["ops_per_s_median"]), f"{_ops(s['min'])} - {_ops(s['max'])}",
                          f"{r['us_per_op_median']:,.0f}",
                          f"{ro:.3f}x" if r["impl"] == OURS and ro is not None else "",
                          f"{rc:.3f}x" if r["impl"] == OURS and rc is not None else "",
                          style="bold" if r["impl"] == OURS else None)
    console.print(table)
    for s in doc["skipped"]:
        console.print(f"[yellow]skipped[/yellow] {s['impl']}{' at %s bits' % s['bits'] if 'bits' in s else ''}: "
                      f"{s['why']}", highlight=False)
    for e in doc["errors"]:
        console.print(f"[bold red]WRONG RESULT[/bold red] {e['why']}", highlight=False)
