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
