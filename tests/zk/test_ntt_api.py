"""``modforge.zk.ntt`` (native engine, else the model) against the naive DFT and the model, bit for bit."""

from __future__ import annotations

import random

import numpy as np
import pytest
from modforge.arith.base import ParameterError
from modforge.zk import ntt, ntt_api
from modforge.zk import ntt_model as m

from .ntt_oracle import P, evaluate, naive_dft, naive_inverse_dft, named_inputs, root

SEED = 27016
native = pytest.mark.skipif(not ntt_api.native_available(), reason="native engine not built")


def native_backends() -> list[str]:
    if not ntt_api.native_available():
        return []
    from modforge import _native

    return list(_native.ntt_backends())


@native
@pytest.mark.parametrize("log_n", range(11))
def test_native_equals_naive_dft_every_size_to_2_10(log_n: int) -> None:
    n = 1 << log_n
    for name, a in named_inputs(n, random.Random(SEED + log_n)).items():
        expected, inverse_expected = naive_dft(a), naive_inverse_dft(a)
        for backend in native_backends():
            got = ntt(np.array(a, dtype=np.uint64), backend=backend)
            assert got.tolist() == expected, f"seed={SEED + log_n} n=2^{log_n} {name} {backend}"
            back = ntt(np.array(a, dtype=np.uint64), inverse=True, backend=backend)
            assert back.tolist() == inverse_expected, f"seed={SEED + log_n} n=2^{log_n} {name} {backend} inverse"


@native
@pytest.mark.parametrize("log_n,cases", [(11, 2), (13, 1), (16, 1)])
def test_native_equals_model_bit_for_bit(log_n: int, cases: int) -> None:
    rng = random.Random(SEED + 100 + log_n)
    n = 1 << log_n
    inputs = [[rng.randrange(P) for _ in range(n)] for _ in range(cases)]
    if log_n <= 11:
        inputs.append([P - 1 - (i % 3) for i in range(n)])
    for a in inputs:
        expected = m.forward(a)
        for backend in native_backends():
            assert ntt(np.array(a, dtype=np.uint64), backend=backend).tolist() == expected, \
                f"seed={SEED + 100 + log_n} n=2^{log_n} {backend}"


@native
def test_batch_columns_are_independent_transforms() -> None:
    rng = np.random.default_rng(SEED)
    n, cols = 1 << 9, 5
    a = rng.integers(0, P, size=(n, cols), dtype=np.uint64)
    expected = np.stack([np.array(naive_dft([int(x) for x in a[:, c]]), dtype=np.uint64) for c in range(cols)], axis=1)
    got = ntt(a.copy())
    assert np.array_equal(got, expected), f"seed={SEED}"
    flat = ntt(a.copy().reshape(-1), columns=cols)
    assert np.array_equal(flat.reshape(n, cols), expected)


@native
def test_in_place_without_copy() -> None:
    a = np.arange(1 << 12, dtype=np.uint64)
    address = a.__array_interface__["data"][0]
    out = ntt(a)
    assert out is a and out.__array_interface__["data"][0] == address
    ntt(a, inverse=True)
    assert np.array_equal(a, np.arange(1 << 12, dtype=np.uint64))


@pytest.mark.parametrize("backend", ["model", None])
def test_coset_orders_and_lde(backend: str | None) -> None:
    if backend is None and not ntt_api.native_available():
        pytest.skip("native engine not built")
    rng = random.Random(SEED + 7)
    n, shift = 64, 7
    a = [rng.randrange(P) for _ in range(n)]
    coset = ntt(np.array(a, dtype=np.uint64), coset_shift=shift, backend=backend)
    assert coset.tolist() == [evaluate(a, shift * pow(root(n), k, P) % P) for k in range(n)]
    assert ntt(coset, inverse=True, coset_shift=shift, backend=backend).tolist() == a
    bitrev = ntt(np.array(a, dtype=np.uint64), output_order="bit-reversed", backend=backend)
    assert bitrev.tolist() == m.bit_reverse(naive_dft(a))
    assert ntt(bitrev, inverse=True, input_order="bit-reversed", backend=backend).tolist() == a
    for blowup in (2, 4, 8):
        coefficients = naive_inverse_dft(a)
        big = n * blowup
        expected = [evaluate(coefficients, shift * pow(root(big), k, P) % P) for k in range(big)]
        assert ntt_api.lde(np.array(a, dtype=np.uint64), blowup, shift=shift, backend=backend).tolist() == expected


def test_zprize_is_the_forward_transform() -> None:
    a = list(range(16))
    assert ntt(np.array(a, dtype=np.uint64), zprize=True, backend="model").tolist() == m.zprize_reference(a)
    with pytest.raises(ParameterError, match="^zprize: "):
        ntt(np.zeros(4, dtype=np.uint64), inverse=True, zprize=True)


def test_refusals_name_the_problem() -> None:
    with pytest.raises(ParameterError, match="element 2 is 18446744069414584321, not below p"):
        ntt(np.array([0, 1, P, 3], dtype=np.uint64))
    with pytest.raises(ParameterError, match="power of two, got 3"):
        ntt(np.zeros(3, dtype=np.uint64))
    with pytest.raises(ParameterError, match="^columns: "):
        ntt(np.zeros(6, dtype=np.uint64), columns=4)
    with pytest.raises(ParameterError, match="^coset_shift: "):
        ntt(np.zeros(4, dtype=np.uint64), coset_shift=0)
    with pytest.raises(ParameterError, match="^a: element 1 is negative"):
        ntt(np.array([1, -1, 0, 0]))


@pytest.mark.parametrize("backend", [None, "model"])
def test_a_refused_array_is_left_as_it_was(backend: str | None) -> None:
    # The native engine checks the elements inside its first pass (2^12 rows: the 4-step), not NumPy.
    a = np.arange(2 * 4096, dtype=np.uint64)
    a[5001] = P + 7
    before = a.copy()
    with pytest.raises(ParameterError, match=f"^a: element 5001 is {P + 7}, not below p"):
        ntt(a, columns=2, backend=backend)
    assert np.array_equal(a, before)


def test_reduce_accepts_values_at_or_above_p() -> None:
    a = np.array([P, P + 1, 2**64 - 1, 5], dtype=np.uint64)
    reduced = [0, 1, 2**64 - 1 - P, 5]
    assert ntt(a, reduce=True, backend="model").tolist() == naive_dft(reduced)


def test_lists_are_converted() -> None:
    assert ntt([1, 2, 3, 4], backend="model").tolist() == naive_dft([1, 2, 3, 4])
