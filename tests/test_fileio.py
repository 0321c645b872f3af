"""``modforge.fileio``: exclusive atomic writes (with and without hard links) and the output-path check."""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from unittest import mock

import pytest

from modforge.arith.base import ParameterError
from modforge.fileio import InputTooLarge, atomic_write, check_output_path, read_bounded


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
                          (tmp_path / "missing" / "f", "does not exist"), (tmp_path / "file" / "f", "is not a directory")):
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


# -- read_bounded -------------------------------------------------------------------------------------------
def test_read_bounded_takes_up_to_the_limit_and_refuses_one_byte_more(tmp_path) -> None:
    path = tmp_path / "f"
    for size in (0, 1, 999, 1000):
        path.write_bytes(b"\xa5" * size)
        assert read_bounded(path, 1000) == b"\xa5" * size
        with path.open("rb") as fh:
            assert read_bounded(fh, 1000) == b"\xa5" * size
    path.write_bytes(b"\xa5" * 1001)
    with pytest.raises(InputTooLarge, match="f: more than the 1000-byte limit") as info:
        read_bounded(path, 1000)
    assert info.value.limit == 1000
    with pytest.raises(FileNotFoundError):
        read_bounded(tmp_path / "missing", 1000)


def test_read_bounded_stops_at_the_limit_on_endless_and_growing_sources(tmp_path) -> None:
    """A size from stat() says nothing for these: the reader must stop by itself, holding limit + 1 bytes."""
    with pytest.raises(InputTooLarge, match="/dev/zero"):
        read_bounded("/dev/zero", 3 << 20)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    written: list[int] = []

    def writer() -> None:
        with contextlib.suppress(BrokenPipeError), open(fifo, "wb") as fh:
            for _ in range(64):
                fh.write(b"x" * 4096)
                written.append(4096)

    thread = threading.Thread(target=writer)
    thread.start()
    with pytest.raises(InputTooLarge, match="standard input"):
        with open(fifo, "rb") as fh:
            read_bounded(fh, 10_000, "standard input")
    thread.join(timeout=10)
    assert not thread.is_alive() and sum(written) < 64 * 4096     # the reader did not drain the writer


@pytest.fixture
def endless(tmp_path):
    """A FIFO that yields 17 MiB of zeros, more than any reader's limit: a bounded reader stops early; an
    unbounded one would read it all and fail on the contents instead (a clear test failure, not a hang)."""
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), open(fifo, "wb") as fh:
            for _ in range(17 * 16):
                fh.write(bytes(1 << 16))

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    yield fifo
    if thread.is_alive():                # never opened by the reader (or set aside): let the writer finish
        with contextlib.suppress(OSError):
            fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            os.close(fd)
    thread.join(timeout=10)


def _puzzle(path):
    from modforge.timelock import load_puzzle_file
    load_puzzle_file(path)


def _trapdoor(path):
    from modforge.timelock.puzzle import load_trapdoor
    load_trapdoor(path, None)


def _checkpoint(path):
    from modforge.timelock import CheckpointStore
    from modforge.timelock.puzzle import SquaringTask
    CheckpointStore(path.parent, SquaringTask(n=253, x=2, t=10)).read(path)


def _proof_progress(path):
    from modforge.vdf.proof_progress import ProofProgress
    events: list[tuple[str, str]] = []
    assert ProofProgress(path, "k" * 64, 253, notify=lambda *e: events.append(e)).load(5, 64, 2, 8) is None
    [(kind, text)] = events
    assert kind == "rejected" and "more than the" in text
    raise ValueError(text)              # what the caller sees, for the shared check below


def _eval_plan(path):
    from types import SimpleNamespace
    from modforge.vdf.resume import Session
    Session.load_plans(SimpleNamespace(plan_path=path, id="s"))


def _private_key(path):
    from modforge.rsa.keys import read_private_key
    read_private_key(path)


def _rsa_input(path):
    from modforge.rsa.files import SMALL_INPUT_LIMIT, read_input
    read_input(path, "in", SMALL_INPUT_LIMIT)


def _vdf_json(path):
    from modforge.vdf.formats import read_json
    read_json(path)


@pytest.mark.parametrize("reader", [_puzzle, _trapdoor, _checkpoint, _proof_progress, _eval_plan, _private_key,
                                    _rsa_input, _vdf_json])
def test_every_reader_of_outside_files_stops_at_its_limit(endless, monkeypatch, reader) -> None:
    """Each file modforge reads back (puzzles, trapdoors, checkpoints, proof progress, plans, keys, RSA inputs,
    proofs) is read through :func:`read_bounded`: an endless file is refused with a message naming the
    limit, never read until memory runs out."""
    from modforge.timelock import puzzle
    monkeypatch.setattr(puzzle, "MAX_PUZZLE_FILE_BYTES", 1 << 20)
    with pytest.raises(Exception, match=r"more than the \d+[- ]byte|larger than the \d+ bytes") as info:
        reader(endless)
    assert not isinstance(info.value, (MemoryError, AssertionError))


def test_exclusive_lock_does_not_hold_a_lock_file_unlinked_under_it(tmp_path, monkeypatch) -> None:
    """The holder that a run raced with can unlink the lock file (a finished run, a clean) between the
    run's open and its flock: the run must then lock the file now at the path, or a third process could
    take that one and run beside it."""
    import fcntl

    from modforge.fileio import exclusive_lock

    lock = tmp_path / "task.lock"
    lock.touch()
    real_flock = fcntl.flock
    raced: list[bool] = []

    def flock_after_unlink(fd, op):
        if not raced:
            raced.append(True)
            lock.unlink()              # what the previous holder did just before letting go
        return real_flock(fd, op)

    monkeypatch.setattr(fcntl, "flock", flock_after_unlink)
    with exclusive_lock(lock, "p", "busy"):
        assert raced and lock.exists()
        with pytest.raises(ParameterError, match="busy"):
            with exclusive_lock(lock, "p", "busy"):
                pass


def test_exclusive_lock_closes_its_descriptor_when_flock_fails(tmp_path, monkeypatch) -> None:
    import fcntl

    from modforge.fileio import exclusive_lock

    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        with pytest.raises(OSError, match="No locks available"):
            with exclusive_lock(tmp_path / "l", "p", "busy"):
                pass
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_write_that_fails_names_the_file_asked_for(tmp_path) -> None:
    """A full disk names no file and a lost race names the hidden temporary one; the error names the target."""
    with mock.patch("os.fsync", side_effect=OSError(errno.ENOSPC, "No space left on device")):
        with pytest.raises(OSError) as caught:
            atomic_write(tmp_path / "out.json", b"x")
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(tmp_path / "out.json")
    (tmp_path / "taken").write_text("first")
    with pytest.raises(FileExistsError) as caught:
        atomic_write(tmp_path / "taken", b"second", exclusive=True)
    assert caught.value.filename == str(tmp_path / "taken")
    assert sorted(os.listdir(tmp_path)) == ["taken"]


@pytest.mark.parametrize("length", [200, 241, 246, 255])
def test_a_name_as_long_as_the_file_system_allows_is_written(tmp_path, length: int) -> None:
    """The temporary file is named after the target plus 14 characters; for a long target it is cut short."""
    for stem in ("a" * length, "\u00e9" * (length // 2)):          # bytes, not characters, count
        target = tmp_path / stem
        atomic_write(target, b"x")
        atomic_write(target, b"y")
        assert target.read_bytes() == b"y"
        atomic_write(tmp_path / (stem[:-1] + "z"), b"z", exclusive=True)
    assert all(len(os.fsencode(p.name)) <= 255 for p in tmp_path.iterdir()) and len(list(tmp_path.iterdir())) == 4
