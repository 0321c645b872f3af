"""The hardware flow's worker pool stops when the run is interrupted: queued tasks are cancelled, running
ones stopped, the workers take the default SIGTERM even when the parent has its own handler, and the tools
a stopped worker was running stop with it."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import pytest

from modforge.hw.pool import run_tool, worker_pool


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


def _sigint_ignored(_: int) -> bool:
    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def test_workers_take_the_default_sigterm() -> None:
    old = signal.signal(signal.SIGTERM, _parent_handler)
    try:
        with worker_pool(2) as pool:
            assert set(pool.map(_sigterm_handler_name, range(4))) == {"default"}
            # A terminal's Ctrl-C reaches the workers too; the parent decides.
            assert set(pool.map(_sigint_ignored, range(4))) == {True}
    finally:
        signal.signal(signal.SIGTERM, old)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_waiting_stops_the_pool_between_its_calls(sig: int) -> None:
    """The signal is only recorded where it lands (inside ``concurrent.futures`` an interrupt could leave
    a lock held and the shutdown would wait for it for ever); ``completed`` raises it within its poll."""
    from modforge.interrupts import completed

    old = signal.signal(signal.SIGTERM, _parent_handler)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            with worker_pool(2) as pool:
                futures = [pool.submit(_nap, 1.0) for _ in range(10)]
                os.kill(os.getpid(), sig)
                time.sleep(0.01)                     # recorded, not raised: we get here
                for _ in completed(futures):
                    pytest.fail("a nap finished before the interrupt was seen")
        assert time.monotonic() - start < 2.0
        assert signal.getsignal(signal.SIGTERM) is _parent_handler, "the pool did not give back the handler"
    finally:
        signal.signal(signal.SIGTERM, old)


def _long_tool(pidfile: str) -> int:
    # Like a synthesis run: a temporary directory, and a tool in it that publishes its pid atomically (with
    # the directory's path) and then sleeps far longer than the test waits.
    with tempfile.TemporaryDirectory(prefix="modforge-test-") as work:
        return run_tool(["sh", "-c", f"echo $$ {work} > {pidfile}.tmp && mv {pidfile}.tmp {pidfile} && exec sleep 120"],
                        cwd=work).returncode


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie no longer does: a container's init may be slow to reap it)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return fields[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_stopped_worker_takes_its_tool_and_temporary_directory_with_it(tmp_path: Path) -> None:
    pidfile = tmp_path / "tool.pid"
    with pytest.raises(KeyboardInterrupt):
        with worker_pool(1) as pool:
            pool.submit(_long_tool, str(pidfile))
            deadline = time.monotonic() + 30
            while not pidfile.exists():
                assert time.monotonic() < deadline, "the tool never started"
                time.sleep(0.05)
            raise KeyboardInterrupt
    pid_text, work = pidfile.read_text().split()
    pid = int(pid_text)
    try:
        deadline = time.monotonic() + 10
        while _running(pid):
            assert time.monotonic() < deadline, f"the tool (pid {pid}) outlived its stopped worker by 10 s"
            time.sleep(0.05)
    finally:
        if _running(pid):
            os.kill(pid, signal.SIGKILL)
    assert not Path(work).exists(), f"the stopped worker's temporary directory {work} is still there"


def test_outside_a_worker_a_tool_runs_as_subprocess_does() -> None:
    out = run_tool(["sh", "-c", "echo out; echo err >&2; exit 3"], capture_output=True, text=True)
    assert (out.returncode, out.stdout, out.stderr) == (3, "out\n", "err\n")


def _temporary_parent(_: int) -> str:
    with tempfile.TemporaryDirectory() as d:
        return str(Path(d).parent)


def test_the_workers_temporary_root_goes_with_the_pool() -> None:
    with worker_pool(2) as pool:
        roots = set(pool.map(_temporary_parent, range(4)))
    assert len(roots) == 1
    root = roots.pop()
    assert Path(root).name.startswith("modforge-pool-") and not Path(root).exists()


def test_the_pool_is_no_larger_than_its_tasks(monkeypatch) -> None:
    """A forking pool starts every worker at once: --jobs 64 for two tasks must not fork 64 processes."""
    from modforge.hw import pool as pool_mod

    sizes = []

    class Spy(pool_mod.ProcessPoolExecutor):
        def __init__(self, max_workers, **kw):
            sizes.append(max_workers)
            super().__init__(max_workers=max_workers, **kw)

    monkeypatch.setattr(pool_mod, "ProcessPoolExecutor", Spy)
    with worker_pool(64, tasks=2) as pool:
        assert list(pool.map(_nap, [0, 0])) == [0, 0]
    assert sizes == [2]


@pytest.mark.parametrize("jobs, problem", [(0, "jobs: must be at least 1, got 0"),
                                           (1025, "jobs: at most 1024, got 1025"),
                                           (10 ** 30, "jobs: at most 1024, got more")])
def test_absurd_jobs_are_refused(jobs: int, problem: str) -> None:
    from modforge.arith.base import ParameterError

    with pytest.raises(ParameterError, match=problem):
        with worker_pool(jobs, tasks=2):
            pytest.fail("a pool started")


@pytest.mark.parametrize("command", [["explore", "--archs", "ozturk", "--bits", "64", "--word-bits", "16", "-o", "x"],
                                     ["report", "ozturk", "--bits", "64"]])
def test_the_cli_refuses_absurd_jobs_before_any_work(command, tmp_path, monkeypatch) -> None:
    from click.testing import CliRunner

    from modforge.cli.main import cli

    from ..support import one_line_error

    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["hw", *command, "--jobs", "10000"], catch_exceptions=False)
    one_line_error(res, "jobs: at most 1024, got 10000")
    assert list(tmp_path.iterdir()) == []


_GROUP_TOOL = ("sleep 100 & echo $! > {d}/a.tmp && mv {d}/a.tmp {d}/a; "
               "sleep 100 & echo $! > {d}/b.tmp && mv {d}/b.tmp {d}/b; wait")


def _sleeps(d: Path) -> list[int]:
    deadline = time.monotonic() + 30
    while not ((d / "a").exists() and (d / "b").exists()):
        assert time.monotonic() < deadline, "the tool never started its children"
        time.sleep(0.02)
    return [int((d / n).read_text()) for n in ("a", "b")]


def _assert_gone(pids: list[int]) -> None:
    try:
        deadline = time.monotonic() + 10
        while any(_running(p) for p in pids):
            assert time.monotonic() < deadline, f"the tool's children {[p for p in pids if _running(p)]} outlived it"
            time.sleep(0.05)
    finally:
        for p in pids:
            if _running(p):
                os.kill(p, signal.SIGKILL)


def test_sigterm_to_modforge_alone_stops_the_whole_tool(tmp_path: Path) -> None:
    """SIGTERM to modforge's pid only (not its group), as cli.main takes it (an interrupt): the tool's own
    children (Verilator's make and compilers) stop too, not only the tool."""
    import subprocess

    script = ("import signal, sys\n"
              "def stop(*_): raise KeyboardInterrupt\n"
              "signal.signal(signal.SIGTERM, stop)\n"
              "from modforge.hw.pool import run_tool\n"
              "try:\n"
              f"    run_tool(['sh', '-c', {_GROUP_TOOL.format(d=tmp_path)!r}])\n"
              "except KeyboardInterrupt:\n"
              "    sys.exit(130)\n")
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        pids = _sleeps(tmp_path)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
    _assert_gone(pids)


def test_a_timeout_stops_the_whole_tool(tmp_path: Path) -> None:
    import subprocess
    import threading

    pids: list[int] = []
    threading.Thread(target=lambda: pids.extend(_sleeps(tmp_path)), daemon=True).start()
    with pytest.raises(subprocess.TimeoutExpired):
        run_tool(["sh", "-c", _GROUP_TOOL.format(d=tmp_path)], timeout=1)
    assert len(pids) == 2
    _assert_gone(pids)


def test_a_tool_that_ignores_sigterm_gets_sigkill(tmp_path: Path, monkeypatch) -> None:
    import subprocess

    from modforge.hw import pool as pool_mod

    monkeypatch.setattr(pool_mod, "TOOL_GRACE_SECONDS", 0.3)
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_tool(["sh", "-c", f"trap '' TERM; sleep 100 & echo $! > {tmp_path}/a.tmp && mv {tmp_path}/a.tmp "
                              f"{tmp_path}/a; wait; wait"], timeout=1)
    pid = int((tmp_path / "a").read_text())
    assert time.monotonic() - start < 5
    _assert_gone([pid])
