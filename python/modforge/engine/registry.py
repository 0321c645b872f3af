"""The engine's table of backends: name -> the class that implements it, imported on first use.

The lowest module of the engine: :mod:`~modforge.engine.backends` (which checks and loads) and
:mod:`~modforge.engine.tuning` (which times candidates) both read this table, and neither imports the
other's internals.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..arith.base import ParameterError

# name -> "module:Class"; the native entries are filled by the native engine.
_BACKENDS: dict[str, str] = {
    "gmp": "modforge.engine.reference:GmpBackend",
    "python": "modforge.engine.reference:PythonBackend",
    "portable": "modforge.engine.native_backend:PortableBackend",
    "adx": "modforge.engine.native_backend:AdxBackend",
    "ifma": "modforge.engine.native_backend:IfmaBackend",
    "avx512f": "modforge.engine.native_backend:Avx512fBackend",
    "fma": "modforge.engine.native_backend:FmaBackend",
    "avx2": "modforge.engine.native_backend:Avx2Backend",
}


def register(name: str, target: str) -> None:
    """Add a backend (``target`` is ``"module:Class"``); used by optional engines."""
    _BACKENDS[name] = target


# ``sim:<design>`` runs on a simulated hardware design; the simulator and the
# RTL generators load only when such a backend is asked for.
SIM_PREFIX = "sim:"
_SIM_TARGET = "modforge.engine.sim_backend:SimBackend"


def backend_names() -> list[str]:
    return ["auto", *_BACKENDS, SIM_PREFIX + "<design>"]


def resolve(name: str) -> Any:
    """The class registered as ``name``; ParameterError listing the names when there is none."""
    try:
        target = _BACKENDS[name]
    except KeyError:
        raise ParameterError("backend", f"unknown backend {name!r}; choose one of: {', '.join(backend_names())}") from None
    module_name, _, cls = target.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, cls)
