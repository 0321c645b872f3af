"""``ModRing`` at its limits, the same on every backend: k below 2^64, bounded traces, checked exponents
and names, and a gmp ``sqr_n`` that neither holds a k-bit exponent nor ignores Ctrl-C."""

from __future__ import annotations

import signal
import time

import pytest

from modforge import native
from modforge.arith.base import ParameterError
from modforge.engine import ModRing, available_backends
from modforge.engine.reference import SQR_CHUNK

N = (1 << 256) - 189          # 256 bits: inside every backend's range
BACKENDS = [b for b in available_backends()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_k_and_trace_limits_are_the_same_everywhere(backend: str) -> None:
    ring = ModRing(N, backend)
    with pytest.raises(ParameterError, match=r"k: must be below 2\*\*64"):
        ring.sqr_n(3, 1 << 64)
    with pytest.raises(ParameterError, match=r"count: at most 2\^24 values per call"):
        ring.sqr_n_trace(3, 2, (1 << 24) + 1)
    with pytest.raises(ParameterError, match="step: must be"):
        ring.sqr_n_trace(3, 1 << 64, 1)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bad, kind", [(True, "bool"), (3.0, "float"), ("5", "str"), (None, "NoneType")])
def test_multiexp_exponents_are_checked_on_every_backend(backend: str, bad, kind: str) -> None:
    with pytest.raises(ParameterError, match=f"exponents: must be an integer, got {kind}"):
        ModRing(N, backend).multiexp([2], [bad])


@pytest.mark.parametrize("backend", BACKENDS)
def test_multiexp_arguments_and_threads_are_checked_alike_everywhere(backend: str) -> None:
    ring = ModRing(N, backend)
    for bases, exponents, name in ((None, [1], "bases"), ((b for b in [2]), [1], "bases"), ([2], 5, "exponents"),
                                   ("23", [1, 1], "bases")):
        with pytest.raises(ParameterError, match=f"{name}: must be a list of integers"):
            ring.multiexp(bases, exponents)
    for threads in (0, 257, 1 << 200):
        with pytest.raises(ParameterError, match="threads: must be between 1 and 256"):
            ring.multiexp([2], [3], threads=threads)
    assert ring.multiexp((2, 3), (5, 1), threads=256) == 96


@pytest.mark.parametrize("k", [0, 1, SQR_CHUNK - 1, SQR_CHUNK, 2 * SQR_CHUNK + 5])
def test_gmp_sqr_n_in_chunks_is_exact(k: int) -> None:
    for x in (0, 1, 3, N - 1):
        assert ModRing(N, "gmp").sqr_n(x, k) == pow(x, 1 << k, N), (x, k)


def test_gmp_sqr_n_stops_on_ctrl_c() -> None:
    """2^40 squarings: a 2^40-bit exponent used to abort GMP; now chunks, and Ctrl-C lands between them.

    The interrupt is SIGALRM after 0.3 s with a handler raising KeyboardInterrupt, as SIGINT's default
    one does, not SIGINT itself: a process a non-interactive shell starts in the background ignores
    SIGINT (POSIX), so there interrupt_main() did nothing and the test squared towards 2^40."""
    def ctrl_c(signum, frame):
        signal.setitimer(signal.ITIMER_REAL, 0)        # one interrupt only, wherever it lands
        raise KeyboardInterrupt

    ring = ModRing((1 << 1024) - 105, "gmp")
    old = signal.signal(signal.SIGALRM, ctrl_c)
    start = time.perf_counter()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(KeyboardInterrupt):
            ring.sqr_n(3, 1 << 40)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert time.perf_counter() - start < 5


def test_a_backend_name_must_be_a_string() -> None:
    with pytest.raises(ParameterError, match="backend: must be a backend name"):
        ModRing(17, backend=None)


@pytest.mark.parametrize("backend", native.supported_backends())
@pytest.mark.parametrize("threads, problem", [(-1, "must be non-negative"), (True, "must be an integer, got bool"),
                                              (2.0, "must be an integer, got float"), (0, "must be between 1 and 256"),
                                              (257, "must be between 1 and 256")])
def test_native_multiexp_threads_are_checked(backend: str, threads, problem: str) -> None:
    ring = native.Ring((1 << 1023) + 1155, backend)
    with pytest.raises(ParameterError, match=f"threads: {problem}"):
        ring.multiexp([2], [3], threads)
    assert ring.multiexp([2], [3], 2) == 8
