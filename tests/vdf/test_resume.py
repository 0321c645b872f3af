"""Resumable evaluation (``vdf eval --resume-dir``): stopped, killed, damaged and faulty runs.

The oracle is the trapdoor (``x^(2^p) = x^(2^p mod lambda)``) for every stored value and ``y``, and an
in-memory :func:`evaluate` of the same plans for the set of stored positions.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .helpers import rsa
from modforge.arith.base import ParameterError
from modforge.engine import ModRing
from modforge.timelock import SolveInterrupted
from modforge.timelock.check import measure_rate
from modforge.vdf import Group, run, verify
from modforge.vdf.api import make_plans
from modforge.vdf.evaluation import evaluate
from modforge.vdf.resume import JournalCorrupt, ResumeOptions, Session

T = 40_001          # odd: Pietrzak's odd-T steps store positions past t
CHUNK = 9_000       # squarings per stopped run
BITS = 512


def _statement(seed: int = 0):
    key = rsa(BITS)
    group = key.group
    x = group.hash_to_group(f"resume test {seed}".encode())
    return key, group, x


def _run_in_pieces(directory: Path, group: Group, x: int, proof: str | None, keep=(), *, memory: int = 1 << 20,
                   stop_after: int = CHUNK, keep_state: bool = False, **options) -> tuple[object, int]:
    """``run`` with ``stop_after`` until it finishes; the result and how many times it stopped."""
    stops = 0
    while True:
        try:
            return run(group, x, T, proof, workers=0, keep=keep, memory=memory,
                       resume=ResumeOptions(directory, interval=0.02, stop_after=stop_after, keep=keep_state,
                                            **options)), stops
        except SolveInterrupted:
            stops += 1
            assert stops < 100


def _check_against_oracle(key, group: Group, x: int, result) -> None:
    ev = result.evaluation
    assert ev.y == group.canon(key.power(x, T))
    for position, value in ev.values.items():
        assert value == group.canon(key.power(x, position)), f"stored value at position {position}"


@pytest.mark.parametrize("proof, keep", [("wesolowski", ()), ("pietrzak", ()), (None, ("wesolowski", "pietrzak"))])
def test_stopped_and_resumed_evaluation_equals_one_pass(tmp_path, proof, keep) -> None:
    key, group, x = _statement()
    result, stops = _run_in_pieces(tmp_path, group, x, proof, keep)
    assert stops == T // CHUNK
    _check_against_oracle(key, group, x, result)
    wes, pie = make_plans(group, T, sorted(set(keep) | ({proof} if proof else set())), memory=1 << 20)
    one_pass = evaluate(group, x, T, ModRing(group.modulus), wesolowski=wes, pietrzak=pie)
    assert sorted(result.evaluation.values) == sorted(one_pass.values)
    assert result.evaluation.values == one_pass.values
    if proof is not None:
        assert verify(result.proof).valid
    assert result.chain["start_step"] == T // CHUNK * CHUNK and result.chain["faults_detected"] == 0
    assert list(tmp_path.iterdir()) == []            # the state goes once the proof verified


def test_keep_leaves_the_state_and_a_rerun_only_proves(tmp_path) -> None:
    key, group, x = _statement(1)
    first, _ = _run_in_pieces(tmp_path, group, x, "wesolowski", stop_after=T, keep_state=True)
    assert first.chain["start_step"] == 0
    assert any(p.name.endswith(".values") for p in tmp_path.iterdir())
    again = run(group, x, T, "wesolowski", workers=0, memory=1 << 20, resume=ResumeOptions(tmp_path))
    assert again.chain["start_step"] == T and again.chain["steps"] == T     # nothing squared again
    assert again.evaluation.values == first.evaluation.values and verify(again.proof).valid
    assert list(tmp_path.iterdir()) == []


def test_an_injected_fault_is_detected_and_rolled_back(tmp_path) -> None:
    key, group, x = _statement(2)
    result, _ = _run_in_pieces(tmp_path, group, x, "pietrzak", stop_after=T, inject_fault_at=T // 3)
    assert result.chain["faults_detected"] == 1 and result.chain["rollbacks"] == 1
    _check_against_oracle(key, group, x, result)
    assert verify(result.proof).valid


def _stop_once(directory: Path, group: Group, x: int, proof: str = "wesolowski", steps: int = 2 * CHUNK) -> Session:
    with pytest.raises(SolveInterrupted):
        run(group, x, T, proof, workers=0, memory=1 << 20,
            resume=ResumeOptions(directory, interval=0.02, stop_after=steps))
    session = Session(directory, group, x, T, [proof])
    assert session.values_path.stat().st_size > 0
    return session


def test_a_damaged_journal_record_is_reported_not_used(tmp_path) -> None:
    _, group, x = _statement(3)
    session = _stop_once(tmp_path, group, x)
    data = bytearray(session.values_path.read_bytes())
    data[len(data) // 2] ^= 0x10
    session.values_path.write_bytes(bytes(data))
    with pytest.raises(JournalCorrupt, match="damaged at record .*--restart"):
        run(group, x, T, "wesolowski", workers=0, memory=1 << 20, resume=ResumeOptions(tmp_path))
    # --restart starts over and gets it right.
    key = rsa(BITS)
    result = run(group, x, T, "wesolowski", workers=0, memory=1 << 20, resume=ResumeOptions(tmp_path, restart=True))
    assert result.chain["start_step"] == 0
    _check_against_oracle(key, group, x, result)


def test_a_short_journal_is_reported(tmp_path) -> None:
    _, group, x = _statement(4)
    session = _stop_once(tmp_path, group, x)
    with open(session.values_path, "r+b") as fh:
        fh.truncate(session.values_path.stat().st_size - 1)
    with pytest.raises(JournalCorrupt, match="complete records"):
        run(group, x, T, "wesolowski", workers=0, memory=1 << 20, resume=ResumeOptions(tmp_path))


def test_records_past_the_checkpoint_are_cut(tmp_path) -> None:
    """A kill between the journal's fsync and the checkpoint's rename leaves records no checkpoint covers."""
    key, group, x = _statement(5)
    session = _stop_once(tmp_path, group, x)
    size = session.values_path.stat().st_size
    with open(session.values_path, "ab") as fh:
        fh.write(os.urandom(3 * (8 + group.nbytes + 16) + 5))
    result = run(group, x, T, "wesolowski", workers=0, memory=1 << 20, resume=ResumeOptions(tmp_path))
    assert result.chain["start_step"] == 2 * CHUNK
    _check_against_oracle(key, group, x, result)
    assert size > 0


def test_the_first_runs_plans_are_kept(tmp_path) -> None:
    """A rerun with another memory budget goes on with the stored plans (the journal was written for them)."""
    key, group, x = _statement(6)
    _stop_once(tmp_path, group, x, "wesolowski")
    result = run(group, x, T, "wesolowski", workers=0, memory=64 << 20, resume=ResumeOptions(tmp_path))
    assert result.chain["plans_reused"]
    assert result.evaluation.wesolowski == make_plans(group, T, ["wesolowski"], memory=1 << 20)[0]
    _check_against_oracle(key, group, x, result)
    assert verify(result.proof).valid


def test_a_second_process_on_the_same_statement_is_refused(tmp_path) -> None:
    _, group, x = _statement(7)
    session = Session(tmp_path, group, x, T, ["wesolowski"])
    with session.lock():
        with pytest.raises(ParameterError, match="another process"):
            run(group, x, T, "wesolowski", workers=0, resume=ResumeOptions(tmp_path))


def test_a_damaged_plan_file_is_reported(tmp_path) -> None:
    _, group, x = _statement(8)
    session = _stop_once(tmp_path, group, x)
    doc = json.loads(session.plan_path.read_text())
    doc["wesolowski"]["kappa"] += 1
    session.plan_path.write_text(json.dumps(doc))
    with pytest.raises(Exception, match="SHA-256 .* does not match"):
        run(group, x, T, "wesolowski", workers=0, resume=ResumeOptions(tmp_path))


def _edit_plan(session: Session, edit) -> None:
    """Apply ``edit`` to the plan document and store it with a recomputed SHA-256 (a hand edit, not damage)."""
    from modforge.vdf.resume import _digest

    doc = json.loads(session.plan_path.read_text())
    edit(doc)
    doc["sha256"] = _digest(doc)
    session.plan_path.write_text(json.dumps(doc))


@pytest.mark.parametrize("proof, edit, field", [
    ("wesolowski", lambda d: d["wesolowski"].update(kappa=0), "wesolowski.kappa"),      # was ZeroDivisionError
    ("wesolowski", lambda d: d["wesolowski"].update(kappa=-4), "wesolowski.kappa"),
    ("wesolowski", lambda d: d["wesolowski"].update(kappa="32"), "wesolowski.kappa"),   # int() took these
    ("wesolowski", lambda d: d["wesolowski"].update(kappa=32.0), "wesolowski.kappa"),
    ("wesolowski", lambda d: d["wesolowski"].update(kappa=True), "wesolowski.kappa"),
    ("wesolowski", lambda d: d["wesolowski"].update(kappa=1 << 64), "wesolowski.kappa"),
    ("wesolowski", lambda d: d["wesolowski"].update(window_bits=0), "wesolowski.window_bits"),
    ("wesolowski", lambda d: d["wesolowski"].update(window_bits=23), "wesolowski.window_bits"),
    ("wesolowski", lambda d: d["wesolowski"].update(parts=0), "wesolowski.parts"),
    ("wesolowski", lambda d: d["wesolowski"].update(parts="2"), "wesolowski.parts"),
    ("wesolowski", lambda d: d["wesolowski"].update(extra=1), "'wesolowski' must be an object"),
    ("wesolowski", lambda d: d.update(wesolowski=None), "'wesolowski' does not match"),
    ("wesolowski", lambda d: d.update(wesolowski=[32, 10, 1]), "'wesolowski' must be an object"),
    ("pietrzak", lambda d: d["pietrzak"].update(depth=-1), "pietrzak.depth"),
    ("pietrzak", lambda d: d["pietrzak"].update(depth=17), "pietrzak.depth"),                 # T has 16 rounds
    ("pietrzak", lambda d: d["pietrzak"].update(depth=3.0), "pietrzak.depth"),
    ("pietrzak", lambda d: d["pietrzak"].update(parts=0), "pietrzak.parts"),
    ("pietrzak", lambda d: d.update(wesolowski={"kappa": 64, "window_bits": 5, "parts": 1}), "'wesolowski' does"),
])
def test_a_plan_edited_with_a_recomputed_hash_is_a_damaged_plan(tmp_path, proof, edit, field) -> None:
    from modforge.timelock import TimelockError

    _, group, x = _statement(10)
    session = _stop_once(tmp_path, group, x, proof)
    _edit_plan(session, edit)
    with pytest.raises(TimelockError, match=r"plan\.json: .*" + re.escape(field) + r".*--restart"):
        run(group, x, T, proof, workers=0, memory=1 << 20, resume=ResumeOptions(tmp_path))


@pytest.mark.parametrize("proof, edit, stored", [
    ("wesolowski", lambda d: d["wesolowski"].update(kappa=1), T),
    ("pietrzak", lambda d: d["pietrzak"].update(depth=16), 1 << 16),
])
def test_a_plan_edited_to_hold_more_than_the_machines_memory_is_refused(tmp_path, monkeypatch, proof, edit,
                                                                        stored) -> None:
    """The bound is the machine's memory (made 4 MiB here), not --memory, which a resume need not repeat."""
    import modforge.vdf.resume as resume
    from modforge.timelock import TimelockError

    key, group, x = _statement(11)
    session = _stop_once(tmp_path, group, x, proof)
    monkeypatch.setattr(resume, "physical_memory_bytes", lambda: 4 << 20)
    before = session.plan_path.read_bytes()
    _edit_plan(session, edit)
    with pytest.raises(TimelockError, match=rf"plan\.json: its checkpoints would hold {stored:,} values "
                                            rf"\(\d+ MiB\), more than this machine's memory \(4 MiB\).*--restart"):
        run(group, x, T, proof, workers=0, resume=ResumeOptions(tmp_path))
    # The plan as written (for --memory 1 MiB) resumes under the same bound, without --memory.
    session.plan_path.write_bytes(before)
    result = run(group, x, T, proof, workers=0, resume=ResumeOptions(tmp_path))
    assert result.chain["plans_reused"]
    _check_against_oracle(key, group, x, result)


def test_a_plan_with_kappa_0_is_exit_1_at_the_command_line(tmp_path) -> None:
    """As docs/vdf.md says of a damaged plan file: reported with the file, exit 1, --restart starts over."""
    _, group, x = _statement(10)
    session = _stop_once(tmp_path, group, x)
    _edit_plan(session, lambda d: d["wesolowski"].update(kappa=0))
    base = ["eval", "--modulus", hex(group.modulus), "--x", hex(x), "--t", str(T), "--proof", "wesolowski",
            "--memory", "1", "--resume-dir", str(tmp_path), "--json"]
    res = _cli(*base, env=_env(tmp_path))
    assert res.returncode == 1, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and str(session.plan_path) in lines[0] and "'wesolowski.kappa'" in lines[0], res.stderr
    assert "Traceback" not in res.stderr and "--restart" in lines[0]
    assert _cli(*base, "--restart", env=_env(tmp_path)).returncode == 0


def test_corrupted_checkpoints_of_a_vdf_session_are_not_called_a_puzzles(tmp_path) -> None:
    from modforge.timelock import TimelockError

    _, group, x = _statement(11)
    _stop_once(tmp_path, group, x)
    checkpoints = [p for p in tmp_path.iterdir() if re.fullmatch(r"vdf-eval-[0-9a-f]{16}-[0-9]{20}\.json", p.name)]
    assert checkpoints
    for path in checkpoints:
        path.write_text("{}")
    with pytest.raises(TimelockError, match="checkpoint file.s. of this VDF evaluation in") as err:
        run(group, x, T, "wesolowski", workers=0, memory=1 << 20, resume=ResumeOptions(tmp_path))
    assert "puzzle" not in str(err.value)


# ------------------------------------------------------------------------------------------------ command line


def _cli(*args: str, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "modforge.cli.main", "vdf", *args], capture_output=True, text=True,
                          env=env, **kw)


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MODFORGE_INJECT_FAULT"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    return env


def test_cli_stop_resume_and_usage_errors(tmp_path) -> None:
    key, group, x = _statement(9)
    env = _env(tmp_path)
    base = ["eval", "--modulus", hex(group.modulus), "--x", hex(x), "--t", str(T), "--proof", "pietrzak",
            "--resume-dir", str(tmp_path / "st"), "--checkpoint-interval", "0.05s", "--json"]
    stopped = _cli(*base, "--stop-after", str(CHUNK), env=env)
    assert stopped.returncode == 0 and json.loads(stopped.stdout)["step"] == CHUNK, stopped.stderr
    done = _cli(*base, "--out", str(tmp_path / "proof.json"), env=env)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert int(doc["y"], 16) == group.canon(key.power(x, T))
    assert doc["resumable"]["start_step"] == CHUNK and doc["squarings_per_second"] > 0
    assert _cli("verify", str(tmp_path / "proof.json"), env=env).returncode == 0
    bad = _cli("eval", "--modulus", hex(group.modulus), "--x", hex(x), "--t", "100", "--no-resume",
               "--resume-dir", str(tmp_path), env=env)
    assert bad.returncode == 2 and "--no-resume" in bad.stderr
    # Below the default threshold nothing is written to the cache.
    small = _cli("eval", "--modulus", hex(group.modulus), "--x", hex(x), "--t", "1000", "--json", env=env)
    assert small.returncode == 0 and "resumable" not in json.loads(small.stdout)
    assert not (tmp_path / "xdg").exists()


def test_cli_sigkill_at_random_moments_then_finishes_right(tmp_path) -> None:
    """kill -9 at random moments: every rerun resumes from an intact state, checkpoints never go back, and
    the last run's y and proof are right."""
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    key, group, x = _statement(10)
    # About 4 s of squaring at the fastest speed seen, so six kills after 0.3-1 s each (start-up included) fit.
    ring = ModRing(group.modulus, "gmp")
    t = int(4.0 * max(measure_rate(ring, 3, 0.15)[0] for _ in range(3)))
    directory = tmp_path / "st"
    cmd = [sys.executable, "-m", "modforge.cli.main", "vdf", "eval", "--modulus", hex(group.modulus), "--x", hex(x),
           "--t", str(t), "--proof", "wesolowski", "--resume-dir", str(directory), "--checkpoint-interval", "0.1s",
           "--backend", "gmp", "--workers", "0", "--json"]
    env = _env(tmp_path)
    last = 0
    for i in range(6):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        time.sleep(rng.uniform(0.3, 1.0))
        alive = proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        steps = sorted(int(p.name.rsplit("-", 1)[1].split(".")[0]) for p in directory.glob("vdf-eval-*-0*.json"))
        now = steps[-1] if steps else 0
        print(f"seed {seed}, kill {i}: alive {alive}, checkpoint {now}")
        assert now >= last, f"seed {seed}: checkpoint went back from {last} to {now}"
        last = now
        assert alive, f"seed {seed}: finished before kill {i}; make t larger"
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, f"seed {seed}: {done.stderr}"
    doc = json.loads(done.stdout)
    assert doc["resumable"]["start_step"] == last, f"seed {seed}"
    assert int(doc["y"], 16) == group.canon(key.power(x, t))
    assert verify(doc["proof"]).valid


def test_the_trivial_element_is_refused_and_leaves_no_state(tmp_path) -> None:
    """x = 1 (or N - 1) has a constant chain, so its 'proof' of t = 2^40 shows no work: refused before any
    state is made, resumable or not (issue 31 item 4; it used to evaluate at once)."""
    from modforge.arith.base import ParameterError

    group = rsa(BITS).group
    for resume in (None, ResumeOptions(tmp_path)):
        for x in (1, group.modulus - 1):
            with pytest.raises(ParameterError, match="the identity of the group"):
                run(group, x, 1 << 40, "wesolowski", workers=0, memory=1 << 20, resume=resume)
    assert list(tmp_path.iterdir()) == []
