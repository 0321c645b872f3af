"""Deferred interrupts: the first SIGINT/SIGTERM is recorded and raised only at a check, a second raises at
once, the old handlers come back, and ``completed`` checks while it waits on a pool."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from modforge.interrupts import DeferredInterrupts, check_deferred, completed

pytestmark = pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                                reason="signal handlers are the main thread's")


def _deliver(sig: int) -> None:
    os.kill(os.getpid(), sig)
    time.sleep(0.01)       # the handler runs at the next bytecode boundary of the main thread


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_first_signal_waits_for_a_check_second_raises_at_once(sig: int) -> None:
    before = signal.getsignal(sig)
    second_raised = False
    with DeferredInterrupts() as interrupts:
        try:
            _deliver(sig)
        except KeyboardInterrupt:
            pytest.fail("the first signal raised where it landed")
        assert interrupts.requested == sig
        with pytest.raises(KeyboardInterrupt):
            check_deferred()
        try:
            _deliver(sig)                                   # the second one raises where it lands
        except KeyboardInterrupt:
            second_raised = True
    assert second_raised, "a second signal did not interrupt"
    assert signal.getsignal(sig) is before


def test_nothing_requested_means_no_interrupt() -> None:
    with DeferredInterrupts() as interrupts:
        interrupts.check()
        check_deferred()
        assert interrupts.requested is None
    check_deferred()                                        # outside any: nothing to check


def test_completed_yields_every_future_and_stops_at_a_deferred_interrupt() -> None:
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(lambda i=i: i * i) for i in range(20)]
        assert sorted(f.result() for f in completed(futures)) == [i * i for i in range(20)]
        gate = threading.Event()
        slow = [pool.submit(gate.wait, 5)]
        started = time.monotonic()
        with DeferredInterrupts():
            _deliver(signal.SIGINT)
            with pytest.raises(KeyboardInterrupt):
                for _ in completed(slow, poll=0.05):
                    pass
        gate.set()
        assert time.monotonic() - started < 2, "the deferred interrupt was not seen while waiting"
