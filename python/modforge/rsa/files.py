"""File input and crash-safe output for the RSA commands.

Outputs go through :func:`modforge.fileio.write_output` (atomic, --force to replace): a reader
sees the old file or the new one, never a torn signature.
"""

from __future__ import annotations

from pathlib import Path

from ..arith.base import ParameterError
from ..fileio import InputTooLarge, read_bounded, write_output  # noqa: F401 - write_output: the commands' writer
from .errors import unreadable


# Signatures, ciphertexts and raw blocks are one modulus long (at most 2 KiB): a larger file is not one,
# and is refused before it is read into memory.
SMALL_INPUT_LIMIT = 1 << 20


def read_input(path: str | Path, name: str, limit: int) -> bytes:
    """The bytes of ``path`` (at most ``limit``); ParameterError naming ``name`` when it cannot be read."""
    try:
        return read_bounded(path, limit)
    except InputTooLarge:
        raise ParameterError(name, f"{str(path)!r} is larger than the {limit} bytes this input may have") from None
    except OSError as exc:
        raise unreadable(exc, path, name) from None


def read_message(path: str | Path, scheme: str, hash_name: str | None, name: str = "in"):
    """What :func:`modforge.rsa.sign` / ``check_signature`` take for the file ``path``: its hash, read in
    chunks, for the hashing schemes (any size, flat memory); its bytes for ``raw`` (one block)."""
    from .schemes import digest_file

    if scheme.lower() == "raw":
        return read_input(path, name, SMALL_INPUT_LIMIT)
    return digest_file(path, hash_name, name)
