"""Checkpoints of a solve: crash-safe, self-checking, the last two kept.

One file per checkpoint, ``timelock-<task id, 16 hex>-<step, 20 digits>.json``
(format ``modforge-timelock-checkpoint``, version 1; fields in
docs/timelock.md).  ``modforge vdf eval`` keeps its resumable state with the
same store under the kind ``vdf-eval`` (``vdf-eval-<id>-<step>.json``, format
``modforge-vdf-eval-checkpoint``; docs/vdf.md).  Only values that passed the error check are written.  Each
file carries SHA-256 over its own canonical contents and the full task id, so a
flipped byte, a truncated write or a checkpoint of another puzzle is detected
on reading; such a file is reported, renamed to ``*.corrupt`` (kept for
inspection, never read again) and the next older checkpoint is used.  The
SHA-256 protects against accidents, not against someone who can rewrite the
file (see the security notes).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from ..arith.base import ParameterError
from ..fileio import InputTooLarge, atomic_write, exclusive_lock, read_bounded, remove_stale_temps, user_cache_dir
from .puzzle import SquaringTask, canonical_json

CHECKPOINT_FORMAT = "modforge-timelock-checkpoint"
CHECKPOINT_VERSION = 1
KEEP = 2
MAX_FILE_BYTES = 1 << 20     # a 16384-bit value and its fields are a few KiB


class CheckpointCorrupt(Exception):
    """A checkpoint file failed its integrity or consistency checks; ``reason`` says which."""

    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class Checkpoint:
    step: int
    value: int
    path: Path
    doc: dict[str, Any]


def cache_dir() -> Path:
    return user_cache_dir("timelock")


def default_checkpoint_dir(puzzle_path: Path | None) -> Path:
    """``<puzzle>.checkpoints/`` next to a puzzle file when that directory is writable, else the user cache.
    A symbolic link leads to the file it names: one directory, whichever path the puzzle is given by."""
    if puzzle_path is not None:
        real = puzzle_path.resolve()
        if os.access(real.parent, os.W_OK):
            here = real.parent / f"{real.name}.checkpoints"
            # Before 2026-11-22 a link's own name was used: a solve started that way goes on where it is.
            legacy = real.parent / f"{puzzle_path.name}.checkpoints"
            if legacy != here and legacy.is_dir() and not here.exists():
                return legacy
            return here
    return cache_dir()


def digest(doc: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json({k: v for k, v in doc.items() if k != "sha256"})).hexdigest()


class CheckpointStore:
    """The checkpoints of one squaring task in one directory."""

    def __init__(self, directory: str | Path, task: SquaringTask, keep: int = KEEP, kind: str = "timelock",
                 noun: str = "puzzle"):
        self.directory = Path(directory)
        self.noun = noun            # what the task is, in messages: a puzzle, a VDF evaluation
        self.task = task
        self.keep = max(2, keep)
        self.format = CHECKPOINT_FORMAT if kind == "timelock" else f"modforge-{kind}-checkpoint"
        self.prefix = f"{kind}-{task.id[:16]}-"
        self._name = re.compile(re.escape(self.prefix) + r"([0-9]{20})\.json")     # ASCII digits only

    def path_for(self, step: int) -> Path:
        return self.directory / f"{self.prefix}{step:020d}.json"

    # -- locking -------------------------------------------------------------------------------------------
    @contextmanager
    def lock(self) -> Iterator[None]:
        """Exclusive lock for one solver per task and directory (released by the kernel even on kill -9)."""
        self.ensure_dir()
        if not os.access(self.directory, os.W_OK | os.X_OK):
            raise ParameterError("checkpoint-dir", f"cannot write in {str(self.directory)!r} (permission denied)")
        with exclusive_lock(self.directory / f"{self.prefix}lock", "checkpoint-dir",
                            f"another solver is working on this {self.noun} in {str(self.directory)!r}"):
            remove_stale_temps(self.directory, self.prefix)
            yield

    def ensure_dir(self) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ParameterError("checkpoint-dir", f"cannot create {str(self.directory)!r}: "
                                                   f"{exc.strerror or exc}") from None

    # -- reading -------------------------------------------------------------------------------------------
    def files(self) -> list[tuple[int, Path]]:
        """(step in the name, path) of every checkpoint file of this task, newest first."""
        try:
            entries = list(self.directory.iterdir())
        except (FileNotFoundError, NotADirectoryError):
            return []
        out = []
        for entry in entries:
            m = self._name.fullmatch(entry.name)
            if m:
                out.append((int(m.group(1)), entry))
        return sorted(out, reverse=True)

    def quarantined(self) -> list[Path]:
        """This task's checkpoint files found corrupted earlier (``*.corrupt``), oldest name first."""
        try:
            entries = list(self.directory.iterdir())
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(e for e in entries if e.name.endswith(".json.corrupt") and e.name.startswith(self.prefix))

    def read(self, path: Path) -> Checkpoint:
        """Parse and check one file; :class:`CheckpointCorrupt` says what is wrong with it."""
        try:
            raw = read_bounded(path, MAX_FILE_BYTES)
        except InputTooLarge as exc:
            raise CheckpointCorrupt(path, f"too large: more than the {exc.limit} bytes a checkpoint may have") from None
        except OSError as exc:
            raise CheckpointCorrupt(path, f"unreadable: {exc.strerror or exc}") from None
        try:
            doc = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CheckpointCorrupt(path, f"not valid JSON ({exc.msg if hasattr(exc, 'msg') else exc})") from None
        except RecursionError:
            raise CheckpointCorrupt(path, "not valid JSON (nested too deeply)") from None
        except ValueError as exc:          # e.g. a decimal number past Python's int conversion limit
            raise CheckpointCorrupt(path, f"not valid JSON ({exc})") from None
        if not isinstance(doc, dict):
            raise CheckpointCorrupt(path, "not a JSON object")
        if doc.get("format") != self.format or type(doc.get("version")) is not int \
                or doc["version"] != CHECKPOINT_VERSION:
            raise CheckpointCorrupt(path, f"not a {self.format} version {CHECKPOINT_VERSION} file")
        if doc.get("sha256") != digest(doc):
            raise CheckpointCorrupt(path, "SHA-256 of the contents does not match (the file was damaged)")
        if doc.get("task_id") != self.task.id:
            raise CheckpointCorrupt(path, f"belongs to another {self.noun} (task id differs)")
        try:
            step = int(doc["step"], 16)
            value = int(doc["value"], 16)
            t = int(doc["t"], 16)
        except (KeyError, TypeError, ValueError):
            raise CheckpointCorrupt(path, "step, value or t missing or not 0x-hex") from None
        m = self._name.fullmatch(path.name)
        if m is None or int(m.group(1)) != step:
            raise CheckpointCorrupt(path, "step in the file name differs from the step inside")
        if t != self.task.t:
            raise CheckpointCorrupt(path, f"t is {t}, this {self.noun}'s t is {self.task.t}")
        if not 1 <= step <= t:
            raise CheckpointCorrupt(path, f"step {step} is outside 1..t")
        if not 0 < value < self.task.n or math.gcd(value, self.task.n) != 1:
            raise CheckpointCorrupt(path, "value is not an invertible residue modulo n")
        return Checkpoint(step=step, value=value, path=path, doc=doc)

    def latest(self, quarantine: bool = True) -> tuple[Checkpoint | None, list[CheckpointCorrupt]]:
        """The newest good checkpoint and the bad ones met on the way (renamed ``*.corrupt`` when ``quarantine``)."""
        rejected: list[CheckpointCorrupt] = []
        for _, path in self.files():
            try:
                return self.read(path), rejected
            except CheckpointCorrupt as exc:
                if not path.exists():      # pruned by a running solver between listing and reading
                    continue
                rejected.append(exc)
                if quarantine:
                    try:
                        os.replace(path, path.with_name(path.name + ".corrupt"))
                    except OSError:
                        pass
        return None, rejected

    # -- writing -------------------------------------------------------------------------------------------
    def save(self, step: int, value: int, extra: dict[str, Any] | None = None) -> Path:
        """Write the checkpoint for ``step`` atomically, then drop all but the newest ``keep``."""
        doc: dict[str, Any] = {
            "format": self.format, "version": CHECKPOINT_VERSION, "task_id": self.task.id,
            "bits": self.task.bits, "t": hex(self.task.t), "step": hex(step), "value": hex(value),
            "written": datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }
        if extra:
            doc.update(extra)
        doc["sha256"] = digest(doc)
        path = self.path_for(step)
        atomic_write(path, (json.dumps(doc, indent=1) + "\n").encode("ascii"))
        self.prune()
        return path

    def prune(self) -> None:
        """Delete all but the newest ``keep`` checkpoints (a kill between a write and its prune leaves one more)."""
        for _, old in self.files()[self.keep:]:
            try:
                old.unlink()
            except OSError:
                pass

    def clear(self) -> int:
        """Move every checkpoint of this task aside (``*.discarded``, the quarantined ones too): ``--restart``."""
        moved = 0
        for path in [p for _, p in self.files()] + self.quarantined():
            try:
                os.replace(path, path.with_name(path.name + ".discarded"))
                moved += 1
            except OSError:
                pass
        return moved
