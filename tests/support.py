"""Checks shared by the test packages: the CLI's one-line error contract, peak Python memory."""

from __future__ import annotations

import tracemalloc
from typing import Any, Callable


def one_line_error(res, text: str, code: int = 2) -> None:
    """``res`` (a click result) exited ``code`` with one ``modforge: error:`` line on stderr containing ``text``."""
    assert res.exit_code == code, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("modforge: error: ") and text in lines[0], res.stderr


def peak_python_memory(work: Callable[[], Any]) -> tuple[Any, int]:
    """``work()``'s result and the peak of Python allocations while it ran, in bytes (native memory not counted)."""
    tracemalloc.start()
    try:
        result = work()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
