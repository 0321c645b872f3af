"""Python face of the native engine, the Rust extension :mod:`modforge._native`.

The extension is built by ``make`` (``maturin develop --release``).  This
module imports without it: :func:`available` says whether it is there, and
every kernel raises :class:`NativeUnavailableError` (an :class:`ImportError`)
when it is not.

Kernels check their inputs in Rust and raise :class:`ValueError` with the
:class:`~modforge.arith.base.ParameterError` wording, ``"<param>: <problem>"``;
this face re-raises those as :class:`~modforge.arith.base.ParameterError`, so
``.param`` names the offending parameter (``modulus``, ``a``, ``b``, ``x``,
``y``, ``k``, ``e`` or ``backend``).

Besides the single Montgomery product :func:`mont_mul`, the engine offers
rings over one fixed odd modulus on several backends (:class:`Ring`; see
docs/native.md): ``portable`` (any CPU), ``adx`` (x86-64 BMI2 + ADX),
``ifma`` (AVX-512 IFMA), ``avx512f`` (AVX-512F without IFMA), ``avx2`` (the
``avx512f`` fold in 256-bit vectors, for CPUs without AVX-512), plus
``fold-portable`` and ``fold32-portable`` (the scalar twins of ``ifma`` and
``avx512f``) and ``ifma-mont`` (the IFMA Montgomery variant it was measured
against).  :func:`supported_backends` lists those this CPU runs.
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


_PARAMS = ("modulus", "a", "b", "x", "y", "k", "e", "backend", "c", "p", "q", "dp", "dq", "exp_bits", "qinv",
           "bases", "exponents", "step", "count", "threads")


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


def backends() -> list[str]:
    """Every backend compiled into the engine (whether or not this CPU runs it)."""
    return list(_engine().backends())


def supported_backends() -> list[str]:
    """The compiled backends this CPU runs (the dispatcher's run-time CPU check)."""
    return list(_engine().supported_backends())


def backend_supported(name: str) -> bool:
    """Whether the engine is built and this CPU runs backend ``name``."""
    return _ext is not None and bool(_ext.backend_supported(name))


def cpu_features() -> dict[str, bool]:
    """The CPU features the backends look at (``bmi2``, ``adx``, ``avx512f``, ``avx512ifma``, ...)."""
    return dict(_engine().cpu_features())


class RsaKernel:
    """The constant-time native RSA kernel (contract in docs/rsa.md), registered as ``native`` in
    :mod:`modforge.rsa.exp`.

    Calling it, ``rsa_crt_halves(c, p, dp, q, dq, exp_bits)``, returns ``(c^dp mod p, c^dq mod q)``
    and derives the per-prime constants and tables on every call.  :meth:`prepare` does that once
    per key and returns a :class:`PreparedRsaKey`, which also recombines (Garner) and checks the
    result with the public exponent in native code.  Bad input raises :class:`ParameterError`
    naming ``c``, ``p``, ``q``, ``dp``, ``dq``, ``qinv``, ``e`` or ``exp_bits``.
    """

    __slots__ = ()

    def __call__(self, c: int, p: int, dp: int, q: int, dq: int, exp_bits: int) -> tuple[int, int]:
        try:
            return _engine().rsa_crt_halves(c, p, dp, q, dq, exp_bits)
        except ValueError as exc:
            raise _as_parameter_error(exc) from None

    def prepare(self, p: int, q: int, qinv: int, e: int) -> "PreparedRsaKey":
        return PreparedRsaKey(p, q, qinv, e)

    def __repr__(self) -> str:
        return "modforge.native.rsa_crt_halves"


class PreparedRsaKey:
    """One private key prepared for the native kernel: per prime the Montgomery constants, the
    fold table and the kernel, plus a kernel modulo ``n`` for the check (zeroed when freed).

    ``halves(c, dp, dq, exp_bits)`` as the kernel; ``private(c, dp, dq, exp_bits)`` is the
    whole checked operation - halves, Garner, ``x^e == c (mod n)`` - and returns ``None`` when
    the check fails, so a faulty value never reaches Python.
    """

    __slots__ = ("_key",)

    def __init__(self, p: int, q: int, qinv: int, e: int):
        try:
            self._key = _engine().RsaKey(p, q, qinv, e)
        except ValueError as exc:
            raise _as_parameter_error(exc) from None

    def halves(self, c: int, dp: int, dq: int, exp_bits: int) -> tuple[int, int]:
        try:
            return self._key.halves(c, dp, dq, exp_bits)
        except ValueError as exc:
            raise _as_parameter_error(exc) from None

    def recombine(self, xp: int, xq: int) -> int:
        return self._key.recombine(xp, xq)

    def check(self, x: int, c: int) -> bool:
        return self._key.check(x, c)

    def private(self, c: int, dp: int, dq: int, exp_bits: int, *, _fault: int = 0) -> int | None:
        try:
            return self._key.private(c, dp, dq, exp_bits, _fault)
        except ValueError as exc:
            raise _as_parameter_error(exc) from None

    def __repr__(self) -> str:
        return f"PreparedRsaKey(bits={self._key.bits})"


rsa_crt_halves = RsaKernel()


class Ring:
    """Arithmetic modulo a fixed odd ``modulus`` on one native backend.

    ``Ring(modulus, backend="portable")``.  ``sqr``, ``mul``, ``sqr_n`` and
    ``pow`` take and return canonical integers in ``[0, modulus)``.
    ``sqr_n(x, k)`` runs its ``k`` squarings in native code without the GIL
    (Ctrl-C is honoured every few tens of milliseconds).  Bad input raises
    :class:`ParameterError` naming the parameter.
    """

    __slots__ = ("_ring",)

    def __init__(self, modulus: int, backend: str = "portable"):
        try:
            self._ring = _engine().Ring(modulus, backend)
        except ValueError as exc:
            raise _as_parameter_error(exc) from None

    @property
    def backend(self) -> str:
        return self._ring.backend

    @property
    def modulus(self) -> int:
        return self._ring.modulus

    def sqr(self, x: int) -> int:
        try:
            return self._ring.sqr(x)
        except ValueError as exc:
            raise _as_parameter_error(exc) from None

    def mul(self, x: int, y: int) -> int:
        try:
            return self._ring.mul(x, y)
        except ValueError as exc:
            raise _as_parameter_error(exc) from None

    def sqr_n(self, x: int, k: int) -> int:
        try:
            return self._ring.sqr_n(x, k)
        except ValueError as exc:
            raise _as_parameter_error(exc) from None

    def sqr_n_trace(self, x: int, step: int, count: int) -> list[int]:
        """``[x**(2**(i*step)) % modulus for i in 1..count]`` in one native call (no GIL)."""
        try:
            return self._ring.sqr_n_trace(x, step, count)
        except ValueError as exc:
            raise _as_parameter_error(exc) from None

    def pow(self, x: int, e: int) -> int:
        try:
            return self._ring.pow(x, e)
        except ValueError as exc:
            raise _as_parameter_error(exc) from None

    def multiexp(self, bases, exponents, threads: int = 1) -> int:
        """``prod(b**e) mod modulus`` over pairs of ``bases`` (in ``[0, modulus)``) and ``exponents`` (``>= 0``).

        Straus's interleaved windows (Pippenger's buckets above 64 bases) in native code, without the GIL;
        ``threads`` splits the exponent bits among that many threads.  Not constant time.
        """
        try:
            return self._ring.multiexp(bases, exponents, threads)
        except ValueError as exc:
            raise _as_parameter_error(exc) from None

    def __repr__(self) -> str:
        return repr(self._ring)
