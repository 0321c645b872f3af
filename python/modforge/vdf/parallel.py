"""Proof kernels and the process pool that runs them beside the main process.

Proof work splits into independent parts (blocks of Wesolowski checkpoints,
halves of a Pietrzak midpoint product).  The main process computes one part
and ``workers`` other processes the rest, each with its own ``ModRing`` on
the same backend; the parts are multiplied together at the end.  Processes,
not threads: the Python loop around ``ring.mul`` holds the GIL, so only
separate interpreters use the second core whatever the backend.

The helpers are started when the evaluation begins, so their start-up (an
interpreter and the engine, a few hundred milliseconds) overlaps the
evaluation instead of following it.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

from ..engine import ModRing

# ------------------------------------------------------------------------------------------------- kernels


def multiexp(ring: ModRing, bases: Sequence[int], exps: Sequence[int], exp_bits: int, window: int) -> int | None:
    """``prod bases[j]^exps[j] mod N`` (exponents below ``2^exp_bits``) by the bucket method; None for 1.

    Per ``window``-bit digit position, from the top: shift the accumulator
    (``window`` squarings), put every base into the bucket of its digit, and add
    ``sum_b b * bucket_b`` with the running-product trick (``2 * 2^window``
    multiplications).  ``None`` stands for the identity so no product by 1 is paid.
    """
    if ring.has_native_multiexp:
        # The engine's native Straus multi-exponentiation: the same product, no Python loop per base.
        live = [(b, e) for b, e in zip(bases, exps) if e]
        if not live:
            return None
        return ring.multiexp([b for b, _ in live], [e for _, e in live])
    mask = (1 << window) - 1
    acc: int | None = None
    for m in reversed(range(-(-exp_bits // window))):
        if acc is not None:
            acc = ring.sqr_n(acc, window)
        shift = m * window
        buckets: list[int | None] = [None] * (mask + 1)
        for base, e in zip(bases, exps):
            b = (e >> shift) & mask
            if b:
                cur = buckets[b]
                buckets[b] = base if cur is None else ring.mul(cur, base)
        running: int | None = None
        total: int | None = None
        for b in range(mask, 0, -1):
            bucket = buckets[b]
            if bucket is not None:
                running = bucket if running is None else ring.mul(running, bucket)
            if running is not None:
                total = running if total is None else ring.mul(total, running)
        if total is not None:
            acc = total if acc is None else ring.mul(acc, total)
    return acc


def fold(ring: ModRing, values: Sequence[int], challenges: Sequence[int]) -> int:
    """Fold ``2^len(challenges)`` values: each level pairs ``v[2j]^r * v[2j+1]`` with the next challenge.

    This is ``prod_b values[b]^(prod_(j: bit j of b is 0) r_j)``, Pietrzak's midpoint
    written over stored powers, in ``len(values) - 1`` exponentiations.
    """
    vals = list(values)
    if len(vals) != 1 << len(challenges):
        raise ValueError("fold: need 2^len(challenges) values")
    for r in challenges:
        vals = [ring.mul(ring.pow(vals[2 * j], r), vals[2 * j + 1]) for j in range(len(vals) // 2)]
    return vals[0]


# ------------------------------------------------------------------------------------------------- workers

KERNELS: dict[str, Callable[..., Any]] = {"multiexp": multiexp, "fold": fold}


class WorkerError(RuntimeError):
    """A helper process died or raised; the message carries its exit code or traceback."""


class _Worker:
    """One helper interpreter (``python -m modforge.vdf.worker``) talking pickles over its stdin/stdout."""

    def __init__(self, modulus: int, backend: str):
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self._proc = subprocess.Popen([sys.executable, "-m", "modforge.vdf.worker"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, env=env)
        self._pending = 0
        self._writer: threading.Thread | None = None
        self.send("init", (modulus, backend))

    def send(self, kind: str, args: tuple) -> None:
        """Queue a call; the bytes are written by a thread, so a large task never blocks the caller."""
        self._join_writer()
        data = pickle.dumps((kind, args), protocol=pickle.HIGHEST_PROTOCOL)
        self._writer = threading.Thread(target=self._write, args=(data,), daemon=True)
        self._writer.start()
        self._pending += 1

    def _write(self, data: bytes) -> None:
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(data)
            self._proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass                     # the worker died: receive() reports it

    def _join_writer(self) -> None:
        if self._writer is not None:
            self._writer.join()
            self._writer = None

    def receive(self) -> Any:
        assert self._proc.stdout is not None
        self._join_writer()
        while self._pending:
            try:
                status, value = pickle.load(self._proc.stdout)
            except EOFError:
                raise WorkerError(f"proof worker {self._proc.pid} died (exit code {self._proc.wait()})") from None
            self._pending -= 1
            if status != "ok":
                raise WorkerError(f"proof worker {self._proc.pid} failed:\n{value}")
            if self._pending == 0:
                return value
        return None

    def close(self) -> None:
        self._join_writer()
        try:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()


class ProofPool:
    """``workers`` helper processes plus the calling process; ``workers = 0`` runs everything inline.

    Helpers are separate interpreters started with ``python -m modforge.vdf.worker`` (not
    ``multiprocessing``: no ``fork`` of a process that may run threads, and no re-import of the
    caller's ``__main__``, so scripts need no ``if __name__ == "__main__"`` guard).
    """

    def __init__(self, ring: ModRing, workers: int = 0, *, threads: int = 1):
        """``threads``: at least this many parts for work that runs in native threads instead of helper
        processes (a native multi-exponentiation splits itself); ``parts`` is the larger of the two."""
        self.ring = ring
        self._threads = max(1, int(threads))
        self._workers: list[_Worker] = []
        for _ in range(max(0, int(workers))):
            try:
                self._workers.append(_Worker(ring.modulus, ring.backend))
            except OSError as exc:      # no interpreter to start: do the work here instead
                warnings.warn(f"modforge.vdf: cannot start a proof helper ({exc}); continuing with "
                              f"{1 + len(self._workers)} process(es)", RuntimeWarning, stacklevel=2)
                break

    @property
    def workers(self) -> int:
        return len(self._workers)

    @property
    def parts(self) -> int:
        return max(1 + len(self._workers), self._threads)

    def run(self, kind: str, tasks: Sequence[tuple]) -> list[Any]:
        """Run ``KERNELS[kind](ring, *args)`` for each task: the last one here, the others in the helpers."""
        tasks = list(tasks)
        if not tasks:
            return []
        if not self._workers:
            return [KERNELS[kind](self.ring, *args) for args in tasks]
        remote = tasks[:-1]
        results: list[Any] = [None] * len(tasks)
        for start in range(0, len(remote), len(self._workers)):
            batch = remote[start:start + len(self._workers)]
            for worker, args in zip(self._workers, batch):
                worker.send(kind, args)
            if start + len(self._workers) >= len(remote):
                results[-1] = KERNELS[kind](self.ring, *tasks[-1])
            for j, worker in enumerate(self._workers[:len(batch)]):
                results[start + j] = worker.receive()
        if len(remote) == 0:
            results[-1] = KERNELS[kind](self.ring, *tasks[-1])
        return results

    def close(self) -> None:
        for worker in self._workers:
            worker.close()
        self._workers = []

    def __enter__(self) -> "ProofPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
