"""kill -9 at random moments never loses more than one checkpoint interval; Ctrl-C leaves a checkpoint.

The solver runs as a real subprocess (``python -m modforge.cli.main timelock solve``) with plain progress
lines on stderr, which say how far it got (``progress step=S ... segment=K``) and which checkpoints it
wrote.  After each SIGKILL the newest checkpoint on disk must be intact, never older than one the solver
reported writing, and at most one segment (one checkpoint interval of work) behind the last reported
progress; the next run must resume from exactly that checkpoint.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from .helpers import plain_squaring
from modforge.engine import ModRing
from modforge.timelock import CheckpointStore, create_puzzle, load_puzzle_file, trapdoor_solution
from modforge.timelock.check import measure_rate
from modforge.timelock.create import generate_modulus

INTERVAL = 0.3
LINE = re.compile(r"^timelock (\w[\w-]*) (.*)$")


class Solver:
    """One ``timelock solve`` subprocess whose stderr lines are parsed as they arrive."""

    def __init__(self, puzzle: Path, ck: Path, env: dict[str, str], backend: str = "gmp"):
        cmd = [sys.executable, "-m", "modforge.cli.main", "timelock", "solve", str(puzzle), "--checkpoint-dir",
               str(ck), "--checkpoint-interval", f"{INTERVAL}s", "--progress", "plain", "--backend", backend, "--json"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.start_step: int | None = None
        self.progress: tuple[int, int] | None = None      # (step, segment) of the last progress line
        self.checkpoints: list[int] = []
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            m = LINE.match(line)
            if not m:
                continue
            fields = dict(kv.split("=", 1) for kv in m.group(2).split() if "=" in kv)
            if m.group(1) == "start":
                self.start_step = int(fields["step"])
            elif m.group(1) == "progress":
                self.progress = (int(fields["step"]), int(fields["segment"]))
            elif m.group(1) == "checkpoint":
                self.checkpoints.append(int(fields["step"]))

    def wait_for_step(self, step: int, timeout: float = 30.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end and self.proc.poll() is None:
            if self.progress is not None and self.progress[0] >= step:
                return
            time.sleep(0.005)

    def kill(self) -> bool:
        """SIGKILL; True when the process was still running (so the kill interrupted real work)."""
        alive = self.proc.poll() is None
        if alive:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self._reader.join(timeout=10)
        return alive

    def finish(self, timeout: float = 60.0) -> tuple[int, str]:
        out = self.proc.stdout.read()
        self.proc.wait(timeout=timeout)
        self._reader.join(timeout=10)
        return self.proc.returncode, out


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MODFORGE_INJECT_FAULT"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg-cache")
    return env


def _fastest_rate(n: int) -> float:
    """Squarings/s of the gmp backend here, the best of three short runs (the least disturbed by load)."""
    ring = ModRing(n, "gmp")
    return max(measure_rate(ring, 3, 0.15)[0] for _ in range(3))


def test_sigkill_at_random_moments_loses_at_most_one_interval(tmp_path) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    print(f"seed {seed}")
    probe_n, _, _ = generate_modulus(512)
    # About 8 s of work at the fastest speed seen, so 12 kills (about 0.3 s of progress each) fit.
    t = int(8.0 * _fastest_rate(probe_n))
    made = create_puzzle(512, b"survived twelve kills", tmp_path / "p.json", t=t,
                         keep_trapdoor=tmp_path / "trap.json", calibration_seconds=0.01)
    puzzle = load_puzzle_file(made.path)
    t = puzzle.task.t
    ck = tmp_path / "ck"
    store = CheckpointStore(ck, puzzle.task)
    env = _env(tmp_path)
    on_disk = 0
    killed_running = 0
    segment = None
    for i in range(12):
        solver = Solver(made.path, ck, env)
        if i % 4 == 3 or segment is None:
            # A random moment after start: often during start-up, loading or resuming.
            time.sleep(rng.uniform(0.0, 0.6))
        else:
            # A random point within about one checkpoint interval of work after the resume point, so kills
            # land before, during and after checkpoint writes; then a random extra delay.
            solver.wait_for_step(on_disk + int(rng.uniform(0.0, 1.2) * segment))
            time.sleep(rng.uniform(0.0, 0.1))
        killed_running += solver.kill()
        context = f"seed {seed}, kill {i}: " + " | ".join(solver.lines[-6:])
        if solver.start_step is not None:
            assert solver.start_step == on_disk, context          # resumed exactly from the newest checkpoint
        ckpt, rejected = store.latest(quarantine=False)
        assert not rejected, context                              # a kill never leaves a damaged checkpoint
        now = ckpt.step if ckpt else 0
        assert now >= on_disk, context                            # checkpoints never go backwards ...
        assert now >= max(solver.checkpoints, default=0), context  # ... nor lose one reported as written
        if solver.progress is not None:
            done, segment = solver.progress
            assert done - now <= segment, context                 # lost at most one checkpoint interval
        assert len(store.files()) <= 3, context                   # two kept, one more if killed before pruning
        print(f"kill {i}: resumed at {solver.start_step}, reported {solver.progress}, checkpoint {now} of {t}")
        on_disk = now
        assert on_disk < t, context + " (the puzzle finished before 12 kills: make it longer)"
    assert killed_running >= 10
    solver = Solver(made.path, ck, env)
    code, out = solver.finish()
    assert code == 0, "\n".join(solver.lines)
    doc = json.loads(out)
    assert solver.start_step == on_disk and doc["start_step"] == hex(on_disk)
    assert doc["message"] == "survived twelve kills" and doc["finished"]
    trap = json.loads((tmp_path / "trap.json").read_text())
    assert doc["w"] == hex(trapdoor_solution(puzzle.task, int(trap["p"], 16), int(trap["q"], 16)))
    assert not [f for f in ck.iterdir() if ".tmp-" in f.name]


def test_ctrl_c_checkpoints_the_verified_work_and_the_next_run_finishes(tmp_path) -> None:
    made = create_puzzle(512, b"after ctrl-c", tmp_path / "p.json", duration=2.0, calibration_seconds=0.1)
    puzzle = load_puzzle_file(made.path)
    env = _env(tmp_path)
    solver = Solver(made.path, tmp_path / "ck", env, backend="auto")    # the fastest backend here
    solver.wait_for_step(puzzle.task.t // 5)
    solver.proc.send_signal(signal.SIGINT)
    code, out = solver.finish()
    assert code == 130, "\n".join(solver.lines)
    assert any("interrupted at step" in line and "run the same command to resume" in line for line in solver.lines)
    ckpt, _ = CheckpointStore(tmp_path / "ck", puzzle.task).latest()
    assert ckpt is not None and ckpt.step >= solver.progress[0]   # the blocks done were verified and kept
    stopped = json.loads(out)              # --json reports the interrupted run too
    assert stopped["finished"] is False and stopped["w"] is None and stopped["step"] == hex(ckpt.step)
    assert stopped["error"].startswith(f"interrupted at step {ckpt.step} ")
    assert ckpt.value == plain_squaring(2, ckpt.step, puzzle.task.n)
    solver = Solver(made.path, tmp_path / "ck", env, backend="auto")
    code, out = solver.finish()
    assert code == 0 and json.loads(out)["message"] == "after ctrl-c"
    assert solver.start_step == ckpt.step
