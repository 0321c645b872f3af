"""Engine backends on the native engine (:mod:`modforge._native`).

One class per native backend, each built as ``Backend(modulus)`` with the
protocol of :mod:`modforge.engine.reference`: ``name``, ``supported()``, and
``sqr``, ``mul``, ``sqr_n``, ``pow`` on canonical integers, plus
``multiexp(bases, exponents)`` (product of powers, native).  ``sqr_n`` stays
in native code for all ``k`` squarings and releases the GIL.

* :class:`PortableBackend` (``portable``): Montgomery form on u64 limbs, any
  CPU, any odd modulus from 3 up to 4096 bits.
* :class:`AdxBackend` (``adx``): the same Montgomery code for x86-64 with
  BMI2 + ADX (MULX); 256 to 4096 bits.
* :class:`IfmaBackend` (``ifma``): AVX-512 IFMA, redundant radix-2^50 digits
  with a fixed-modulus table fold; 256 to 4096 bits.
* :class:`Avx512fBackend` (``avx512f``): AVX-512F without IFMA (``vpmuludq``),
  redundant radix-2^27/2^28 digits with the same kind of table fold; 256 to
  4096 bits.  For the AVX-512 CPUs without IFMA (Skylake-SP, Cascade Lake).
* :class:`FmaBackend` (``fma``): AVX2 + FMA, the ``ifma`` backend's radix-2^50
  digits and table fold with each digit product split exactly by two FP64
  fused multiply-adds; 256 to 4096 bits.  For x86 CPUs without AVX-512.
* :class:`Avx2Backend` (``avx2``): the same fold and digits as ``avx512f`` in
  256-bit vectors (AVX2 ``vpmuludq``); 256 to 4096 bits.  For the CPUs
  without AVX-512 (AMD Zen 1-3, Intel client cores).
* :class:`IfmaMontBackend` (``ifma-mont``): the AVX-512 IFMA Montgomery
  variant the fold was measured against (not registered in the engine;
  ``benchmarks/native_tune.py`` times it).

``supported()`` is the native dispatcher's run-time CPU check; a backend
built on a machine without its instructions raises
:class:`~modforge.arith.base.ParameterError` naming ``backend``.
"""

from __future__ import annotations

from .. import native


class _NativeBackend:
    name = ""

    @classmethod
    def supported(cls) -> bool:
        return native.backend_supported(cls.name)

    def __init__(self, modulus: int):
        self.modulus = modulus
        self._ring = native.Ring(modulus, self.name)

    def sqr(self, x: int) -> int:
        return self._ring.sqr(x)

    def mul(self, x: int, y: int) -> int:
        return self._ring.mul(x, y)

    def sqr_n(self, x: int, k: int) -> int:
        return self._ring.sqr_n(x, k)

    def sqr_n_trace(self, x: int, step: int, count: int) -> list[int]:
        return self._ring.sqr_n_trace(x, step, count)

    def pow(self, x: int, e: int) -> int:
        return self._ring.pow(x, e)

    def multiexp(self, bases, exponents, threads: int = 1) -> int:
        """``prod(b_i ** e_i) mod modulus`` (native multi-exponentiation, GIL released, on ``threads`` threads)."""
        return self._ring.multiexp(bases, exponents, threads)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.modulus.bit_length()}-bit modulus)"


class PortableBackend(_NativeBackend):
    name = "portable"


class AdxBackend(_NativeBackend):
    name = "adx"


class IfmaBackend(_NativeBackend):
    name = "ifma"


class Avx512fBackend(_NativeBackend):
    name = "avx512f"


class FmaBackend(_NativeBackend):
    name = "fma"
class Avx2Backend(_NativeBackend):
    name = "avx2"


class IfmaMontBackend(_NativeBackend):
    name = "ifma-mont"
