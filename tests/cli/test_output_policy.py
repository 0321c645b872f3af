"""One policy for every option that writes a file (issue 31, item 9): an existing file is replaced only with
``--force`` (refused before any work, exit 2, the file untouched), and a write that fails on a full disk says
so naming the option, exits 2 without a traceback and leaves the old file whole and no temporary file.

The rsa commands and ``timelock create`` have their own tests of the same policy (tests/rsa,
tests/timelock); here are the others: vdf eval / prove, timelock solve, msm, ntt, bench --plot and
hw sim --keep-vectors."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import modforge.fileio as fileio
from modforge.cli.main import cli

from ..support import one_line_error

OLD = b"an older file that must survive\n"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    """The inputs some commands need: a puzzle file, a checkpoints file."""
    d = tmp_path_factory.mktemp("inputs")
    puzzle, checkpoints = d / "p.json", d / "ck.json"
    assert run("timelock", "create", "--bits", 256, "--t", 40, "--message", "hello", "--out", puzzle).exit_code == 0
    assert run("vdf", "eval", "--modulus", "vdf-alliance", "--x", 2, "--t", 64, "--checkpoints",
               checkpoints).exit_code == 0
    return {"puzzle": puzzle, "checkpoints": checkpoints}


# (name, the option, its arguments writing to OUT); each finishes in well under a second.
WRITERS = {
    "vdf eval --out": ("out", ["vdf", "eval", "--modulus", "vdf-alliance", "--x", 3, "--t", 64, "--proof",
                               "wesolowski", "--out", "OUT"]),
    "vdf eval --checkpoints": ("checkpoints", ["vdf", "eval", "--modulus", "vdf-alliance", "--x", 3, "--t", 64,
                                               "--checkpoints", "OUT"]),
    "vdf prove --out": ("out", ["vdf", "prove", "--checkpoints", "CHECKPOINTS", "--proof", "wesolowski",
                                "--out", "OUT"]),
    "timelock solve --output": ("output", ["timelock", "solve", "PUZZLE", "--progress", "none", "--checkpoint-dir",
                                           "TMP/ck", "--output", "OUT"]),
    "msm --out": ("out", ["msm", "--random", 3, "--out", "OUT"]),
    "ntt --out": ("out", ["ntt", "--random", 8, "--seed", 1, "--out", "OUT"]),
}
# Writers whose refusal of an existing file is tested beside their command (tests/rsa, tests/timelock); here
# only their full disk, which said "'FILE': No space left on device" without the option.
STAGED_WRITERS = {
    "timelock create --out": ("out", ["timelock", "create", "--bits", 256, "--t", 40, "--message", "hi", "--out",
                                      "OUT"]),
    "timelock create --keep-trapdoor": ("keep-trapdoor", ["timelock", "create", "--bits", 256, "--t", 40,
                                                          "--message", "hi", "--out", "TMP/p.json",
                                                          "--keep-trapdoor", "OUT"]),
    "rsa keygen --out": ("--out", ["rsa", "keygen", "--bits", 2048, "--out", "OUT"]),
    "rsa keygen --public-out": ("--public-out", ["rsa", "keygen", "--bits", 2048, "--out", "TMP/k.pem",
                                                 "--public-out", "OUT"]),
}
# These refuse before their (long) work, which is all this test runs of them.
REFUSERS = {
    "bench ntt --plot": ("plot", ["bench", "ntt", "--log-n", 4, "--no-build", "--plot", "OUT"]),
    "bench msm --plot": ("plot", ["bench", "msm", "--log-n", 4, "--no-build", "--plot", "OUT"]),
    "hw sim --keep-vectors": ("keep-vectors", ["hw", "sim", "ozturk", "--bits", 32, "--keep-vectors", "OUT"]),
}


def _args(template: list, out: Path, tmp_path: Path, made: dict[str, Path]) -> list:
    names = {"OUT": out, "PUZZLE": made["puzzle"], "CHECKPOINTS": made["checkpoints"]}
    return [names.get(a, a) if not (isinstance(a, str) and a.startswith("TMP/")) else tmp_path / a[4:]
            for a in template]


def _others(directory: Path, out: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p != out)


@pytest.mark.parametrize("name", [*WRITERS, *REFUSERS])
def test_an_existing_output_is_replaced_only_with_force(name, tmp_path, made) -> None:
    option, template = {**WRITERS, **REFUSERS}[name]
    out = tmp_path / "existing.bin"
    out.write_bytes(OLD)
    one_line_error(run(*_args(template, out, tmp_path, made)),
                   f"{option}: {str(out)!r} exists; give --force to replace it")
    assert out.read_bytes() == OLD and not [n for n in _others(tmp_path, out) if n != "ck"]
    if name in WRITERS:
        res = run(*_args(template, out, tmp_path, made), "--force")
        assert res.exit_code == 0, res.output
        assert out.read_bytes() != OLD and out.stat().st_size > 0


def _fsync_fails_for(target: Path, real_fsync):
    """os.fsync that reports a full disk for the temporary file staged for ``target`` (as a file system with
    delayed allocation does) and works for every other file (checkpoints, caches)."""
    def fsync(fd: int) -> None:
        try:
            name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            name = ""
        if name.startswith(f".{target.name}{fileio.TEMP_MARK}"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)
    return fsync


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd to tell files apart")
@pytest.mark.parametrize("name", [*WRITERS, *STAGED_WRITERS])
def test_a_full_disk_names_the_option_and_keeps_the_old_file(name, tmp_path, made, monkeypatch) -> None:
    option, template = {**WRITERS, **STAGED_WRITERS}[name]
    out = tmp_path / "existing.bin"
    out.write_bytes(OLD)
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", _fsync_fails_for(out, real_fsync))
    one_line_error(run(*_args(template, out, tmp_path, made), "--force"),
                   f"{option}: cannot write {str(out)!r}: No space left on device")
    assert out.read_bytes() == OLD
    assert not [n for n in _others(tmp_path, out) if fileio.TEMP_MARK in n or n in ("p.json", "k.pem")]
    new = tmp_path / "new.bin"
    monkeypatch.setattr(os, "fsync", _fsync_fails_for(new, real_fsync))
    one_line_error(run(*_args(template, new, tmp_path, made)), f"{option}: cannot write {str(new)!r}: No space")
    assert not new.exists() and not [n for n in _others(tmp_path, out) if fileio.TEMP_MARK in n]
