"""Seed 003's NTT cluster (``ntt-cluster``): a complete 4-step of 2^12 = 2^6 x 2^6 points on cores under
one controller, in Verilator, against the native engine and the model's 4-step.

Here 2 cores: a Verilator build of the 8-core cluster takes 75-140 s on this shared 2-core machine, past the
time ``make test`` can give; the 8-core cluster runs the same checks at 2^16 points in ``make bench-hw``
(``python -m modforge.hw.ntt_bench``).  Two memory models run on the same build: one bus line per cycle with
no latency (the cluster is then compute-bound) and a quarter of that bandwidth with a 100-cycle burst
latency (memory-bound, as the seed says its design is).  Every output word must equal the native engine's forward transform (and the model's
4-step), and each run must take exactly the cycles of ``ntt_cycles.cluster_four_step_cycles``.
"""

from __future__ import annotations

import pytest

from modforge.arith.base import ParameterError
from modforge.hw.flow import make_design
from modforge.zk.ntt_cycles import ClusterMemory

CORES = 2
FAST = ClusterMemory(bytes_per_cycle=64, burst_latency=0)
SLOW = ClusterMemory(bytes_per_cycle=4, burst_latency=100)         # a line of 2 words in 4 cycles


def test_parameters_are_checked() -> None:
    d = make_design("ntt-cluster")
    assert (d.cores, d.log_n1, d.log_n2) == (8, 12, 12) and d.resources()["dsp"] == 256
    with pytest.raises(ParameterError, match="log_n1"):
        make_design("ntt-cluster", options={"log_n1": 2})          # 4 columns for 8 cores
    with pytest.raises(ParameterError, match="cores"):
        make_design("ntt-cluster", options={"cores": 0})


def test_memory_model_decides_the_bound() -> None:
    d = make_design("ntt-cluster", options={"log_n1": 6, "log_n2": 6, "cores": CORES})
    fast, slow = d.four_step_cycles(FAST), d.four_step_cycles(SLOW)
    assert fast["line_cycles"] == 1 and slow["line_cycles"] == 4
    assert fast["compute_cycles"] == slow["compute_cycles"]
    assert fast["bound"] == "compute" and slow["bound"] == "memory"
    # 32 groups per pass, each a burst of 64 lines in (the first after the latency) and 64 out, 3 cycles more each.
    assert slow["memory_cycles"] - fast["memory_cycles"] == 64 * (100 + 3 * 63 + 3 * 64)


def test_four_step_2_12_matches_the_native_engine_at_the_models_cycles() -> None:
    d = make_design("ntt-cluster", options={"log_n1": 6, "log_n2": 6, "cores": CORES})
    seed = 3412
    doc = d.simulate(vectors=1, seed=seed, memories=[FAST, SLOW])
    report = doc["mismatch_report"][:4000]
    assert doc["mismatches"] == 0 and doc["exit_code"] == 0, f"seed {seed}:\n{report}"
    assert doc["latency_mismatches"] == 0 and doc["protocol_errors"] == 0, report
    assert doc["outputs"] == doc["expected_outputs"] == 4 * 4096
    assert doc["cycles"] == doc["expected_cycles"]
    assert all(r["measured_cycles"] == r["cycles"] for r in doc["runs"]), doc["runs"]
    assert [r["bound"] for r in doc["runs"]] == ["compute", "memory"] * 2


def test_the_seeds_2_24_points_are_refused_for_simulation() -> None:
    with pytest.raises(ParameterError, match="too long to simulate"):
        make_design("ntt-cluster").simulate(vectors=1)
