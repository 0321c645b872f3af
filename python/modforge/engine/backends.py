"""Backend registry of the engine.

A backend is a class built as ``Backend(modulus)`` with ``name``, ``sqr``,
``mul``, ``sqr_n`` and ``pow`` on canonical integers.  Each entry names the
module and class that implement it, imported on first use.  ``auto`` takes
the fastest backend the machine supports for the modulus width, from tuning
data or, on a CPU the data was not measured on, from a short measurement of its
own (:mod:`modforge.engine.tuning`), falling back to GMP.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..arith.base import ParameterError

# The table itself lives in .registry, below both this module and .tuning.
from .registry import _BACKENDS, _SIM_TARGET, SIM_PREFIX, backend_names, register  # noqa: F401 - re-exported
from .registry import resolve as _resolve


def _runs_here(name: str) -> bool:
    """Whether the registered backend ``name`` imports and the CPU has its instructions."""
    try:
        cls = _resolve(name)
    except ImportError:
        return False
    return getattr(cls, "supported", lambda: True)()


def available_backends() -> list[str]:
    """Backends this machine can run (import works and the CPU has the instructions)."""
    return [name for name in _BACKENDS if _runs_here(name)]


def check_backend(name: str) -> str:
    """``name`` when it is ``auto``, a ``sim:<design>`` (checked as it loads) or a backend this machine runs;
    otherwise a ParameterError, worded here for every command and ModRing alike."""
    if not isinstance(name, str):
        raise ParameterError("backend", f"must be a backend name (a string), got {type(name).__name__}")
    if name == "auto" or name.startswith(SIM_PREFIX):
        return name
    if name not in _BACKENDS:
        _resolve(name)                  # unknown: its error lists the names
    if not _runs_here(name):
        # Known, but the CPU lacks its instructions (or the native extension is not built): say what runs.
        raise ParameterError("backend", f"{name!r} is not available on this machine; available: "
                                        f"{', '.join(['auto', *available_backends()])}")
    return name


def load(name: str, modulus: int) -> Any:
    check_backend(name)
    if name.startswith(SIM_PREFIX):
        module_name, _, cls = _SIM_TARGET.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ParameterError("backend", f"{name!r} needs the hardware simulator, which is not available: {exc}") from None
        return getattr(module, cls)(modulus, design=name[len(SIM_PREFIX):])
    if name == "auto":
        from .tuning import ranked_backends

        for candidate in ranked_backends(modulus.bit_length(), available_backends()):
            try:
                return _resolve(candidate)(modulus)
            except ValueError:
                continue  # this modulus is outside the backend's width range: take the next best
    return _resolve(name)(modulus)
