"""Crash-safe file writes, for every file modforge produces (puzzles, checkpoints, proofs, signatures, RTL).

``atomic_write`` puts the bytes in a temporary file in the target's own
directory, fsyncs it, renames it over the target with ``os.replace`` (atomic
on POSIX) and fsyncs the directory so the rename itself survives a power
loss.  A reader therefore sees the old file or the new one, never a mix; a
crash can at worst leave a stray temporary file, which :func:`remove_stale_temps`
cleans up.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Mapping

from .arith.base import ParameterError

TEMP_MARK = ".tmp-"
# The one policy for every file a command writes (rsa, timelock, vdf, msm, ntt, hw, bench): an existing
# file is replaced only with --force, and the refusal says so in these words.
EXISTS_HINT = "exists; give --force to replace it"


def fsync_dir(directory: Path) -> None:
    """fsync a directory (no-op where directories cannot be opened, e.g. Windows)."""
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


class InputTooLarge(ValueError):
    """A file or stream holds more than its reader's limit."""

    def __init__(self, name: str, limit: int):
        super().__init__(f"{name}: more than the {limit}-byte limit for this file")
        self.name, self.limit = name, limit


def read_bounded(source: str | os.PathLike | BinaryIO, limit: int, name: str | None = None) -> bytes:
    """All bytes of ``source`` (a path, or a binary stream such as ``sys.stdin.buffer``), at most ``limit``.

    Read in pieces, so a FIFO, ``/dev/zero`` or a file growing while we read can never make us hold more
    than the limit (a size from ``stat`` would not say).  Past it: :class:`InputTooLarge`; a path that
    cannot be read raises its OSError.
    """
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as fh:
            return read_bounded(fh, limit, name or str(source))
    pieces, size = [], 0
    while True:
        piece = source.read(min(1 << 20, limit + 1 - size))
        if not piece:
            return b"".join(pieces)
        pieces.append(piece)
        size += len(piece)
        if size > limit:
            raise InputTooLarge(name or "input", limit)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def atomic_write(path: str | os.PathLike, data: bytes | str, mode: int | None = None,
                 exclusive: bool = False) -> None:
    """Replace ``path`` by ``data`` atomically and durably (see the module docstring).

    Text is written as UTF-8.  ``mode`` defaults to what a plain ``open`` would
    give (0o666 less the umask); secrets pass 0o600.  With ``exclusive`` the file
    must not exist: it is linked into place, which fails (FileExistsError) rather
    than replace a file that appeared since the caller checked.
    """
    commit_staged(stage_file(path, data, mode), path, exclusive)


def stage_file(path: str | os.PathLike, data: bytes | str, mode: int | None = None) -> Path:
    """The first half of :func:`atomic_write`: ``data`` in a temporary file beside ``path``, fsynced.

    Several files that must change together (a key pair) are staged first, so that a full disk fails
    before any of them is replaced; :func:`commit_staged` then puts each in place, :func:`discard_staged`
    drops one."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if mode is None:
        mode = 0o666 & ~_umask()
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path.name, directory), dir=directory)
    except OSError as exc:
        raise _naming(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as fh:        # owns (and closes) the descriptor from here on
            os.fchmod(fh.fileno(), mode)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException as exc:
        discard_staged(Path(tmp))
        if isinstance(exc, OSError):
            raise _naming(exc, path) from None
        raise
    return Path(tmp)


def _temp_prefix(name: str, directory: Path) -> str:
    """``.NAME.tmp-``: the temporary file's name before mkstemp's 8 random characters, with NAME cut short
    when the whole would not fit the file system's limit on a name (255 bytes on most): a name the target
    itself fits must not fail only after the work, at its temporary file."""
    try:
        limit = os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    room = limit - len(f".{TEMP_MARK}".encode()) - 8
    while name and len(os.fsencode(name)) > room:
        name = name[:-1]
    return f".{name}{TEMP_MARK}"


def _naming(exc: OSError, path: Path) -> OSError:
    """``exc`` about ``path``, the file the caller asked for (a full disk names no file; the staging
    and linking name the hidden temporary one)."""
    return type(exc)(exc.errno, exc.strerror or str(exc), os.fspath(path))


def commit_staged(tmp: Path, path: str | os.PathLike, exclusive: bool = False) -> None:
    """Put a staged file in place (linked with ``exclusive``: FileExistsError if ``path`` exists); the
    staged file is gone afterwards either way."""
    path = Path(path)
    placeholder = False
    try:
        if exclusive:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise
            except OSError:
                # A file system without hard links: an O_EXCL placeholder claims the name, the rename fills it.
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, tmp.stat().st_mode & 0o7777))
                placeholder = True
                os.replace(tmp, path)
            else:
                discard_staged(tmp)         # the file is in place: the extra name goes, best effort
        else:
            os.replace(tmp, path)
    except BaseException as exc:
        renamed = placeholder and not tmp.exists()      # interrupted just after the rename: the file is in place
        discard_staged(tmp)
        if placeholder and not renamed:
            discard_staged(path)            # our empty placeholder, never a file someone else made
        if isinstance(exc, OSError):
            raise _naming(exc, path) from None
        raise
    fsync_dir(path.parent if str(path.parent) else Path("."))


def discard_staged(tmp: Path) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


def write_together(files: Mapping[str, bytes | str], out_dir: Path,
                   before: Callable[[str], None] | None = None) -> list[Path]:
    """The files (name -> data, in the order given) into ``out_dir`` as one change: all are staged (written
    and synced beside their names) before any is replaced, so a failed write (a full disk) leaves every
    earlier file as it was; then each is put in place, ``before(name)`` running just before it."""
    staged: dict[str, Path] = {}
    try:
        for name, data in files.items():
            staged[name] = stage_file(out_dir / name, data)
    except BaseException:
        for tmp in staged.values():
            discard_staged(tmp)
        raise
    names = list(staged)
    paths = []
    for i, name in enumerate(names):
        try:
            if before is not None:
                before(name)
            commit_staged(staged[name], out_dir / name)
        except BaseException:
            for rest in names[i:]:
                discard_staged(staged[rest])
            raise
        paths.append(out_dir / name)
    return paths


def check_output_path(path: str | os.PathLike, param: str, overwrite: bool = True) -> Path:
    """``path`` as a file we can write, checked before any work is done (ParameterError naming ``param``).

    A non-empty name that is not a directory, in an existing directory we may write in; with
    ``overwrite=False`` the file must not exist yet.  An existing target must be a regular file: an atomic
    write replaces it, which would turn a device, a FIFO or a symbolic link into a plain file.
    """
    text = os.fspath(path)
    if not text:
        raise ParameterError(param, "empty path")
    p = Path(text)
    if p.is_dir() or text.endswith(os.sep):
        raise ParameterError(param, f"{text!r} is a directory")
    if not overwrite and (p.exists() or p.is_symlink()):
        raise ParameterError(param, f"{text!r} {EXISTS_HINT}")
    if p.is_symlink():
        raise ParameterError(param, f"{text!r} is a symbolic link; give the file it points to (an atomic write "
                                    f"would replace the link)")
    if p.exists() and not p.is_file():
        raise ParameterError(param, f"{text!r} is not a regular file (a device or FIFO); write to a file")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        if parent.exists():
            raise ParameterError(param, f"{str(parent)!r} is not a directory")
        raise ParameterError(param, f"directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ParameterError(param, f"cannot write in directory {str(parent)!r} (permission denied)")
    return p


@contextmanager
def output_errors(path: str | os.PathLike, param: str) -> Iterator[None]:
    """An OSError in the block, while writing ``path``, as a ParameterError naming ``param`` (the option):
    "exists; give --force" for a file that must not be replaced, else "cannot write" and the reason."""
    try:
        yield
    except FileExistsError:
        raise ParameterError(param, f"{os.fspath(path)!r} {EXISTS_HINT}") from None
    except OSError as exc:
        raise ParameterError(param, f"cannot write {os.fspath(path)!r}: {exc.strerror or exc}") from None


def write_output(path: str | os.PathLike, data: bytes | str, param: str, mode: int | None = None,
                 overwrite: bool = True) -> None:
    """:func:`atomic_write` of a command's output file, every failure a ParameterError naming ``param``
    (:func:`output_errors`): with ``overwrite=False`` a file that exists by now is left alone; a write that
    fails (a full disk, a read-only file system) leaves the old file, if any, as it was."""
    with output_errors(path, param):
        atomic_write(path, data, mode, exclusive=not overwrite)


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two paths name the same file (also through links); False when either does not exist."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def remove_stale_temps(directory: Path, name_prefix: str) -> int:
    """Delete temporary files left by an interrupted :func:`atomic_write` of files named ``name_prefix*``."""
    removed = 0
    try:
        entries = list(Path(directory).iterdir())
    except FileNotFoundError:
        return 0
    for entry in entries:
        if entry.name.startswith(f".{name_prefix}") and TEMP_MARK in entry.name:
            try:
                entry.unlink()
                removed += 1
            except OSError:
                pass
    return removed


def user_cache_dir(name: str) -> Path:
    """``$XDG_CACHE_HOME/modforge/<name>`` (``~/.cache`` when the variable is unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):     # the XDG spec: a relative value is to be ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "modforge" / name


@contextmanager
def exclusive_lock(path: Path, param: str, busy: str) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) for the block; ParameterError(param, busy)
    at once if another process holds it.  The kernel releases it even on kill -9.  No-op without fcntl."""
    with try_exclusive_lock(path) as held:
        if not held:
            raise ParameterError(param, busy)
        yield


@contextmanager
def try_exclusive_lock(path: Path, create: bool = True) -> Iterator[bool]:
    """Hold an exclusive flock on ``path`` for the block without waiting: yields True while held, False
    (holding nothing) if another process holds it.  Without ``create`` a missing file yields True, as
    does a system without fcntl: there is no lock to respect."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no locking
        yield True
        return
    while True:
        try:
            fd = os.open(path, os.O_RDWR | (os.O_CREAT if create else 0), 0o644)
        except FileNotFoundError:
            if create:
                raise
            yield True
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                busy = True
            else:
                busy = False
                # The holder we raced with may have unlinked the file (a finished run, `modforge cache
                # clean`): a lock on the orphan would exclude nobody who opens the path now, so take the
                # path's file again.
                try:
                    same = os.path.samestat(os.fstat(fd), os.stat(path))
                except FileNotFoundError:
                    same = False
        except BaseException:
            os.close(fd)
            raise
        if busy:
            os.close(fd)
            yield False
            return
        if same:
            break
        os.close(fd)
    try:
        yield True
    finally:
        os.close(fd)
