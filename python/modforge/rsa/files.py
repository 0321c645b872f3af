"""File input and crash-safe output for the RSA commands.

Outputs go through :func:`modforge.fileio.atomic_write`: a reader sees the
old file or the new one, never a torn signature.
"""

from __future__ import annotations

from pathlib import Path

from ..arith.base import ParameterError
from ..fileio import atomic_write


def read_input(path: str | Path, name: str) -> bytes:
    """The bytes of ``path``; ParameterError naming ``name`` when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except IsADirectoryError:
        raise ParameterError(name, f"{str(path)!r} is a directory") from None
    except OSError as exc:
        raise ParameterError(name, f"cannot read {str(path)!r}: {exc.strerror or exc}") from None


def write_output(path: str | Path, data: bytes, name: str = "out", mode: int = 0o644) -> None:
    """:func:`atomic_write`, with ParameterError naming ``name`` when the target cannot be written."""
    try:
        atomic_write(path, data, mode)
    except OSError as exc:
        raise ParameterError(name, f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
