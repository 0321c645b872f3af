"""Differential tests of every native backend this CPU runs against gmpy2.

Named edge operands first (0, 1, N-1, N-2, all-ones limbs, powers of two near
N, all-ones radix-2^50 and radix-2^r digit patterns that drive the IFMA and
AVX-512F kernels' redundant digits to their largest values), then seeded random operands (the seed is in
every message: rerun one with ``random.Random(seed)``); ``sqr_n`` against
``gmpy2.powmod(x, 2**k, N)``, long runs (2^20 squarings from 2 at 1024 and
2048 bits, and on the VDF Alliance modulus), the GIL release of ``sqr_n``,
the error messages, and the engine registry entries.
"""

from __future__ import annotations

import random
import threading
import time

import gmpy2
import pytest

from modforge import native
from modforge.arith.base import ParameterError
from modforge.data import vdf_alliance_modulus
from modforge.engine import ModRing, available_backends
from modforge.engine import native_backend

pytestmark = pytest.mark.skipif(not native.available(), reason="native engine not built")

# Every native backend this CPU runs.  The scalar twins of ifma and avx512f
# are slow, so they join only the short tests.
ALL = native.supported_backends() if native.available() else []
TWINS = ("fold-portable", "fold32-portable")
FAST = [b for b in ALL if b not in TWINS]
WIDTHS = [256, 512, 1000, 1024, 1536, 2047, 2048, 3072, 4096]


def modulus(bits: int, seed: int) -> int:
    rng = random.Random(seed)
    return rng.getrandbits(bits) | (1 << (bits - 1)) | 1


def fold32_shape(bits: int) -> tuple[int, int]:
    """(r, K) of the AVX-512F kernel's fold, restated from docs/native.md: the widest r of 28, 27, 26 whose
    column bounds hold, K the least digit count with bits + bitlen(K+2) + 3 <= r K."""
    for r in (28, 27, 26):
        k = 1
        while bits + (k + 2).bit_length() + 3 > r * k:
            k += 1
        e1 = (1 << (r + 1)) + (1 << (64 - 2 * r)) - 1
        if 2 * e1 < 1 << 32 and (k + 2) * e1 * e1 < 1 << 64 and e1 + (k + 2) * e1 * ((1 << r) - 1) < 1 << 64:
            return r, k
    raise AssertionError(bits)


def edge_operands(n: int) -> dict[str, int]:
    bits = n.bit_length()
    limbs = -(-bits // 64)
    k = 1
    while bits + 1 + (k + 2).bit_length() > 50 * k:  # the IFMA plan's table digit count
        k += 1
    r32, k32 = fold32_shape(bits)
    ops = {
        "0": 0, "1": 1, "2": 2, "N-1": n - 1, "N-2": n - 2, "(N-1)/2": (n - 1) // 2,
        "2^(bits-1)": 1 << (bits - 1), "2^bits mod N": (1 << bits) % n,
        "R mod N": (1 << (64 * limbs)) % n, "R^2 mod N": (1 << (128 * limbs)) % n,
        "all-ones low limb": (1 << 64) - 1, "all-ones half": ((1 << (64 * (limbs // 2))) - 1) % n,
        "all-ones below top limb": ((1 << (64 * (limbs - 1))) - 1) % n,
        "all-ones 2^50 digits": ((1 << (50 * k)) - 1) % n,
        "2^(50K) mod N": (1 << (50 * k)) % n,
        "N - all-ones 2^50 digits below K-1": n - ((1 << (50 * (k - 1))) - 1) % n,
        "N - 2^(50K-1) mod N": (n - (1 << (50 * k - 1))) % n,
        "alternating bits": int("10" * (bits // 2), 2) % n,
        f"all-ones 2^{r32} digits": ((1 << (r32 * k32)) - 1) % n,
        f"2^({r32}K) mod N": (1 << (r32 * k32)) % n,
        f"N - 2^{r32} digits all ones below K-1": n - ((1 << (r32 * (k32 - 1))) - 1) % n,
        f"2^{r32} digits 0x..fff000": sum(((1 << r32) - (1 << (r32 // 2))) << (r32 * j) for j in range(k32)) % n,
    }
    return ops


def ring(n: int, backend: str) -> native.Ring:
    return native.Ring(n, backend)


@pytest.mark.parametrize("backend", ALL)
@pytest.mark.parametrize("bits", WIDTHS)
def test_edge_operands(backend: str, bits: int) -> None:
    if backend in TWINS and bits > 2048:
        pytest.skip("the scalar twin is slow; covered by the Rust tests")
    seed = 1000 + bits
    n = modulus(bits, seed)
    r = ring(n, backend)
    m = gmpy2.mpz(n)
    ops = edge_operands(n)
    names = sorted(ops)
    for i, name in enumerate(names):
        x = ops[name]
        ctx = f"backend={backend} bits={bits} seed={seed} x={name}"
        assert r.sqr(x) == x * x % n, ctx
        other = ops[names[(3 * i + 1) % len(names)]]
        assert r.mul(x, other) == x * other % n, f"{ctx} y={names[(3 * i + 1) % len(names)]}"
        for k in (0, 1, 2, 3):
            assert r.sqr_n(x, k) == int(gmpy2.powmod(x, 1 << k, m)), f"{ctx} k={k}"
        assert r.pow(x, n - 1) == int(gmpy2.powmod(x, n - 1, m)), f"{ctx} pow N-1"
    assert r.pow(ops["2"], 0) == 1 and r.pow(0, 0) == 1 and r.pow(0, 5) == 0


@pytest.mark.parametrize("backend", FAST)
@pytest.mark.parametrize("bits", WIDTHS)
def test_random_operands(backend: str, bits: int) -> None:
    seed = 0x6E6174 * 10_000 + bits
    rng = random.Random(seed)
    n = modulus(bits, seed)
    r = ring(n, backend)
    m = gmpy2.mpz(n)
    for i in range(6):
        x, y = rng.randrange(n), rng.randrange(n)
        ctx = f"backend={backend} bits={bits} seed={seed} case #{i}"
        assert r.sqr(x) == x * x % n, ctx
        assert r.mul(x, y) == x * y % n, ctx
        for k in (0, 1, 2, 3, 1000):
            assert r.sqr_n(x, k) == int(gmpy2.powmod(x, 1 << k, m)), f"{ctx} k={k}"
        e = rng.getrandbits(rng.choice((1, 17, 64, bits)))
        assert r.pow(x, e) == int(gmpy2.powmod(x, e, m)), f"{ctx} e={e:#x}"


@pytest.mark.parametrize("backend", ALL)
def test_every_width_step(backend: str) -> None:
    """Each width from 256 to 4096 bits in steps of 29 (reaches every IFMA kernel)."""
    seed = 77
    rng = random.Random(seed)
    top = 1024 if backend in TWINS else 4096
    for bits in range(256, top + 1, 29):
        n = rng.getrandbits(bits) | (1 << (bits - 1)) | 1
        x = rng.randrange(n)
        got = ring(n, backend).sqr_n(x, 50)
        assert got == int(gmpy2.powmod(x, 1 << 50, n)), f"backend={backend} bits={bits} seed={seed}"


def test_small_moduli_on_the_portable_backend() -> None:
    for n in (3, 5, 7, 255, (1 << 64) - 59, (1 << 127) - 1, (1 << 255) - 19):
        r = ring(n, "portable")
        for x in {0, 1, 2, n - 1, n // 3}:
            assert r.sqr_n(x, 7) == pow(x, 1 << 7, n), f"n={n} x={x}"
            assert r.pow(x, n - 2) == pow(x, n - 2, n), f"n={n} x={x}"


LONG_T = 1 << 20


def _long_moduli() -> list[tuple[str, int]]:
    return [("1024-bit seed 5", modulus(1024, 5)), ("2048-bit seed 6", modulus(2048, 6)),
            ("VDF Alliance", vdf_alliance_modulus())]


@pytest.fixture(scope="module")
def long_run_oracle() -> dict[int, int]:
    return {n: int(gmpy2.powmod(2, gmpy2.mpz(1) << LONG_T, n)) for _, n in _long_moduli()}


@pytest.mark.parametrize("backend", FAST)
@pytest.mark.parametrize("which", [name for name, _ in _long_moduli()])
def test_long_run_from_two(backend: str, which: str, long_run_oracle: dict[int, int]) -> None:
    n = dict(_long_moduli())[which]
    assert ring(n, backend).sqr_n(2, LONG_T) == long_run_oracle[n], f"backend={backend} modulus={which} t=2^20"


@pytest.mark.parametrize("backend", FAST)
def test_sqr_n_releases_the_gil(backend: str) -> None:
    n = modulus(2048, 9)
    r = ring(n, backend)
    # About a quarter of a second of squaring on this backend.
    start = time.perf_counter()
    r.sqr_n(3, 2000)
    k = max(2000, int(2000 * 0.25 / max(time.perf_counter() - start, 1e-6)))
    ticks = 0
    stop = threading.Event()

    def spin() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        time.sleep(0.01)
        before = ticks
        r.sqr_n(3, k)
        during = ticks - before
    finally:
        stop.set()
        thread.join()
    assert during > 1000, f"backend={backend}: the Python thread advanced only {during} ticks during sqr_n"


# --- errors -------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["adx", "ifma", "ifma-mont", "avx512f", "avx2", "fma"])
@pytest.mark.parametrize("bits", [64, 255, 4097])
def test_fast_backends_reject_widths(backend: str, bits: int) -> None:
    n = (1 << (bits - 1)) | 1
    with pytest.raises(ParameterError) as info:
        native.Ring(n, backend)
    assert info.value.param == "modulus"
    assert str(info.value) == f'modulus: backend "{backend}" takes moduli of 256 to 4096 bits, got {bits} bits'


def test_portable_rejects_wide_moduli() -> None:
    with pytest.raises(ParameterError, match=r'^modulus: backend "portable" takes moduli of 2 to 4096 bits, got 4097'):
        native.Ring((1 << 4096) | 1, "portable")


@pytest.mark.parametrize("n, message", [
    (8, "modulus: must be odd for Montgomery reduction (it needs an inverse modulo a power of two), "
        "got an even value of 4 bits"),
    (1, "modulus: must be at least 3, got 1"),
    (2.0, "modulus: must be an integer, got float"),
])
def test_bad_modulus(n: object, message: str) -> None:
    with pytest.raises(ParameterError) as info:
        native.Ring(n, "portable")  # type: ignore[arg-type]
    assert str(info.value) == message


def test_unknown_backend() -> None:
    with pytest.raises(ParameterError) as info:
        native.Ring(modulus(1024, 1), "gpu")
    assert info.value.param == "backend"
    assert str(info.value) == ('backend: unknown native backend "gpu"; choose one of: '
                               + ", ".join(native.backends()))


@pytest.mark.parametrize("backend", FAST)
def test_operand_and_count_errors(backend: str) -> None:
    n = modulus(512, 3)
    r = ring(n, backend)
    cases = [
        (lambda: r.sqr(n), "x: operand out of range: need 0 <= x < modulus, got a value of 512 bits"),
        (lambda: r.sqr(-1), "x: operand out of range: need 0 <= x < modulus, got a negative value"),
        (lambda: r.mul(1, n + 5), "y: operand out of range: need 0 <= y < modulus, got a value of 512 bits"),
        (lambda: r.sqr_n(2, -1), "k: must be non-negative, got -1"),
        (lambda: r.sqr_n(2, 1 << 64), "k: must be below 2**64, got a value of 65 bits"),
        (lambda: r.sqr_n(2, 1.5), "k: must be an integer, got float"),
        (lambda: r.sqr_n(True, 1), "x: must be an integer, got bool"),
        (lambda: r.pow(2, -3), "e: must be non-negative (negative exponents are not supported)"),
    ]
    for call, message in cases:
        with pytest.raises(ParameterError) as info:
            call()
        assert str(info.value) == message


# --- the engine registry ---------------------------------------------------------

def test_registry_lists_the_native_backends() -> None:
    avail = available_backends()
    for name in ("portable", "adx", "ifma", "avx512f", "avx2", "fma"):
        assert (name in avail) == native.backend_supported(name), name
    assert "portable" in avail


@pytest.mark.parametrize("cls", [native_backend.PortableBackend, native_backend.AdxBackend,
                                 native_backend.IfmaBackend, native_backend.IfmaMontBackend,
                                 native_backend.Avx512fBackend, native_backend.Avx2Backend,
                                 native_backend.FmaBackend])
def test_backend_classes_follow_the_protocol(cls: type) -> None:
    if not cls.supported():
        with pytest.raises(ParameterError, match=r"^backend: .* is not supported on this CPU"):
            cls(modulus(1024, 2))
        return
    n = modulus(1024, 2)
    b = cls(n)
    assert b.name == cls.name and b.modulus == n
    x, y = 12345678901234567890, n - 3
    assert (b.sqr(x), b.mul(x, y), b.sqr_n(x, 5), b.pow(x, 65537)) == (
        x * x % n, x * y % n, pow(x, 32, n), pow(x, 65537, n))


@pytest.mark.parametrize("backend", [b for b in ("portable", "adx", "ifma", "avx512f", "avx2", "fma") if b in ALL])
def test_modring_over_native_backends(backend: str) -> None:
    n = modulus(2048, 4)
    ring_ = ModRing(n, backend=backend)
    assert ring_.backend == backend
    assert ring_.sqr_n(5, 300) == pow(5, 1 << 300, n)


def test_auto_follows_the_tuning_data() -> None:
    from modforge.engine.tuning import choose_backend

    for bits in (256, 1024, 2048, 4096):
        ring_ = ModRing(modulus(bits, 8), backend="auto")
        assert ring_.backend == choose_backend(bits, available_backends()), bits
    if "ifma" in ALL:
        assert ModRing(modulus(2048, 8), backend="auto").backend == "ifma"


def test_cpu_features_and_backend_lists() -> None:
    feats = native.cpu_features()
    assert set(native.supported_backends()) <= set(native.backends())
    assert native.backends()[:2] == ["portable", "fold-portable"]
    if feats:
        assert native.backend_supported("adx") == (feats["bmi2"] and feats["adx"])
        assert native.backend_supported("ifma") == (feats["avx512f"] and feats["avx512ifma"])
        assert native.backend_supported("avx512f") == feats["avx512f"]
        assert native.backend_supported("avx2") == feats["avx2"]
        assert native.backend_supported("fma") == (feats["avx2"] and feats["fma"])


def test_sqr_n_honours_ctrl_c() -> None:
    """The native loop runs Python's signal handlers between its GIL-free stretches: a handler that raises
    (as SIGINT's default one does) stops it within a stretch.  The signal is SIGALRM (once, after 0.2 s),
    not SIGINT: a process a non-interactive shell starts in the background ignores SIGINT
    (POSIX), and there the test's own SIGINT was dropped."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")

    def ctrl_c(signum, frame):
        signal.setitimer(signal.ITIMER_REAL, 0)        # one interrupt only, wherever it lands
        raise KeyboardInterrupt

    r = ring(modulus(2048, 10), "portable")
    old = signal.signal(signal.SIGALRM, ctrl_c)
    start = time.perf_counter()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(KeyboardInterrupt):
            r.sqr_n(3, 10_000_000)  # about 10 s if the interrupt were ignored
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert time.perf_counter() - start < 3.0
