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
from modforge.cache import Item, remove, scan
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
    assert res.exit_code == 0 and scan() == [], res.output


def test_a_file_that_cannot_be_removed_is_reported_and_the_rest_goes(stopped_runs, monkeypatch) -> None:
    real_unlink = Path.unlink

    def refuse(self, *a, **k):
        if self.name == "bench-vdf.json":
            raise PermissionError(13, "Permission denied")
        return real_unlink(self, *a, **k)

    monkeypatch.setattr(Path, "unlink", refuse)
    res = CliRunner().invoke(cli, ["cache", "clean", "results", "hw"])
    assert res.exit_code == 1
    assert "modforge: cannot remove results/bench-vdf.json: Permission denied" in res.stderr
    assert [f"{i.area}/{i.name}" for i in scan(areas=("results", "hw"))] == ["results/bench-vdf.json"]


@pytest.mark.parametrize("args, text", [
    (["clean"], "Missing argument 'AREAS...'"),
    (["clean", "timelock", "nonsense"], "unknown area 'nonsense'"),
    (["list", "nonsense"], "unknown area 'nonsense'"),
    (["clean", "vdf", "--older-than", "soon"], "older-than"),
])
def test_usage_errors(cache_home, args, text) -> None:
    one_line_error(CliRunner().invoke(cli, ["cache", *args]), text)


def test_an_empty_or_missing_cache(cache_home) -> None:
    assert CliRunner().invoke(cli, ["cache", "list"]).output.startswith("nothing kept under ")
    res = CliRunner().invoke(cli, ["cache", "clean", "all", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["removed"] == []


def test_an_area_lock_covers_every_item_in_the_area(cache_home) -> None:
    """The anchors' builds hold the area's ``.lock`` while any build runs: then nothing there is removed."""
    from modforge.bench.anchors import _locked

    anchors = user_cache_dir("anchors")
    (anchors / "gmp" / "lib").mkdir(parents=True)
    (anchors / "gmp" / "lib" / "libgmp.a").write_bytes(b"\0" * 100)
    (anchors / "bin").mkdir()
    with _locked(anchors / ".lock"):
        items = scan(areas=("anchors",))
        assert sorted(i.name for i in items) == ["bin", "gmp"] and all(i.in_use for i in items)
        res = CliRunner().invoke(cli, ["cache", "clean", "anchors"])
        assert res.exit_code == 0 and "removed 0 items" in res.output and "2 in use" in res.output, res.output
        assert (anchors / "gmp" / "lib" / "libgmp.a").exists()
    [gmp] = [i for i in scan(areas=("anchors",)) if i.name == "gmp"]
    assert gmp.size >= 100 and not gmp.in_use
    assert CliRunner().invoke(cli, ["cache", "clean", "anchors"]).exit_code == 0
    assert [p.name for p in anchors.iterdir()] == [".lock"]          # the area's lock stays
