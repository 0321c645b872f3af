"""The process pool of the hardware flow's parallel work (``hw explore`` points, ``hw report`` batches).

Two things a bare ``ProcessPoolExecutor`` gets wrong when the run is stopped (Ctrl-C, or SIGTERM, which
``modforge.cli.main`` turns into the same interrupt):

* leaving its ``with`` block waits for every queued task, so an interrupted sweep ran to its end;
* forked workers inherit the parent's SIGTERM handler, so a SIGTERM to the process group only turned
  each worker's current task into an error and the workers went on with the queue.

:func:`worker_pool` cancels what is queued, stops the workers, and gives them the default SIGTERM (and
SIGINT ignored: the parent decides).  Its callers wait with :func:`modforge.interrupts.completed`, so
that the interrupt lands between the pool's calls, never inside them.
A stopped worker dies at once, without unwinding, so two things it started would outlive it:

* the tool it was running (Yosys, Verilator, a simulation): tools go through :func:`run_tool`, which
  inside a worker asks Linux to send the tool SIGTERM when the worker dies (``PR_SET_PDEATHSIG``;
  outside workers it runs the tool in its own process group and stops the whole group when interrupted);
* its temporary directories: the workers' ``tempfile`` root is one directory per pool, removed when
  the pool ends, however its workers ended.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from ..arith.base import ParameterError
from ..interrupts import DeferredInterrupts

PR_SET_PDEATHSIG = 1    # <linux/prctl.h>

# Set in pool workers: the prctl call their tools' children make between fork and exec.
_die_with_worker: Callable[[], None] | None = None


def _pdeathsig_setter() -> Callable[[], None] | None:
    """A function for ``preexec_fn`` that makes the child get SIGTERM when its parent dies (Linux), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    worker = os.getpid()

    def die_with_worker() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != worker:      # the worker died before the prctl: nobody would send the signal
            os._exit(1)

    return die_with_worker


def _worker_init(temporary_root: str) -> None:
    global _die_with_worker
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # A terminal's Ctrl-C reaches the whole process group; the parent stops the workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_worker = _pdeathsig_setter()
    tempfile.tempdir = temporary_root


# How long a stopped tool's process group has to end on SIGTERM before it gets SIGKILL.
TOOL_GRACE_SECONDS = 2.0


def run_tool(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
    """``subprocess.run`` for the hardware tools.  In a pool worker the tool dies with the worker.

    Outside workers the tool runs in its own process group (a new session), and when the wait is
    interrupted (Ctrl-C, SIGTERM to modforge alone, a timeout) the whole group is stopped: SIGTERM, then
    SIGKILL after :data:`TOOL_GRACE_SECONDS`.  ``subprocess.run`` would kill the tool only, leaving what it
    started (Verilator's make, the compilers) orphaned and writing into the build cache.  Being in its own
    group, the tool no longer sees the terminal's Ctrl-C itself; modforge's interrupt stops it instead.
    (No ``preexec_fn`` here: it is unsafe in a process with threads, such as a progress bar's;
    ``start_new_session`` is done by the child without Python code.)
    """
    if _die_with_worker is not None:
        # In a worker the tool stays in the worker's group (a SIGTERM to the group reaches it) and gets
        # SIGTERM when the worker dies (a stopped worker dies at once, without unwinding).
        kwargs.setdefault("preexec_fn", _die_with_worker)
        return subprocess.run(command, **kwargs)
    timeout = kwargs.pop("timeout", None)
    data = kwargs.pop("input", None)
    check = kwargs.pop("check", False)
    if kwargs.pop("capture_output", False):
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    if data is not None:
        kwargs["stdin"] = subprocess.PIPE
    with subprocess.Popen(command, start_new_session=True, **kwargs) as proc:
        try:
            stdout, stderr = proc.communicate(data, timeout=timeout)
        except BaseException:
            _stop_group(proc)
            raise
    if check and proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, command, stdout, stderr)
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:         # a member that changed its credentials: still there
        return True
    return True


def _stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the tool's process group, SIGKILL to what is left of it after the grace period; the
    tool itself reaped.  A second interrupt meanwhile goes straight to SIGKILL."""
    pgid = proc.pid                 # the leader of its own session: its pid is the group's id
    try:
        try:
            os.killpg(pgid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + TOOL_GRACE_SECONDS
        try:
            proc.wait(timeout=TOOL_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            pass
        # Its children may outlive the tool (a compiler finishing its file): they are the group too.
        while _group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


# More workers than this is a typo (each is a forked Python process, each running a tool), not a machine.
MAX_JOBS = 1024


def check_jobs(jobs: int) -> int:
    """``--jobs`` as given, refused (ParameterError) when below 1 or above :data:`MAX_JOBS`."""
    if jobs < 1:
        raise ParameterError("jobs", f"must be at least 1, got {jobs}")
    if jobs > MAX_JOBS:
        raise ParameterError("jobs", f"at most {MAX_JOBS}, got {jobs if jobs < 10 ** 12 else 'more'}")
    return jobs


@contextmanager
def worker_pool(jobs: int, tasks: int | None = None) -> Iterator[ProcessPoolExecutor]:
    """The pool, under :class:`~modforge.interrupts.DeferredInterrupts`: callers wait for its futures with
    :func:`modforge.interrupts.completed`, which looks for Ctrl-C / SIGTERM between its calls into the pool
    (an interrupt raised inside them could leave a lock held that the shutdown below then waits for).

    ``jobs`` workers at most (:func:`check_jobs`), and no more than ``tasks``: a forking pool starts all
    its workers at once, so 64 jobs for a 2-point sweep would fork 62 idle processes."""
    check_jobs(jobs)
    workers = min(jobs, max(1, tasks)) if tasks is not None else jobs
    temporary_root = tempfile.mkdtemp(prefix="modforge-pool-")
    try:
        with DeferredInterrupts() as interrupts:
            pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init, initargs=(temporary_root,))
            try:
                yield pool
            except BaseException as exc:
                # The tasks already running would otherwise hold the exit for their whole length.
                running = list((getattr(pool, "_processes", None) or {}).values())
                pool.shutdown(wait=False, cancel_futures=True)
                for process in running:
                    process.terminate()
                pool.shutdown(wait=True)
                if interrupts.requested is not None and not isinstance(exc, KeyboardInterrupt):
                    # A SIGTERM to the whole process group also ended the workers: still an interrupt.
                    raise KeyboardInterrupt from exc
                raise
            pool.shutdown(wait=True)
    finally:
        shutil.rmtree(temporary_root, ignore_errors=True)
