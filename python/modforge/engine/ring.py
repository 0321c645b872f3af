"""``ModRing``: arithmetic modulo a fixed N over a chosen backend."""

from __future__ import annotations

from ..arith.base import ParameterError, check_operand, exact_int, require_int, require_modulus
from . import backends


MAX_K = 1 << 64            # squarings per sqr_n call, on every backend (the native ones count in a u64)
MAX_TRACE = 1 << 24        # values per sqr_n_trace call, on every backend (memory)
MAX_THREADS = 256          # multiexp's threads, on every backend (the native code's own bound)


def _ints(values) -> list:
    """``values`` as a list, ``gmpy2.mpz`` as Python ints; anything else is left for the checks to name."""
    return [v if type(v) is int or exact_int(v) is None else exact_int(v) for v in values]


class ModRing:
    """Arithmetic modulo a fixed ``modulus``; operands and results are canonical integers."""

    def __init__(self, modulus: int, backend: str = "auto"):
        self.modulus = require_modulus(modulus)
        self._impl = backends.load(backend, self.modulus)

    @property
    def backend(self) -> str:
        return self._impl.name

    @property
    def bits(self) -> int:
        return self.modulus.bit_length()

    def _check(self, name: str, x: int) -> int:
        return check_operand(name, x, self.modulus)

    def sqr(self, x: int) -> int:
        return self._impl.sqr(self._check("x", x))

    def mul(self, x: int, y: int) -> int:
        return self._impl.mul(self._check("x", x), self._check("y", y))

    def sqr_n(self, x: int, k: int) -> int:
        """``x**(2**k) mod N`` in one call (native backends stay in native code)."""
        k = require_int("k", k)
        if k < 0:
            raise ParameterError("k", f"must be non-negative, got {k}")
        if k >= MAX_K:
            raise ParameterError("k", f"must be below 2**64, got a value of {k.bit_length()} bits")
        return self._impl.sqr_n(self._check("x", x), k)

    def sqr_n_trace(self, x: int, step: int, count: int) -> list[int]:
        """``[x**(2**(i*step)) mod N for i in 1..count]``: ``count*step`` squarings keeping every ``step``-th.

        One native call on the native backends (a VDF evaluation's checkpoints without a round trip
        through Python per checkpoint); a loop of :meth:`sqr_n` elsewhere.
        """
        step, count = require_int("step", step), require_int("count", count)
        if step < 1:
            raise ParameterError("step", f"must be at least 1, got {step}")
        if count < 0:
            raise ParameterError("count", f"must be non-negative, got {count}")
        if count > MAX_TRACE:
            raise ParameterError("count", f"at most 2^24 values per call, got {count}")
        if step >= MAX_K:
            raise ParameterError("step", f"must be below 2**64, got a value of {step.bit_length()} bits")
        x = self._check("x", x)
        native = getattr(self._impl, "sqr_n_trace", None)
        if native is not None:
            return native(x, step, count)
        out = []
        for _ in range(count):
            x = self._impl.sqr_n(x, step)
            out.append(x)
        return out

    def pow(self, x: int, e: int) -> int:
        e = require_int("e", e)
        if e < 0:
            raise ParameterError("e", "negative exponents are not supported")
        return self._impl.pow(self._check("x", x), e)

    def multiexp(self, bases: list[int], exponents: list[int], *, threads: int = 1) -> int:
        """``prod(b_i ** e_i) mod N``: in native code when the backend has it, else one ``pow`` per base.

        ``threads > 1`` lets the native code split the exponent bits among that many threads (ignored
        elsewhere).  Not constant-time (VDF proofs work on public values).
        """
        for name, values in (("bases", bases), ("exponents", exponents)):
            if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or not hasattr(values, "__iter__"):
                raise ParameterError(name, f"must be a list of integers, got {type(values).__name__}")
        if len(bases) != len(exponents):
            raise ParameterError("exponents", f"{len(exponents)} exponents for {len(bases)} bases")
        threads = require_int("threads", threads)
        if not 1 <= threads <= MAX_THREADS:
            # The native limit, on every backend alike.
            raise ParameterError("threads", f"must be between 1 and {MAX_THREADS}, got {threads}")
        native = getattr(self._impl, "multiexp", None)
        if native is not None:
            # The native code checks every base and exponent itself (ParameterError "bases" / "exponents");
            # it takes Python ints only, so other exact integers (gmpy2.mpz) are converted first.
            return native(_ints(bases), _ints(exponents), threads)
        for b in bases:
            self._check("bases", b)
        for e in exponents:
            if require_int("exponents", e) < 0:
                raise ParameterError("exponents", "negative exponents are not supported")
        acc = 1 % self.modulus
        for b, e in zip(bases, exponents):
            acc = self._impl.mul(acc, self._impl.pow(b, e))
        return acc

    @property
    def has_native_multiexp(self) -> bool:
        return getattr(self._impl, "multiexp", None) is not None

    def report(self) -> dict:
        """What the backend says about its work so far (a simulated design: cycles, projected time); may be empty."""
        report = getattr(self._impl, "report", None)
        return report() if callable(report) else {}

    def __repr__(self) -> str:
        return f"ModRing({self.bits}-bit modulus, backend={self.backend!r})"
