"""The two CRT exponentiations of an RSA private-key operation, behind one function.

:func:`crt_halves` returns ``(c^dp mod p, c^dq mod q)``.  It draws the
exponent blinding, then hands the work to a *kernel*, a function with the
signature

    kernel(c, p, dp, q, dq, exp_bits) -> (xp, xq)

where ``0 <= c < p*q``, ``dp < 2**exp_bits`` and ``dq < 2**exp_bits`` (the
exponents arrive already blinded, ``exp_bits`` is public), and the results
are canonical, ``0 <= xp < p`` and ``0 <= xq < q``.  The contract a native
kernel must meet, constant time included, is in docs/rsa.md.

Kernels (``backend=``):

* ``python``: :func:`python_halves`, the reference and the fallback - a
  fixed-window Montgomery exponentiation on Python integers, constant-time in
  *structure*: every window does ``w`` squarings and one multiplication, the
  table is read by scanning all ``2**w`` entries with arithmetic masks, the
  Montgomery products stay redundant (below ``2m``, Walter's bound with
  ``R > 4m``) so there is no data-dependent final subtraction - seed 004
  Sec. 3.1: "we modify Montgomery's algorithm in order to eliminate a
  comparison against the modulus and a conditional subtraction ... and reduce
  only once to an irredundant form during the final output stage" - and the
  inverse ``-m^-1 mod R`` comes from a fixed number of Newton steps instead of
  Euclid.  CPython's big-integer arithmetic itself is *not* constant time
  (its cost depends on operand sizes, and ``%`` divides), so this path does
  not resist a timing attacker; it fixes the operation sequence the native
  kernel must follow and checks it.
* ``native``: ``modforge.native.rsa_crt_halves``, the Rust constant-time kernel:
  fixed windows and masked table scans on the fastest code path this CPU has
  (``HalfKernel::best`` in native/crates/modforge-rsa): the IFMA fold where the CPU has
  AVX-512 IFMA, else the 32-bit-product fold of the ``avx512f`` backend
  (``vpmuludq``) where it has AVX-512F, else scalar almost-Montgomery products
  (MULX/ADX where present); see docs/rsa.md, "The native kernel", and
  docs/native.md, "The RSA kernel".
* ``auto``: ``native`` when it is available and takes the key, else ``python``.
  The native kernel takes primes of up to :data:`NATIVE_MAX_PRIME_BITS` bits,
  so an 8192-bit key (two 4096-bit primes) runs on ``python``: the documented
  slower path (docs/rsa.md, "8192-bit keys").

A multi-prime key (RFC 8017 Sec. 3.2) runs through the same kernels:
:func:`crt_residues` hands them its primes two at a time (the last one twice
when their number is odd), and :func:`modforge.rsa.primitives` recombines.

Other kernels join with :func:`register_backend` (tests use it to inject
faults; see :mod:`modforge.rsa.primitives` for the check that catches them).
"""

from __future__ import annotations

import importlib
import secrets
from dataclasses import dataclass
from typing import Callable, TYPE_CHECKING, Union

from ..arith.base import ParameterError

if TYPE_CHECKING:
    from .keys import RSAPrivateKey

Kernel = Callable[[int, int, int, int, int, int], tuple[int, int]]

DEFAULT_BLIND_BITS = 64
# The widest prime the native kernel takes (native/crates/modforge-py: rsa_prime): 4096-bit keys.
NATIVE_MAX_PRIME_BITS = 2048

# name -> a kernel, or "module:function" imported on first use.
_BACKENDS: dict[str, Union[Kernel, str]] = {
    "python": "modforge.rsa.exp:python_halves",
    "native": "modforge.native:rsa_crt_halves",
    # Seed 004's modular product unit, Verilated (modforge.hw.pam_rsa): for checking the hardware.
    "sim:pam": "modforge.hw.pam_rsa:sim_pam_halves",
}


# (name, "module:function") -> the kernel it loaded: the import and availability check cost about 8 us,
# 3 % of a 2048-bit signature, on every operation.  Keyed by the target too, so re-registering a name
# under another target loads that one.
_LOADED: dict[tuple[str, str], Kernel] = {}


def register_backend(name: str, kernel: Union[Kernel, str]) -> None:
    """Add or replace a kernel (a callable, or ``"module:function"``)."""
    if name == "auto":
        raise ParameterError("backend", "'auto' is reserved")
    _BACKENDS[name] = kernel


def unregister_backend(name: str) -> None:
    _BACKENDS.pop(name, None)


def backend_names() -> list[str]:
    return ["auto", *_BACKENDS]


def _native_unavailable(detail: str) -> ParameterError:
    return ParameterError("backend", f"the native RSA kernel is not available ({detail}); use --backend python")


def resolve_backend(name: str) -> Kernel:
    """The kernel called ``name``; ``auto`` prefers ``native``."""
    if name == "auto":
        try:
            return resolve_backend("native")
        except ParameterError:
            return resolve_backend("python")
    try:
        target = _BACKENDS[name]
    except KeyError:
        from ..engine import backend_names as engine_backends

        # The engine's names (ifma, avx512f...) are no RSA kernels: native picks among its code paths itself.
        hint = f" ({name!r} is a backend of the engine, for vdf and timelock; native picks IFMA, AVX-512F or " \
            f"scalar code itself)" if name in engine_backends() else ""
        raise ParameterError("backend", f"unknown backend {name!r}; choose one of: "
                                        f"{', '.join(backend_names())}{hint}") from None
    if callable(target):
        return target
    loaded = _LOADED.get((name, target))
    if loaded is not None:
        return loaded
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise _native_unavailable(str(exc)) if name == "native" else ParameterError(
            "backend", f"{name!r} cannot be loaded: {exc}") from None
    if name == "native" and not getattr(module, "available", lambda: True)():
        raise _native_unavailable("the extension is not built")
    kernel = getattr(module, attr, None)
    if kernel is None:
        if name == "native":
            raise _native_unavailable(f"{module_name} has no {attr}")
        raise ParameterError("backend", f"{name!r}: {module_name} has no {attr}")
    _LOADED[(name, target)] = kernel
    return kernel


def key_backend(key: "RSAPrivateKey", name: str) -> str:
    """The backend ``name`` means for ``key``: ``auto`` is ``python`` for a key wider than the native kernel
    takes (an 8192-bit key), ``name`` otherwise.  A key of up to 4096 bits whose prime is too wide for it
    (an unbalanced key) is not moved silently: the kernel says so (:func:`prepared`)."""
    if name == "auto" and key.bits > 2 * NATIVE_MAX_PRIME_BITS:
        return "python"
    return name


def backend_name(name: str, key: "RSAPrivateKey | None" = None) -> str:
    """What ``name`` resolves to (``auto`` -> ``native`` or ``python``), for ``key`` when given."""
    if key is not None:
        name = key_backend(key, name)
    if name != "auto":
        resolve_backend(name)
        return name
    try:
        resolve_backend("native")
        return "native"
    except ParameterError:
        return "python"


# ------------------------------------------------------------------------- the operation itself


def blind_exponent(d_half: int, prime: int, blind_bits: int) -> int:
    """``d_half + r*(prime - 1)`` with a fresh random ``r < 2**blind_bits`` (same result, new bit pattern)."""
    if blind_bits <= 0:
        return d_half
    return d_half + secrets.randbits(blind_bits) * (prime - 1)


def exponent_bits(key: "RSAPrivateKey", blind_bits: int) -> int:
    """The public, fixed exponent length both halves are processed at."""
    return max(key.p.bit_length(), key.q.bit_length()) + max(blind_bits, 0)


def blinded_exponents(key: "RSAPrivateKey", blind_bits: int) -> tuple[int, int, int]:
    """``(dp', dq', exp_bits)``: both exponents freshly blinded, and the public length they are processed at."""
    if not 0 <= blind_bits <= 256:
        raise ParameterError("blind_bits", f"must be between 0 and 256, got {blind_bits}")
    return (blind_exponent(key.dp, key.p, blind_bits), blind_exponent(key.dq, key.q, blind_bits),
            exponent_bits(key, blind_bits))


def crt_halves(c: int, key: "RSAPrivateKey", *, backend: str = "auto",
               blind_bits: int = DEFAULT_BLIND_BITS) -> tuple[int, int]:
    """``(c^dp mod p, c^dq mod q)`` for ``0 <= c < n`` through the kernel ``backend``.

    ``blind_bits > 0`` blinds both exponents with a fresh random multiple of
    ``p-1`` (``q-1``) of that many bits; 0 turns blinding off.  A kernel that
    can be prepared per key (:func:`prepared`) runs prepared.
    """
    if not 0 <= c < key.n:
        raise ParameterError("c", "out of range: need 0 <= c < n")
    backend = key_backend(key, backend)
    dp, dq, bits = blinded_exponents(key, blind_bits)
    ready = prepared(key, backend)
    if ready is not None:
        return ready.halves(c, dp, dq, bits)
    return resolve_backend(backend)(c, key.p, dp, key.q, dq, bits)


def crt_residues(c: int, key: "RSAPrivateKey", *, backend: str = "auto",
                 blind_bits: int = DEFAULT_BLIND_BITS) -> list[int]:
    """``c^d_i mod r_i`` for every prime ``r_i`` of ``key`` (``key.primes`` order), each exponent blinded.

    The kernels take two primes per call: the primes go in pairs, the last one paired with itself when
    their number is odd; each call sees ``c`` reduced modulo its pair's product (``c^d mod r`` depends on
    ``c mod r`` only), and an exponent length of its own primes' (public) size."""
    if not 0 <= c < key.n:
        raise ParameterError("c", "out of range: need 0 <= c < n")
    if not 0 <= blind_bits <= 256:
        raise ParameterError("blind_bits", f"must be between 0 and 256, got {blind_bits}")
    kernel = resolve_backend(key_backend(key, backend))
    exponents = [key.dp, key.dq, *(d for _, d, _ in key.other_primes)]
    pairs = list(zip(key.primes, exponents))
    if len(pairs) % 2:
        pairs.append(pairs[-1])
    out: list[int] = []
    for (a, da), (b, db) in zip(pairs[::2], pairs[1::2]):
        bits = max(a.bit_length(), b.bit_length()) + blind_bits
        modulus = a * b if a != b else a * a
        xa, xb = kernel(c % modulus, a, blind_exponent(da, a, blind_bits), b, blind_exponent(db, b, blind_bits),
                        bits)
        out += [xa, xb]
    return out[:len(key.primes)]


def prepared(key: "RSAPrivateKey", backend: str = "auto"):
    """The kernel ``backend`` prepared for ``key``, or ``None`` when it has no ``prepare``.

    A kernel may offer ``prepare(p, q, qinv, e)``, returning an object with
    ``halves(c, dp, dq, exp_bits)`` and ``private(c, dp, dq, exp_bits) -> x | None``
    (the whole checked operation; ``None`` is a failed public-exponent check).
    The native kernel does (its per-key setup is a fifth of a 2048-bit
    operation).  The prepared object is cached on the key, in memory only; it
    is never pickled (:meth:`RSAPrivateKey.__getstate__`).
    """
    backend = key_backend(key, backend)
    kernel = resolve_backend(backend)
    prepare = getattr(kernel, "prepare", None)
    if prepare is None:
        return None
    cache = key.__dict__.setdefault("_prepared", {})
    # Keyed by id, holding the kernel too: a kernel freed and replaced at the same address must not
    # inherit another's prepared key.
    held = cache.get(id(kernel))
    if held is None or held[0] is not kernel:
        try:
            held = cache[id(kernel)] = (kernel, prepare(key.p, key.q, key.qinv, key.e))
        except ParameterError as exc:
            if exc.param not in ("p", "q"):
                raise
            # A key problem (a prime wider than the kernel takes, e.g. an unbalanced 4096-bit key), said
            # as one; no silent fall back to the Python path, which is constant-time in structure only.
            raise ParameterError("key", f"the {backend} kernel cannot use this key ({exc.param}: "
                                        f"{exc.problem}); --backend python can (constant-time in structure "
                                        f"only, docs/rsa.md)") from None
    return held[1]


# ------------------------------------------------------------- the Python reference kernel


@dataclass(frozen=True)
class MontContext:
    """Montgomery constants of an odd modulus ``m``, with ``R = 2**rbits > 4m`` (redundant results < 2m)."""

    m: int
    rbits: int
    mask: int        # R - 1
    minv: int        # -m^-1 mod R
    r2: int          # R^2 mod m
    one: int         # R mod m: 1 in the Montgomery domain

    @classmethod
    def of(cls, m: int) -> "MontContext":
        rbits = m.bit_length() + 2
        mask = (1 << rbits) - 1
        minv = (-_inverse_pow2(m, rbits)) & mask
        r2 = (1 << (2 * rbits)) % m
        return cls(m, rbits, mask, minv, r2, (1 << rbits) % m)

    def redc(self, t: int) -> int:
        """``t * R^-1 mod m``, redundant: ``t < 4m^2 < R*m`` gives a result below ``2m``; no subtraction."""
        u = ((t & self.mask) * self.minv) & self.mask
        return (t + u * self.m) >> self.rbits


def _inverse_pow2(m: int, bits: int) -> int:
    """``m^-1 mod 2**bits`` by Newton's iteration: a fixed number of steps (odd m is its own inverse mod 8)."""
    x, good = m, 3
    mask = (1 << bits) - 1
    while good < bits:                 # iteration count depends only on ``bits`` (public)
        x = (x * (2 - m * x)) & mask
        good *= 2
    return x & mask


def window_cost(exp_bits: int, w: int) -> int:
    """Montgomery products of one fixed-window exponentiation: the ``2**w - 2`` table entries beyond
    ``base^0, base^1``, then ``ceil(exp_bits / w)`` windows of ``w`` squarings and one multiplication."""
    return (1 << w) - 2 + -(-exp_bits // w) * (w + 1)


def default_window(exp_bits: int) -> int:
    """The window width (1..8) that minimises :func:`window_cost` (the smaller one on a tie).

    The masked table scan (``2**w`` AND/OR per window) is not counted: on
    CPython integers it costs a few percent, within the timing noise.
    """
    return min(range(1, 9), key=lambda w: (window_cost(exp_bits, w), w))


def ct_select(table: list[int], index: int, w: int) -> int:
    """``table[index]`` without indexing by ``index``: every entry is read, masked by ``(i ^ index) - 1 >> w``
    (-1 exactly when ``i == index``, else 0, since ``0 <= i ^ index < 2**w``)."""
    out = 0
    for i, entry in enumerate(table):
        out |= entry & (((i ^ index) - 1) >> w)
    return out


def window_exp(ctx: MontContext, base: int, e: int, exp_bits: int, w: int) -> int:
    """``base^e mod m`` for ``0 <= base < m``, ``e < 2**exp_bits``: fixed-window, fixed operation sequence."""
    table = [ctx.one, ctx.redc(base * ctx.r2)]          # Montgomery forms of base^0, base^1
    for _ in range(2, 1 << w):
        table.append(ctx.redc(table[-1] * table[1]))
    digit_mask = (1 << w) - 1
    acc = ctx.one
    for j in reversed(range(-(-exp_bits // w))):
        for _ in range(w):
            acc = ctx.redc(acc * acc)
        acc = ctx.redc(acc * ct_select(table, (e >> (j * w)) & digit_mask, w))
    r = ctx.redc(acc)                                    # out of the domain: r <= m, r == m only for 0
    below = (r - ctx.m) >> (ctx.rbits + 1)               # -1 when r < m, else 0
    return r - (ctx.m & ~below)


def python_halves(c: int, p: int, dp: int, q: int, dq: int, exp_bits: int, *,
                  window: int | None = None) -> tuple[int, int]:
    """The reference kernel: both halves by :func:`window_exp`, one after the other.

    The Montgomery constants are derived on every call (a Newton inverse and one
    reduction: about 2% of a 1024-bit half), so no secret outlives the call.
    """
    w = window or default_window(exp_bits)
    xp = window_exp(MontContext.of(p), c % p, dp, exp_bits, w)
    xq = window_exp(MontContext.of(q), c % q, dq, exp_bits, w)
    return xp, xq
