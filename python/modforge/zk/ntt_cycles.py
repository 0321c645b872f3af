"""Cycle model of the seed's FPGA NTT: a core, a cluster of 8, clusters replicated to 64 cores.

Seed 003 (section "NTT") and the authors' write-up describe the design this model follows:

* a 2^24-point transform by the 4-step algorithm, n1 = n2 = 2^12: two passes, each of 2^12 sub-transforms
  of 2^12 points, the twiddle multiplication after the first pass reusing the data path (n1 more cycles);
* a **core** does one radix-2 butterfly per cycle out of on-chip RAM, log2(m) iterations of m/2
  butterflies, and waits out its pipelined data path (the multiplier's latency, 8 cycles) after each
  iteration; **ping-pong RAMs** let a core load the next transform and store the previous one while it
  computes, so an iteration of the controller costs max(compute, memory);
* **8 cores share one controller** (a cluster), matching the 512-bit memory bus (8 x 64 bits); clusters
  are replicated, and the C cores together read and write C adjacent words of each matrix row: bursts
  of 8 * C bytes;
* the design is **bound by memory bandwidth** (HBM): a burst pays a fixed overhead (opening a row) besides
  its bytes, so the effective bandwidth grows with the burst, B * peak / (B + overhead).

The two memory numbers (peak bandwidth and per-burst overhead, in bytes) are not in the seed; they are
*derived* from two rows of its table (8 and 64 cores) by :func:`fit_memory`, and the model must then
predict the 16- and 32-core rows, which it was not given (tests/zk/test_ntt_cycles.py checks within
10 %).  Everything else is a design parameter of :class:`FpgaNttDesign`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import cached_property

# Seed 003, "NTT / Results": cores -> measured latency of a 2^24 transform (s) on the C1100 card.
SEED_LATENCY_S = {8: 0.2315, 16: 0.1238, 32: 0.0691, 64: 0.0450}
SEED_LOG_N = 24


@dataclass(frozen=True)
class FpgaNttDesign:
    """The parameters of the seed's design (seed 003 "NTT"; the write-up's core and bandwidth pages)."""

    log_n1: int = 12                     # sub-transform size 2^12 (fits on-chip RAM)
    butterflies_per_cycle: int = 1       # per core
    pipeline_cycles: int = 8             # data path latency (multiplier), waited out after each iteration
    cluster_cores: int = 8               # cores per shared controller (= 512-bit bus / 64-bit words)
    word_bytes: int = 8
    clock_mhz: float = 200.0             # the write-up's internal clock
    fit_cores: tuple[int, int] = (8, 64)  # the two seed rows the memory parameters are derived from
    seed_latency_s: dict[int, float] = field(default_factory=lambda: dict(SEED_LATENCY_S))

    @cached_property
    def memory(self) -> tuple[float, float]:
        """(peak bytes/s, per-burst overhead in bytes), derived from the ``fit_cores`` rows."""
        return fit_memory(self)

    def as_dict(self) -> dict:
        doc = asdict(self)
        doc["seed_latency_s"] = {str(k): v for k, v in self.seed_latency_s.items()}
        peak, overhead = self.memory
        doc["derived_peak_bandwidth_gb_s"] = peak / 1e9
        doc["derived_burst_overhead_bytes"] = overhead
        return doc


SEED_DESIGN = FpgaNttDesign()


def sub_transform_cycles(design: FpgaNttDesign, log_m: int, with_twiddle_pass: bool) -> int:
    """Cycles for one core to transform 2^log_m points: log_m iterations of m/2 butterflies, each followed
    by the pipeline drain, plus one pass of m multiplications for the 4-step twiddles."""
    m = 1 << log_m
    per_iteration = m // (2 * design.butterflies_per_cycle) + design.pipeline_cycles
    return log_m * per_iteration + (m if with_twiddle_pass else 0)


def core_transform_cycles(design: FpgaNttDesign, log_m: int) -> int:
    """Cycles of one transform of 2^log_m points through one core of the generated RTL (``hw/ntt_core.py``),
    from the edge that takes the first word to the one that puts out the last, both counted: m words loaded
    one per cycle, the log_m iterations of :func:`sub_transform_cycles`, m words stored one per cycle (this
    core loads, computes and stores in turn; the seed's overlaps them, which :func:`predict` assumes)."""
    m = 1 << log_m
    return m + sub_transform_cycles(design, log_m, False) + m


def iterations_per_pass(log_n: int, log_n1: int, cores: int) -> int:
    """Sub-transforms per pass (2^(log_n - log_n1)) shared out to ``cores`` cores."""
    return max(1, (1 << (log_n - log_n1)) // cores)


def _memory_coefficients(design: FpgaNttDesign, cores: int, log_n: int) -> tuple[float, float]:
    """(a, b) with memory time = a / peak + b * overhead / peak for the whole transform: every iteration
    reads and writes 2^log_n1 bursts of 8 * cores bytes; plus the first load and the last store per pass."""
    m = 1 << design.log_n1
    burst = design.word_bytes * cores
    iterations = iterations_per_pass(log_n, design.log_n1, cores) + 1   # + fill and drain
    bursts = 2 * m * iterations * 2                                      # read + write, two passes
    return bursts * burst, bursts


def fit_memory(design: FpgaNttDesign) -> tuple[float, float]:
    """Solve T(C) = (a_C + b_C * overhead) / peak for the two ``fit_cores`` rows (memory-bound there,
    which :func:`predict` confirms): a 2x2 linear system in 1/peak and overhead/peak."""
    (c1, c2) = design.fit_cores
    a1, b1 = _memory_coefficients(design, c1, SEED_LOG_N)
    a2, b2 = _memory_coefficients(design, c2, SEED_LOG_N)
    t1, t2 = design.seed_latency_s[c1], design.seed_latency_s[c2]
    det = a1 * b2 - a2 * b1
    inv_peak = (t1 * b2 - t2 * b1) / det
    overhead_over_peak = (a1 * t2 - a2 * t1) / det
    return 1 / inv_peak, overhead_over_peak / inv_peak


def predict(design: FpgaNttDesign, cores: int, log_n: int = SEED_LOG_N) -> dict:
    """Predicted latency of a 2^log_n transform on ``cores`` cores, with its compute and memory parts."""
    if cores % design.cluster_cores:
        raise ValueError(f"cores must be a multiple of the cluster size {design.cluster_cores}")
    log_n1 = design.log_n1
    log_n2 = log_n - log_n1
    f = design.clock_mhz * 1e6
    iterations = iterations_per_pass(log_n, log_n1, cores)
    compute_s = iterations * (sub_transform_cycles(design, log_n1, True) + sub_transform_cycles(design, log_n2, False)) / f
    peak, overhead = design.memory
    a, b = _memory_coefficients(design, cores, log_n)
    memory_s = (a + b * overhead) / peak
    # Ping-pong RAMs overlap loading, computing and storing: the slower side sets the pace.
    latency = max(compute_s, memory_s)
    return {"cores": cores, "clusters": cores // design.cluster_cores, "iterations_per_pass": iterations,
            "compute_seconds": compute_s, "memory_seconds": memory_s, "predicted_seconds": latency,
            "bound": "memory" if memory_s >= compute_s else "compute",
            "burst_bytes": design.word_bytes * cores,
            "seed_seconds": design.seed_latency_s.get(cores) if log_n == SEED_LOG_N else None}


def seed_table(log_n: int = SEED_LOG_N, design: FpgaNttDesign = SEED_DESIGN) -> list[dict]:
    """The prediction for 8, 16, 32 and 64 cores beside the seed's measurement."""
    return [predict(design, cores, log_n) for cores in (8, 16, 32, 64)]


def describe(design: FpgaNttDesign = SEED_DESIGN) -> str:
    peak, overhead = design.memory
    return (f"cycle model of the seed's 4-step NTT (2^{design.log_n1}-point cores, {design.butterflies_per_cycle} "
            f"butterfly/cycle, {design.pipeline_cycles}-cycle pipeline, {design.cluster_cores} cores per controller, "
            f"{design.clock_mhz:g} MHz); memory derived from the {design.fit_cores[0]}- and {design.fit_cores[1]}-core "
            f"rows: peak {peak / 1e9:.1f} GB/s, {overhead:.0f} bytes of overhead per burst")


# ------------------------------------------------------------------------------------------------------
# The generated cluster (hw/ntt_core.py, ``ntt-cluster``) against a memory model of the same simple shape
# as the harness's (hw/ntt_harness.py): the exact cycle count of a complete 4-step.
@dataclass(frozen=True)
class ClusterMemory:
    """A memory channel shared by reads and writes: a *line* is one word per core (8 * cores bytes, the
    seed's 512-bit bus for 8 cores) and takes ceil(line bytes / bytes_per_cycle) cycles; a read burst (one
    load of every core's sub-transform) delivers its first line ``burst_latency`` cycles after it is
    requested, the next ones back to back; writes are posted and drain at the same rate.  A burst is
    requested once the channel has drained the previous group's writes."""

    bytes_per_cycle: int = 64
    burst_latency: int = 0

    def line_cycles(self, cores: int, word_bytes: int = 8) -> int:
        return -(-cores * word_bytes // self.bytes_per_cycle)


def cluster_four_step_cycles(design: FpgaNttDesign, log_n1: int, log_n2: int, cores: int, twiddle_pipeline: int,
                             memory: ClusterMemory) -> dict:
    """Cycles of a 4-step transform of 2^(log_n1 + log_n2) points on one cluster of ``cores`` cores, exactly
    as the generated RTL and the harness's memory model run it: pass 1, n2 / cores groups of column
    transforms of n1 points followed by the twiddle pass (n1 + ``twiddle_pipeline`` cycles); pass 2, n1 / cores
    groups of row transforms of n2 points.  A group: the read burst (latency, then one line per
    line_cycles), the stages (:func:`sub_transform_cycles`), the twiddle pass, one cycle to the first output
    line, and the posted writes draining one line per line_cycles from there; the next group's burst is
    requested when the channel is free.  Load, compute and store follow one another (no overlap), so the
    memory part and the compute part add up; ``bound`` says which is larger."""
    lc = memory.line_cycles(cores, design.word_bytes)
    total = compute = 0
    passes = []
    for log_sub, groups, twiddled in ((log_n1, (1 << log_n2) // cores, True), (log_n2, (1 << log_n1) // cores, False)):
        n_sub = 1 << log_sub
        work = sub_transform_cycles(design, log_sub, False) + (n_sub + twiddle_pipeline if twiddled else 0)
        group = memory.burst_latency + (n_sub - 1) * lc + 1 + work + 1 + n_sub * lc
        passes.append({"sub_transform": n_sub, "groups": groups, "group_cycles": group, "compute_per_group": work})
        total += groups * group
        compute += groups * work
    return {"cycles": total, "compute_cycles": compute, "memory_cycles": total - compute, "line_cycles": lc,
            "passes": passes, "bound": "memory" if total - compute > compute else "compute"}
