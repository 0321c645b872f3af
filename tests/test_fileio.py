"""``modforge.fileio``: exclusive atomic writes (with and without hard links) and the output-path check."""

from __future__ import annotations

import contextlib
import errno
import os
from unittest import mock

import pytest

from modforge.arith.base import ParameterError
from modforge.fileio import atomic_write, check_output_path


@pytest.mark.parametrize("links", [True, False])
def test_an_exclusive_write_never_replaces_a_file(tmp_path, links: bool) -> None:
    no_links = mock.patch("os.link", side_effect=OSError(errno.EPERM, "no hard links here"))
    with (contextlib.nullcontext() if links else no_links):
        atomic_write(tmp_path / "a", b"first", exclusive=True)
        with pytest.raises(FileExistsError):
            atomic_write(tmp_path / "a", b"second", exclusive=True)
    assert (tmp_path / "a").read_bytes() == b"first"
    assert os.listdir(tmp_path) == ["a"]                 # no temporary file left behind
    atomic_write(tmp_path / "a", b"third")               # a plain write replaces
    assert (tmp_path / "a").read_bytes() == b"third"


def test_output_paths_that_a_rename_would_damage_are_refused(tmp_path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    (tmp_path / "file").write_text("x")
    for path, problem in ((tmp_path / "fifo", "not a regular file"), (tmp_path / "link", "symbolic link"),
                          (tmp_path, "is a directory"), (f"{tmp_path}/new/", "is a directory"), ("", "empty path"),
                          (tmp_path / "missing" / "f", "does not exist"), (tmp_path / "file" / "f", "does not exist")):
        with pytest.raises(ParameterError, match=problem):
            check_output_path(path, "out")
    with pytest.raises(ParameterError, match="exists; give --force"):
        check_output_path(tmp_path / "file", "out", overwrite=False)
    assert check_output_path(tmp_path / "file", "out") == tmp_path / "file"


def test_an_exclusive_commit_without_hard_links_leaves_no_empty_placeholder(tmp_path, monkeypatch) -> None:
    """The fallback claims the name with an empty O_EXCL file, then renames over it; a failed rename
    must take that placeholder away again (an empty key file would block every rerun)."""
    import errno
    import os as os_module

    from modforge import fileio

    def no_links(src, dst):
        raise OSError(errno.EPERM, "Operation not permitted")

    def failing_rename(src, dst):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os_module, "link", no_links)
    monkeypatch.setattr(os_module, "replace", failing_rename)
    with pytest.raises(OSError, match="Input/output error"):
        fileio.atomic_write(tmp_path / "key.pem", b"secret", mode=0o600, exclusive=True)
    assert list(tmp_path.iterdir()) == []
    # Without the failure the fallback puts the file in place, and refuses an existing one.
    monkeypatch.undo()
    monkeypatch.setattr(os_module, "link", no_links)
    fileio.atomic_write(tmp_path / "key.pem", b"secret", mode=0o600, exclusive=True)
    assert (tmp_path / "key.pem").read_bytes() == b"secret"
    assert (tmp_path / "key.pem").stat().st_mode & 0o777 == 0o600
    with pytest.raises(FileExistsError):
        fileio.atomic_write(tmp_path / "key.pem", b"other", exclusive=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key.pem"]


def test_staging_closes_its_descriptor_when_chmod_fails(tmp_path, monkeypatch) -> None:
    import errno
    import os as os_module

    from modforge import fileio

    def no_chmod(fd, mode):
        raise OSError(errno.EPERM, "Operation not permitted")

    before = len(os_module.listdir("/proc/self/fd"))
    monkeypatch.setattr(os_module, "fchmod", no_chmod)
    for _ in range(20):
        with pytest.raises(OSError):
            fileio.stage_file(tmp_path / "f", b"x")
    monkeypatch.undo()
    assert len(os_module.listdir("/proc/self/fd")) <= before + 1
    assert list(tmp_path.iterdir()) == []
