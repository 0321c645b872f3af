"""Interrupts (Ctrl-C, and SIGTERM, which the CLI turns into the same) that land only where it is safe.

A ``KeyboardInterrupt`` raised by a signal handler lands on whatever line the main thread is running,
including the inside of ``concurrent.futures`` while it holds one of its locks (a future's condition in
``wait()`` or ``result()``, the pool's shutdown lock in ``submit()``).  The pool's shutdown then waits for
that lock for ever: ``rsa sign --batch`` hung so in 2 of 5 runs stopped with SIGTERM.  Code that drives a
process pool runs under :class:`DeferredInterrupts`: the first SIGINT or SIGTERM only records itself, the
code calls :meth:`DeferredInterrupts.check` where an interrupt is safe (between its own steps, never inside
the pool's), and a second signal raises at once, for a user who insists.
"""

from __future__ import annotations

import signal
import threading
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import Any, Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")

SIGNALS = (signal.SIGINT, signal.SIGTERM)
# How often :func:`completed` looks for a deferred interrupt while it waits.
POLL_SECONDS = 0.1
# The entered DeferredInterrupts of the main thread, innermost last.
_active: list[DeferredInterrupts] = []


class DeferredInterrupts:
    """While inside (main thread only; elsewhere nothing changes), SIGINT and SIGTERM set
    :attr:`requested` (the signal's number) instead of raising; the previous handlers come back on exit."""

    def __init__(self) -> None:
        self.requested: int | None = None
        self._old: dict[int, Any] = {}

    def _handler(self, signum: int, frame: Any) -> None:
        if self.requested is not None:
            raise KeyboardInterrupt
        self.requested = signum

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` if a signal came: call it where an interrupt is safe."""
        if self.requested is not None:
            raise KeyboardInterrupt

    def __enter__(self) -> DeferredInterrupts:
        if threading.current_thread() is threading.main_thread():
            for sig in SIGNALS:
                self._old[sig] = signal.signal(sig, self._handler)
            _active.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._old:
            _active.remove(self)
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old.clear()


def check_deferred() -> None:
    """:meth:`DeferredInterrupts.check` of every entered one (none outside them)."""
    for interrupts in _active:
        interrupts.check()


def completed(futures: Iterable[Future], poll: float = POLL_SECONDS) -> Iterator[Future]:
    """``concurrent.futures.as_completed`` for code under :class:`DeferredInterrupts`: the futures as they
    finish, and a check for a deferred interrupt at least every ``poll`` seconds, outside the pool's code."""
    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=poll, return_when=FIRST_COMPLETED)
        yield from done
        check_deferred()


def in_interruptible_thread(work: Callable[[], T], poll: float = POLL_SECONDS) -> T:
    """``work()`` in a daemon thread while the main thread waits in steps of ``poll`` seconds, so that
    Ctrl-C and SIGTERM (whose Python handlers run only in the main thread, between its bytecodes) stop the
    command at once instead of when ``work`` returns; the abandoned thread ends with the process.  For C
    calls that release the GIL and run long (OpenSSL's 8192-bit key generation: a minute), not for ones that
    hold it (nothing here can interrupt those)."""
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(work())
        except BaseException as exc:        # handed to the waiting thread, raised there
            failure.append(exc)

    worker = threading.Thread(target=run, name="modforge-work", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(poll)
    if failure:
        raise failure[0]
    return result[0]
