"""The cycle model: its arithmetic from the parameters, and its predictions of the seed rows it was not
fitted to."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from modforge.zk import ntt_cycles as c


def test_core_cycles_from_parameters() -> None:
    design = c.SEED_DESIGN
    # 12 iterations of 2048 butterflies plus an 8-cycle drain each; the twiddle pass adds 4096.
    assert c.sub_transform_cycles(design, 12, False) == 12 * (2048 + 8)
    assert c.sub_transform_cycles(design, 12, True) == 12 * (2048 + 8) + 4096
    two_per_cycle = dataclasses.replace(design, butterflies_per_cycle=2)
    assert c.sub_transform_cycles(two_per_cycle, 12, False) == 12 * (1024 + 8)
    assert c.iterations_per_pass(24, 12, 8) == 512 and c.iterations_per_pass(24, 12, 64) == 64


def test_fit_reproduces_its_two_rows_exactly() -> None:
    for cores in c.SEED_DESIGN.fit_cores:
        row = c.predict(c.SEED_DESIGN, cores)
        assert row["predicted_seconds"] == pytest.approx(c.SEED_LATENCY_S[cores], rel=1e-9)


@pytest.mark.parametrize("cores", [16, 32])
def test_predicts_the_rows_it_was_not_given(cores: int) -> None:
    row = c.predict(c.SEED_DESIGN, cores)
    assert row["predicted_seconds"] == pytest.approx(c.SEED_LATENCY_S[cores], rel=0.10)


def test_memory_bound_as_the_seed_says_and_compute_scales_with_cores() -> None:
    rows = c.seed_table()
    assert all(r["bound"] == "memory" for r in rows)
    computes = [r["compute_seconds"] for r in rows]
    assert all(a / b == pytest.approx(2.0) for a, b in itertools.pairwise(computes))
    peak, overhead = c.SEED_DESIGN.memory
    assert peak > 0 and overhead > 0


def test_cluster_multiple_required() -> None:
    with pytest.raises(ValueError, match="multiple of the cluster size"):
        c.predict(c.SEED_DESIGN, 12)
