"""Gerbicz's product check on repeated squaring: right segments pass, every single fault is caught."""

from __future__ import annotations

import random

import gmpy2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modforge.engine import ModRing, available_backends
from modforge.timelock.check import Fault, SegmentPlan, measure_overhead, plan_segment, run_segment, verify_segment

# A fixed 512-bit RSA-shaped modulus (two ~256-bit primes): every x in 1..N-1 used below is a unit.
N_512 = int(gmpy2.next_prime((3 << 254) + 0x1234567)) * int(gmpy2.next_prime((3 << 254) + 0x89ABCDEF))


class FaultyRing:
    """A ModRing whose ``call``-th sqr_n result is replaced by ``corrupt(value)``: a faulty backend."""

    def __init__(self, ring: ModRing, call: int, corrupt):
        self._ring, self._call, self._corrupt, self.calls = ring, call, corrupt, 0
        self.modulus = ring.modulus

    def sqr_n(self, x: int, k: int) -> int:
        self.calls += 1
        y = self._ring.sqr_n(x, k)
        return self._corrupt(y) if self.calls == self._call else y

    def mul(self, x: int, y: int) -> int:
        return self._ring.mul(x, y)


@pytest.mark.parametrize("backend", available_backends())
@pytest.mark.parametrize("block, blocks", [(1, 1), (1, 9), (7, 1), (13, 11), (64, 3)])
def test_correct_segment_passes_and_equals_plain_squaring(backend: str, block: int, blocks: int) -> None:
    ring = ModRing(N_512, backend)
    for x in (2, 3, N_512 - 1, random.Random(block * blocks).randrange(2, N_512)):
        out = run_segment(ring, x, SegmentPlan(block, blocks))
        assert out.ok, out.reason
        assert out.value == pow(x, 1 << (block * blocks), N_512)
        assert out.steps == block * blocks
        assert out.extra_squarings == block and out.extra_multiplications == blocks + 2


@pytest.mark.parametrize("where", ["square", "after_mul", "product"])
def test_a_fault_in_any_block_anywhere_is_detected(where: str) -> None:
    ring = ModRing(N_512, "gmp")
    plan = SegmentPlan(block=7, blocks=6)
    for j in range(plan.blocks):
        out = run_segment(ring, 5, plan, fault=Fault(block=j, where=where))
        assert not out.ok, (where, j)
        assert out.value == 5            # nothing unverified leaves the segment
        assert out.events


@pytest.mark.parametrize("call", [1, 2, 5, 6, 7])   # 1..6: the six blocks, 7: the check's own squarings
@pytest.mark.parametrize("corrupt", [lambda v: v ^ 1, lambda v: (v + 1) % N_512, lambda v: 1, lambda v: 0,
                                     lambda v: N_512 - v], ids=["flip", "plus1", "one", "zero", "negate"])
def test_a_faulty_backend_is_caught(call: int, corrupt) -> None:
    ring = FaultyRing(ModRing(N_512, "gmp"), call, corrupt)
    out = run_segment(ring, 3, SegmentPlan(block=5, blocks=6))
    assert not out.ok


def test_zero_would_pass_the_bare_identity_so_the_gcd_condition_matters() -> None:
    ring = ModRing(N_512, "gmp")
    # After a fault that zeroes a block value, d_prev and d are both 0 and u0 * 0^(2^L) == 0 holds ...
    assert ring.mul(7, ring.sqr_n(0, 5)) == 0
    # ... which the invertibility condition rejects.
    assert "not invertible" in verify_segment(ring, 7, 0, 0, 0, 5)


def test_an_interrupted_segment_verifies_the_blocks_done() -> None:
    ring = ModRing(N_512, "gmp")
    asked = []
    out = run_segment(ring, 2, SegmentPlan(block=9, blocks=10), should_stop=lambda: len(asked) >= 4,
                      on_block=asked.append)
    assert out.ok and out.blocks_done == 4
    assert out.value == pow(2, 1 << 36, N_512)


@settings(max_examples=200, deadline=None)
@given(target=st.integers(1, 10**12), remaining=st.integers(1, 10**14), mul_cost=st.floats(0.5, 40))
def test_plan_fits_and_is_not_empty(target: int, remaining: int, mul_cost: float) -> None:
    plan = plan_segment(target, remaining, mul_cost)
    assert 1 <= plan.steps <= min(target, remaining)
    assert plan.steps > min(target, remaining) - plan.block   # never wastes more than one block


@pytest.mark.parametrize("rate, mul_cost", [(1e5, c) for c in (1.0, 4.0, 16.0)]
                         + [(r, c) for r in (1e6, 1e7, 1e8) for c in (1.0, 4.0, 16.0, 64.0)])
def test_check_costs_at_most_two_percent_at_the_default_interval(rate: float, mul_cost: float) -> None:
    # mul_cost: ModRing.mul in squarings; about 2-18 with gmp, 40-60 with the native backends, whose
    # sqr_n stays in native code while each mul pays a Python call.
    plan = plan_segment(int(rate * 5.0), 1 << 60, mul_cost)     # what the solver plans for 5 s segments
    assert plan.overhead(mul_cost) <= 0.02


def test_measured_overhead_is_small_and_results_agree() -> None:
    ring = ModRing(N_512, "gmp")
    r = measure_overhead(ring, segment_seconds=0.3, repeats=3)
    print(f"check overhead at 512 bits: predicted {r['predicted_overhead']:.4f}, "
          f"attributed {r['attributed_overhead']:.4f}, A/B {r['ab_overhead']:.4f}")
    assert r["predicted_overhead"] <= 0.02
    # Timings on a shared machine are noisy (the kill test runs beside this one): sanity bounds only;
    # docs/timelock.md has the measured numbers.
    assert r["attributed_overhead"] < 0.1
    assert r["ab_overhead"] < 1.0
