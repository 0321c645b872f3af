"""What a puzzle is, how long it takes on this machine, how far a solve has come (read-only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .check import measure_mul_cost, measure_rate, open_ring, plan_segment
from .checkpoint import CheckpointStore, default_checkpoint_dir
from .puzzle import NamedPuzzle, PuzzleFile
from .solver import DEFAULT_INTERVAL


def puzzle_info(puzzle: NamedPuzzle | PuzzleFile, *, backend: str = "auto", checkpoint_dir: str | Path | None = None,
                measure_seconds: float = 0.3, interval: float = DEFAULT_INTERVAL) -> dict[str, Any]:
    """Parameters, a speed measurement of ``ModRing(n, backend)`` here, and checkpoint progress if any."""
    task = puzzle.task
    info: dict[str, Any] = puzzle.describe()
    info["task_id"] = task.id
    ring = open_ring(task.n, backend)
    rate, k, s = measure_rate(ring, task.x, measure_seconds)
    mul_cost = measure_mul_cost(ring, task.x)
    overhead = plan_segment(int(rate * interval), max(1, task.t), mul_cost).overhead(mul_cost)
    from ..engine.tuning import explain

    info["speed"] = {"backend": ring.backend, "squarings_per_second": rate, "sample_squarings": k,
                     "sample_seconds": s, "check_overhead_predicted": overhead,
                     "backend_choice": explain(task.bits, ring.backend, backend)}
    info["estimated_seconds"] = task.t / rate * (1 + overhead)
    directory = Path(checkpoint_dir) if checkpoint_dir is not None else \
        default_checkpoint_dir(puzzle.path if isinstance(puzzle, PuzzleFile) else None)
    store = CheckpointStore(directory, task)
    ckpt, rejected = store.latest(quarantine=False)
    info["checkpoint_dir"] = str(directory)
    info["checkpoint"] = None
    if ckpt is not None:
        remaining = task.t - ckpt.step
        info["checkpoint"] = {"path": str(ckpt.path), "step": ckpt.step, "fraction": ckpt.step / task.t,
                              "written": ckpt.doc.get("written"), "done": remaining == 0,
                              "remaining_seconds": remaining / rate * (1 + overhead)}
    info["rejected_checkpoints"] = [{"path": str(r.path), "reason": r.reason} for r in rejected]
    if ckpt is None:
        # Files an earlier solve set aside: solve refuses to start from 0 over them, so info must not say "none".
        info["rejected_checkpoints"] += [{"path": str(p), "reason": "found corrupted by an earlier solve (set aside)"}
                                         for p in store.quarantined()]
    # The same condition under which solve stops with exit 1 and asks for --restart.
    info["restart_needed"] = ckpt is None and bool(info["rejected_checkpoints"])
    return info
