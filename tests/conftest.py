"""Settings for the whole test suite."""

from __future__ import annotations

import os


def pytest_configure(config) -> None:
    # backend="auto" takes the shipped tuning data, never a timing of this machine (which would make
    # each test's backend depend on the load, and write into the user's cache on a CPU the data was
    # not measured on).  tests/engine/test_tuning.py sets its own mode per test.  Subprocesses inherit it.
    os.environ.setdefault("MODFORGE_TUNING", "static")
