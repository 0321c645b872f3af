"""``modforge timelock`` at its edges: paths checked before the work, no silent overwrites or restarts,
hostile files refused without a traceback, JSON reports of failed runs, one-line usage errors."""

from __future__ import annotations

import errno
import json
import re

import pytest
from click.testing import CliRunner

from ..support import one_line_error
from .helpers import make_puzzle, plain_squaring
from modforge.arith.base import ParameterError
from modforge.cli.main import cli
from modforge.timelock import CheckpointStore, load_puzzle_file
from modforge.timelock import create as create_module


def run(*args, env: dict | None = None):
    return CliRunner(env=env).invoke(cli, ["timelock", *[str(a) for a in args]], catch_exceptions=False)


# -- create ---------------------------------------------------------------------------------------------------
def test_create_refuses_to_replace_a_puzzle_or_trapdoor_without_force(tmp_path) -> None:
    out, trap = tmp_path / "p.json", tmp_path / "p.trap"
    assert run("create", "--bits", 256, "--t", 50, "--message", "one", "--out", out, "--keep-trapdoor", trap,
               ).exit_code == 0
    before = out.read_bytes(), trap.read_bytes()
    one_line_error(run("create", "--bits", 256, "--t", 50, "--message", "two", "--out", out),
                   "out: 'p.json' exists; give --force".replace("'p.json'", repr(str(out))))
    one_line_error(run("create", "--bits", 256, "--t", 50, "--message", "two", "--out", tmp_path / "q.json",
                       "--keep-trapdoor", trap), "keep-trapdoor: ")
    assert (out.read_bytes(), trap.read_bytes()) == before and not (tmp_path / "q.json").exists()
    res = run("create", "--bits", 256, "--t", 50, "--message", "two", "--out", out, "--keep-trapdoor", trap,
              "--force")
    assert res.exit_code == 0 and out.read_bytes() != before[0] and trap.read_bytes() != before[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json", "p.trap"]      # no second name left
    res = run("solve", out, "--trapdoor", trap, "--json")
    assert json.loads(res.stdout)["message"] == "two"


@pytest.mark.parametrize("option", ["--out", "--keep-trapdoor"])
def test_create_checks_every_path_before_generating_a_key(tmp_path, option) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    paths = {"--out": tmp_path / "p.json", "--keep-trapdoor": tmp_path / "p.trap"}
    for bad, reason in ((blocker / "x.json", "is not a directory"), (tmp_path, "is a directory"), ("", "empty path")):
        args = dict(paths, **{option: bad})
        res = run("create", "--bits", 256, "--t", 50, "--message", "m", *[x for kv in args.items() for x in kv])
        one_line_error(res, reason)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_a_puzzle_that_appears_during_create_is_not_replaced(tmp_path, monkeypatch) -> None:
    """The existence check comes before key generation; the write itself is exclusive too."""
    real = create_module.calibrate

    def calibrate_while_another_writes(*args, **kwargs):
        (tmp_path / "p.json").write_text("another create got here first")
        return real(*args, **kwargs)

    monkeypatch.setattr(create_module, "calibrate", calibrate_while_another_writes)
    res = run("create", "--bits", 256, "--t", 50, "--message", "m", "--out", tmp_path / "p.json")
    one_line_error(res, "out: " + repr(str(tmp_path / "p.json")) + " exists; give --force")
    assert (tmp_path / "p.json").read_text() == "another create got here first"
    assert [p.name for p in tmp_path.iterdir()] == ["p.json"]          # no temporary file left


def test_solve_output_may_not_be_the_trapdoor(tmp_path) -> None:
    made, _, _ = make_puzzle(tmp_path, bits=256, t=50)
    trap = made.trapdoor_path
    before = trap.read_bytes()
    one_line_error(run("solve", made.path, "--trapdoor", trap, "--output", trap), "must not be the trapdoor file")
    assert trap.read_bytes() == before


def _puzzle_write_fails(monkeypatch, how: str) -> None:
    """The puzzle file cannot be written: a full disk while staging it, or (``commit``) a failure when it
    is put in place."""
    name = "stage_file" if how == "stage" else "commit_staged"
    real = getattr(create_module, name)

    def failing(*args, **kw):
        target = args[0] if how == "stage" else args[1]
        if str(target).endswith("p.json"):
            if how == "commit":
                create_module.discard_staged(args[0])
            raise OSError(errno.ENOSPC, "No space left on device", str(target))
        return real(*args, **kw)

    monkeypatch.setattr(create_module, name, failing)


@pytest.mark.parametrize("how", ["stage", "commit"])
def test_no_trapdoor_is_left_behind_when_the_puzzle_cannot_be_written(tmp_path, monkeypatch, how) -> None:
    _puzzle_write_fails(monkeypatch, how)
    res = run("create", "--bits", 256, "--t", 50, "--message", "m", "--out", tmp_path / "p.json",
              "--keep-trapdoor", tmp_path / "p.trap")
    one_line_error(res, "No space left on device")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("how", ["stage", "commit"])
def test_force_keeps_the_old_trapdoor_when_the_new_puzzle_cannot_be_written(tmp_path, monkeypatch, how) -> None:
    """A failed --force replaces nothing: the old trapdoor still opens the old puzzle (a failure while
    staging replaces nothing; one when the puzzle is put in place puts the old trapdoor back)."""
    out, trap = tmp_path / "p.json", tmp_path / "p.trap"
    assert run("create", "--bits", 256, "--t", 50, "--message", "old", "--out", out, "--keep-trapdoor", trap,
               ).exit_code == 0
    before = out.read_bytes(), trap.read_bytes()
    _puzzle_write_fails(monkeypatch, how)
    res = run("create", "--bits", 256, "--t", 50, "--message", "new", "--out", out, "--keep-trapdoor", trap,
              "--force")
    one_line_error(res, f"{str(out)!r}: No space left on device")
    assert (out.read_bytes(), trap.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json", "p.trap"]
    monkeypatch.undo()
    assert json.loads(run("solve", out, "--trapdoor", trap, "--json").stdout)["message"] == "old"


@pytest.mark.parametrize("args, text", [
    (["--message", ""], "message: the payload is empty"),
    (["--duration", "1e305", "--message", "m"], "duration: too long"),
    (["--t", "1" + "0" * 400, "--message", "m"], "t: must be between 1 and 2^64 - 1, got a 1329-bit number"),
    # Past Python's 4300-digit int() limit: was 'not a decimal or 0x-hex integer'.
    (["--t", "1" + "0" * 5000, "--message", "m"], "t: must be between 1 and 2^64 - 1, got a 16610-bit number"),
])
def test_create_refuses_empty_payloads_and_absurd_lengths(tmp_path, args, text) -> None:
    base = ["--bits", 256, "--out", tmp_path / "p.json"] + ([] if "--duration" in args else
                                                           [] if "--t" in args else ["--t", 50])
    one_line_error(run("create", *base, *args), text)
    assert not (tmp_path / "p.json").exists()


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_create_refuses_a_payload_past_the_limit_before_reading_it_all(tmp_path, monkeypatch, source) -> None:
    """The limit holds while reading: an endless --file (here /dev/zero) or standard input stops at it."""
    from modforge.timelock import puzzle
    monkeypatch.setattr(puzzle, "MAX_PAYLOAD", 1000)
    base = ["create", "--bits", 256, "--t", 50, "--out", tmp_path / "p.json"]
    if source == "file":
        res = run(*base, "--file", "/dev/zero")
    else:
        res = CliRunner().invoke(cli, ["timelock", *map(str, base), "--file", "-"], input=bytes(1001))
    one_line_error(res, "more than the 1000-byte limit for this file (a puzzle locks at most 1000 bytes)")
    assert not (tmp_path / "p.json").exists()
    exact = CliRunner().invoke(cli, ["timelock", *map(str, base), "--file", "-"], input=b"\x01" * 1000)
    assert exact.exit_code == 0, exact.output


def test_a_message_that_is_not_utf8_is_locked_byte_for_byte(tmp_path) -> None:
    raw = "caf\udce9"              # how Python receives the argument bytes b"caf\xe9" on a UTF-8 system
    assert run("create", "--bits", 256, "--t", 50, "--message", raw, "--out", tmp_path / "p.json").exit_code == 0
    res = run("solve", tmp_path / "p.json", "--checkpoint-dir", tmp_path / "ck", "--json")
    doc = json.loads(res.stdout)
    assert doc["message"] == b"caf\xe9".hex() and doc["message_encoding"] == "hex"


# -- solve ----------------------------------------------------------------------------------------------------
def solved_part_way(tmp_path, t: int = 3000):
    """A puzzle solved for 500 squarings: (Created, checkpoint dir, its store)."""
    made, _, _ = make_puzzle(tmp_path, t=t)
    ck = tmp_path / "ck"
    assert run("solve", made.path, "--checkpoint-dir", ck, "--stop-after", 500,
               "--checkpoint-interval", "0.05s").exit_code == 0
    return made, ck, CheckpointStore(ck, made.puzzle.task)


def test_solve_checks_its_output_path_before_squaring(tmp_path) -> None:
    made, _, _ = make_puzzle(tmp_path, bits=256, t=50)
    one_line_error(run("solve", made.path, "--output", tmp_path / "missing" / "o.bin"), "output: directory")
    one_line_error(run("solve", made.path, "--output", made.path), "must not be the puzzle file itself")
    assert load_puzzle_file(made.path).task == made.puzzle.task
    assert not (tmp_path / "p.json.checkpoints").exists()          # refused before any work


def test_corrupted_checkpoints_keep_refusing_until_restart(tmp_path) -> None:
    made, ck, store = solved_part_way(tmp_path)
    for _, path in store.files():
        path.write_text("x")
    res = run("solve", made.path, "--checkpoint-dir", ck)
    assert res.exit_code == 1 and "rejected: not valid JSON" in res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith("modforge: error: no usable checkpoint: all 1 ")
    # The corrupted files are now *.corrupt: a second plain run must not start over from step 0 either.
    res = run("solve", made.path, "--checkpoint-dir", ck, "--json")
    one_line_error(res, "found corrupted earlier", 1)
    assert json.loads(res.stdout)["error"].startswith("no usable checkpoint")
    res = run("solve", made.path, "--checkpoint-dir", ck, "--restart", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["message"] == "open sesame"
    assert not store.quarantined() and any(p.name.endswith(".corrupt.discarded") for p in ck.iterdir())


def test_info_reports_checkpoints_set_aside_and_the_restart_hint(tmp_path) -> None:
    # Issue 31 item 6: info said "no checkpoint" where solve refused to start for want of --restart.
    made, ck, store = solved_part_way(tmp_path)
    for _, path in store.files():
        path.write_text("x")
    for round_ in ("still in place", "set aside by a solve"):
        if round_ == "set aside by a solve":
            assert run("solve", made.path, "--checkpoint-dir", ck).exit_code == 1
            assert store.quarantined() and not store.files()
        res = run("info", made.path, "--checkpoint-dir", ck)
        assert res.exit_code == 0, res.output
        assert "no checkpoint in" not in res.stdout, round_
        assert "no usable checkpoint: 1 checkpoint file(s) in" in res.stdout, round_
        assert "'timelock solve --restart' starts from step 0" in res.stdout, round_
        doc = json.loads(run("info", made.path, "--checkpoint-dir", ck, "--json").stdout)
        assert doc["restart_needed"] is True and doc["checkpoint"] is None, round_
        assert len(doc["rejected_checkpoints"]) == 1, round_
    assert run("solve", made.path, "--checkpoint-dir", ck, "--restart").exit_code == 0
    doc = json.loads(run("info", made.path, "--checkpoint-dir", ck, "--json").stdout)
    assert doc["restart_needed"] is False and doc["rejected_checkpoints"] == [] and doc["checkpoint"]["done"]


@pytest.mark.parametrize("garbage", [b"[" * 200_000 + b"]" * 200_000, b'{"format": 1' + b"0" * 5000 + b"}"])
def test_a_checkpoint_that_defeats_the_json_parser_is_rejected_and_the_older_one_used(tmp_path, garbage) -> None:
    made, ck, store = solved_part_way(tmp_path)
    good = store.files()[0][0]
    store.path_for(good + 1).write_bytes(garbage)
    res = run("solve", made.path, "--checkpoint-dir", ck, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["start_step"] == hex(good) and doc["message"] == "open sesame"
    assert len(doc["rejected_checkpoints"]) == 1 and "not valid JSON" in doc["rejected_checkpoints"][0]["reason"]
    assert all(e["step"].startswith("0x") for e in doc["events"] if "step" in e)    # steps in hex, as documented


@pytest.mark.parametrize("garbage, message", [
    (b"[" * 200_000 + b"]" * 200_000, "puzzle: not a JSON puzzle file"),
    # JSON numbers have no length limit (Python's int() stops at 4300 digits): read, and refused by the field.
    (b'{"format": 1' + b"0" * 5000 + b"}", "puzzle: format is a 16610-bit number, expected 'modforge-timelock-puzzle'"),
])
def test_a_puzzle_file_that_defeats_the_json_parser_is_bad_input(tmp_path, garbage, message) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(garbage)
    with pytest.raises(ParameterError, match=message):
        load_puzzle_file(path)
    one_line_error(run("info", path), message)


def test_a_trapdoor_may_write_its_primes_as_decimal_of_any_length(tmp_path) -> None:
    """_int_field read decimal with int(), which stops at 4300 digits: a long one was 'not an integer'."""
    n = 1009 * 1013
    res = run("solve", _puzzle_over(tmp_path, n), "--trapdoor", _trapdoor(tmp_path, n, "1" * 5000, "1013"))
    one_line_error(res, "trapdoor: p * q is not this puzzle's modulus")
    res = run("solve", _puzzle_over(tmp_path, n), "--trapdoor", _trapdoor(tmp_path, n, "1009", "1013"), "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["message"] == "hi", res.output


def test_a_checkpoint_that_cannot_be_written_stops_with_one_line_and_keeps_the_last_one(tmp_path, monkeypatch) -> None:
    made, ck, store = solved_part_way(tmp_path, t=20_000)
    kept = store.latest()[0]

    def disk_full(self, step, value, extra=None):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(CheckpointStore, "save", disk_full)
    res = run("solve", made.path, "--checkpoint-dir", ck, "--checkpoint-interval", "0.05s")
    one_line_error(res, "checkpoint-dir: cannot write the checkpoint")
    assert "No space left on device" in res.stderr and "run the same command to resume" in res.stderr
    monkeypatch.undo()
    assert store.latest()[0].step == kept.step
    res = run("solve", made.path, "--checkpoint-dir", ck, "--json")
    doc = json.loads(res.stdout)
    assert doc["start_step"] == hex(kept.step) and doc["w"] == hex(plain_squaring(2, 20_000, made.puzzle.task.n))


# -- the command as a whole -----------------------------------------------------------------------------------
def test_usage_errors_are_one_line(tmp_path) -> None:
    one_line_error(run("create", "--bits", "abc", "--out", tmp_path / "p.json"), "timelock create --help'")
    one_line_error(run("solve", "a", "b"), "unexpected extra argument")
    res = CliRunner().invoke(cli, ["--no-such-option"])
    one_line_error(res, "No such option")
    res = run()                                       # no subcommand: the help, as before
    assert res.exit_code == 2 and "Commands:" in res.output


def test_a_second_interrupt_exits_130_not_1(tmp_path, monkeypatch) -> None:
    import modforge.timelock as timelock_pkg

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(timelock_pkg, "solve", interrupted)
    res = run("solve", "lcs35-toy")
    assert res.exit_code == 130 and res.stderr.strip() == "modforge: interrupted"


def test_an_os_error_is_bad_input_named_in_one_line(tmp_path, monkeypatch) -> None:
    import modforge.timelock as timelock_pkg

    def unreadable(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", "/some/where")

    monkeypatch.setattr(timelock_pkg, "solve", unreadable)
    one_line_error(run("solve", "lcs35-toy"), "'/some/where': Permission denied")


def test_the_payload_can_go_to_stdout_alone(tmp_path) -> None:
    made, _, _ = make_puzzle(tmp_path, bits=256, t=50, payload=b"\x00binary\xffpayload")
    res = run("solve", made.path, "--checkpoint-dir", tmp_path / "ck", "--output", "-")
    assert res.exit_code == 0, res.output
    assert res.stdout_bytes == b"\x00binary\xffpayload"               # nothing else on stdout
    assert "payload   15 bytes written to stdout" in res.stderr and "w " in res.stderr
    one_line_error(run("solve", made.path, "--output", "-", "--json"), "does not go with --json")


def test_a_trapdoor_open_that_fails_authentication_still_reports_json(tmp_path) -> None:
    import base64

    made, _, _ = make_puzzle(tmp_path, bits=256, t=50)
    doc = json.loads(made.path.read_text())
    ct = bytearray(base64.b64decode(doc["ciphertext"]))
    ct[-1] ^= 1
    doc["ciphertext"] = base64.b64encode(bytes(ct)).decode()
    made.path.write_text(json.dumps(doc))
    res = run("solve", made.path, "--trapdoor", made.trapdoor_path, "--json")
    assert res.exit_code == 1 and res.stderr.startswith("modforge: error: authentication failed")
    out = json.loads(res.stdout)
    task = made.puzzle.task
    assert out["error"].startswith("authentication failed") and out["backend"] == "trapdoor"
    assert out["w"] == hex(plain_squaring(task.x, task.t, task.n)) and out["message"] is None


def test_a_puzzle_reached_through_a_link_keeps_its_checkpoints_beside_the_file(tmp_path) -> None:
    """One checkpoint directory, whichever path names the puzzle: solving by the link and then by the
    file resumes."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    made, _, _ = make_puzzle(tmp_path / "a", bits=256, t=3000)
    link = tmp_path / "b" / "l.json"
    link.symlink_to(made.path)
    res = run("solve", link, "--stop-after", 1000, "--checkpoint-interval", "0.01", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["checkpoint_dir"] == str(tmp_path / "a" / "p.json.checkpoints")
    res = run("solve", made.path, "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["start_step"] == hex(1000)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0])
def test_the_api_refuses_durations_and_intervals_that_are_not_positive_finite(tmp_path, bad) -> None:
    from modforge.timelock import create_puzzle, solve

    with pytest.raises(ParameterError, match="duration"):
        create_puzzle(256, b"m", tmp_path / "x.json", duration=bad)
    made, _, _ = make_puzzle(tmp_path, bits=256, t=50)
    ck = tmp_path / "ck"
    solve(made.puzzle, checkpoint_dir=ck, stop_after=20, interval=0.01)
    before = sorted(p.name for p in ck.iterdir())
    with pytest.raises(ParameterError, match="checkpoint-interval"):
        solve(made.puzzle, checkpoint_dir=ck, interval=bad, restart=True)
    assert sorted(p.name for p in ck.iterdir()) == before          # refused before anything was moved aside
    assert not (tmp_path / "x.json").exists()


def test_a_solve_started_through_a_link_by_an_older_version_goes_on(tmp_path) -> None:
    """Older versions named the directory after the link (beside the real file): it is still used."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    made, _, _ = make_puzzle(tmp_path / "a", bits=256, t=3000)
    link = tmp_path / "b" / "l.json"
    link.symlink_to(made.path)
    legacy = tmp_path / "a" / "l.json.checkpoints"
    res = run("solve", made.path, "--checkpoint-dir", legacy, "--stop-after", 1000, "--json")
    assert res.exit_code == 0, res.output
    res = run("solve", link, "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["start_step"] == hex(1000)
    assert json.loads(res.stdout)["checkpoint_dir"] == str(legacy)


# -- the trapdoor file: two distinct primes, version exactly 1 ------------------------------------------------
def _puzzle_over(tmp_path, n: int):
    """A modforge puzzle file for modulus ``n`` (x = 2, t = 10), sealed with the right w."""
    from modforge.timelock.puzzle import seal

    path = tmp_path / "small.json"
    path.write_bytes(seal(n, 2, 10, pow(2, 1 << 10, n), b"hi", "2026-01-01T00:00:00Z", None).to_json())
    return path


def _trapdoor(tmp_path, n: int, p, q, version=1):
    path = tmp_path / "small.trapdoor"
    path.write_text(json.dumps({"format": "modforge-timelock-trapdoor", "version": version, "task_id": "x",
                                "n": hex(n), "p": p if isinstance(p, str) else hex(p),
                                "q": q if isinstance(q, str) else hex(q)}))
    return path


@pytest.mark.parametrize("n, p, q, text", [
    (9, 3, 3, "p equal to q"),                                 # gmpy2.invert(3, 3) raised ZeroDivisionError
    (1009 ** 2, 1009, 1009, "p equal to q"),
    (15 * 7, 15, 7, "field 'p' is not a prime"),               # CRT modulo the wrong group order
    (7 * 15, 7, 15, "field 'q' is not a prime"),
    (3 * 5 * 7 * 11, 3 * 5, 7 * 11, "field 'p' is not a prime"),
])
def test_a_trapdoor_of_equal_or_composite_factors_is_refused(tmp_path, n: int, p: int, q: int, text: str) -> None:
    res = run("solve", _puzzle_over(tmp_path, n), "--trapdoor", _trapdoor(tmp_path, n, p, q))
    one_line_error(res, "trapdoor: ")
    assert text in res.stderr


def test_a_trapdoor_of_two_distinct_primes_still_opens_a_small_puzzle(tmp_path) -> None:
    n = 1009 * 1013
    res = run("solve", _puzzle_over(tmp_path, n), "--trapdoor", _trapdoor(tmp_path, n, 1009, 1013), "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["message"] == "hi", res.output


@pytest.mark.parametrize("version", [True, 1.0, "1", 2])
def test_a_trapdoor_version_must_be_the_integer_1(tmp_path, version) -> None:
    made, p, q = make_puzzle(tmp_path, t=50)
    doc = json.loads(made.trapdoor_path.read_text())
    doc["version"] = version
    made.trapdoor_path.write_text(json.dumps(doc))
    one_line_error(run("solve", made.path, "--trapdoor", made.trapdoor_path),
                   "trapdoor: not a modforge-timelock-trapdoor version 1 file")


def test_a_short_checkpoint_interval_is_warned_about_with_its_cost(tmp_path) -> None:
    # Issue 31 item 8: 1 ms was accepted in silence and cut the speed tenfold.
    made, _, _ = make_puzzle(tmp_path, t=200_000)
    res = run("solve", made.path, "--checkpoint-dir", tmp_path / "ck", "--checkpoint-interval", "0.001s",
              "--progress", "none")
    assert res.exit_code == 0, res.output
    warning = re.search(r"^modforge: --checkpoint-interval 1ms is short: the error check is predicted to cost "
                        r"(\d+\.\d\d)% of the squaring time \(at the default 5s: (\d+\.\d\d)%\), and every "
                        r"checkpoint also pays a file write and fsync", res.stderr, re.M)
    assert warning, res.stderr
    assert float(warning[1]) > float(warning[2]), "a shorter interval must be predicted to cost more"
    assert re.search(r"error check overhead \d+\.\d\d%, checkpoint writes \d+\.\d\d%", res.stdout), res.stdout
    doc = json.loads(run("solve", made.path, "--checkpoint-dir", tmp_path / "ck2", "--checkpoint-interval", "0.001s",
                         "--json").stdout)
    assert [e["event"] for e in doc["events"]].count("short-interval") == 1
    assert doc["check"]["checkpoint_overhead_measured"] > 0
    quiet = run("solve", made.path, "--checkpoint-dir", tmp_path / "ck3", "--progress", "none")
    assert quiet.exit_code == 0 and "is short" not in quiet.stderr


# -- terminal safety and one unit (issue 31 item 9) -------------------------------------------------------------
def test_a_file_name_with_an_escape_sequence_never_reaches_the_terminal_raw(tmp_path) -> None:
    import io

    from rich.console import Console

    from modforge.timelock.progress import PlainReporter, RichReporter

    made, _, _ = make_puzzle(tmp_path, t=3000, name="p\x1b[2J\x07.json")
    res = run("solve", made.path, "--checkpoint-dir", tmp_path / "ck", "--progress", "plain")
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.stderr and "\x07" not in res.stderr
    assert "p\\x1b[2J\\x07.json" in res.stderr                      # named, escaped
    # The bar and the warnings: the same, and rich's own markup in a name is text too.
    out = io.StringIO()
    bar = RichReporter(Console(file=out, force_terminal=True, width=200))
    bar.start(label="x\x1b]0;owned\x07[bold]y.json", t=10, step=0, backend="gmp", bits=256)
    bar.event("rejected", "checkpoint x\x1b[31m.json rejected")
    bar.finish()
    text = out.getvalue()
    assert "]0;owned" not in text.replace("\\x1b]0;owned", "") and "\x07" not in text
    assert "\\x1b]0;owned\\x07[bold]y.json" in text and "x\\x1b[31m.json" in text
    plain = io.StringIO()
    PlainReporter(plain).event("rejected", "a\x1b[31mb", path="c\x1bd")
    assert "\x1b" not in plain.getvalue() and "path=c\\x1bd" in plain.getvalue()


def test_progress_displays_say_squarings_per_second_the_same_way() -> None:
    import io
    import types

    from rich.console import Console

    from modforge.cli.vdf import _progress
    from modforge.timelock.progress import RichReporter

    bar = _progress(True, 1 << 20)
    rate_column = next(c for c in bar.columns if type(c).__name__ == "RateColumn")
    assert str(rate_column.render(types.SimpleNamespace(finished_speed=None, speed=2.5e6))) == "2.50 M sq/s"
    out = io.StringIO()
    reporter = RichReporter(Console(file=out, force_terminal=True, width=200))
    reporter.start(label="p.json", t=10**6, step=0, backend="gmp", bits=256)
    reporter._show(500_000, 10**6, 2.5e6, 0.2)
    reporter.finish()
    assert " sq/s" in out.getvalue() and "sqr/s" not in out.getvalue()
