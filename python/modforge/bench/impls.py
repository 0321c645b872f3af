"""One face for everything measured: ``prepare(N)``, then ``run(x, k) -> (ns, x^(2^k) mod N)``.

* :class:`EngineImpl` - one of our engine backends, through ``ModRing.sqr_n``
  (native backends stay in native code for all k squarings).
* :class:`Gmpy2Impl` - ``gmpy2.powmod(x, 2^k, N)``: the wheel's GMP, for reference.
* :class:`PipeImpl` - an outside program speaking the harness line protocol of
  ``modforge/bench/harness/*.c``; it times its own loop, so pipes and parsing are
  not counted.

``run`` returns ``(wall_ns, cpu_ns, result)``: the wall time and the calling
thread's CPU time of the k squarings alone.  On a busy machine other
processes stretch the wall time but not the CPU time.
"""

from __future__ import annotations

import subprocess
import time
from typing import Protocol

OURS = "ours"
ANCHOR = "anchor"


class ImplFailed(Exception):
    """An implementation that stopped working mid-run (crashed, refused the modulus)."""


class Impl(Protocol):
    name: str
    kind: str
    detail: str
    version: str

    def prepare(self, modulus: int) -> None: ...

    def run(self, x: int, k: int) -> tuple[int, int, int]: ...

    def close(self) -> None: ...


class EngineImpl:
    kind = OURS

    def __init__(self, backend: str):
        self.backend = backend
        self.name = f"engine-{backend}"
        self.detail = f"ModRing(N, backend={backend!r}).sqr_n(x, k)"
        self.version = ""
        self._ring = None

    def prepare(self, modulus: int) -> None:
        from ..engine import ModRing

        try:
            self._ring = ModRing(modulus, backend=self.backend)
        except Exception as exc:  # a backend may not take every width
            raise ImplFailed(f"ModRing refused the {modulus.bit_length()}-bit modulus: {exc}") from exc

    def run(self, x: int, k: int) -> tuple[int, int, int]:
        ring = self._ring
        t0 = time.perf_counter_ns()
        c0 = time.thread_time_ns()
        try:
            result = ring.sqr_n(x, k)
        except Exception as exc:
            raise ImplFailed(f"sqr_n raised {type(exc).__name__}: {exc}") from exc
        c1 = time.thread_time_ns()
        return time.perf_counter_ns() - t0, c1 - c0, result

    def close(self) -> None:
        self._ring = None


class Gmpy2Impl:
    kind = ANCHOR
    name = "gmpy2-powm"

    def __init__(self) -> None:
        import gmpy2

        self._gmpy2 = gmpy2
        self.version = f"gmpy2 {gmpy2.version()}, {gmpy2.mp_version()}"
        self.detail = f"gmpy2.powmod(x, 2^k, N), the wheel's portable GMP ({gmpy2.mp_version()})"
        self._m = None

    def prepare(self, modulus: int) -> None:
        self._m = self._gmpy2.mpz(modulus)

    def run(self, x: int, k: int) -> tuple[int, int, int]:
        g = self._gmpy2
        e = g.mpz(1) << k
        base = g.mpz(x)
        t0 = time.perf_counter_ns()
        c0 = time.thread_time_ns()
        r = g.powmod(base, e, self._m)
        c1 = time.thread_time_ns()
        return time.perf_counter_ns() - t0, c1 - c0, int(r)

    def close(self) -> None:
        self._m = None


class PipeImpl:
    """An outside harness process: ``N <hex>`` -> ``ok``; ``R <x hex> <k>`` -> ``<wall ns> <cpu ns> <result hex>``."""

    kind = ANCHOR

    def __init__(self, name: str, argv: tuple[str, ...] | list[str], detail: str = "", build: dict | None = None):
        self.name = name
        self.argv = list(argv)
        self.detail = detail
        self.build = build or {}
        self.version = ""
        self._proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def _start(self) -> None:
        try:
            self._proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True, bufsize=1)
        except OSError as exc:
            raise ImplFailed(f"cannot start {self.argv[0]}: {exc}") from exc
        ready = self._read()
        if not ready.startswith("ready"):
            raise ImplFailed(f"{self.argv[0]} did not start: {ready!r}")
        self.version = ready.removeprefix("ready").strip()

    def _read(self) -> str:
        assert self._proc is not None and self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            try:
                code = self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = None
            err = (self._proc.stderr.read() if self._proc.stderr else "").strip()
            raise ImplFailed(f"{self.name} exited (code {code}){': ' + err.splitlines()[-1] if err else ''}")
        line = line.strip()
        if line.startswith("error"):
            raise ImplFailed(f"{self.name}: {line}")
        return line

    def _send(self, line: str) -> str:
        if self._proc is None:
            self._start()
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ImplFailed(f"{self.name} is gone: {exc}") from exc
        return self._read()

    def prepare(self, modulus: int) -> None:
        reply = self._send(f"N {modulus:x}")
        if reply != "ok":
            raise ImplFailed(f"{self.name} refused the modulus: {reply!r}")

    def run(self, x: int, k: int) -> tuple[int, int, int]:
        reply = self._send(f"R {x:x} {k}")
        try:
            wall, cpu, value = reply.split()
            return int(wall), int(cpu), int(value, 16)
        except ValueError:
            raise ImplFailed(f"{self.name}: unreadable reply {reply!r}") from None

    def start(self) -> None:
        """Start the process now (so it inherits the current CPU affinity)."""
        if self._proc is None:
            self._start()

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
