"""What modforge keeps under ``$XDG_CACHE_HOME/modforge`` (``~/.cache/modforge``): listed, and cleaned on request.

Long runs keep their state there so that they resume: time-lock checkpoints (``timelock``), VDF
evaluation sessions and proof progress (``vdf``). A VDF run that finishes removes its own; a finished
solve keeps its last checkpoint (it holds the answer); those and abandoned runs stay until resumed or
cleaned here (a VDF session's journal holds one group element per target
and can reach hundreds of MB). The machine's measured backend ranking (``tuning``) is remeasured when
missing. These three areas can be cleaned. The others are listed for their size only: the benchmark
anchors' builds and generated hardware (``anchors``, ``hw``: their builds lock differently and a
simulation runs its executable after releasing the lock), benchmark keys and saved results
(``rsa-keys``, ``results``: kept by hand).

An *item* is everything of one run: its checkpoints, journal, plan, proof progress, set-aside
``*.corrupt`` copies, temporaries and lock file (a VDF session's checkpoints are named by a task id derived
from the session; its plan file links the two). An item is in use while a run holds its lock. Removal
takes that lock first (creating it if the run left none), looks at the item's files again under it, and
deletes checkpoints before the journal and plan, so an interrupted clean never leaves a session that
refuses to resume; a run that starts meanwhile fails at once ("another process ...").
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from .fileio import TEMP_MARK, InputTooLarge, fsync_dir, read_bounded, try_exclusive_lock, user_cache_dir

STATE_AREAS = ("timelock", "vdf")
CLEANABLE_AREAS = STATE_AREAS + ("tuning",)
LISTED_AREAS = ("anchors", "hw", "rsa-keys", "results")
AREAS = CLEANABLE_AREAS + LISTED_AREAS
DIR_AREA = "dir"            # the items of a state directory given by the user (`--dir`)

# Exactly the names the runs' writers give their files (CheckpointStore, vdf.resume.Session, ProofProgress,
# vdf prove): <stem> is timelock-<task>, vdf-eval-<session or task> or vdf-prove-<statement> (16 hex), then
# checkpoints (and those set aside or discarded by --restart), lock files, plan, journal, proof progress;
# atomic_write's temporaries are ".<name>.tmp-<random>".  Nothing else is ever a run's file (ASCII digits,
# and \Z: "$" would also take a name ending in a newline).
_STATE_FILE = re.compile(
    r"^(?P<temp>\.)?(?P<stem>(?P<kind>timelock|vdf-eval|vdf-prove)-[0-9a-f]{16})"
    r"(?:-[0-9]{20}\.json(?:\.corrupt)?(?:\.discarded)?|-lock|\.lock|\.plan\.json|\.values"
    r"|\.proof\.json(?:\.corrupt)?|\.json(?:\.corrupt)?)"
    r"(?(temp)" + re.escape(TEMP_MARK) + r".+|)\Z")
# The measured backend ranking (engine.tuning.cache_path), and its temporaries.
_TUNING_FILE = re.compile(r"^(?P<temp>\.)?machine-[0-9a-f]{16}\.json(?(temp)" + re.escape(TEMP_MARK) + r".+|)\Z")
_STEM = re.compile(r"^(timelock|vdf-eval|vdf-prove)-[0-9a-f]{16}$")
_CHECKPOINT = re.compile(r"-[0-9]{20}\.json(\.corrupt)?\Z")
_DETAIL_FILE_LIMIT = 1 << 20


@dataclass
class Item:
    area: str
    name: str
    paths: list[Path] = field(default_factory=list)
    size: int = 0
    modified: float = 0.0       # newest modification time of anything in it
    in_use: bool = False
    detail: str = ""

    def as_dict(self) -> dict:
        return {"area": self.area, "name": self.name, "files": len(self.paths), "bytes": self.size,
                "modified": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.modified)),
                "in_use": self.in_use, "detail": self.detail, "paths": [str(p) for p in self.paths]}

    @property
    def lock_path(self) -> Path | None:
        """The lock file the run of this item takes (the writers' names), None for items without runs."""
        match = _STEM.match(self.name)
        if match is None or not self.paths:
            return None
        directory, kind = self.paths[0].parent, match.group(1)
        # CheckpointStore locks <stem>-lock; vdf eval sessions and vdf prove lock <stem>.lock.  A vdf-eval
        # group without its session's files (plan gone) is a CheckpointStore's: its lock is <stem>-lock.
        names = {p.name for p in self.paths}
        session = any(f"{self.name}{suffix}" in names for suffix in (".lock", ".plan.json", ".values", ".proof.json"))
        store_lock = kind == "timelock" or (kind == "vdf-eval" and not session)
        return directory / (f"{self.name}-lock" if store_lock else f"{self.name}.lock")


def cache_root() -> Path:
    return user_cache_dir("")


def _measure(path: Path) -> tuple[int, float]:
    """(bytes, newest mtime) of a file, or of a directory and everything under it; links not followed."""
    try:
        st = path.lstat()
    except OSError:
        return 0, 0.0
    size, newest = st.st_size, st.st_mtime
    if stat.S_ISDIR(st.st_mode):
        for dirpath, dirnames, filenames in os.walk(path):
            for name in dirnames + filenames:
                try:
                    st = os.lstat(os.path.join(dirpath, name))
                except OSError:
                    continue
                size += st.st_size if name in filenames else 0
                newest = max(newest, st.st_mtime)
    return size, newest


def _parse_flock_inodes(text: str) -> set[int]:
    """Inodes of the files with a flock() lock held, from the text of /proc/locks.

    Lines read ``1: FLOCK  ADVISORY  WRITE 4242 fd:01:123456 0 EOF``; a waiter's line has ``->`` and
    holds nothing; POSIX and OFD locks are not what modforge takes.  Only the inode is compared: the
    device number there can differ from ``stat``'s (btrfs subvolumes), and a false "in use" is harmless."""
    held = set()
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK":
            try:
                held.add(int(fields[5].rsplit(":", 1)[1]))
            except (IndexError, ValueError):
                continue
    return held


def _flock_holders() -> set[int] | None:
    """Inodes with a flock() lock, from /proc/locks (Linux); None where it cannot be read.

    Listing looks here instead of trying each lock: a try-lock, however brief, makes a run that starts at
    that instant fail with "another process ...".  (Locks of processes in another PID namespace are not
    shown there: listing may miss them, removal does not, since it takes the lock itself.)"""
    try:
        return _parse_flock_inodes(Path("/proc/locks").read_text())
    except OSError:
        return None


def _lock_is_held(lock: Path, holders: set[int] | None) -> bool:
    try:
        st = os.stat(lock)
    except OSError:
        return False
    if holders is not None:
        return st.st_ino in holders
    with try_exclusive_lock(lock, create=False) as free:
        return not free


def _read_json(path: Path) -> dict | None:
    """A small JSON file's object, or None; never blocks (a FIFO named like a checkpoint is skipped)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            doc = json.loads(read_bounded(fh, _DETAIL_FILE_LIMIT))
        except (OSError, InputTooLarge, ValueError, RecursionError):
            return None
    return doc if isinstance(doc, dict) else None


def _hex(doc: dict, name: str) -> int | None:
    value = doc.get(name)
    try:
        return int(value, 16) if isinstance(value, str) else None
    except ValueError:
        return None


def _describe_state(item: Item) -> str:
    """How far the run got, from its newest checkpoint and proof progress (shown, never trusted)."""
    kind = _STEM.match(item.name).group(1)
    parts = []
    checkpoints = sorted(p for p in item.paths if p.name.endswith(".json") and _CHECKPOINT.search(p.name))
    if checkpoints:
        doc = _read_json(checkpoints[-1]) or {}
        step, t = _hex(doc, "step"), _hex(doc, "t")
        if step is None or not t:
            parts.append("newest checkpoint unreadable")
        elif step == t:
            parts.append(f"finished: step {step:,} of {t:,} (holds the answer)")
        else:
            parts.append(f"step {step:,} of {t:,} ({100 * step / t:.1f}%)")
    progress = [p for p in item.paths
                if p.name.endswith(".proof.json") or (kind == "vdf-prove" and p.name == f"{item.name}.json")]
    if progress:
        doc = _read_json(progress[0]) or {}
        if isinstance(doc.get("next_bit"), int) and isinstance(doc.get("kappa"), int) and doc["kappa"]:
            parts.append(f"proof: {doc['kappa'] - doc['next_bit']} of {doc['kappa']} bits done")
    if not checkpoints and not progress:
        # A run that has not reached its first save (or was killed before it): a lock file, maybe a plan.
        parts.append("no checkpoint yet")
    corrupt = sum(p.name.endswith(".corrupt") for p in item.paths)
    if corrupt:
        parts.append(f"{corrupt} set-aside damaged file{'s' * (corrupt > 1)}")
    return ", ".join(parts)


def _session_aliases(entries: list[Path]) -> dict[str, str]:
    """``vdf-eval-<task id>`` -> ``vdf-eval-<session id>``, from the sessions' plan files."""
    from .vdf.resume import task_id

    names = {}
    for entry in entries:
        if entry.name.startswith("vdf-eval-") and entry.name.endswith(".plan.json"):
            session = (_read_json(entry) or {}).get("session")
            if isinstance(session, str):
                names[f"vdf-eval-{task_id(session)[:16]}"] = entry.name[:len("vdf-eval-") + 16]
    return names


def _item_name(entry: Path, aliases: dict[str, str]) -> str:
    match = _STATE_FILE.match(entry.name)
    if match:
        return aliases.get(match["stem"], match["stem"])
    name = entry.name.split(TEMP_MARK)[0].lstrip(".")      # a temporary belongs to the file it replaces
    for suffix in (".lock", "-lock"):
        name = name.removesuffix(suffix)
    return name


def _group(area: str, directory: Path, holders: set[int] | None, only: str | None = None) -> list[Item]:
    """The items of one directory; with ``only``, just that item's files (no state read, no lock looked at)."""
    entries = sorted(directory.iterdir())
    aliases = _session_aliases(entries) if area in ("vdf", DIR_AREA) else {}
    items: dict[str, Item] = {}
    ours = _TUNING_FILE if area == "tuning" else _STATE_FILE if area in STATE_AREAS + (DIR_AREA,) else None
    for entry in entries:
        if ours is not None and not (ours.match(entry.name) and not entry.is_dir()):
            # Only the files the runs (or the tuning) write are items, here as in a directory of the user's:
            # anything else someone put there, or a directory, is neither listed nor ever removed.
            continue
        name = _item_name(entry, aliases)
        if only is not None and name != only:
            continue
        item = items.setdefault(name, Item(area, name))
        item.paths.append(entry)
        size, modified = _measure(entry)
        item.size += size
        item.modified = max(item.modified, modified)
    if only is not None:
        return list(items.values())
    for item in items.values():
        lock = item.lock_path
        item.in_use = lock is not None and _lock_is_held(lock, holders)
        if _STEM.match(item.name):
            item.detail = _describe_state(item)
    return list(items.values())


def scan(root: Path | None = None, areas: tuple[str, ...] = AREAS,
         errors: list[tuple[str, str]] | None = None) -> list[Item]:
    """Every item of ``areas`` under ``root`` (default :func:`cache_root`).  An area that cannot be read is
    reported in ``errors`` as (area, reason) and skipped; a missing one is empty."""
    default = root is None
    root = cache_root() if root is None else root
    holders = _flock_holders()
    items: list[Item] = []
    for area in areas:
        directory = _area_directory(area, root) if default else root / area
        try:
            items.extend(_group(area, directory, holders))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            if errors is not None:
                errors.append((area, exc.strerror or str(exc)))
    return items


def _area_directory(area: str, root: Path) -> Path:
    """Where ``area`` lives when nothing overrides it: ``root/area``, except the caches that have their
    own setting (the hardware builds: ``$MODFORGE_HW_CACHE``, or ``.cache/modforge-hw`` in a checkout; the
    benchmarks' ``anchors`` and ``rsa-keys``: under ``$MODFORGE_BENCH_CACHE``)."""
    if area == "hw":
        from .hw.paths import cache_root as hw_cache_root

        return hw_cache_root()
    if area in ("anchors", "rsa-keys"):
        from .bench.anchors import bench_cache_dir

        return bench_cache_dir(area)
    return root / area


def scan_directory(directory: Path) -> list[Item]:
    """The runs' state in a directory of the user's (a ``--checkpoint-dir``, ``--resume-dir``, or the
    ``PUZZLE.checkpoints`` beside a puzzle file); any other file there is not an item."""
    return _group(DIR_AREA, directory, _flock_holders())


def _removal_order(path: Path) -> int:
    """Checkpoints (and their set-aside copies) first, then the rest, the journal and plan last: a clean cut
    short leaves a session that still resumes, or starts over, never one missing what its checkpoints need."""
    if _CHECKPOINT.search(path.name) or TEMP_MARK in path.name:
        return 0
    if path.name.endswith((".values", ".plan.json")):
        return 2
    return 1


def remove(item: Item, min_age: float | None = None) -> bool:
    """Delete ``item`` (a cleanable area's) under its run's lock; False, deleting nothing, if a run holds
    that lock (``item.in_use`` is then set) or, with ``min_age``, its files changed more recently than that
    since they were listed."""
    if item.area not in CLEANABLE_AREAS + (DIR_AREA,):
        raise ValueError(f"{item.area} is not an area modforge cache cleans")
    lock = item.lock_path
    if lock is None:
        return _delete(item, None, min_age)
    created = not os.path.lexists(lock)         # a stopped run may have left none: take it all the same
    with try_exclusive_lock(lock) as free:
        if not free:
            item.in_use = True
            return False
        done = False
        try:
            done = _delete(item, lock, min_age, ignore=lock if created else None)
        finally:
            if done or created:
                # Safe while held: exclusive_lock takes the path's file again if it locked an unlinked one.
                lock.unlink(missing_ok=True)
    return done


def _delete(item: Item, lock: Path | None, min_age: float | None, ignore: Path | None = None) -> bool:
    """The deletion proper, under the lock: the item's files as they are now (a run may have come and gone
    since the listing; ``ignore``, the lock file taken here, is not one of them), checkpoints first."""
    if not item.paths:
        return True
    directory = item.paths[0].parent
    try:
        current = _group(item.area, directory, None, only=item.name)
    except FileNotFoundError:
        current = []
    paths = [p for p in current[0].paths if p != ignore] if current else []
    if not paths:
        return True
    measured = [_measure(p) for p in paths]
    if min_age is not None and time.time() - max(m for _, m in measured) < min_age:
        return False
    item.paths, item.size = paths, sum(size for size, _ in measured)
    for path in sorted((p for p in paths if p != lock), key=_removal_order):
        try:
            path.unlink()
        except FileNotFoundError:
            pass
    fsync_dir(directory)
    return True

