"""``modforge.zk.msm``: validation, and every available backend against the naive sum."""

from __future__ import annotations

import random

import pytest

from modforge.arith.base import ParameterError
from modforge.zk import bls12_377 as g
from modforge.zk import msm
from modforge.zk.edwards import EDWARDS
from modforge.zk.msm_api import available_backends, random_instance
from modforge.zk.msm_model import naive_msm, sample_points

P = g.BLS12_377
R = P.r
SEED = 20261127


@pytest.mark.parametrize("backend", available_backends())
def test_backends_match_the_naive_sum(backend: str) -> None:
    rng = random.Random(SEED)
    pool = sample_points(12, rng)
    cases = [
        ([], []),
        ([pool[0]], [R - 1]),
        (pool[:5], [0] * 5),
        ([pool[0], g.affine_neg(P, pool[0]), None, pool[1]], [9, 9, 4, 3]),
        (pool, [rng.randrange(R) for _ in pool]),
    ]
    if backend == "seed":
        cases = cases[1:2] + cases[3:4]  # the seed's 20 windows cost ~1.5 s of running sums per call
    else:
        cases.append(random_instance(100, SEED))
    for points, scalars in cases:
        assert msm(points, scalars, backend=backend) == naive_msm(points, scalars), (backend, len(points))


def test_validation() -> None:
    gen = P.generator
    outside = EDWARDS.exceptional_points[1]
    with pytest.raises(ParameterError, match="scalars: 1 scalars for 2 points"):
        msm([gen, gen], [1])
    with pytest.raises(ParameterError, match=r"scalar 0 is not in \[0, r\)"):
        msm([gen], [R])
    assert msm([gen], [R + 2], reduce=True) == g.mul(P, gen, 2)
    with pytest.raises(ParameterError, match="point 1 is not on the curve"):
        msm([gen, (gen[0], gen[1] + 1)], [1, 1])
    with pytest.raises(ParameterError, match="point 0 is not in the prime-order subgroup G1"):
        msm([outside], [1])
    assert msm([outside], [3], trusted=True) == g.mul(P, outside, 3)
    with pytest.raises(ParameterError, match="backend"):
        msm([], [], backend="gpu")
    with pytest.raises(ParameterError, match="threads"):
        msm([], [], threads=0)
