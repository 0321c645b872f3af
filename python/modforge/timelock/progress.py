"""How a solve reports: a rich progress bar, plain log lines, or nothing (warnings always reach stderr)."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, TextIO

from .durations import format_count, format_duration

WARNING_KINDS = {"rejected", "fault", "rollback", "fault-injection", "fault-injected", "interrupted", "restart",
                 "save-failed", "short-interval"}


class Reporter:
    """Silent except for warnings, which go to stderr one line each."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream

    def _out(self) -> TextIO:
        return self.stream if self.stream is not None else sys.stderr

    def start(self, *, label: str, t: int, step: int, backend: str, bits: int) -> None:
        pass

    def progress(self, *, step: int, t: int, rate: float, eta: float | None, segment: int) -> None:
        pass

    def event(self, kind: str, text: str, **fields: Any) -> None:
        if kind in WARNING_KINDS:
            print(f"modforge: {visible(text)}", file=self._out(), flush=True)

    def proof(self, *, done: int, total: int) -> None:
        """A long proof after the squaring (``vdf``): ``done`` of ``total`` units (bits per block)."""

    def finish(self) -> None:
        pass


def visible(text: object) -> str:
    """``text`` with every control or other unprintable character written as its Python escape (``\\x1b``,
    ``\\n``): a file name holding an escape sequence must not reach the terminal raw and act on it."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in str(text))


class PlainReporter(Reporter):
    """``timelock <kind> key=value ...`` lines on stderr: for logs, and what the kill test reads."""

    def __init__(self, stream: TextIO | None = None, period: float = 1.0):
        super().__init__(stream)
        self.period = period
        self._last = 0.0

    def _line(self, kind: str, **fields: Any) -> None:
        parts = " ".join(f"{k}={visible(v)}" for k, v in fields.items())
        print(f"timelock {kind} {parts}".rstrip(), file=self._out(), flush=True)

    def start(self, *, label: str, t: int, step: int, backend: str, bits: int) -> None:
        self._line("start", puzzle=label, bits=bits, t=t, step=step, backend=backend)

    def progress(self, *, step: int, t: int, rate: float, eta: float | None, segment: int) -> None:
        now = time.monotonic()
        if now - self._last >= self.period or step >= t:
            self._last = now
            self._line("progress", step=step, t=t, rate=f"{rate:.0f}", eta=format_duration(eta), segment=segment)

    def event(self, kind: str, text: str, **fields: Any) -> None:
        self._line(kind, **fields, msg=repr(text))

    def proof(self, *, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self._last >= self.period or done >= total:
            self._last = now
            self._line("proof", done=done, total=total)


class RichReporter(Reporter):
    """A rich progress bar on stderr: done/total squarings, rate in squarings/s, ETA; events above it."""

    def __init__(self, console=None):
        super().__init__()
        from rich.console import Console

        self.console = console or Console(stderr=True)
        self._progress = None
        self._task = None
        self._last = 0.0
        self._latest: tuple[int, int, float, float | None] | None = None

    def start(self, *, label: str, t: int, step: int, backend: str, bits: int) -> None:
        from rich.progress import BarColumn, Progress, TextColumn

        self._progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(),
            TextColumn("{task.fields[pct]}"), TextColumn("{task.fields[done]}/{task.fields[tot]} sq"),
            TextColumn("[cyan]{task.fields[rate]}"), TextColumn("ETA [green]{task.fields[eta]}"),
            console=self.console, transient=False, refresh_per_second=4)
        self._progress.start()
        from rich.markup import escape

        name = escape(visible(os.path.basename(label)))
        self._task = self._progress.add_task(f"{name} ({bits} bits, {backend})", total=t, completed=step,
                                             pct=self._pct(step, t), done=format_count(step),
                                             tot=format_count(t), rate="-", eta="?")

    @staticmethod
    def _pct(step: int, t: int) -> str:
        pct = 100.0 * step / t
        return f"{pct:6.2f}%" if pct >= 0.01 or step == 0 else f"{pct:.2e}%"

    def progress(self, *, step: int, t: int, rate: float, eta: float | None, segment: int) -> None:
        self._latest = (step, t, rate, eta)
        now = time.monotonic()
        if self._progress is None or (now - self._last < 0.1 and step < t):
            return
        self._last = now
        self._show(step, t, rate, eta)

    def _show(self, step: int, t: int, rate: float, eta: float | None) -> None:
        self._progress.update(self._task, completed=step, pct=self._pct(step, t), done=format_count(step),
                              rate=f"{format_count(rate)} sq/s", eta=format_duration(eta))

    def event(self, kind: str, text: str, **fields: Any) -> None:
        from rich.markup import escape

        if kind in WARNING_KINDS:
            self.console.print(f"[yellow]modforge: {escape(visible(text))}[/yellow]", highlight=False)
        elif kind in ("resume", "done", "state"):
            self.console.print(escape(visible(text)), highlight=False)

    def proof(self, *, done: int, total: int) -> None:
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

        if self._progress is None:      # the squaring's bar has finished: a bar of its own
            self._progress = Progress(TextColumn("[bold]proof"), BarColumn(), TaskProgressColumn(),
                                      TextColumn("ETA"), TimeRemainingColumn(), console=self.console,
                                      transient=False, refresh_per_second=4)
            self._progress.start()
            self._task = self._progress.add_task("proof", total=total, completed=done)
            self._latest = None
        self._progress.update(self._task, completed=done, total=total)
        if done >= total:
            self.finish()

    def finish(self) -> None:
        if self._progress is not None:
            if self._latest is not None:
                self._show(*self._latest)
            self._progress.stop()
            self._progress = None


def make_reporter(mode: str, interval: float) -> Reporter:
    """``auto`` (a bar on a terminal, else silent), ``bar``, ``plain`` or ``none``."""
    if mode == "auto":
        mode = "bar" if sys.stderr.isatty() else "none"
    if mode == "bar":
        return RichReporter()
    if mode == "plain":
        return PlainReporter(period=min(1.0, max(0.02, interval / 4)))
    return Reporter()
