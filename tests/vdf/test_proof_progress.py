"""Resumable Wesolowski proofs (:mod:`modforge.vdf.proof_progress`): stopped, damaged, forged and resumed.

The proof is walked by bit ranges only above the digit budget (t > 2^28 by default), so these tests
shrink the budget and the least range width; the oracle is ``pi = x^floor(2^t / l)`` by Python's pow.
"""

from __future__ import annotations

import io
import json
import unittest.mock

import pytest
from click.testing import CliRunner

from modforge.cli.vdf import vdf
from modforge.engine import ModRing
from modforge.timelock.progress import PlainReporter
from modforge.vdf import CostModel, WesolowskiPlan, challenge_prime, evaluate, prove, run, verify
from modforge.vdf import wesolowski as wes
from modforge.vdf.parallel import ProofPool
from modforge.vdf.proof_progress import ProofProgress, _digest
from modforge.vdf.resume import ResumeOptions

from ..support import one_line_error
from .helpers import rsa

T = 5000
KAPPA = 100
WIDTH = 33          # ranges [67, 100), [34, 67), [1, 34), [0, 1): edges 67, 34, 1
EDGES = [67, 34, 1]


class Stop(Exception):
    """Stands for Ctrl-C or kill -9 between two ranges."""


@pytest.fixture
def small_ranges(monkeypatch):
    """Walk every Wesolowski proof with KAPPA-bit blocks by WIDTH-bit ranges."""
    monkeypatch.setattr(wes, "MIN_RANGE_BITS", 1)
    monkeypatch.setattr(wes, "DIGIT_BUDGET_BITS", (T // KAPPA) * WIDTH)


@pytest.fixture(scope="module")
def statement():
    key = rsa(512)
    g = key.group
    x = g.hash_to_group(b"proof progress")
    ring = ModRing(g.modulus, "gmp")
    ev = evaluate(g, x, T, ring, wesolowski=WesolowskiPlan(T, KAPPA, 4))
    l = challenge_prime(g, x, ev.y, T)
    pi = g.canon(pow(x, (1 << T) // l, g.modulus))
    return g, ring, ev, l, pi


def _progress(path, g, **kw) -> tuple[ProofProgress, list[tuple[str, str]]]:
    notes: list[tuple[str, str]] = []
    return ProofProgress(path, "test-key", g.modulus, interval=0,
                         notify=lambda kind, text: notes.append((kind, text)), **kw), notes


class StoppingProgress(ProofProgress):
    """Progress that stands for Ctrl-C or kill -9 right after its ``stop_after``-th save."""

    def __init__(self, path, g, stop_after: int = 1) -> None:
        super().__init__(path, "test-key", g.modulus, interval=0)
        self.stop_after = stop_after

    def save(self, *args) -> None:
        super().save(*args)
        if self.saves == self.stop_after:
            raise Stop


def _prove(ev, ring, progress) -> int:
    with ProofPool(ring) as pool:
        return wes.prove(ev, pool, CostModel(), progress=progress)


def test_a_walk_resumed_at_any_edge_yields_the_rest_of_the_whole_walk(statement) -> None:
    g, ring, ev, l, pi = statement
    count = ev.wesolowski.checkpoints
    whole = list(wes.quotient_ranges(T, KAPPA, l, count, WIDTH))
    assert [shift for shift, _ in whole] == [33, 33, 33, 1]
    for i, edge in enumerate(EDGES, start=1):
        assert list(wes.quotient_ranges(T, KAPPA, l, count, WIDTH, top=edge)) == whole[i:], edge


@pytest.mark.parametrize("stops_after", [1, 2, 3])
def test_a_stopped_proof_goes_on_from_its_last_save_and_gives_the_same_pi(statement, small_ranges, tmp_path,
                                                                        stops_after: int) -> None:
    g, ring, ev, l, pi = statement
    path = tmp_path / "progress.json"

    with pytest.raises(Stop):
        _prove(ev, ring, StoppingProgress(path, g, stops_after))
    saved = json.loads(path.read_text())
    assert saved["next_bit"] == EDGES[stops_after - 1]

    tops: list[int] = []
    real = wes.quotient_ranges

    def spy(*args, top=None):
        tops.append(top)
        return real(*args, top=top)

    again, notes = _progress(path, g)
    with unittest.mock.patch.object(wes, "quotient_ranges", spy):
        assert _prove(ev, ring, again) == pi
    assert tops == [EDGES[stops_after - 1]]
    assert again.resumed_at == EDGES[stops_after - 1]
    assert [kind for kind, _ in notes] == ["state"]


def test_saves_closer_than_the_interval_are_skipped(statement, small_ranges, tmp_path) -> None:
    g, ring, ev, l, pi = statement
    progress = ProofProgress(tmp_path / "p.json", "test-key", g.modulus, interval=3600)
    assert _prove(ev, ring, progress) == pi
    assert progress.saves == 0 and not (tmp_path / "p.json").exists()


def _saved_doc(statement, tmp_path) -> dict:
    """The file a run stopped after its first range leaves."""
    g, ring, ev, l, pi = statement
    path = tmp_path / "progress.json"

    with pytest.raises(Stop):
        _prove(ev, ring, StoppingProgress(path, g))
    return json.loads(path.read_text())


def _resign(doc: dict) -> dict:
    doc["sha256"] = _digest(doc)
    return doc


def _forged_progress(statement, tmp_path):
    """A saved state with a valid digest but a wrong accumulator (4): what only verification can catch."""
    doc = _saved_doc(statement, tmp_path)
    (tmp_path / "progress.json").write_text(json.dumps(_resign({**doc, "acc": hex(4)})))
    return _progress(tmp_path / "progress.json", statement[0])


@pytest.mark.parametrize("change, reason", [
    (lambda d: _resign({**d, "key": "another statement"}), "its key"),
    (lambda d: _resign({**d, "l": hex(int(d["l"], 16) + 2)}), "its l"),
    (lambda d: _resign({**d, "width": 34}), "its width"),
    (lambda d: _resign({**d, "checkpoints": d["checkpoints"] + 1}), "its checkpoints"),
])
def test_progress_of_another_walk_is_not_used_nor_called_damage(statement, small_ranges, tmp_path, change,
                                                                reason) -> None:
    g, ring, ev, l, pi = statement
    path = tmp_path / "progress.json"
    path.write_text(json.dumps(change(_saved_doc(statement, tmp_path))))
    progress, notes = _progress(path, g)
    assert _prove(ev, ring, progress) == pi
    assert progress.resumed_at is None
    assert len(notes) == 1 and notes[0][0] == "state" and reason in notes[0][1], notes
    assert not (tmp_path / "progress.json.corrupt").exists()
    assert json.loads(path.read_text())["l"] == hex(l)           # replaced by this walk's first save


@pytest.mark.parametrize("damage, reason", [
    (lambda d: {**d, "acc": hex(int(d["acc"], 16) ^ 1)}, "SHA-256"),
    (lambda d: _resign({**d, "next_bit": 50}), "not a range edge"),
    (lambda d: _resign({**d, "next_bit": 100}), "not a range edge"),
    (lambda d: _resign({**d, "next_bit": True}), "not a range edge"),
    (lambda d: _resign({**d, "acc": "0x0"}), "not a residue"),
    (lambda d: _resign({**d, "acc": hex(1 << 600)}), "not a residue"),
    (lambda d: _resign({**d, "acc": 5}), "not a 0x-hex"),
    (lambda d: _resign({**d, "version": 2}), "version 1"),
    (lambda d: "[" * 100_000, "nested too deeply"),
    (lambda d: "", "not JSON"),
    (lambda d: "[1]", "not a modforge-vdf-proof-progress"),
])
def test_a_damaged_or_foreign_progress_file_is_set_aside_and_the_proof_starts_over(statement, small_ranges,
                                                                                 tmp_path, damage, reason) -> None:
    g, ring, ev, l, pi = statement
    doc = damage(_saved_doc(statement, tmp_path))
    path = tmp_path / "progress.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    progress, notes = _progress(path, g)
    assert _prove(ev, ring, progress) == pi
    assert progress.resumed_at is None
    assert len(notes) == 1 and notes[0][0] == "rejected" and reason in notes[0][1], notes
    assert (tmp_path / "progress.json.corrupt").exists()


def test_a_forged_accumulator_with_a_valid_digest_is_caught_and_the_proof_computed_again(statement, small_ranges,
                                                                                      tmp_path) -> None:
    g, ring, ev, l, pi = statement
    progress, notes = _forged_progress(statement, tmp_path)
    proof = prove(ev, "wesolowski", ring=ring, progress=progress)
    assert proof.pi == pi and verify(proof).valid
    assert [kind for kind, _ in notes] == ["state", "rejected"]
    assert "does not verify" in notes[1][1]
    assert progress.resumed_at is None                     # the second walk started from the top


def test_a_resumable_evaluation_whose_proof_stopped_only_finishes_the_proof(statement, small_ranges, tmp_path,
                                                                           monkeypatch) -> None:
    g, ring, ev, l, pi = statement
    real_save = ProofProgress.save

    def save_then_stop(self, *args) -> None:
        real_save(self, *args)
        raise Stop

    monkeypatch.setattr(ProofProgress, "save", save_then_stop)
    options = ResumeOptions(tmp_path, interval=1e-9)
    with pytest.raises(Stop):
        run(g, ev.x, T, "wesolowski", backend="gmp", workers=0, memory=1 << 20, resume=options)
    monkeypatch.setattr(ProofProgress, "save", real_save)
    # The same plan as the first run (the session keeps it), whatever the budget would give now.
    log = io.StringIO()
    options = ResumeOptions(tmp_path, interval=1e-9, reporter=PlainReporter(log, period=0))
    result = run(g, ev.x, T, "wesolowski", backend="gmp", workers=0, memory=1 << 20, resume=options)
    assert result.chain["start_step"] == result.chain["steps"]           # no squaring was redone
    kappa = result.plans["wesolowski"]["kappa"]
    resumed_at = result.chain["proof_resumed_at"]
    assert resumed_at is not None and 0 < resumed_at < kappa
    lines = log.getvalue().splitlines()
    assert any(line.startswith("timelock state ") and "the proof goes on from" in line for line in lines), lines
    done = [int(line.split()[2].removeprefix("done=")) for line in lines if line.startswith("timelock proof ")]
    assert done[0] > kappa - resumed_at and done[-1] == kappa and done == sorted(done), lines
    assert result.proof.y == ev.y and verify(result.proof).valid
    assert list(tmp_path.iterdir()) == []                                # the session is gone


def _cli(*args):
    return CliRunner().invoke(vdf, [str(a) for a in args], catch_exceptions=False)


def test_cli_prove_is_interrupted_then_goes_on(statement, small_ranges, tmp_path, monkeypatch) -> None:
    from modforge.vdf import write_checkpoints

    g, ring, ev, l, pi = statement
    checkpoints = tmp_path / "ck.json"
    write_checkpoints(checkpoints, ev)
    state = tmp_path / "state"
    args = ["prove", "--checkpoints", checkpoints, "--proof", "wesolowski", "--resume-dir", state,
            "--checkpoint-interval", "0.000001s", "--workers", "0", "--out", tmp_path / "proof.json"]
    real_save = ProofProgress.save

    def save_then_ctrl_c(self, *a) -> None:
        real_save(self, *a)
        raise KeyboardInterrupt

    monkeypatch.setattr(ProofProgress, "save", save_then_ctrl_c)
    res = _cli(*args)
    assert res.exit_code == 130, res.output
    assert "the proof's progress is kept in" in res.output and "rerun the same command" in res.output
    assert not (tmp_path / "proof.json").exists()
    kept = [p.name for p in state.iterdir()]
    assert len(kept) == 1 and kept[0].endswith(".json"), kept           # the progress, not the lock file
    monkeypatch.setattr(ProofProgress, "save", real_save)
    res = _cli(*args)
    assert res.exit_code == 0, res.output
    assert "resumed      from" in res.output and "above bit 67" in res.output
    doc = json.loads((tmp_path / "proof.json").read_text())
    assert int(doc["proof"]["pi"], 16) == pi and verify(doc).valid
    assert list(state.iterdir()) == []                                   # progress and lock removed


@pytest.mark.parametrize("extra, param", [
    (["--proof", "pietrzak", "--resume-dir", "d"], "resume-dir"),
    (["--proof", "pietrzak", "--restart"], "restart"),
    (["--proof", "wesolowski", "--no-resume", "--resume-dir", "d"], "resume-dir"),
    (["--proof", "wesolowski", "--no-resume", "--restart"], "restart"),
    (["--proof", "wesolowski", "--resume-dir", "d", "--checkpoint-interval", "soon"], "checkpoint-interval"),
    (["--proof", "pietrzak", "--checkpoint-interval", "0s"], "checkpoint-interval"),
    (["--proof", "wesolowski", "--no-resume", "--checkpoint-interval", "-1s"], "checkpoint-interval"),
])
def test_cli_prove_resume_options_that_do_not_go_together(statement, tmp_path, extra, param) -> None:
    from modforge.vdf import write_checkpoints

    g, ring, ev, l, pi = statement
    write_checkpoints(tmp_path / "ck.json", _with_pietrzak(ev))
    res = _cli("prove", "--checkpoints", tmp_path / "ck.json", "--json", *extra)
    one_line_error(res, param)


def _with_pietrzak(ev):
    from modforge.vdf import PietrzakPlan

    return evaluate(ev.group, ev.x, ev.t, ModRing(ev.group.modulus, "gmp"), wesolowski=ev.wesolowski,
                    pietrzak=PietrzakPlan(ev.t, 2))


def test_a_proof_that_fails_for_good_leaves_no_state_to_resume(statement, small_ranges, tmp_path) -> None:
    """Corrupt checkpoints: every walk gives a wrong pi, so the saved state of one is not worth resuming."""
    from dataclasses import replace

    from modforge.vdf import ProofFailed

    g, ring, ev, l, pi = statement
    values = dict(ev.values)
    values[KAPPA * 3] = g.canon(values[KAPPA * 3] * 4 % g.modulus)
    bad = replace(ev, values=values)
    progress, notes = _progress(tmp_path / "progress.json", g)
    with pytest.raises(ProofFailed):
        prove(bad, "wesolowski", ring=ring, progress=progress)
    assert not (tmp_path / "progress.json").exists()


@pytest.mark.parametrize("t, kappa, width", [(5000, 100, 33), (5050, 100, 33), (4999, 64, 10), (20000, 64, 10),
                                             (300, 512, 7)])
def test_a_walk_resumed_at_any_edge_is_the_rest_even_where_the_top_block_is_partial(t, kappa, width) -> None:
    """Blocks above q's top bit, and the block q's top bit starts in (its remainder not yet carried)."""
    l = (1 << 255) + 95                     # odd; any l works for the identity
    count = -(-t // kappa)
    whole = list(wes.quotient_ranges(t, kappa, l, count, width))
    q = (1 << t) // l
    b, edges = kappa, []
    for shift, digits in whole:
        b -= shift
        edges.append(b)
        for c in range(count):              # the oracle: bits [b, b + shift) of block c of q
            assert digits[c] == (q >> (kappa * c + b)) % (1 << shift), (c, b)
    for i, edge in enumerate(edges[:-1], start=1):
        assert list(wes.quotient_ranges(t, kappa, l, count, width, top=edge)) == whole[i:], edge


def test_a_failed_save_is_reported_once_and_tried_again(statement, small_ranges, tmp_path, monkeypatch) -> None:
    """A transient full disk: reported once, the proof goes on, and the next interval saves again."""
    import modforge.vdf.proof_progress as module

    g, ring, ev, l, pi = statement
    real, calls = module.atomic_write, []

    def full_twice(*args, **kwargs):
        calls.append(1)
        if len(calls) <= 2:
            raise OSError(28, "disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "atomic_write", full_twice)
    progress, notes = _progress(tmp_path / "p.json", g)
    assert _prove(ev, ring, progress) == pi
    assert [kind for kind, _ in notes] == ["save-failed", "state"] and "disk full" in notes[0][1]
    assert "saved again" in notes[1][1] and progress.saves == len(EDGES) - 2 and len(calls) == len(EDGES)


def test_an_unreadable_progress_file_means_starting_from_the_top(statement, small_ranges, tmp_path) -> None:
    g, ring, ev, l, pi = statement
    (tmp_path / "p.json").mkdir()                           # reading it fails with EISDIR
    progress, notes = _progress(tmp_path / "p.json", g)
    with unittest.mock.patch.object(ProofProgress, "save", lambda *a: None):
        assert _prove(ev, ring, progress) == pi
    assert notes[0][0] == "rejected" and "cannot read" in notes[0][1]


def test_cli_refuses_to_compute_a_proof_it_would_not_keep(statement, tmp_path) -> None:
    from modforge.vdf import write_checkpoints

    g, ring, ev, l, pi = statement
    write_checkpoints(tmp_path / "ck.json", ev)
    one_line_error(_cli("prove", "--checkpoints", tmp_path / "ck.json", "--proof", "wesolowski"),
                   "out: the proof would be computed and not kept")
    one_line_error(_cli("eval", "--modulus", g.modulus, "--x", 5, "--t", 100, "--proof", "wesolowski",
                        "--resume-dir", tmp_path / "state"), "out: a resumable evaluation deletes its state")
    assert not (tmp_path / "state").exists()


def test_cli_eval_output_that_cannot_be_printed_keeps_the_state(statement, small_ranges, tmp_path,
                                                               monkeypatch) -> None:
    """--json alone: the proof exists only in the output, so the state goes only after it is printed."""
    import modforge.cli.vdf as cli_vdf

    g, ring, ev, l, pi = statement
    args = ["eval", "--modulus", g.modulus, "--x", ev.x, "--t", T, "--proof", "wesolowski", "--backend", "gmp",
            "--workers", 0, "--resume-dir", tmp_path, "--checkpoint-interval", "0.000001s", "--json"]
    real = cli_vdf._print_eval

    def broken_pipe(*a, **k):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli_vdf, "_print_eval", broken_pipe)
    res = _cli(*args)
    assert res.exit_code == 141 and not res.stderr          # the reader went away: quiet, and not success
    assert list(tmp_path.glob("*.proof.json")) and list(tmp_path.glob("*.values"))
    monkeypatch.setattr(cli_vdf, "_print_eval", real)
    res = _cli(*args)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["resumable"]["proof_resumed_at"] is not None and int(doc["proof"]["proof"]["pi"], 16) == pi
    assert list(tmp_path.iterdir()) == []


def test_a_resumed_proof_is_verified_even_when_the_caller_skips_the_check(statement, small_ranges,
                                                                         tmp_path) -> None:
    g, ring, ev, l, pi = statement
    progress, notes = _forged_progress(statement, tmp_path)
    assert prove(ev, "wesolowski", ring=ring, progress=progress, check=False).pi == pi
    assert "does not verify" in notes[-1][1]


def test_a_failed_output_write_keeps_the_proofs_progress(statement, small_ranges, tmp_path) -> None:
    """deliver (writing --out) fails after the proof: the rerun neither squares nor walks the ranges again."""
    g, ring, ev, l, pi = statement
    options = ResumeOptions(tmp_path, interval=1e-9)

    def full_disk(evaluation, proof) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        run(g, ev.x, T, "wesolowski", backend="gmp", workers=0, memory=1 << 20, resume=options, deliver=full_disk)
    assert list(tmp_path.glob("*.proof.json"))
    delivered = []
    result = run(g, ev.x, T, "wesolowski", backend="gmp", workers=0, memory=1 << 20, resume=options,
                 deliver=lambda e, p: delivered.append(p))
    assert result.chain["start_step"] == result.chain["steps"]
    assert result.chain["proof_resumed_at"] is not None and delivered == [result.proof]
    assert verify(result.proof).valid and list(tmp_path.iterdir()) == []


def test_read_json_takes_standard_input_only_where_asked(tmp_path, monkeypatch) -> None:
    from modforge.arith.base import ParameterError
    from modforge.vdf.formats import read_checkpoints

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParameterError, match="cannot read -"):
        read_checkpoints("-")


def test_a_plan_with_kappa_above_t_resumes_its_walk(statement, monkeypatch, tmp_path) -> None:
    """kappa > t is the plan with kappa = t (one checkpoint): its walk saves and resumes like any other
    (counted from kappa, its saved edges were once taken for damage and the proof started over)."""
    g, ring, _, _, _ = statement
    t, kappa, width = 300, 10 ** 6, 70
    monkeypatch.setattr(wes, "MIN_RANGE_BITS", 1)
    monkeypatch.setattr(wes, "DIGIT_BUDGET_BITS", width)
    x = g.hash_to_group(b"kappa above t")
    ev = evaluate(g, x, t, ring, wesolowski=WesolowskiPlan(t, kappa, 4))
    l = challenge_prime(g, x, ev.y, t)
    pi = g.canon(pow(x, (1 << t) // l, g.modulus))
    path = tmp_path / "progress.json"

    with pytest.raises(Stop):
        _prove(ev, ring, StoppingProgress(path, g))
    saved = json.loads(path.read_text())
    assert saved["kappa"] == t and 0 < saved["next_bit"] < t
    again, notes = _progress(path, g)
    assert _prove(ev, ring, again) == pi
    assert again.resumed_at == saved["next_bit"] and not list(tmp_path.glob("*.corrupt")), notes
