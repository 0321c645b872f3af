"""The hardware flow at its edges: one design per parameter set, sizes refused before generation, tool
failures said in one line, a scan that keeps each module's widths, outputs that leave no stale files."""

from __future__ import annotations

import json
import stat

import pytest
from click.testing import CliRunner

from modforge.arith.base import ParameterError
from modforge.cli.main import cli
from modforge.hw.common import digest
from modforge.hw.flow import MAX_DSP_TILES, make_design, regenerate_command, write_files
from modforge.hw.scan import scan

from ..support import one_line_error


def run(*args, env: dict | None = None):
    return CliRunner(env=env).invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("arch", ["ozturk", "predictive-montgomery"])
def test_a_modulus_alone_is_the_design_of_its_width(arch: str) -> None:
    alone = make_design(arch, modulus=1001)
    explicit = make_design(arch, bits=10, modulus=1001)
    assert digest(arch, alone) == digest(arch, explicit)
    assert regenerate_command(alone) == regenerate_command(explicit)


def test_san_refuses_a_width_other_than_its_modulus() -> None:
    with pytest.raises(ParameterError, match="bits: san-montgomery is as wide as its modulus"):
        make_design("san-montgomery", bits=64, modulus=0x10001)
    assert make_design("san-montgomery", modulus=0x10001).design_bits == 17


@pytest.mark.parametrize("arch, options, problem", [
    ("predictive-montgomery", {"guard_words": 100}, "guard_words: 100 guard words would make W = 101"),
    ("predictive-montgomery", {"extra_words": 17}, "extra_words: must be at most 16"),
    ("san-montgomery", {"digits": 100}, "digits: 100 digits for a 64-bit modulus"),
    ("predictive-montgomery", {"redundant_bits": 2}, "redundant_bits: digits of 16 \\+ 2 = 18 bits do not fit"),
])
def test_parameters_that_only_widen_the_datapath_are_refused(arch, options, problem) -> None:
    with pytest.raises(ParameterError, match=problem):
        make_design(arch, bits=64 if arch != "san-montgomery" else None,
                    modulus=None if arch != "san-montgomery" else (1 << 64) - 59, options=options)


def test_designs_past_any_fpga_are_refused_before_generation() -> None:
    with pytest.raises(ParameterError, match=f"more than {MAX_DSP_TILES:,}"):
        make_design("san-montgomery", modulus=(1 << 4096) - 1)
    with pytest.raises(ParameterError, match="modulus: must be at least 3"):
        make_design("ozturk", modulus=0)


@pytest.mark.parametrize("clock", ["0", "-5", "nan", "inf"])
def test_the_sim_clock_is_checked_before_anything_is_built(clock: str, tmp_path, monkeypatch) -> None:
    from modforge.engine import ModRing
    from modforge.hw import flow

    monkeypatch.setattr(flow, "ensure_built", lambda *a, **k: pytest.fail("built before the check"))
    with pytest.raises(ParameterError, match="clock_mhz: must be a positive number"):
        ModRing((1 << 255) + 95, f"sim:ozturk,clock_mhz={clock}")


def test_the_scan_keeps_each_modules_widths() -> None:
    text = ("module a(x, y);\n  input [63:0] x;\n  output [127:0] y;\n  assign y = x * x;\nendmodule\n"
            "module b(x, y);\n  input [15:0] x;\n  output [31:0] y;\n  assign y = x * x;\nendmodule\n")
    found = scan(text, 17)
    assert [v.line for v in found] == [4] and "64 x 64-bit" in found[0].what


def test_a_new_generation_removes_the_files_the_old_manifest_listed(tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    write_files({"old.v": "x", "manifest.json": json.dumps({"files": [{"path": "old.v"}]})}, tmp_path)
    write_files({"new.v": "y", "manifest.json": json.dumps({"files": [{"path": "new.v"}]})}, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "new.v", "notes.txt"]


@pytest.mark.parametrize("manifest", [b'{"files": [{"path": ["a list"]}, {"path": "../x.v"}]}', b"\xff\xfe not utf-8",
                                      b'{"files": 3}'])
def test_a_damaged_manifest_of_an_earlier_generation_is_ignored(tmp_path, manifest: bytes) -> None:
    (tmp_path / "manifest.json").write_bytes(manifest)
    (tmp_path.parent / "x.v").write_text("outside: never touched")
    write_files({"new.v": "y", "manifest.json": "{}"}, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "new.v"]
    assert (tmp_path.parent / "x.v").exists()


def test_a_failed_generation_leaves_the_previous_one_whole(tmp_path) -> None:
    """Every file is staged before any is replaced: a directory in the way of a new file (any write error)
    leaves the old design and its manifest as they were, and no temporary files."""
    old_manifest = json.dumps({"files": [{"path": "old.v"}]})
    write_files({"old.v": "x", "manifest.json": old_manifest}, tmp_path)
    (tmp_path / "new.v").mkdir()
    with pytest.raises(ParameterError, match="out: .*new.v.* is in the way of a generated file"):
        write_files({"new.v": "y", "manifest.json": json.dumps({"files": [{"path": "new.v"}]})}, tmp_path)
    assert (tmp_path / "old.v").read_text() == "x"
    assert (tmp_path / "manifest.json").read_text() == old_manifest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "new.v", "old.v"]


def test_a_failed_write_discards_what_it_staged(tmp_path, monkeypatch) -> None:
    from modforge.hw import flow

    write_files({"old.v": "x", "manifest.json": "{}"}, tmp_path)
    real = flow.stage_file
    calls = []

    def full_disk(path, text):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", str(path))
        return real(path, text)

    monkeypatch.setattr(flow, "stage_file", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_files({"old.v": "changed", "manifest.json": "{}", "extra.v": "z"}, tmp_path)
    assert (tmp_path / "old.v").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "old.v"]


def test_tool_problems_name_the_tool(tmp_path, monkeypatch) -> None:
    from modforge.hw import verilator

    res = run("hw", "report", "ozturk", "--bits", 32, env={"MODFORGE_YOSYS": str(tmp_path / "nowhere")})
    one_line_error(res, "yosys: MODFORGE_YOSYS=")
    assert "does not exist" in res.stderr
    res = run("hw", "report", "ozturk", "--bits", 32, env={"MODFORGE_YOSYS": str(tmp_path)})
    one_line_error(res, "is not an executable file")
    real_which = verilator.shutil.which
    monkeypatch.setattr(verilator.shutil, "which", lambda name, *a, **k: None if name == "perl" else real_which(name))
    with pytest.raises(ParameterError, match="toolchain: Verilator needs perl"):
        verilator.lint([tmp_path / "x.v"], "x", tmp_path)


def test_cli_refusals_come_before_the_work(tmp_path) -> None:
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    one_line_error(run("hw", "gen", "ozturk", "--bits", 32, "-o", tmp_path / "dangling"),
                   "out: '" + str(tmp_path / "dangling") + "' is a symbolic link to nothing")
    (tmp_path / "afile").write_text("")
    one_line_error(run("hw", "sim", "ozturk", "--bits", 32, "--keep-vectors", tmp_path / "afile" / "v.txt"),
                   "keep-vectors: '" + str(tmp_path / "afile") + "' is not a directory")
    one_line_error(run("hw", "gen", "ozturk", "--bits", 32, "-o", ""), "out: empty path")
    (tmp_path / "f").write_text("")
    one_line_error(run("hw", "gen", "ozturk", "--bits", 32, "-o", tmp_path / "f"), "is a file")
    one_line_error(run("hw", "sim", "ozturk", "--bits", 32, "--chain", -1), "chain: must be non-negative")
    one_line_error(run("hw", "sim", "ozturk", "--bits", 32, "--keep-vectors", tmp_path / "no" / "v.txt"),
                   "keep-vectors: directory")
    one_line_error(run("hw", "bench", "--t", 1), "t: must be at least 2")
    one_line_error(run("hw", "explore", "--archs", "", "--out", tmp_path / "ex"), "archs: is empty")
    assert not (tmp_path / "ex").exists()


def test_a_yosys_failure_is_one_line_with_its_reason(tmp_path) -> None:
    fake = tmp_path / "yosys.sh"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = -V ]; then echo 'Yosys 0.0 (fake)'; exit 0; fi\n"
                    "echo 'ERROR: Out of memory in the fake Yosys' >&2; exit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = {"MODFORGE_YOSYS": str(fake), "MODFORGE_HW_CACHE": str(tmp_path / "cache")}    # the kept log goes here
    res = run("hw", "report", "ozturk", "--bits", 32, env=env)
    one_line_error(res, "yosys failed (exit 1) on xilinx: ERROR: Out of memory in the fake Yosys", code=1)
    assert "full output in" in res.stderr
    res = run("hw", "explore", "--archs", "ozturk", "--bits", 32, "--out", tmp_path / "ex",
              env={"MODFORGE_YOSYS": str(tmp_path / "missing-yosys")})
    one_line_error(res, "missing-yosys")
    assert not (tmp_path / "ex").exists()


def test_a_damaged_build_stamp_means_a_rebuild(tmp_path, monkeypatch) -> None:
    from modforge.hw import flow

    monkeypatch.setenv("MODFORGE_HW_CACHE", str(tmp_path))
    design = make_design("ozturk", bits=16)
    first = flow.ensure_built(design)
    (first.directory / "build.json").write_text('{"rtl": "mf_oz')          # a write cut short
    again = flow.ensure_built(design)
    assert not again.cached and again.exe.exists()
    assert flow.ensure_built(design).cached


BLOCK_AMARANTH = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "amaranth":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Block())
from modforge.cli.main import main
sys.argv = ["modforge", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("args", [
    ["hw", "gen", "ozturk", "--bits", "64", "-o", "{tmp}/out"],
    ["vdf", "eval", "--modulus", "vdf-alliance", "--x", "3", "--t", "10", "--backend", "sim:ozturk"],
])
def test_without_the_toolchain_hw_says_how_to_install_it(tmp_path, args) -> None:
    """A plain `pip install modforge` has no Amaranth: one line naming the `hw` extra, exit 2."""
    import subprocess
    import sys

    argv = [a.format(tmp=tmp_path) for a in args]
    proc = subprocess.run([sys.executable, "-c", BLOCK_AMARANTH, *argv], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "the hardware toolchain is not installed (no module 'amaranth" in lines[0] \
        and "pip install 'modforge[hw]'" in lines[0], proc.stderr


def test_sigterm_during_a_simulation_leaves_no_temporary_directory(tmp_path) -> None:
    """SIGTERM unwinds like Ctrl-C (exit 130): the run's temporary directory goes with it (it was left)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    runner = "import sys; from modforge.cli.main import main; sys.argv = ['modforge', *sys.argv[1:]]; main()"
    proc = subprocess.Popen([sys.executable, "-c", runner, "hw", "sim", "ozturk", "--bits", "64",
                             "--vectors", "2000000", "--chain", "2"],
                            env=dict(os.environ, TMPDIR=str(tmp_path)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240            # a first run builds the design before its vectors
    while not list(tmp_path.glob("modforge-hw-*")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the simulation never started"
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "modforge: interrupted" in err
    assert not list(tmp_path.glob("modforge-hw-*"))
