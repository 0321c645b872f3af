"""Python face of the native engine, the Rust extension :mod:`modforge._native`.

The extension is built by ``make`` (``maturin develop --release``).  This
module imports without it: :func:`available` says whether it is there, and
every kernel raises :class:`NativeUnavailableError` (an :class:`ImportError`)
when it is not.

Kernels check their inputs in Rust and raise :class:`ValueError` with the
:class:`~modforge.arith.base.ParameterError` wording, ``"<param>: <problem>"``;
this face re-raises those as :class:`~modforge.arith.base.ParameterError`, so
``.param`` names the offending parameter (``modulus``, ``a`` or ``b``).
"""

from __future__ import annotations

from types import ModuleType

from .arith.base import ParameterError

LIMB_BITS = 64

_ext: ModuleType | None
_import_error: ImportError | None
try:
    from . import _native as _ext
except ImportError as exc:  # not built, or built for another interpreter
    _ext, _import_error = None, exc
else:
    _import_error = None


class NativeUnavailableError(ImportError):
    """The compiled extension :mod:`modforge._native` could not be imported."""


def available() -> bool:
    """Whether the compiled extension is importable."""
    return _ext is not None


def _engine() -> ModuleType:
    if _ext is None:
        raise NativeUnavailableError(
            f"the native engine is not built: run `make` (importing modforge._native failed: {_import_error})"
        ) from _import_error
    return _ext


_PARAMS = ("modulus", "a", "b")


def _as_parameter_error(exc: ValueError) -> ValueError:
    param, sep, problem = str(exc).partition(": ")
    if sep and param in _PARAMS:
        return ParameterError(param, problem)
    return exc


def limb_count(m: int) -> int:
    """Number of 64-bit limbs ``L`` of the odd modulus ``m`` (so ``R = 2**(64*L)``)."""
    try:
        return _engine().limb_count(m)
    except ValueError as exc:
        raise _as_parameter_error(exc) from None


def montgomery_radix(m: int) -> int:
    """The Montgomery radix ``R = 2**(64*L)`` that :func:`mont_mul` uses for ``m``."""
    return 1 << (LIMB_BITS * limb_count(m))


def mont_mul(a: int, b: int, m: int) -> int:
    """Montgomery product ``a*b*R**-1 mod m`` in ``[0, m)``, ``R = montgomery_radix(m)``.

    ``m`` must be an odd integer >= 3 and ``0 <= a, b < m``; otherwise
    :class:`ParameterError` naming ``modulus``, ``a`` or ``b``.
    """
    try:
        return _engine().mont_mul(a, b, m)
    except ValueError as exc:
        raise _as_parameter_error(exc) from None
