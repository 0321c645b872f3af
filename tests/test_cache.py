"""``modforge cache``: the state of stopped runs, made by the real writers, listed as one item per run and
removed on request (never while a run holds it), after which the runs start over and still come out right."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from .support import one_line_error
from .timelock.helpers import make_puzzle, plain_squaring
from .vdf.helpers import rsa
from modforge.cache import CLEANABLE_AREAS, Item, remove, scan
from modforge.cli.main import cli
from modforge.fileio import user_cache_dir
from modforge.timelock import SolveInterrupted, solve
from modforge.vdf import run, verify
from modforge.vdf.proof_progress import ProofProgress
from modforge.vdf.resume import ResumeOptions, Session

T = 6_001


@pytest.fixture
def cache_home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    # The hardware builds' own setting (in a source checkout they default to .cache/modforge-hw in-tree).
    monkeypatch.setenv("MODFORGE_HW_CACHE", str(tmp_path / "cache" / "modforge" / "hw"))
    return tmp_path / "cache" / "modforge"


@pytest.fixture
def stopped_runs(tmp_path, cache_home):
    """A time-lock solve and a VDF evaluation, each stopped part way with its state in the cache, a proof's
    saved progress, a hardware build with its lock file and a benchmark result."""
    made, _, _ = make_puzzle(tmp_path, t=3000)
    part = solve(made.puzzle, checkpoint_dir=user_cache_dir("timelock"), interval=0.01, stop_after=1000)
    assert part.step == 1000 and part.payload is None
    key = rsa(512)
    group, x = key.group, key.group.hash_to_group(b"cache test")
    with pytest.raises(SolveInterrupted):
        run(group, x, T, "wesolowski", workers=0, memory=1 << 20,
            resume=ResumeOptions(user_cache_dir("vdf"), interval=0.01, stop_after=2000))
    progress = ProofProgress(user_cache_dir("vdf") / ("vdf-prove-" + "ab" * 8 + ".json"), "k" * 64,
                             group.modulus, interval=0)
    progress.save(l=7, kappa=64, checkpoints=2, width=8, b=40, acc=5)
    hw = user_cache_dir("hw")
    (hw / "ozturk-256-0123").mkdir(parents=True)
    (hw / "ozturk-256-0123" / "design.v").write_text("// generated\n")
    (hw / "ozturk-256-0123.lock").touch()
    user_cache_dir("results").mkdir(parents=True)
    (user_cache_dir("results") / "bench-vdf.json").write_text("{}")
    return made, group, x, key


def _by_name(items: list[Item]) -> dict[str, Item]:
    return {f"{i.area}/{i.name}": i for i in items}


def test_each_run_is_one_item_with_all_its_files(stopped_runs, cache_home) -> None:
    made, group, x, _ = stopped_runs
    items = _by_name(scan())
    session = Session(user_cache_dir("vdf"), group, x, T, ["wesolowski"])
    eval_item = items.pop(f"vdf/{session.stem}")
    # Plan, journal, lock and the checkpoints (named by a task id derived from the session): one item.
    names = {p.name for p in eval_item.paths}
    assert {session.plan_path.name, session.values_path.name, session.lock_path.name} <= names
    assert any(n.endswith(".json") and n.startswith("vdf-eval-") and n[-25:-5].isdigit() for n in names), names
    assert set(session.files()) | {session.lock_path} == set(eval_item.paths)
    assert "step 2,000 of" in eval_item.detail and not eval_item.in_use
    solve_item = items.pop(f"timelock/timelock-{made.puzzle.task.id[:16]}")
    assert "step 1,000 of 3,000 (33.3%)" in solve_item.detail
    assert "proof: 24 of 64 bits done" in items.pop("vdf/vdf-prove-" + "ab" * 8).detail
    build = items.pop("hw/ozturk-256-0123")
    assert {p.name for p in build.paths} == {"ozturk-256-0123", "ozturk-256-0123.lock"} and build.size > 0
    assert list(items) == ["results/bench-vdf.json"]
    # Every entry of every area is in exactly one item.
    entries = sorted(e for area in cache_home.iterdir() for e in area.iterdir())
    assert sorted(p for i in scan() for p in i.paths) == entries


def test_an_item_in_use_is_listed_and_never_removed(stopped_runs) -> None:
    _, group, x, _ = stopped_runs
    session = Session(user_cache_dir("vdf"), group, x, T, ["wesolowski"])
    before = sorted(session.files())
    with session.lock():                               # a run going on in this statement
        [item] = [i for i in scan(areas=("vdf",)) if i.name == session.stem]
        assert item.in_use and "in use" in CliRunner().invoke(cli, ["cache", "list"]).output
        assert not remove(item)
        res = CliRunner().invoke(cli, ["cache", "clean", "vdf"])
        assert res.exit_code == 0 and f"in use       vdf/{session.stem}: left alone" in res.output, res.output
        assert sorted(session.files()) == before
    assert [i.name for i in scan(areas=("vdf",))] == [session.stem]   # the prove progress went


def test_clean_removes_what_is_older_and_the_runs_start_over_right(stopped_runs, cache_home) -> None:
    made, group, x, key = stopped_runs
    old = time.time() - 40 * 86400
    timelock = user_cache_dir("timelock")
    for path in timelock.iterdir():
        os.utime(path, (old, old))
    dry = CliRunner().invoke(cli, ["cache", "clean", "timelock", "vdf", "--older-than", "30d", "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    doc = json.loads(dry.stdout)
    assert [i["name"] for i in doc["removed"]] == [f"timelock-{made.puzzle.task.id[:16]}"] and doc["dry_run"]
    assert any(timelock.iterdir())
    res = CliRunner().invoke(cli, ["cache", "clean", "timelock", "--older-than", "30d"])
    assert res.exit_code == 0 and "removed      timelock/" in res.output, res.output
    assert list(timelock.iterdir()) == []
    # The solve starts over (no checkpoint) and finds the payload; the VDF session is untouched and goes on.
    again = solve(made.puzzle, checkpoint_dir=timelock, interval=60)
    assert again.start_step == 0 and again.payload == b"open sesame"
    assert again.w == plain_squaring(made.puzzle.task.x, 3000, made.puzzle.task.n)
    result = run(group, x, T, "wesolowski", workers=0, memory=1 << 20,
                 resume=ResumeOptions(user_cache_dir("vdf"), interval=60))
    assert result.chain["start_step"] == 2000 and verify(result.proof).valid
    assert result.evaluation.y == group.canon(key.power(x, T))
    res = CliRunner().invoke(cli, ["cache", "clean", "all"])
    assert res.exit_code == 0 and scan(areas=CLEANABLE_AREAS) == [], res.output
    assert f"removed      vdf/vdf-prove-{'ab' * 8} (1 file, " in res.output, res.output    # not the lock it took


def test_only_the_files_runs_write_are_items_in_the_cache_areas_too(stopped_runs, cache_home) -> None:
    """A file someone put in an area, or a directory, is neither listed nor removed (like --dir)."""
    from modforge.engine.tuning import cache_path, this_machine

    tuning = cache_path(this_machine())
    tuning.parent.mkdir(parents=True, exist_ok=True)
    tuning.write_text("{}")
    foreign = [cache_home / "timelock" / "NOTES.txt", cache_home / "vdf" / "keep.me",
               cache_home / "tuning" / "mine.json", cache_home / "timelock" / "timelock-results.csv"]
    for path in foreign:
        path.write_text("mine")
    (cache_home / "vdf" / "subdir").mkdir()
    listed = {f"{i.area}/{i.name}" for i in scan(areas=CLEANABLE_AREAS)}
    assert not {"timelock/NOTES.txt", "vdf/keep.me", "tuning/mine.json", "vdf/subdir"} & listed, listed
    assert f"tuning/{tuning.name}" in listed
    res = CliRunner().invoke(cli, ["cache", "clean", "all"])
    assert res.exit_code == 0, res.output
    assert all(path.read_text() == "mine" for path in foreign) and (cache_home / "vdf" / "subdir").is_dir()
    assert not tuning.exists() and scan(areas=CLEANABLE_AREAS) == []


def test_a_file_that_cannot_be_removed_is_reported_and_the_rest_goes(stopped_runs, monkeypatch) -> None:
    tuning = user_cache_dir("tuning")
    tuning.mkdir(parents=True)
    (tuning / "machine-0123456789abcdef.json").write_text("{}")
    real_unlink = Path.unlink

    def refuse(self, *a, **k):
        if self.name == "machine-0123456789abcdef.json":
            raise PermissionError(13, "Permission denied")
        return real_unlink(self, *a, **k)

    monkeypatch.setattr(Path, "unlink", refuse)
    res = CliRunner().invoke(cli, ["cache", "clean", "tuning", "timelock"])
    assert res.exit_code == 1
    assert "modforge: cannot remove tuning/machine-0123456789abcdef.json: Permission denied" in res.stderr
    assert [f"{i.area}/{i.name}" for i in scan(areas=("tuning", "timelock"))] == ["tuning/machine-0123456789abcdef.json"]


def test_an_area_that_cannot_be_read_is_reported_and_the_others_are_cleaned(stopped_runs, monkeypatch) -> None:
    from modforge import cache as cache_module

    real_group = cache_module._group

    def unreadable_vdf(area, directory, holders, **kwargs):
        if area == "vdf":
            raise PermissionError(13, "Permission denied")
        return real_group(area, directory, holders, **kwargs)

    monkeypatch.setattr(cache_module, "_group", unreadable_vdf)
    res = CliRunner().invoke(cli, ["cache", "clean", "all"])
    assert res.exit_code == 1 and "modforge: cannot read the vdf area: Permission denied" in res.stderr
    assert list(user_cache_dir("timelock").iterdir()) == [] and any(user_cache_dir("vdf").iterdir())
    listed = CliRunner().invoke(cli, ["cache", "list", "--json"])
    assert listed.exit_code == 1 and json.loads(listed.stdout)["unreadable"] == [
        {"area": "vdf", "error": "Permission denied"}]


@pytest.mark.parametrize("args, text", [
    (["clean", "timelock", "nonsense"], "'nonsense' is not an area this command takes"),
    (["clean", "all", "nonsense"], "'nonsense' is not an area this command takes"),
    (["clean", "anchors"], "'anchors' is not an area this command takes: choose from timelock, vdf, tuning"),
    (["list", "nonsense"], "'nonsense' is not an area"),
    (["clean", "vdf", "--older-than", "soon"], "older-than"),
])
def test_usage_errors(cache_home, args, text) -> None:
    one_line_error(CliRunner().invoke(cli, ["cache", *args]), text)


def test_an_empty_or_missing_cache(cache_home) -> None:
    assert CliRunner().invoke(cli, ["cache", "list"]).output.startswith("nothing kept under ")
    res = CliRunner().invoke(cli, ["cache", "clean", "all", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["removed"] == []


def test_build_caches_and_results_are_listed_never_cleaned(stopped_runs, cache_home) -> None:
    """anchors and hw lock their builds their own way, results are kept by hand: `clean all` leaves them."""
    (cache_home / "mystuff").mkdir()
    (cache_home / "mystuff" / "notes.txt").write_text("mine")
    listed = CliRunner().invoke(cli, ["cache", "list"])
    assert listed.exit_code == 0 and "(1 item)" in listed.output and "mystuff" not in listed.output
    res = CliRunner().invoke(cli, ["cache", "clean", "all"])
    assert res.exit_code == 0, res.output
    left = sorted(str(p.relative_to(cache_home)) for p in cache_home.rglob("*") if p.is_file())
    assert left == ["hw/ozturk-256-0123.lock", "hw/ozturk-256-0123/design.v", "mystuff/notes.txt",
                    "results/bench-vdf.json"]


def test_a_run_started_after_the_listing_keeps_its_state(stopped_runs) -> None:
    """An interrupted `vdf prove` leaves its progress and no lock file; a rerun that starts between the
    listing and the removal takes the lock, and the removal must then leave the progress alone."""
    from modforge.fileio import exclusive_lock

    [item] = [i for i in scan(areas=("vdf",)) if i.name.startswith("vdf-prove-")]
    assert not item.in_use and all(not p.name.endswith(".lock") for p in item.paths)
    with exclusive_lock(item.lock_path, "resume-dir", "busy"):
        assert not remove(item) and item.in_use
    assert all(p.exists() for p in item.paths)
    assert remove(item) and not any(p.exists() for p in item.paths) and not item.lock_path.exists()


def test_a_stopped_session_is_cleaned_checkpoints_first(stopped_runs, monkeypatch) -> None:
    """Cut short after its first deletion, a clean leaves a session whose plan and journal are intact."""
    _, group, x, key = stopped_runs
    session = Session(user_cache_dir("vdf"), group, x, T, ["wesolowski"])
    [item] = [i for i in scan(areas=("vdf",)) if i.name == session.stem]
    deleted: list[str] = []
    real_unlink = Path.unlink

    def unlink_once(self, *a, **k):
        if deleted:
            raise KeyboardInterrupt
        deleted.append(self.name)
        return real_unlink(self, *a, **k)

    monkeypatch.setattr(Path, "unlink", unlink_once)
    with pytest.raises(KeyboardInterrupt):
        remove(item)
    monkeypatch.setattr(Path, "unlink", real_unlink)
    assert deleted[0].startswith("vdf-eval-") and deleted[0].endswith(".json") and ".plan" not in deleted[0]
    assert session.plan_path.exists() and session.values_path.exists()
    result = run(group, x, T, "wesolowski", workers=0, memory=1 << 20,
                 resume=ResumeOptions(user_cache_dir("vdf"), interval=60))
    assert verify(result.proof).valid and result.evaluation.y == group.canon(key.power(x, T))


def test_listing_and_fifos_never_block(stopped_runs) -> None:
    """A FIFO named like a checkpoint is skipped (opening it would wait for a writer forever)."""
    fifo = user_cache_dir("timelock") / ("timelock-" + "0" * 16 + "-" + "9" * 20 + ".json")
    os.mkfifo(fifo)
    [item] = [i for i in scan(areas=("timelock",)) if i.name == "timelock-" + "0" * 16]
    assert item.detail == "newest checkpoint unreadable"


def test_a_state_directory_of_the_users_is_listed_and_cleaned_without_touching_other_files(tmp_path) -> None:
    """`--dir` takes a --checkpoint-dir / --resume-dir / PUZZLE.checkpoints: only the runs' files are items."""
    made, _, _ = make_puzzle(tmp_path, t=3000)
    state = tmp_path / "state"
    part = solve(made.puzzle, checkpoint_dir=state, interval=0.01, stop_after=1000)
    assert part.step == 1000
    (state / "notes.txt").write_text("mine")
    (state / "timelock-results.csv").write_text("mine too")    # not a run's name (no 16-hex id)
    listed = CliRunner().invoke(cli, ["cache", "list", "--dir", state, "--json"])
    assert listed.exit_code == 0, listed.output
    [item] = json.loads(listed.stdout)["items"]
    assert item["area"] == "dir" and "step 1,000 of 3,000" in item["detail"]
    res = CliRunner().invoke(cli, ["cache", "clean", "--dir", state])
    assert res.exit_code == 0 and "removed 1 item" in res.output, res.output
    assert sorted(p.name for p in state.iterdir()) == ["notes.txt", "timelock-results.csv"]
    again = solve(made.puzzle, checkpoint_dir=state, interval=60)
    assert again.start_step == 0 and again.payload == b"open sesame"


def test_a_finished_solve_keeps_its_answer_and_is_listed_as_finished(tmp_path) -> None:
    """The last checkpoint holds w: solving again shows it at once, and the listing says so."""
    made, _, _ = make_puzzle(tmp_path, t=3000)
    state = tmp_path / "state"
    assert solve(made.puzzle, checkpoint_dir=state, interval=0.01).payload == b"open sesame"
    again = solve(made.puzzle, checkpoint_dir=state, interval=0.01)
    assert again.start_step == 3000 and again.squarings == 0 and again.payload == b"open sesame"
    listed = CliRunner().invoke(cli, ["cache", "list", "--dir", state, "--json"])
    [item] = json.loads(listed.stdout)["items"]
    assert "finished: step 3,000 of 3,000 (holds the answer)" in item["detail"], item


@pytest.mark.parametrize("args, text", [
    (["clean", "timelock", "--dir", "."], "give either AREA... or --dir DIR, not both"),
    (["list", "--dir", "/nonexistent/x"], "is not a directory"),
    (["clean"], "name what to clean: timelock, vdf, tuning, all, or --dir DIR"),
])
def test_dir_usage_errors(cache_home, args, text) -> None:
    one_line_error(CliRunner().invoke(cli, ["cache", *args]), text)


def test_an_old_stopped_proof_without_a_lock_file_is_cleaned_by_age(stopped_runs) -> None:
    """The lock file removal creates (vdf prove leaves none) is not the item's: it neither makes the item
    look new to --older-than nor stays behind."""
    vdf = user_cache_dir("vdf")
    progress = vdf / ("vdf-prove-" + "ab" * 8 + ".json")
    old = time.time() - 40 * 86400
    os.utime(progress, (old, old))
    res = CliRunner().invoke(cli, ["cache", "clean", "vdf", "--older-than", "30d"])
    assert res.exit_code == 0 and "removed 1 item" in res.output, res.output
    assert not progress.exists() and not progress.with_suffix(".lock").exists()
    # Something changed after the listing is not removed by age (and the lock taken to look goes again).
    [session] = scan(areas=("vdf",))
    for path in session.paths:
        os.utime(path, (old, old))
    [session] = scan(areas=("vdf",))
    newest = max(session.paths, key=lambda p: p.name.endswith(".values"))
    os.utime(newest)                                                # a write since the listing
    assert not remove(session, min_age=30 * 86400) and not session.in_use
    assert all(p.exists() for p in session.paths)


def test_a_time_lock_solve_holding_its_lock_is_in_use(stopped_runs) -> None:
    from modforge.timelock import CheckpointStore

    made = stopped_runs[0]
    store = CheckpointStore(user_cache_dir("timelock"), made.puzzle.task)
    with store.lock():
        [item] = scan(areas=("timelock",))
        assert item.in_use and item.lock_path.name.endswith("-lock")
        assert not remove(item) and any(user_cache_dir("timelock").iterdir())


def test_without_proc_locks_listing_tries_the_locks_and_creates_none(stopped_runs, monkeypatch) -> None:
    from modforge import cache as cache_module

    monkeypatch.setattr(cache_module, "_flock_holders", lambda: None)
    _, group, x, _ = stopped_runs
    session = Session(user_cache_dir("vdf"), group, x, T, ["wesolowski"])
    with session.lock():
        items = {i.name: i for i in scan(areas=("vdf",))}
        assert items[session.stem].in_use
    prove = items["vdf-prove-" + "ab" * 8]
    assert not prove.in_use and not prove.lock_path.exists()             # looking created no lock file
    assert not {i.name: i for i in scan(areas=("vdf",))}[session.stem].in_use


def test_proc_locks_lines() -> None:
    from modforge.cache import _parse_flock_inodes

    text = ("1: FLOCK  ADVISORY  WRITE 4242 fd:01:123456 0 EOF\n"
            "1: -> FLOCK  ADVISORY  WRITE 4343 fd:01:123456 0 EOF\n"     # a waiter: holds nothing
            "2: POSIX  ADVISORY  WRITE 4444 fd:01:777 0 EOF\n"
            "3: OFDLCK ADVISORY  READ  -1 00:2e:888 0 EOF\n"
            "4: FLOCK  ADVISORY  WRITE 4545 00:1f:999 0 EOF\n"
            "garbage\n")
    assert _parse_flock_inodes(text) == {123456, 999}


def test_dir_takes_only_the_names_the_runs_write(tmp_path) -> None:
    stem = "timelock-0123456789abcdef"
    theirs = [f"{stem}-{5:020d}.json", f"{stem}-{5:020d}.json.corrupt", f"{stem}-{5:020d}.json.discarded",
              f"{stem}-lock", f".{stem}-{6:020d}.json.tmp-x1y2", "vdf-prove-0123456789abcdef.json",
              "vdf-eval-0123456789abcdef.plan.json", "vdf-eval-0123456789abcdef.values"]
    mine = [f"{stem}-notes.txt", "vdf-prove-0123456789abcdef.proof.out.json", "vdf-eval-0123456789abcdef0123-x.pdf",
            f".{stem}-lock", f"{stem}.json.bak", "timelock-0123456789ABCDEF-lock"]
    for name in theirs + mine:
        (tmp_path / name).write_text("x")
    res = CliRunner().invoke(cli, ["cache", "clean", "--dir", tmp_path])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(mine)


def test_dir_takes_ascii_digit_names_only_and_no_trailing_newline(tmp_path) -> None:
    """Run-state names have ASCII digits (``\\d`` takes any Unicode digit) and end where they end (``$``
    would also take a final newline): anything else in the directory is the user's, never cleaned."""
    stem = "timelock-0123456789abcdef"
    theirs = [f"{stem}-{5:020d}.json", f"{stem}-{5:020d}.json.corrupt"]
    arabic = "".join(chr(0x660 + int(c)) for c in f"{5:020d}")
    mine = [f"{stem}-{arabic}.json", f"{stem}-{arabic}.json.corrupt", f"{stem}-{5:020d}.json\n", f"{stem}-lock\n",
            "vdf-eval-0123456789abcdef.values\n"]
    for name in theirs + mine:
        (tmp_path / name).write_text("x")
    res = CliRunner().invoke(cli, ["cache", "clean", "--dir", tmp_path])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(mine)


def test_lock_names_are_the_writers(tmp_path) -> None:
    """Session files lock <stem>.lock; a CheckpointStore's group (timelock, or a vdf-eval task whose plan is
    gone) locks <stem>-lock; vdf prove locks <stem>.lock."""
    stem = "vdf-eval-0123456789abcdef"
    assert Item("dir", stem, [tmp_path / f"{stem}-{7:020d}.json"]).lock_path.name == f"{stem}-lock"
    assert Item("dir", stem, [tmp_path / f"{stem}.values", tmp_path / f"vdf-eval-{'f' * 16}-{7:020d}.json"]
                ).lock_path.name == f"{stem}.lock"
    assert Item("dir", "timelock-" + "1" * 16, [tmp_path / "x"]).lock_path.name == "timelock-" + "1" * 16 + "-lock"
    assert Item("dir", "vdf-prove-" + "2" * 16, [tmp_path / "x"]).lock_path.name == "vdf-prove-" + "2" * 16 + ".lock"
    assert Item("tuning", "machine-ab.json", [tmp_path / "machine-ab.json"]).lock_path is None


def test_hardware_builds_are_listed_where_the_hardware_flow_keeps_them(cache_home, tmp_path, monkeypatch) -> None:
    elsewhere = tmp_path / "hw-builds"
    (elsewhere / "ozturk-64-0123").mkdir(parents=True)
    (elsewhere / "ozturk-64-0123" / "design.v").write_text("// generated\n")
    monkeypatch.setenv("MODFORGE_HW_CACHE", str(elsewhere))
    assert [f"{i.area}/{i.name}" for i in scan(areas=("hw",))] == ["hw/ozturk-64-0123"]
    # And by the command, which passed the cache root down and so looked in <root>/hw instead.
    bench = tmp_path / "bench-cache"
    (bench / "anchors" / "gmp-0123").mkdir(parents=True)
    (bench / "anchors" / "gmp-0123" / "libgmp.a").write_bytes(b"x" * 10)
    monkeypatch.setenv("MODFORGE_BENCH_CACHE", str(bench))
    listed = CliRunner().invoke(cli, ["cache", "list", "hw", "anchors", "--json"])
    assert listed.exit_code == 0, listed.output
    names = sorted(f"{i['area']}/{i['name']}" for i in json.loads(listed.stdout)["items"])
    assert names == ["anchors/gmp-0123", "hw/ozturk-64-0123"], listed.stdout


def test_a_run_in_use_before_its_first_checkpoint_says_so(cache_home) -> None:
    """The state column read "in use;" (the detail after it empty) while a run had written no checkpoint."""
    key = rsa(512)
    group = key.group
    session = Session(user_cache_dir("vdf"), group, group.hash_to_group(b"no checkpoint yet"), T, ["wesolowski"])
    with session.lock():
        [item] = [i for i in scan(areas=("vdf",)) if i.name == session.stem]
        assert item.in_use and item.detail == "no checkpoint yet"
        res = CliRunner().invoke(cli, ["cache", "list", "vdf"], env={"COLUMNS": "300"})
        [line] = [line for line in res.output.splitlines() if session.stem in line]
        assert line.rstrip(" │").endswith("in use; no checkpoint yet"), res.output
