"""Settings and checks for the whole test suite."""

from __future__ import annotations

import os
import signal

import pytest


def pytest_configure(config) -> None:
    # backend="auto" takes the shipped tuning data, never a timing of this machine (which would make
    # each test's backend depend on the load, and write into the user's cache on a CPU the data was
    # not measured on).  tests/engine/test_tuning.py sets its own mode per test.  Subprocesses inherit it.
    os.environ.setdefault("MODFORGE_TUNING", "static")


@pytest.fixture(autouse=True)
def _signal_handlers_are_restored():
    """A test (or the code under it) that leaves its own SIGINT/SIGTERM handler behind would swallow the
    Ctrl-C of a later test; fail the test that leaked it, and restore the handlers for the next."""
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    after = {sig: signal.getsignal(sig) for sig in before}
    for sig, handler in before.items():
        signal.signal(sig, handler)
    leaked = {signal.Signals(sig).name: after[sig] for sig in before if after[sig] != before[sig]}
    assert not leaked, f"signal handlers left installed: {leaked}"


def pytest_terminal_summary(terminalreporter) -> None:
    """One line saying which native backends the engine and RSA tests ran on this CPU and which they could
    not (they are parametrised over ``supported_backends()``): a CPU without a kernel's instructions skips
    its tests, and that must be visible, not a quiet pass."""
    try:
        from modforge import _native
    except ImportError:
        terminalreporter.write_line("native backends: the extension is not built; no native backend was tested")
        return
    ran = list(_native.supported_backends())
    missing = [b for b in _native.backends() if b not in ran]
    features = ", ".join(f"{f}{'' if on else ' no'}" for f, on in sorted(_native.cpu_features().items()))
    terminalreporter.write_line(f"Python native backend tests ran on: {', '.join(ran)}; not on this CPU: "
                                f"{', '.join(missing) or 'none'} ({features})")
