"""The one face applications use: a modular ring over pluggable backends.

``ModRing(N, backend="auto")`` offers ``sqr``, ``mul``, ``sqr_n`` and ``pow``
on canonical Python integers.  Backends are loaded only when asked for (see
:mod:`modforge.engine.backends`), so the hardware toolchain behind a ``sim``
backend is imported only by those who use it.
"""

from .backends import available_backends, backend_names, check_backend
from .ring import ModRing

__all__ = ["ModRing", "available_backends", "backend_names", "check_backend"]
