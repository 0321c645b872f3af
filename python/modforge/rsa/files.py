"""File input and crash-safe output for the RSA commands.

:func:`atomic_write` writes a temporary file in the target's directory,
fsyncs it and renames it over the target (``os.replace``, atomic on POSIX),
then fsyncs the directory: a reader sees the old file or the new one, never
a torn signature.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..arith.base import ParameterError


def read_input(path: str | Path, name: str) -> bytes:
    """The bytes of ``path``; ParameterError naming ``name`` when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except IsADirectoryError:
        raise ParameterError(name, f"{str(path)!r} is a directory") from None
    except OSError as exc:
        raise ParameterError(name, f"cannot read {str(path)!r}: {exc.strerror or exc}") from None


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: str | Path, data: bytes, mode: int = 0o644) -> None:
    """Replace ``path`` by ``data`` atomically and durably."""
    path = Path(path)
    directory = path.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=directory)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(directory)


def write_output(path: str | Path, data: bytes, name: str = "out", mode: int = 0o644) -> None:
    """:func:`atomic_write`, with ParameterError naming ``name`` when the target cannot be written."""
    try:
        atomic_write(path, data, mode)
    except OSError as exc:
        raise ParameterError(name, f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
