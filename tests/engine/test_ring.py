"""ModRing over every backend this machine runs, against Python's pow."""

from __future__ import annotations

import random

import gmpy2
import pytest

from modforge.arith.base import ParameterError
from modforge.engine import ModRing, available_backends, backend_names
from modforge.data import vdf_alliance_modulus

BACKENDS = available_backends()


def test_reference_backends_are_always_there() -> None:
    assert {"gmp", "python"} <= set(BACKENDS)
    assert "auto" in backend_names()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bits", [256, 1024, 2048])
def test_ring_operations_against_pow(backend: str, bits: int) -> None:
    seed = bits * 7 + len(backend)
    rng = random.Random(seed)
    n = rng.getrandbits(bits) | (1 << (bits - 1)) | 1
    if bits == 1024:
        n = vdf_alliance_modulus()
    ring = ModRing(n, backend=backend)
    assert ring.backend == backend
    for x in (0, 1, 2, n - 1, n - 2, (1 << (bits - 1)) - 1, rng.randrange(n)):
        y = rng.randrange(n)
        assert ring.sqr(x) == x * x % n, f"seed {seed}"
        assert ring.mul(x, y) == x * y % n, f"seed {seed}"
        assert ring.sqr_n(x, 0) == x
        assert ring.sqr_n(x, 37) == pow(x, 1 << 37, n), f"seed {seed}"
        assert ring.pow(x, 65537) == pow(x, 65537, n)


def test_auto_picks_an_available_backend() -> None:
    ring = ModRing(vdf_alliance_modulus())
    assert ring.backend in BACKENDS


def test_bad_input_is_named() -> None:
    with pytest.raises(ParameterError, match=r"^backend: unknown backend 'nope'"):
        ModRing(101, backend="nope")
    ring = ModRing(101, backend="python")
    with pytest.raises(ParameterError, match=r"^x: operand out of range"):
        ring.sqr(101)
    with pytest.raises(ParameterError, match=r"^k: must be non-negative"):
        ring.sqr_n(3, -1)
    with pytest.raises(ParameterError, match=r"^modulus: must be at least 3"):
        ModRing(1)


def product_of_powers(bases: list[int], exps: list[int], n: int) -> int:
    """The independent oracle: gmpy2's powmod, one base at a time."""
    acc = gmpy2.mpz(1)
    for b, e in zip(bases, exps):
        acc = acc * gmpy2.powmod(b, e, n) % n
    return int(acc % n)


def lively_bases(rng: random.Random, n: int, count: int) -> list[int]:
    """Bases whose product of powers says something: no 0, 1 or n-1 (a 0 made nearly every expected product
    0 before, so a multiexp that returned 0 or dropped a base passed)."""
    return [rng.randrange(2, n - 1) for _ in range(count)]


def check_lively(expect: int, n: int, seed: int) -> None:
    assert expect not in (0, 1, n - 1), f"seed {seed}: a degenerate expectation tests nothing"


@pytest.mark.parametrize("backend", BACKENDS)
# native: per-base tables below 64 bases, Pippenger's buckets from 64 up; 63/64/65 straddle the switch
@pytest.mark.parametrize("count", [1, 2, 20, 63, 64, 65, 300])
def test_multiexp_against_pow(backend: str, count: int) -> None:
    seed = 99 + count
    rng = random.Random(seed)
    n = rng.getrandbits(1024) | (1 << 1023) | 1
    ring = ModRing(n, backend=backend)
    bases = lively_bases(rng, n, count)
    exps = [rng.getrandbits(rng.choice((1, 64, 128, 300))) | 1 for _ in range(count)]
    expect = product_of_powers(bases, exps, n)
    check_lively(expect, n, seed)
    assert ring.multiexp(bases, exps) == expect, f"seed {seed}"
    # Every base counts: dropping any one (the last above all, where a bucket loop ends) changes the product.
    assert product_of_powers(bases[:-1], exps[:-1], n) != expect
    assert ring.multiexp(list(reversed(bases)), list(reversed(exps))) == expect, f"seed {seed}"
    assert ring.multiexp([], []) == 1
    with pytest.raises(ParameterError, match=r"^exponents: 1 exponents for 2 bases"):
        ring.multiexp([1, 2], [3])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("count", [30, 80])
def test_multiexp_named_edge_cases_among_lively_bases(backend: str, count: int) -> None:
    """0, 1 and n-1 as bases, zero and all-ones exponents, each among lively bases so the product still
    depends on everything else: 0^0 = 1, 1^e = 1, (n-1)^even = 1, (n-1)^odd = n-1."""
    seed = 7 + count
    rng = random.Random(seed)
    n = rng.getrandbits(1024) | (1 << 1023) | 1
    ring = ModRing(n, backend=backend)
    edges = [(0, 0), (1, (1 << 128) - 1), (n - 1, 6), (n - 1, 7), (rng.randrange(2, n - 1), 0),
             (rng.randrange(2, n - 1), (1 << 300) - 1)]
    bases = lively_bases(rng, n, count)
    exps = [rng.getrandbits(130) | 1 for _ in range(count)]
    for base, exp in edges:
        at = rng.randrange(count + 1)
        bases.insert(at, base)
        exps.insert(at, exp)
    expect = product_of_powers(bases, exps, n)
    check_lively(expect, n, seed)
    assert ring.multiexp(bases, exps) == expect, f"seed {seed}"
    # One zero base with a positive exponent does make the product 0.
    assert ring.multiexp(bases + [0], exps + [1]) == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_multiexp_threads_split_the_exponent_bits(backend: str) -> None:
    """The same product on 1, 2, 3 and 7 threads (native: bit slices per thread; elsewhere ignored)."""
    seed = 4242
    rng = random.Random(seed)
    n = rng.getrandbits(1024) | (1 << 1023) | 1
    ring = ModRing(n, backend=backend)
    for count in (1, 5, 63, 64, 100):
        bases = lively_bases(rng, n, count)
        # exponent lengths that do not divide evenly among the threads, all-ones included
        exps = [rng.choice([(1 << 129) - 1, rng.getrandbits(rng.choice((3, 130, 257))) | 1]) for _ in range(count)]
        expect = product_of_powers(bases, exps, n)
        check_lively(expect, n, seed)
        for threads in (1, 2, 3, 7):
            assert ring.multiexp(bases, exps, threads=threads) == expect, f"seed {seed}, {count} bases, {threads}"
    with pytest.raises(ParameterError, match=r"^threads: must be between 1 and 256, got 0"):
        ring.multiexp([2], [3], threads=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sqr_n_trace_keeps_every_step(backend: str) -> None:
    seed = 77
    rng = random.Random(seed)
    n = rng.getrandbits(1024) | (1 << 1023) | 1
    ring = ModRing(n, backend=backend)
    for x in (0, 1, n - 1, rng.randrange(n)):
        for step, count in ((1, 5), (3, 4), (100, 3), (70000, 2), (5, 0)):
            want, cur = [], x
            for _ in range(count):
                cur = pow(cur, 1 << step, n)
                want.append(cur)
            assert ring.sqr_n_trace(x, step, count) == want, f"seed {seed}, x {x}, step {step}"
    with pytest.raises(ParameterError, match=r"^step: must be at least 1"):
        ring.sqr_n_trace(2, 0, 3)
    with pytest.raises(ParameterError, match=r"^count: must be non-negative"):
        ring.sqr_n_trace(2, 1, -1)
    with pytest.raises(ParameterError, match=r"^x: operand out of range"):
        ring.sqr_n_trace(n, 1, 1)


class _NoSuchHardware:
    """A registered backend whose instructions this CPU lacks."""

    @staticmethod
    def supported() -> bool:
        return False


def test_a_backend_this_cpu_lacks_is_refused_in_one_wording_everywhere(monkeypatch) -> None:
    """ModRing (and so timelock) said "'X' is not supported on this machine", vdf "'X' is not available on this
    machine; available: ...": now the latter, from engine.check_backend, for all of them."""
    from click.testing import CliRunner

    from modforge.cli.main import cli
    from modforge.engine import backends

    monkeypatch.setitem(backends._BACKENDS, "nohw", f"{__name__}:_NoSuchHardware")
    line = f"backend: 'nohw' is not available on this machine; available: {', '.join(['auto', *BACKENDS])}"
    with pytest.raises(ParameterError) as exc:
        ModRing(vdf_alliance_modulus(), backend="nohw")
    assert str(exc.value) == line
    for args in (["timelock", "info", "lcs35-toy", "--backend", "nohw"],
                 ["vdf", "eval", "--modulus", "vdf-alliance", "--x", "2", "--t", "4", "--backend", "nohw"]):
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 2 and res.stderr == f"modforge: error: {line}\n", res.output
