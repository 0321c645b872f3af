"""The Python transform models against the naive DFT (every size up to 2^10) and against each other."""

from __future__ import annotations

import random

import pytest
from modforge.arith.base import ParameterError
from modforge.zk import ntt_model as m

from .ntt_oracle import P, evaluate, naive_dft, naive_inverse_dft, named_inputs, root

SEED = 27003
MAX_NAIVE_LOG = 10


def cases(log_n: int) -> dict[str, list[int]]:
    return named_inputs(1 << log_n, random.Random(SEED + log_n))


@pytest.mark.parametrize("log_n", range(MAX_NAIVE_LOG + 1))
def test_every_transform_equals_naive_dft(log_n: int) -> None:
    n = 1 << log_n
    for name, a in cases(log_n).items():
        expected = naive_dft(a)
        inverse_expected = naive_inverse_dft(a)
        context = f"seed={SEED + log_n} n=2^{log_n} case={name}"
        assert m.forward(a) == expected, context
        assert m.forward_dit(a) == expected, context
        assert m.zprize_reference(a) == expected, context
        assert m.inverse_transform(a) == inverse_expected, context
        assert m.inverse_transform(expected) == a, context
        # The 4-step at every split for the small sizes, the balanced split above.
        splits = range(log_n + 1) if log_n <= 6 else [log_n // 2]
        for log_n1 in splits:
            assert m.four_step(a, 1 << log_n1, n >> log_n1) == expected, f"{context} n1=2^{log_n1}"


@pytest.mark.parametrize("log_n", [0, 1, 3, 8])
def test_coset_equals_naive(log_n: int) -> None:
    shift = 7
    for name, a in cases(log_n).items():
        n = len(a)
        expected = [evaluate(a, shift * pow(root(n), k, P) % P) for k in range(n)]
        assert m.coset_forward(a, shift) == expected, f"seed={SEED + log_n} case={name}"
        assert m.coset_inverse(expected, shift) == a, f"seed={SEED + log_n} case={name}"


@pytest.mark.parametrize("log_n,blowup", [(0, 2), (2, 2), (4, 4), (6, 8)])
def test_lde_evaluates_the_interpolant_on_the_coset(log_n: int, blowup: int) -> None:
    shift = 7
    for name, evaluations in cases(log_n).items():
        coefficients = naive_inverse_dft(evaluations)
        big = len(evaluations) * blowup
        expected = [evaluate(coefficients, shift * pow(root(big), k, P) % P) for k in range(big)]
        assert m.lde(evaluations, blowup, shift) == expected, f"seed={SEED + log_n} case={name}"


def test_four_step_equals_plain_at_2_to_12() -> None:
    rng = random.Random(SEED)
    a = [rng.randrange(P) for _ in range(1 << 12)]
    plain = m.forward(a)
    assert m.four_step(a, 64, 64) == plain, f"seed={SEED}"
    assert m.four_step(a, 8, 512) == plain, f"seed={SEED}"
    assert m.inverse_transform(plain) == a


def test_bit_reverse() -> None:
    assert m.bit_reverse(list(range(8))) == [0, 4, 2, 6, 1, 5, 3, 7]
    assert m.bit_reverse(m.bit_reverse(list(range(64)))) == list(range(64))


@pytest.mark.parametrize("bad", [[], [1, 2, 3], [0] * 6])
def test_refuses_lengths_not_powers_of_two(bad: list[int]) -> None:
    with pytest.raises(ParameterError, match="must be a power of two"):
        m.forward(bad)


def test_refuses_values_not_canonical() -> None:
    with pytest.raises(ParameterError, match="element 1 is not a canonical"):
        m.forward([0, P, 0, 0])


def test_refuses_sizes_beyond_the_two_adicity() -> None:
    with pytest.raises(ParameterError, match="at most 2\\^32"):
        m.log2_exact(1 << 33)
