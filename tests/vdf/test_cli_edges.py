"""`modforge vdf` at its edges: hostile JSON, the Pietrzak range limit, outputs checked before the work and
written before a resumable state is dropped, checkpoints files whose plans outgrow their values."""

from __future__ import annotations

import errno
import json
import re

import pytest
from click.testing import CliRunner

import modforge.vdf as vdf_pkg
from modforge.arith.base import ParameterError
from modforge.cli.vdf import vdf
from modforge.vdf import Group, Proof, run, verify
from modforge.vdf.pietrzak import MAX_T as PIETRZAK_MAX_T

from ..support import one_line_error
from .helpers import oracle, rsa


def invoke(*args):
    return CliRunner().invoke(vdf, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def n() -> int:
    return rsa(512).n


@pytest.fixture(scope="module")
def proof_doc(n: int) -> dict:
    return run(n, 5, 300, "pietrzak", backend="gmp", workers=0).proof.to_document()


# -- verify: standard input, and the eval --json container --------------------------------------------------
def test_verify_reads_standard_input(proof_doc) -> None:
    runner = CliRunner()
    res = runner.invoke(vdf, ["verify", "-"], input=json.dumps(proof_doc), catch_exceptions=False)
    assert res.exit_code == 0 and res.stdout.startswith("valid: pietrzak proof"), res.output
    forged = {**proof_doc, "y": proof_doc["x"]}
    res = runner.invoke(vdf, ["verify", "-"], input=json.dumps(forged), catch_exceptions=False)
    assert res.exit_code == 1 and res.stdout.startswith("invalid: "), res.output
    one_line_error(runner.invoke(vdf, ["verify", "-"], input="{", catch_exceptions=False),
                   "standard input is not JSON")
    one_line_error(runner.invoke(vdf, ["verify", "-"], input="[" + " " * (17 << 20), catch_exceptions=False),
                   "standard input: more than the")


def test_verify_reads_no_more_than_its_limit_from_a_file_whose_size_says_nothing() -> None:
    one_line_error(invoke("verify", "/dev/zero"), "/dev/zero: more than the")


def test_verify_names_eval_json_output_for_what_it_is(n: int, tmp_path) -> None:
    res = invoke("eval", "--modulus", n, "--x", 5, "--t", 100, "--proof", "wesolowski", "--backend", "gmp", "--json")
    assert res.exit_code == 0, res.output
    (tmp_path / "e.json").write_text(res.stdout)
    one_line_error(invoke("verify", tmp_path / "e.json"), "is `vdf eval --json` output, not a proof file")
    (tmp_path / "p.json").write_text(json.dumps(json.loads(res.stdout)["proof"]))
    assert invoke("verify", tmp_path / "p.json").exit_code == 0


# -- verify: JSON that is not a document, or not JSON this reader takes ----------------------------------------
@pytest.mark.parametrize("edit, reason", [
    (lambda text: text.replace('"t":', '"y": "0x00", "t":', 1), "duplicate field 'y'"),
    (lambda text: text.replace('"t": 300', '"t": NaN'), "NaN is not a JSON number"),
    (lambda text: text.replace('"t": 300', '"t": Infinity'), "Infinity is not a JSON number"),
])
def test_a_document_that_is_json_but_not_a_proof_is_invalid_not_a_crash(proof_doc, tmp_path, edit, reason) -> None:
    path = tmp_path / "p.json"
    path.write_text(edit(json.dumps(proof_doc, indent=1)))
    res = invoke("verify", path)
    assert res.exit_code == 1 and res.stdout.strip() == f"invalid: {reason}"
    res = invoke("verify", path, "--json")
    assert res.exit_code == 1 and json.loads(res.stdout)["valid"] is False and json.loads(res.stdout)["reason"] == reason


@pytest.mark.parametrize("text, reason", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
])
def test_json_the_reader_cannot_take_is_unreadable(tmp_path, text, reason) -> None:
    path = tmp_path / "p.json"
    path.write_text(text)
    one_line_error(invoke("verify", path), reason)
    one_line_error(invoke("prove", "--checkpoints", path, "--proof", "wesolowski", "--json"), reason)


def test_a_json_integer_past_pythons_digit_limit_is_read_and_refused_by_its_field(proof_doc, tmp_path) -> None:
    """JSON numbers have no length limit; Python's int() stops at 4300 digits.  Such a t is JSON, so the
    proof is invalid (exit 1) for its t, named briefly; it was 'not JSON this reader accepts' (exit 2)."""
    path = tmp_path / "p.json"
    path.write_text(json.dumps(dict(proof_doc, t=0)).replace('"t": 0', '"t": 1' + "0" * 5000))
    res = invoke("verify", path)
    assert res.exit_code == 1, res.output
    assert res.stdout == "invalid: field 't' must be a JSON integer from 1 to 2^64 - 1, got a 16610-bit number\n"


def test_pietrzak_stops_at_t_2_64_minus_2(proof_doc, n: int) -> None:
    doc = dict(proof_doc, t=(1 << 64) - 1, proof={"mu": [proof_doc["y"]] * 64})
    verdict = verify(doc)                       # the verifier never raises for a bad proof
    assert not verdict.valid and "beyond a Pietrzak proof's range" in verdict.reason
    assert PIETRZAK_MAX_T == (1 << 64) - 2
    with pytest.raises(ParameterError, match="beyond a Pietrzak proof's range"):
        run(n, 5, (1 << 64) - 1, "pietrzak", backend="gmp")
    with pytest.raises(ParameterError, match="beyond a Pietrzak proof's range"):
        run(n, 5, (1 << 64) - 1, None, backend="gmp", keep=("pietrzak",))
    # t = 2^64 - 2 is in range: its proof fails on the values (this one is forged), not on t.
    verdict = verify(dict(doc, t=PIETRZAK_MAX_T, proof={"mu": [proof_doc["y"]] * 63}))
    assert not verdict.valid and "range" not in verdict.reason


# -- eval / prove: outputs -------------------------------------------------------------------------------------
def test_eval_checks_its_outputs_before_evaluating(n: int, tmp_path) -> None:
    base = ["eval", "--modulus", n, "--x", 5, "--t", "2^20", "--proof", "wesolowski", "--resume-dir", tmp_path / "r"]
    one_line_error(invoke(*base, "--out", tmp_path / "missing" / "p.json"), "out: directory")
    one_line_error(invoke(*base, "--out", tmp_path / "same.json", "--checkpoints", tmp_path / "same.json"),
                   "checkpoints: is the same file as --out")
    assert not (tmp_path / "r").exists()              # refused before any state was made


def test_a_failed_output_write_keeps_the_resumable_state(n: int, tmp_path, monkeypatch) -> None:
    state, out = tmp_path / "state", tmp_path / "p.json"
    args = ["eval", "--modulus", n, "--x", 5, "--t", 5000, "--proof", "wesolowski", "--resume-dir", state,
            "--out", out, "--json", "--backend", "gmp"]

    def disk_full(path, proof, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(vdf_pkg, "write_proof", disk_full)
    res = CliRunner().invoke(vdf, [str(a) for a in args])
    one_line_error(res, "No space left on device")
    assert any(state.iterdir()) and not out.exists()
    monkeypatch.undo()
    res = invoke(*args)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["resumable"]["start_step"] == doc["resumable"]["steps"]    # nothing evaluated again: only proved
    assert doc["y"] == hex(oracle(Group(n), 5, 5000)) and invoke("verify", out).exit_code == 0
    assert not [p for p in state.iterdir() if not p.name.endswith("lock")]


def test_prove_checks_its_arguments(n: int, tmp_path) -> None:
    ck = tmp_path / "ck.json"
    assert invoke("eval", "--modulus", n, "--x", 5, "--t", 777, "--checkpoints", ck).exit_code == 0
    one_line_error(invoke("prove", "--checkpoints", ck, "--proof", "pietrzak", "--workers", -3), "workers: must be")
    one_line_error(invoke("prove", "--checkpoints", ck, "--proof", "pietrzak", "--out", ck), "checkpoints file itself")


@pytest.mark.parametrize("edit, reason", [
    (lambda d: d["values"].__setitem__("\u00b2", d["values"]["0"]), "is not a position"),
    (lambda d: d["values"].__setitem__("\u0665", d["values"]["0"]), "is not a position"),
    (lambda d: d["values"].__setitem__("007", d["values"]["0"]), "is not a position"),
    (lambda d: d.__setitem__("wesolowski", {"kappa": 2 ** 70}), "must be a JSON integer from 1 to 2^64 - 1"),
    (lambda d: d.__setitem__("wesolowski", {"kappa": 1}), "names 777 checkpoints; the file holds"),
    (lambda d: d.__setitem__("wesolowski", {"kappa": 8, "extra": 1}), "unexpected field 'wesolowski.extra'"),
    (lambda d: d.__setitem__("pietrzak", {"depth": 11}), "from 0 to 10 (the rounds of t = 777)"),
    (lambda d: d.update(t=1 << 40, wesolowski=None, pietrzak={"depth": 40}),
     "names up to 1099511627775 values; the file holds"),
    (lambda d: d.__setitem__("pietrzak", {}), "missing field 'pietrzak.depth'"),
])
def test_a_checkpoints_file_whose_plans_do_not_fit_it_is_refused(n: int, tmp_path, edit, reason) -> None:
    ck = tmp_path / "ck.json"
    assert invoke("eval", "--modulus", n, "--x", 5, "--t", 777, "--checkpoints", ck).exit_code == 0
    doc = json.loads(ck.read_text())
    edit(doc)
    ck.write_text(json.dumps(doc))
    for ptype in ("wesolowski", "pietrzak"):
        one_line_error(invoke("prove", "--checkpoints", ck, "--proof", ptype, "--json"), reason)


# -- eval: small things ----------------------------------------------------------------------------------------
def test_the_chain_of_1_is_refused(n: int) -> None:
    # It used to "evaluate" 2^40 squarings instantly (y = 1); a chain of the identity proves no work (issue 31).
    res = invoke("eval", "--modulus", n, "--x", 1, "--t", "2^40", "--no-resume", "--json")
    assert res.exit_code == 2 and res.stdout == "" and "x: is 1, the identity of the group" in res.stderr


def test_hash_input_that_is_not_utf8_is_hashed_byte_for_byte(n: int) -> None:
    res = invoke("eval", "--modulus", n, "--x", "hash:caf\udce9", "--t", 10, "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["x"] == hex(Group(n).hash_to_group(b"caf\xe9"))


@pytest.mark.parametrize("t", [5, 10, 64, 1000])
def test_every_plan_the_evaluation_writes_reads_back(n: int, t: int, tmp_path) -> None:
    """Deep Pietrzak plans store fewer than 2^depth - 1 values (positions coincide) and kappa may exceed t:
    files modforge writes must read back, whatever the plan."""
    from modforge.engine import ModRing
    from modforge.vdf import PietrzakPlan, WesolowskiPlan, evaluate, read_checkpoints, write_checkpoints
    from modforge.vdf.plan import pietrzak_rounds

    g = Group(n)
    ring = ModRing(n, "gmp")
    for depth in range(pietrzak_rounds(t) + 1):
        for kappa in (1, 7, t, 2 * t):
            ev = evaluate(g, 5, t, ring, wesolowski=WesolowskiPlan(t, kappa, 4), pietrzak=PietrzakPlan(t, depth))
            path = tmp_path / f"ck-{depth}-{kappa}.json"
            write_checkpoints(path, ev)
            back = read_checkpoints(path)
            assert back.values == ev.values and back.pietrzak.depth == depth and back.wesolowski.kappa == kappa


def test_proof_objects_round_trip_through_the_strict_reader(proof_doc) -> None:
    assert Proof.from_document(proof_doc).to_document() == proof_doc


def test_stop_after_takes_the_syntax_of_t(n: int, tmp_path) -> None:
    """2^K was 'not a decimal or 0x-hex integer' for --stop-after (and for timelock's), though --t takes it."""
    base = ["eval", "--modulus", n, "--x", 5, "--t", 5000, "--resume-dir", tmp_path / "state", "--json"]
    res = invoke(*base, "--stop-after", "2^10")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["step"] == 1024, res.stdout
    one_line_error(invoke(*base, "--stop-after", "\u0661\u0660"),
                   "stop-after: not a number of squarings: '\u0661\u0660' (write N (decimal), 0xHEX or 2^K; "
                   "ASCII digits only)")


def test_a_refused_stop_after_leaves_no_session_behind(n: int, tmp_path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    for bad in ("0", "-5"):
        one_line_error(invoke("eval", "--modulus", n, "--x", 5, "--t", 5000, "--resume-dir", state,
                              "--stop-after", bad), "stop-after: must be at least 1")
    assert list(state.iterdir()) == []


def test_a_kappa_far_above_t_proves_at_once(n: int, tmp_path) -> None:
    """A plan may set kappa above t (one checkpoint); near 2^64 the range walk once stepped through
    ~2^54 empty ranges (a hang). Run in a subprocess so that a regression fails by its timeout."""
    import subprocess
    import sys

    ck = tmp_path / "ck.json"
    assert invoke("eval", "--modulus", n, "--x", 5, "--t", 777, "--checkpoints", ck).exit_code == 0
    doc = json.loads(ck.read_text())
    doc["wesolowski"] = {"kappa": 2 ** 64 - 8}
    ck.write_text(json.dumps(doc))
    out = tmp_path / "proof.json"
    cmd = [sys.executable, "-c", "from modforge.cli.main import cli; cli(prog_name='modforge')"]
    done = subprocess.run([*cmd, "vdf", "prove", "--checkpoints", str(ck), "--proof", "wesolowski", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert invoke("verify", out).exit_code == 0


# -- --workers (issue 31 item 7: "threads: must be between 1 and 256, got 257"; "on 256 core(s)" on 2 cores) --
@pytest.mark.parametrize("command", ["eval", "prove"])
@pytest.mark.parametrize("workers", [256, 10**6, -1])
def test_workers_out_of_range_is_named_as_workers(n: int, tmp_path, command: str, workers: int) -> None:
    if command == "eval":
        args = ["eval", "--modulus", n, "--x", 5, "--t", 300, "--proof", "wesolowski", "--workers", workers]
    else:
        ck = tmp_path / "ck.json"
        assert invoke("eval", "--modulus", n, "--x", 5, "--t", 300, "--checkpoints", ck).exit_code == 0
        args = ["prove", "--checkpoints", ck, "--proof", "wesolowski", "--workers", workers, "--json"]
    one_line_error(invoke(*args), f"workers: must be between 0 and 255, got {workers}")


def test_the_proof_line_counts_parts_against_this_machines_cores(n: int, monkeypatch) -> None:
    import modforge.vdf.api as api

    monkeypatch.setattr(api, "cpu_count", lambda: 2)
    # A native ring proves Wesolowski in threads: 255 helpers cost 256 threads, not 255 processes.
    res = invoke("eval", "--modulus", n, "--x", 5, "--t", 300, "--proof", "wesolowski", "--workers", 255)
    assert res.exit_code == 0, res.output
    assert "on 256 core(s)" not in res.stdout
    assert re.search(r"^proof        wesolowski, [0-9.]+ s in 256 thread\(s\) on 2 core\(s\) "
                     r"\(254 more than the cores: they only add overhead\)", res.stdout, re.M), res.stdout
    res = invoke("eval", "--modulus", n, "--x", 5, "--t", 300, "--proof", "pietrzak", "--workers", 1)
    assert re.search(r" s in 2 process\(es\) on 2 core\(s\)( \(\d|$)", res.stdout, re.M), res.stdout
    res = invoke("eval", "--modulus", n, "--x", 5, "--t", 300, "--proof", "wesolowski", "--workers", 0)
    assert re.search(r" s in 1 part on 2 core\(s\)( \(\d|$)", res.stdout, re.M), res.stdout


def test_stop_after_is_a_planned_stop_as_in_timelock_solve(n: int, tmp_path) -> None:
    # Issue 31 item 9: vdf eval --stop-after exited 130 with no JSON where timelock solve --stop-after exits 0
    # and prints an object.
    base = ["eval", "--modulus", n, "--x", 5, "--t", 5000, "--resume-dir", tmp_path / "state"]
    res = invoke(*base, "--stop-after", 1000, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["finished"] is False and doc["step"] == 1000 and doc["y"] is None and doc["t"] == 5000
    assert doc["resumable"]["directory"] == str(tmp_path / "state") and doc["checkpoint"]
    res = invoke(*base, "--stop-after", 1000)
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("stopped      at step 2000 of 5000 (40%) by --stop-after; state in ")
    done = json.loads(invoke(*base, "--json").stdout)
    assert done["y"] == hex(oracle(Group(n), 5, 5000)) and done["resumable"]["start_step"] == 2000
