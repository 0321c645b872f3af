"""A Wesolowski proof that survives Ctrl-C, kill -9 and power loss.

Above ``wesolowski.DIGIT_BUDGET_BITS`` the prover walks the quotient's bits by
ranges from the top and keeps one group element between them, Horner's
accumulator ``acc`` (:func:`modforge.vdf.wesolowski._prove_by_ranges`).  That
pair (the next range's top bit ``b``, ``acc``) is the whole state of the proof,
so it is written atomically every ``interval`` seconds, and a rerun goes on from
the newest one: at ``t = 2^40`` and 2048 bits the proof is hours of work.

The file names everything the pair depends on (the statement's key, the
challenge prime ``l``, ``kappa``, the checkpoint count and the range width) and
carries a SHA-256 of its contents.  One that does not match, or is damaged, is
reported and set aside (``*.corrupt``); one made for another plan or range width is left to be
replaced; either way the proof starts from the top.  A save that fails (a full disk) is reported
once, and the proof goes on and tries again at the next interval.  Nothing
loaded is trusted beyond that: the finished proof is verified, and one that fails
after a resumed start is computed again from the top
(:func:`modforge.vdf.api.prove`).  Format in docs/vdf.md ("Resumable proofs").
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, Callable

from ..fileio import InputTooLarge, atomic_write, read_bounded
from ..timelock.puzzle import canonical_json

FORMAT = "modforge-vdf-proof-progress"
VERSION = 1
MAX_FILE_BYTES = 1 << 20        # the largest sound file (a 16384-bit acc) is under 5 KiB

# (kind, message): "state" for news; warnings "rejected" (a file set aside, a resumed proof that failed)
# and "save-failed".
Notify = Callable[[str, str], None]
OnRange = Callable[[int, int], None]    # (bits done, kappa) after each range


def _digest(doc: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json({k: v for k, v in doc.items() if k != "sha256"})).hexdigest()


def statement_key(modulus: int, x: int, t: int, y: int, kappa: int, checkpoints: int) -> str:
    """The key of a proof computed from a checkpoints file (no evaluation session)."""
    return hashlib.sha256(canonical_json({"tag": "modforge/vdf/v1/proof-statement", "modulus": hex(modulus),
                                          "x": hex(x), "t": hex(t), "y": hex(y), "kappa": kappa,
                                          "checkpoints": checkpoints})).hexdigest()


class ProofProgress:
    """Where a range-by-range Wesolowski proof stands, kept in ``path``.

    The prover calls :meth:`load` once with its parameters and :meth:`save` after every range;
    saves closer than ``interval`` seconds to the previous one are skipped (a range at ``t = 2^40``
    takes seconds, at ``t = 2^29`` a tenth of one)."""

    def __init__(self, path: str | Path, key: str, modulus: int, *, interval: float = 5.0,
                 notify: Notify | None = None, on_range: OnRange | None = None):
        self.path = Path(path)
        self.key = key
        self.modulus = modulus
        self.interval = interval
        self.notify = notify or (lambda kind, text: None)
        self.on_range = on_range or (lambda done, total: None)
        self.resumed_at: int | None = None      # the top bit a run went on from (None: from the top)
        self.saves = 0
        self.save_failed = False
        self._last_save = time.monotonic()

    def _fields(self, l: int, kappa: int, checkpoints: int, width: int) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "proof": "wesolowski", "key": self.key,
                "l": hex(l), "kappa": kappa, "checkpoints": checkpoints, "width": width}

    def load(self, l: int, kappa: int, checkpoints: int, width: int) -> tuple[int, int] | None:
        """``(b, acc)`` saved by an earlier run of this proof, or None to start from the top."""
        self._last_save = time.monotonic()
        self.resumed_at = None
        try:
            raw = read_bounded(self.path, MAX_FILE_BYTES)
        except FileNotFoundError:
            return None
        except InputTooLarge as exc:
            return self._reject(exc)
        except OSError as exc:
            # The proof needs no disk: unreadable saved state only means starting from the top.
            self.notify("rejected", f"cannot read the proof's progress {self.path} ({exc.strerror or exc}); "
                                    f"the proof starts from the top")
            return None
        try:
            try:
                doc = json.loads(raw)
            except RecursionError:
                raise ValueError("not JSON this reader takes (nested too deeply)") from None
            except ValueError as exc:
                raise ValueError(f"not JSON ({exc})") from None
            if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
                raise ValueError(f"not a {FORMAT} version {VERSION} file")
            if doc.get("sha256") != _digest(doc):
                raise ValueError("SHA-256 of the contents does not match (the file was damaged)")
            for name, value in self._fields(l, kappa, checkpoints, width).items():
                if doc.get(name) != value:
                    # Sound, but made for another plan or range width (a changed digit budget): not
                    # damage, so not set aside; the first save of this walk replaces it.
                    self.notify("state", f"{self.path} holds the progress of another walk (its {name} is "
                                         f"{doc.get(name)!r}, this proof's is {value!r}); the proof starts "
                                         f"from the top")
                    return None
            b, acc_text = doc["next_bit"], doc["acc"]
            if type(b) is not int or not 0 < b < kappa or (kappa - b) % width:
                raise ValueError(f"next_bit {b!r} is not a range edge below kappa = {kappa}")
            if not isinstance(acc_text, str) or not acc_text.startswith("0x"):
                raise ValueError("acc is not a 0x-hex string")
            acc = int(acc_text, 16)
            if not 0 < acc < self.modulus:
                raise ValueError("acc is not a residue modulo N")
        except (ValueError, KeyError, TypeError) as exc:
            return self._reject(exc)
        self.resumed_at = b
        self.notify("state", f"the proof goes on from {self.path}: bits {b} .. 0 of {kappa} left per checkpoint")
        return b, acc

    def _reject(self, reason: Exception) -> None:
        """A damaged file: reported, set aside, and the proof starts from the top (returns None)."""
        aside = self._set_aside()
        self.notify("rejected", f"proof progress {self.path} not used ({reason}); "
                                f"{'moved to ' + str(aside) + ', ' if aside else ''}the proof starts from the top")

    def save(self, l: int, kappa: int, checkpoints: int, width: int, b: int, acc: int) -> None:
        """Record that the ranges above bit ``b`` are in ``acc`` (skipped within ``interval`` of the last)."""
        self.on_range(kappa - b, kappa)
        now = time.monotonic()
        if now - self._last_save < self.interval:
            return
        doc = self._fields(l, kappa, checkpoints, width)
        doc.update(next_bit=b, acc=hex(acc))
        doc["sha256"] = _digest(doc)
        self._last_save = now
        try:
            atomic_write(self.path, json.dumps(doc, indent=1) + "\n")
        except OSError as exc:
            # The proof needs no disk: go on (the last good file stays) and try again next interval;
            # say so once, and again when saving works again.
            if not self.save_failed:
                self.notify("save-failed", f"cannot save the proof's progress to {self.path} "
                                           f"({exc.strerror or exc}); going on, trying again every interval")
            self.save_failed = True
            return
        if self.save_failed:
            self.notify("state", f"the proof's progress is saved again to {self.path}")
            self.save_failed = False
        self.saves += 1

    def clear(self) -> None:
        """Delete the saved state (the proof is done, or it is to start from the top)."""
        self.path.unlink(missing_ok=True)

    def _set_aside(self) -> Path | None:
        aside = self.path.with_name(self.path.name + ".corrupt")
        try:
            self.path.replace(aside)
        except OSError:
            return None
        return aside


__all__ = ["ProofProgress", "statement_key"]
