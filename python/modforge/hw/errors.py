"""Errors of the hardware flow that are not bad input: a tool or a simulation failed (exit 1 in the CLI)."""

from __future__ import annotations


class HardwareError(RuntimeError):
    """Lint, build, synthesis or simulation failed; the message says which and why, on its first line."""
