"""Errors of the RSA layer.

Bad input (a malformed key, a message of the wrong length, an unknown hash)
is a :class:`~modforge.arith.base.ParameterError` naming the parameter, so
the command line turns it into exit code 2.  The two errors here are checks
that failed on well-formed input, exit code 1:

* :class:`DecryptionError` always carries the one message ``"decryption
  failed"``: which padding check failed is never said (no padding oracle).
* :class:`FaultError`: a private-key result failed its check with the public
  exponent, and was withheld (the Bellcore attack on CRT).
"""

from __future__ import annotations

from pathlib import Path

from ..arith.base import ParameterError


class RSAError(Exception):
    """A check failed on well-formed input (not bad usage)."""


class DecryptionError(RSAError):
    """Decryption failed; deliberately says nothing more."""

    MESSAGE = "decryption failed"

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


class FaultError(RSAError):
    """A CRT private-key result did not verify with the public exponent; nothing was released."""

    MESSAGE = ("private-key operation failed its public-exponent check (a fault in the computation); "
               "the result was withheld")

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


def unreadable(exc: OSError, path: str | Path, name: str) -> ParameterError:
    """The ParameterError naming ``name`` for an input file that could not be read."""
    if isinstance(exc, IsADirectoryError):
        return ParameterError(name, f"{str(path)!r} is a directory")
    return ParameterError(name, f"cannot read {str(path)!r}: {exc.strerror or exc}")
