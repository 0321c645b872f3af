"""Checkpoints: written atomically, the last two kept, corruption detected and reported, fallback, rollback."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from .helpers import make_puzzle, plain_squaring
from modforge.arith.base import ParameterError
from modforge.engine import ModRing as RealModRing
from modforge.timelock import CheckpointStore, SquaringTask, TimelockError, load_puzzle_file, solve
from modforge.timelock.checkpoint import digest
from modforge.fileio import atomic_write


def _partial(tmp_path, steps=(1000, 2500, 4000), t=6000):
    """A puzzle and a checkpoint dir holding checkpoints at ``steps`` (the last two survive)."""
    made, p, q = make_puzzle(tmp_path, t=t)
    puzzle = load_puzzle_file(made.path)
    ck = tmp_path / "ck"
    done = 0
    for s in steps:
        r = solve(puzzle, checkpoint_dir=ck, interval=0.05, stop_after=s - done)
        assert r.step == s
        done = s
    return puzzle, ck, CheckpointStore(ck, puzzle.task)


def _flip_byte(path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset % len(data)] ^= 0x04
    path.write_bytes(bytes(data))


def test_only_the_last_two_checkpoints_are_kept_and_they_are_right(tmp_path) -> None:
    puzzle, ck, store = _partial(tmp_path)
    files = store.files()
    assert [s for s, _ in files] == [4000, 2500]
    for step, path in files:
        c = store.read(path)
        assert c.value == plain_squaring(puzzle.task.x, step, puzzle.task.n)
        assert c.doc["task_id"] == puzzle.task.id and c.doc["sha256"] == digest(c.doc)
    assert not [p for p in ck.iterdir() if ".tmp-" in p.name]


@pytest.mark.parametrize("where", ["value", "sha256", "step", "random", "truncate", "empty"])
def test_a_corrupted_newest_checkpoint_is_reported_and_the_previous_one_is_used(tmp_path, where: str) -> None:
    puzzle, ck, store = _partial(tmp_path)
    newest = store.path_for(4000)
    text = newest.read_text()
    if where == "truncate":
        newest.write_bytes(newest.read_bytes()[: len(text) // 2])
    elif where == "empty":
        newest.write_bytes(b"")
    elif where == "random":
        _flip_byte(newest, 97)
    else:
        key = f'"{where}": "'
        _flip_byte(newest, text.index(key) + len(key) + 5)
    result = solve(puzzle, checkpoint_dir=ck, interval=0.05)
    assert result.start_step == 2500                      # fell back to the previous checkpoint
    assert result.finished and result.payload == b"open sesame"
    assert len(result.rejected_checkpoints) == 1
    assert result.rejected_checkpoints[0]["path"] == str(newest)
    assert any(e["event"] == "rejected" for e in result.events)
    assert (ck / (newest.name + ".corrupt")).exists()     # kept for inspection, never read again
    assert not newest.exists()


def test_all_checkpoints_corrupted_is_an_error_not_a_silent_restart(tmp_path) -> None:
    puzzle, ck, store = _partial(tmp_path)
    for _, path in store.files():
        _flip_byte(path, 120)
    with pytest.raises(TimelockError, match="no usable checkpoint.*--restart"):
        solve(puzzle, checkpoint_dir=ck, interval=0.05)
    result = solve(puzzle, checkpoint_dir=ck, interval=0.05, restart=True)
    assert result.start_step == 0 and result.finished and result.payload == b"open sesame"


def test_checkpoint_of_another_puzzle_is_rejected(tmp_path) -> None:
    puzzle, ck, store = _partial(tmp_path, steps=(1000,))
    other = SquaringTask(puzzle.task.n, puzzle.task.x, puzzle.task.t + 1)
    other_store = CheckpointStore(ck, other)
    shutil.copy(store.path_for(1000), other_store.path_for(1000))
    ckpt, rejected = other_store.latest(quarantine=False)
    assert ckpt is None and "another puzzle" in rejected[0].reason


def test_a_checkpoint_with_a_recomputed_hash_but_a_bad_value_is_still_rejected(tmp_path) -> None:
    puzzle, ck, store = _partial(tmp_path, steps=(1000,))
    path = store.path_for(1000)
    doc = json.loads(path.read_text())
    doc["value"] = hex(puzzle.task.n)            # out of range (and not a unit)
    doc["sha256"] = digest(doc)
    path.write_text(json.dumps(doc))
    ckpt, rejected = store.latest(quarantine=False)
    assert ckpt is None and "invertible residue" in rejected[0].reason


def test_stale_temp_files_are_removed_and_a_second_solver_is_refused(tmp_path) -> None:
    puzzle, ck, store = _partial(tmp_path, steps=(1000,))
    stale = ck / f".{store.prefix}00000000000000002000.json.tmp-abc"
    stale.write_text("half a checkpoint")
    with store.lock():
        assert not stale.exists()
        with pytest.raises(ParameterError, match="^checkpoint-dir: another solver"):
            solve(puzzle, checkpoint_dir=ck)


def test_atomic_write_replaces_whole_files(tmp_path) -> None:
    target = tmp_path / "f.json"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert os.listdir(tmp_path) == ["f.json"]


def test_an_injected_fault_is_detected_and_rolled_back(tmp_path) -> None:
    made, p, q = make_puzzle(tmp_path, t=20000)
    puzzle = load_puzzle_file(made.path)
    ck = tmp_path / "ck"
    solve(puzzle, checkpoint_dir=ck, interval=0.05, stop_after=5000)
    result = solve(puzzle, checkpoint_dir=ck, interval=0.05, inject_fault_at=7777)
    assert result.faults_injected == 1 and result.faults_detected == 1 and result.rollbacks == 1
    kinds = [e["event"] for e in result.events]
    assert kinds.index("fault-injected") < kinds.index("fault") < kinds.index("rollback")
    fault = next(e for e in result.events if e["event"] == "fault")
    assert fault["start"] < 7777 <= fault["end"]
    assert result.finished and result.payload == b"open sesame"
    assert result.w == plain_squaring(puzzle.task.x, puzzle.task.t, puzzle.task.n)


def test_a_fault_before_the_first_checkpoint_rolls_back_to_the_start(tmp_path) -> None:
    made, p, q = make_puzzle(tmp_path, t=3000)
    result = solve(load_puzzle_file(made.path), checkpoint_dir=tmp_path / "ck", inject_fault_at=1)
    assert result.faults_detected == 1 and result.payload == b"open sesame"


class _AlwaysWrong:
    """A ModRing stand-in whose squarings are always off by one: a broken backend."""

    def __init__(self, n, backend="auto"):
        self._ring = RealModRing(n, "gmp")
        self.modulus, self.bits, self.backend = n, n.bit_length(), "broken"

    def sqr_n(self, x, k):
        return (self._ring.sqr_n(x, k) + 1) % self.modulus

    def mul(self, x, y):
        return self._ring.mul(x, y)


def test_a_backend_that_keeps_failing_the_check_stops_with_an_error(tmp_path, monkeypatch) -> None:
    import modforge.engine

    made, _, _ = make_puzzle(tmp_path, t=3000)
    monkeypatch.setattr(modforge.engine, "ModRing", _AlwaysWrong)
    with pytest.raises(TimelockError, match="failed 3 times in a row"):
        solve(load_puzzle_file(made.path), checkpoint_dir=tmp_path / "ck", interval=0.05)
    assert CheckpointStore(tmp_path / "ck", load_puzzle_file(made.path).task).files() == []


def test_checkpoint_names_take_ascii_digits_only(tmp_path) -> None:
    """``\\d`` would take any Unicode digit: a file named with Arabic-Indic digits is not one of the store's."""
    puzzle, ck, store = _partial(tmp_path, steps=(1000,))
    good = store.path_for(1000)
    for digits in ("".join(chr(0x660 + int(c)) for c in f"{2000:020d}"),      # ARABIC-INDIC DIGIT ZERO..
                   "".join(chr(0xFF10 + int(c)) for c in f"{2000:020d}")):     # FULLWIDTH DIGIT ZERO..
        shutil.copy(good, ck / f"{store.prefix}{digits}.json")
    assert store.files() == [(1000, good)]
    assert store.clear() == 1 and len(list(ck.glob(f"{store.prefix}*.json"))) == 2
