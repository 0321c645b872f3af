"""The process pool of the hardware flow's parallel work (``hw explore`` points, ``hw report`` batches).

Two things a bare ``ProcessPoolExecutor`` gets wrong when the run is stopped (Ctrl-C, or SIGTERM, which
``modforge.cli.main`` turns into the same interrupt):

* leaving its ``with`` block waits for every queued task, so an interrupted sweep ran to its end;
* forked workers inherit the parent's SIGTERM handler, so a SIGTERM to the process group only turned
  each worker's current task into an error and the workers went on with the queue.

:func:`worker_pool` cancels what is queued, stops the workers, and gives them the default SIGTERM.
"""

from __future__ import annotations

import signal
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Iterator


def _default_sigterm() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def worker_pool(jobs: int) -> Iterator[ProcessPoolExecutor]:
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_default_sigterm)
    try:
        yield pool
    except BaseException:
        # The tasks already running would otherwise hold the exit for their whole length.
        running = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in running:
            process.terminate()
        pool.shutdown(wait=True)
        raise
    pool.shutdown(wait=True)
