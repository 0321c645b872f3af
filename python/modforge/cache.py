"""What modforge keeps under ``$XDG_CACHE_HOME/modforge`` (``~/.cache/modforge``), listed and cleaned.

Long runs keep their state there so that they resume: time-lock checkpoints (``timelock``), VDF
evaluation sessions and proof progress (``vdf``). A run that finishes removes its own; an abandoned one
stays until it is resumed or cleaned here (a VDF session's journal holds one group element per target
and can reach hundreds of MB). Beside them sit rebuildable caches: the machine's tuning (``tuning``),
the benchmark anchors' builds (``anchors``), generated hardware (``hw``), benchmark keys (``rsa-keys``)
and benchmark results (``results``).

An *item* is what belongs together: every file of one task or session (checkpoints, journal, plan,
lock, set-aside ``*.corrupt`` copies, temporaries), or one entry of another area with its lock file.
An item whose lock another process holds is in use: it is listed as such and never removed. Removal
happens while holding that lock, so a run that starts meanwhile fails at once instead of losing files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from .fileio import InputTooLarge, fsync_dir, read_bounded, user_cache_dir

# The state a run resumes from (cleaning it loses that run's progress); the rest is rebuilt on demand.
STATE_AREAS = ("timelock", "vdf")
REBUILDABLE_AREAS = ("tuning", "anchors", "hw", "rsa-keys", "results")
AREAS = STATE_AREAS + REBUILDABLE_AREAS

# timelock-<task 16 hex>-..., vdf-eval-<session or task 16 hex>..., vdf-prove-<statement 16 hex>...,
# with a leading dot for atomic_write's temporaries.
_STATE_NAME = re.compile(r"^\.?((?:timelock|vdf-eval|vdf-prove)-[0-9a-f]{16})")
_DETAIL_FILE_LIMIT = 1 << 20
AREA_LOCK = ".lock"


@dataclass
class Item:
    area: str
    name: str
    paths: list[Path] = field(default_factory=list)
    size: int = 0
    modified: float = 0.0       # newest modification time of anything in it
    in_use: bool = False
    detail: str = ""
    locks: list[Path] = field(default_factory=list)     # its own lock files, and its area's if it has one

    def as_dict(self) -> dict:
        return {"area": self.area, "name": self.name, "files": len(self.paths), "bytes": self.size,
                "modified": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.modified)),
                "in_use": self.in_use, "detail": self.detail, "paths": [str(p) for p in self.paths]}


def cache_root() -> Path:
    return user_cache_dir("")


def _measure(path: Path) -> tuple[int, float]:
    """(bytes, newest mtime) of a file, or of a directory and everything under it; links not followed."""
    try:
        st = path.lstat()
    except OSError:
        return 0, 0.0
    size, newest = st.st_size, st.st_mtime
    if path.is_dir() and not path.is_symlink():
        for dirpath, dirnames, filenames in os.walk(path):
            for name in dirnames + filenames:
                try:
                    st = os.lstat(os.path.join(dirpath, name))
                except OSError:
                    continue
                size += st.st_size if name in filenames else 0
                newest = max(newest, st.st_mtime)
    return size, newest


def _is_lock(path: Path) -> bool:
    return path.name.endswith((".lock", "-lock"))


@contextmanager
def _held(locks: list[Path]) -> Iterator[bool]:
    """Take every lock file of an item without waiting; yields False (holding none) if any is busy."""
    try:
        import fcntl
    except ImportError:          # not POSIX: no locks to respect
        yield True
        return
    with ExitStack() as stack:
        for lock in locks:
            try:
                fd = os.open(lock, os.O_RDWR)
            except OSError:
                continue                      # gone, or not ours to open: nothing holds it through us
            stack.callback(os.close, fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
        yield True


def _read_json(path: Path) -> dict | None:
    try:
        doc = json.loads(read_bounded(path, _DETAIL_FILE_LIMIT))
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
    """One line on how far the task got, from its newest sound-looking file (never trusted beyond that)."""
    kind = item.name.rsplit("-", 1)[0]
    checkpoints = sorted(p for p in item.paths if re.search(r"-\d{20}\.json$", p.name))
    parts = []
    if checkpoints:
        doc = _read_json(checkpoints[-1]) or {}
        step, t = _hex(doc, "step"), _hex(doc, "t")
        if step is not None and t:
            parts.append(f"step {step:,} of {t:,} ({100 * step / t:.1f}%)")
        else:
            parts.append("checkpoint unreadable")
    progress = [p for p in item.paths if p.name.endswith(".proof.json") or
                (kind == "vdf-prove" and p.name == f"{item.name}.json")]
    if progress:
        doc = _read_json(progress[0]) or {}
        if isinstance(doc.get("next_bit"), int) and isinstance(doc.get("kappa"), int) and doc["kappa"]:
            parts.append(f"proof: {doc['kappa'] - doc['next_bit']} of {doc['kappa']} bits done")
    corrupt = sum(p.name.endswith(".corrupt") for p in item.paths)
    if corrupt:
        parts.append(f"{corrupt} set-aside damaged file{'s' * (corrupt > 1)}")
    return ", ".join(parts)


def _session_checkpoint_names(entries: list[Path]) -> dict[str, str]:
    """``vdf-eval-<task id>`` -> ``vdf-eval-<session id>``: a session's checkpoints are named by a task id
    derived from the full session id, which its plan file records."""
    from .vdf.resume import task_id

    names = {}
    for entry in entries:
        if entry.name.startswith("vdf-eval-") and entry.name.endswith(".plan.json"):
            session = (_read_json(entry) or {}).get("session")
            if isinstance(session, str):
                names[f"vdf-eval-{task_id(session)[:16]}"] = entry.name[:len("vdf-eval-") + 16]
    return names


def _group(area: str, directory: Path) -> list[Item]:
    try:
        entries = sorted(directory.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    aliases = _session_checkpoint_names(entries) if area == "vdf" else {}
    # An area-wide lock (the anchors' builds hold ``.lock`` while they run) covers every item in it.
    area_lock = [e for e in entries if e.name == AREA_LOCK]
    items: dict[str, Item] = {}
    for entry in entries:
        if entry.name == AREA_LOCK:
            continue
        match = _STATE_NAME.match(entry.name)
        if match:
            name = aliases.get(match.group(1), match.group(1))
        else:
            name = entry.name.lstrip(".")
            for suffix in (".lock", "-lock"):
                name = name.removesuffix(suffix)
        item = items.setdefault(name, Item(area, name))
        item.paths.append(entry)
        size, modified = _measure(entry)
        item.size += size
        item.modified = max(item.modified, modified)
    for item in items.values():
        item.locks = area_lock + [p for p in item.paths if _is_lock(p)]
        with _held(item.locks) as free:
            item.in_use = not free
        if _STATE_NAME.match(item.name):
            item.detail = _describe_state(item)
    return list(items.values())


def scan(root: Path | None = None, areas: tuple[str, ...] | None = None) -> list[Item]:
    """Every item under ``root`` (default :func:`cache_root`), in the given areas (default all there)."""
    root = cache_root() if root is None else root
    if areas is None:
        try:
            present = sorted(p.name for p in root.iterdir() if p.is_dir())
        except (FileNotFoundError, NotADirectoryError):
            present = []
        areas = tuple(a for a in AREAS if a in present) + tuple(a for a in present if a not in AREAS)
    items: list[Item] = []
    for area in areas:
        items.extend(_group(area, root / area))
    return items


def remove(item: Item) -> bool:
    """Delete ``item`` while holding its locks (its lock files last; an area's lock stays); False, deleting
    nothing, if it is in use."""
    with _held(item.locks) as free:
        if not free:
            item.in_use = True
            return False
        for path in sorted(item.paths, key=_is_lock):
            try:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
            except FileNotFoundError:
                pass
        if item.paths:
            fsync_dir(item.paths[0].parent)
    return True
