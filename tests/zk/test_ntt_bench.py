"""The benchmark's cross-check: an anchor evaluating at another generator of the subgroup is recognised
as agreeing, and a wrong sample is caught.  (The timings themselves are `modforge bench ntt`'s.)"""

from __future__ import annotations

import numpy as np
import pytest
from modforge.bench import ntt as bench
from modforge.zk import ntt_files

from .ntt_oracle import P, naive_dft

PLONKY2_TWO_ADIC_ROOT = 7277203076849721926      # plonky2 / Winterfell: order 2^32, another generator


@pytest.mark.parametrize("log_n", [1, 4, 6])
def test_discrete_log_in_the_2_group(log_n: int) -> None:
    g = pow(7, (P - 1) >> log_n, P)
    for k in (1, 3, (1 << log_n) - 1):
        assert bench.discrete_log_2group(pow(g, k, P), g, log_n) == k % (1 << log_n)
    with pytest.raises(ValueError):
        bench.discrete_log_2group(3, g, log_n)       # 3 is not in the subgroup


@pytest.mark.parametrize("columns", [1, 3])
def test_cross_check_follows_a_change_of_generator(columns: int) -> None:
    log_n, n = 6, 64
    data = ntt_files.random_elements(n * columns, 5).reshape(n, columns)
    ours = np.stack([np.array(naive_dft([int(x) for x in data[:, c]]), dtype=np.uint64) for c in range(columns)],
                    axis=1).reshape(-1)
    other_root = pow(PLONKY2_TWO_ADIC_ROOT, 1 << (32 - log_n), P)
    theirs = [naive_dft([int(x) for x in data[:, c]], other_root) for c in range(columns)]
    samples = [[r, c, hex(theirs[c][r])] for r, c in bench.sample_positions(n, columns)]
    assert bench.check_samples(ours, columns, log_n, other_root, samples) is None
    samples[5][2] = hex((int(samples[5][2], 16) + 1) % P)
    problem = bench.check_samples(ours, columns, log_n, other_root, samples)
    assert problem is not None and "where ours gives" in problem


def test_markdown_table_names_the_fastest_anchor() -> None:
    doc = {"cells": [{"log_n": 20, "columns": 1, "threads": 1, "fastest_anchor": "plonky2", "ours_over_fastest": 0.9,
                      "results": {"modforge": {"median_ms": 9.0, "min_ms": 8.5, "max_ms": 9.5},
                                  "plonky2": {"median_ms": 10.0, "min_ms": 9.0, "max_ms": 11.0}}}]}
    table = bench.markdown(doc)
    assert "| 2^20 | 1 | 1 | 9.0 (8.5-9.5) | - | - | 10.0 (9.0-11.0) | - | 0.90 (plonky2) | - |" in table
