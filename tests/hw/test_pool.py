"""The hardware flow's worker pool stops when the run is interrupted: queued tasks are cancelled, running
ones stopped, and the workers take the default SIGTERM even when the parent has its own handler."""

from __future__ import annotations

import signal
import time

import pytest

from modforge.hw.pool import worker_pool


def _nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def _sigterm_handler_name(_: int) -> str:
    handler = signal.getsignal(signal.SIGTERM)
    return "default" if handler == signal.SIG_DFL else repr(handler)


def _parent_handler(signum, frame) -> None:       # what cli.main installs: SIGTERM as an interrupt
    raise KeyboardInterrupt


def test_an_interrupt_does_not_wait_for_the_queue() -> None:
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with worker_pool(2) as pool:
            futures = [pool.submit(_nap, 1.0) for _ in range(10)]
            futures[0].result()
            raise KeyboardInterrupt
    # Ten one-second naps on two workers: the queue alone would hold the exit for four more seconds.
    assert time.monotonic() - start < 3.0
    finished = [f for f in futures if f.done() and not f.cancelled() and f.exception() is None]
    assert len(finished) <= 3, f"{len(finished)} of the 10 naps ran"


def test_workers_take_the_default_sigterm() -> None:
    old = signal.signal(signal.SIGTERM, _parent_handler)
    try:
        with worker_pool(2) as pool:
            assert set(pool.map(_sigterm_handler_name, range(4))) == {"default"}
    finally:
        signal.signal(signal.SIGTERM, old)
