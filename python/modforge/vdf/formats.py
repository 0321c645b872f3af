"""Versioned JSON files: proofs and checkpoints; strict parsing; atomic writes.

Proof (``format = "modforge-vdf-proof"``, ``version = 1``)::

    {"format": "modforge-vdf-proof", "version": 1,
     "type": "wesolowski" | "pietrzak",
     "modulus": ELEM, "bits": n, "x": ELEM, "t": int, "y": ELEM,
     "proof": {"pi": ELEM}                   (wesolowski)
              {"mu": [ELEM, ...]}            (pietrzak, exactly ceil(log2 t) entries)}

``ELEM`` is ``"0x"`` followed by exactly ``2 * ceil(n/8)`` lowercase hex digits:
a fixed-width big-endian number (the modulus is written the same way).
Every field is required, no other field is allowed, keys may not repeat,
``t`` and ``bits`` are JSON integers; anything else is rejected with a reason.

Checkpoints (``format = "modforge-vdf-checkpoints"``, ``version = 1``): the
statement fields as above, ``"wesolowski": {"kappa": int} | null``,
``"pietrzak": {"depth": int} | null`` and ``"values": {"<position>": ELEM}``
holding ``|x^(2^p)|`` for every position the plans need.
"""

from __future__ import annotations

import json
import sys
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..arith.base import ParameterError
from ..fileio import InputTooLarge, atomic_write, read_bounded, write_output
from ..inttext import brief, decimal_to_int
from .evaluation import MAX_T, Evaluation
from .fiat_shamir import PROOF_TYPES
from .group import MAX_MODULUS_BITS, Group, Reject
from .plan import CostModel, PietrzakPlan, WesolowskiPlan, best_window, pietrzak_lengths

PROOF_FORMAT = "modforge-vdf-proof"
CHECKPOINT_FORMAT = "modforge-vdf-checkpoints"
VERSION = 1
MAX_PROOF_FILE_BYTES = 16 << 20

_HEX = re.compile(r"[0-9a-f]*")
_POSITION = re.compile(r"0|[1-9][0-9]{0,19}")
PLAN_BUILD_LIMIT = 1 << 22      # subset sums a Pietrzak plan read from a file may list whatever the file holds
STATEMENT_FIELDS = ("modulus", "bits", "x", "t", "y")
PROOF_FIELDS = ("format", "version", "type", *STATEMENT_FIELDS, "proof")


@dataclass(frozen=True)
class Proof:
    """A proof that ``|x^(2^t) mod modulus| = y``; ``pi`` for Wesolowski, ``mu`` for Pietrzak."""

    type: str
    modulus: int
    x: int
    t: int
    y: int
    pi: int | None = None
    mu: tuple[int, ...] | None = None

    @property
    def group(self) -> Group:
        return Group(self.modulus)

    def to_document(self) -> dict[str, Any]:
        g = self.group
        body: dict[str, Any]
        if self.type == "wesolowski":
            assert self.pi is not None
            body = {"pi": g.to_hex(self.pi)}
        elif self.type == "pietrzak":
            assert self.mu is not None
            body = {"mu": [g.to_hex(m) for m in self.mu]}
        else:
            raise ValueError(f"unknown proof type {self.type!r}")
        return {"format": PROOF_FORMAT, "version": VERSION, "type": self.type, "modulus": g.to_hex(self.modulus),
                "bits": g.bits, "x": g.to_hex(self.x), "t": self.t, "y": g.to_hex(self.y), "proof": body}

    def to_json(self) -> str:
        return json.dumps(self.to_document(), indent=1) + "\n"

    @classmethod
    def from_document(cls, doc: Any) -> "Proof":
        """Parse a proof document; raise Reject with the first problem found."""
        _require_object(doc, "the document")
        fmt = doc.get("format")
        if fmt is None:
            raise Reject("missing field 'format' (not a modforge VDF proof)")
        if fmt != PROOF_FORMAT:
            raise Reject(f"format is {brief(fmt)}, expected {PROOF_FORMAT!r}")
        _check_version(doc)
        _check_fields(doc, PROOF_FIELDS, "")
        ptype = doc["type"]
        if ptype not in PROOF_TYPES:
            raise Reject(f"unknown proof type {brief(ptype)} (expected one of: {', '.join(PROOF_TYPES)})")
        group, x, t, y = parse_statement(doc)
        body = doc["proof"]
        _require_object(body, "field 'proof'")
        if ptype == "wesolowski":
            _check_fields(body, ("pi",), "proof.")
            return cls(ptype, group.modulus, x, t, y, pi=parse_element("proof.pi", body["pi"], group.nbytes))
        _check_fields(body, ("mu",), "proof.")
        mus = body["mu"]
        if not isinstance(mus, list):
            raise Reject("field 'proof.mu' must be a JSON list")
        return cls(ptype, group.modulus, x, t, y,
                   mu=tuple(parse_element(f"proof.mu[{i}]", m, group.nbytes) for i, m in enumerate(mus)))


# ------------------------------------------------------------------------------------------------ parsing


def _require_object(value: Any, what: str) -> None:
    if not isinstance(value, dict):
        raise Reject(f"{what} must be a JSON object, got {_json_type(value)}")


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number with a fraction or exponent", type(None): "null"}.get(type(value), type(value).__name__)


def _check_version(doc: dict) -> None:
    if "version" not in doc:
        raise Reject("missing field 'version'")
    version = doc["version"]
    if not _is_json_int(version):
        raise Reject(f"field 'version' must be a JSON integer, got {_json_type(version)}")
    if version != VERSION:
        raise Reject(f"unknown version {brief(version)} (this build reads version {VERSION})")


def _check_fields(doc: dict, fields: tuple[str, ...], prefix: str) -> None:
    # A dict built in Python (the API takes one) may have keys JSON cannot: name the first, do not sort them.
    odd = [k for k in doc if not isinstance(k, str)]
    if odd:
        where = f"field '{prefix[:-1]}'" if prefix else "the document"
        raise Reject(f"{where} has a key that is not a string: {repr(odd[0])[:40]} ({type(odd[0]).__name__})")
    missing = [f for f in fields if f not in doc]
    if missing:
        raise Reject("missing field" + ("s " if len(missing) > 1 else " ") + ", ".join(f"'{prefix}{f}'" for f in missing))
    extra = sorted(set(doc) - set(fields))
    if extra:
        raise Reject("unexpected field" + ("s " if len(extra) > 1 else " ") + ", ".join(f"'{prefix}{f}'" for f in extra))


def _is_json_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_element(name: str, value: Any, nbytes: int) -> int:
    """``0x`` + exactly ``2 * nbytes`` lowercase hex digits -> int; Reject naming ``name`` otherwise."""
    want = f"0x and exactly {2 * nbytes} lowercase hex digits ({nbytes} bytes)"
    if not isinstance(value, str):
        raise Reject(f"field '{name}' must be a hex string ({want}), got {_json_type(value)}")
    if not value.startswith("0x"):
        raise Reject(f"field '{name}' must start with 0x ({want})")
    digits = value[2:]
    if not _HEX.fullmatch(digits):
        bad = next(c for c in digits if c not in "0123456789abcdef")
        raise Reject(f"field '{name}' is not lowercase hex (found {bad!r}; expected {want})")
    if len(digits) != 2 * nbytes:
        kind = "truncated" if len(digits) < 2 * nbytes else "oversized"
        raise Reject(f"field '{name}' is {kind}: {len(digits)} hex digits, expected exactly {2 * nbytes} "
                     f"({nbytes} bytes = ceil(bits/8))")
    return int(digits, 16)


def parse_statement(doc: dict) -> tuple[Group, int, int, int]:
    """``(group, x, t, y)`` from the statement fields (encodings only; membership is the verifier's)."""
    bits = doc["bits"]
    if not _is_json_int(bits) or bits < 1:
        raise Reject(f"field 'bits' must be a positive JSON integer, got {brief(bits)}")
    if bits > MAX_MODULUS_BITS:
        # Before any width is derived from it (a 5000-digit 'bits' once reached an f-string: a traceback).
        raise Reject(f"field 'bits' is {brief(bits)}, more than the {MAX_MODULUS_BITS} bits a modulus may have")
    nbytes = (bits + 7) // 8
    modulus = parse_element("modulus", doc["modulus"], nbytes)
    if modulus.bit_length() != bits:
        raise Reject(f"field 'modulus' has {modulus.bit_length()} bits but field 'bits' says {brief(bits)}")
    try:
        group = Group(modulus)
    except ParameterError as exc:
        raise Reject(f"modulus {exc.problem}") from None
    t = doc["t"]
    if not _is_json_int(t) or not 1 <= t <= MAX_T:
        raise Reject(f"field 't' must be a JSON integer from 1 to 2^64 - 1, got {brief(t)}")
    x = parse_element("x", doc["x"], nbytes)
    y = parse_element("y", doc["y"], nbytes)
    return group, x, t, y


# ------------------------------------------------------------------------------------------------ files


def _strict_object(pairs: list[tuple[str, Any]]) -> dict:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise Reject(f"duplicate field {key!r}")
        out[key] = value
    return out


def _no_constants(name: str) -> Any:
    raise Reject(f"{name} is not a JSON number")


def read_json(path: str | os.PathLike, *, limit: int = MAX_PROOF_FILE_BYTES, what: str = "FILE",
              stdin: bool = False) -> Any:
    """Load a JSON file.  Unreadable (missing, too large, not UTF-8 JSON): ParameterError (exit 2).

    Duplicate keys and NaN/Infinity raise Reject: the file is JSON-ish but not a valid document.
    With ``stdin``, ``-`` reads standard input.
    """
    from_stdin = stdin and str(path) == "-"
    p = "standard input" if from_stdin else Path(path)
    try:
        if from_stdin:
            if sys.stdin is None:
                raise ParameterError(what, "there is no standard input to read")
            raw = read_bounded(sys.stdin.buffer, limit, "standard input")
        else:
            size = p.stat().st_size
            if size > limit:
                raise ParameterError(what, f"{p}: {size} bytes, more than the {limit}-byte limit for this file")
            raw = read_bounded(p, limit)
        text = raw.decode("utf-8")
    except ParameterError:
        raise
    except InputTooLarge as exc:
        raise ParameterError(what, str(exc)) from None
    except MemoryError:
        raise ParameterError(what, f"{p} is too large to read in the memory this process may use") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ParameterError(what, f"cannot read {p}: {reason}") from None
    try:
        # Integers of any length (Python's own conversion stops at 4300 digits): one too large for its
        # field is an invalid document, refused by that field's check.
        return json.loads(text, object_pairs_hook=_strict_object, parse_constant=_no_constants,
                          parse_int=decimal_to_int)
    except MemoryError:
        raise ParameterError(what, f"{p} is too large to read in the memory this process may use") from None
    except json.JSONDecodeError as exc:
        raise ParameterError(what, f"{p} is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise ParameterError(what, f"{p} is not JSON this reader accepts (nested too deeply)") from None
    except ValueError as exc:
        raise ParameterError(what, f"{p} is not JSON this reader accepts ({exc})") from None


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` so that ``path`` holds either its old content or all of the new one, even after a crash."""
    atomic_write(path, text)

def write_proof(path: str | os.PathLike, proof: Proof, param: str = "out", overwrite: bool = True) -> None:
    """The proof file, atomically; a failure (``path`` exists without ``overwrite``, a full disk) is a
    ParameterError naming ``param``."""
    write_output(path, proof.to_json(), param, overwrite=overwrite)


def read_proof(path: str | os.PathLike) -> Proof:
    """ParameterError if the file cannot be read as JSON; Reject if it is not a valid proof document."""
    return Proof.from_document(read_json(path))


# ------------------------------------------------------------------------------------------------ checkpoints


def checkpoints_document(ev: Evaluation) -> dict[str, Any]:
    g = ev.group
    return {"format": CHECKPOINT_FORMAT, "version": VERSION, "modulus": g.to_hex(g.modulus), "bits": g.bits,
            "x": g.to_hex(ev.x), "t": ev.t, "y": g.to_hex(ev.y),
            "wesolowski": None if ev.wesolowski is None else {"kappa": ev.wesolowski.kappa},
            "pietrzak": None if ev.pietrzak is None else {"depth": ev.pietrzak.depth},
            "values": {str(p): g.to_hex(v) for p, v in sorted(ev.values.items())}}


def write_checkpoints(path: str | os.PathLike, ev: Evaluation, param: str = "checkpoints",
                      overwrite: bool = True) -> None:
    """As :func:`write_proof`, for the checkpoints file."""
    write_output(path, json.dumps(checkpoints_document(ev), separators=(",", ":")) + "\n", param,
                 overwrite=overwrite)


def checkpoints_file_limit() -> int:
    """The largest checkpoints file read: a sixteenth of this machine's memory (reading holds the pieces
    and their join, then the text and the parsed numbers, several times the file; the file is about twice
    the ``--memory`` that wrote it), at least 256 MiB, at most 64 GiB.  With the old fixed 64 GiB a file
    with no size (``/dev/zero``, a pipe) was read until the kernel killed the process (22 GB on a 24 GB
    machine)."""
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        memory = 1 << 36
    return max(256 << 20, min(1 << 36, memory // 16))


def read_checkpoints(path: str | os.PathLike) -> Evaluation:
    """An Evaluation from a checkpoints file; ParameterError (exit 2) for any problem with the file."""
    try:
        return _evaluation_from_document(read_json(path, limit=checkpoints_file_limit(), what="checkpoints"))
    except Reject as exc:
        raise ParameterError("checkpoints", f"{path}: {exc.reason}") from None


def _evaluation_from_document(doc: Any) -> Evaluation:
    _require_object(doc, "the document")
    if doc.get("format") != CHECKPOINT_FORMAT:
        raise Reject(f"format is {brief(doc.get('format'))}, expected {CHECKPOINT_FORMAT!r}")
    _check_version(doc)
    _check_fields(doc, ("format", "version", *STATEMENT_FIELDS, "wesolowski", "pietrzak", "values"), "")
    group, x, t, y = parse_statement(doc)
    for name, value in (("x", x), ("y", y)):
        group.check(name, value, square=name == "y", base=name == "x")
    values_doc = doc["values"]
    _require_object(values_doc, "field 'values'")
    # A plan is built before its positions are looked up, and its size is bounded by the file's own: a plan
    # far larger than the values it could find (kappa = 1 or depth = 40 at t = 2^40) is refused before it
    # fills the memory.  Missing positions of a plan that fits are reported later, by require_positions.
    stored = len(values_doc)
    wes = pie = None
    if doc["wesolowski"] is not None:
        _require_object(doc["wesolowski"], "field 'wesolowski'")
        _check_fields(doc["wesolowski"], ("kappa",), "wesolowski.")
        kappa = doc["wesolowski"]["kappa"]
        if not _is_json_int(kappa) or not 1 <= kappa <= MAX_T:
            raise Reject("field 'wesolowski.kappa' must be a JSON integer from 1 to 2^64 - 1")
        if -(-t // kappa) > stored:          # its checkpoints are distinct positions: all must be there
            raise Reject(f"field 'wesolowski.kappa' = {kappa} names {-(-t // kappa)} checkpoints; the file holds "
                         f"{stored} values")
        wes = WesolowskiPlan(t, kappa, best_window(t, kappa, 1, CostModel()))
    if doc["pietrzak"] is not None:
        _require_object(doc["pietrzak"], "field 'pietrzak'")
        _check_fields(doc["pietrzak"], ("depth",), "pietrzak.")
        depth = doc["pietrzak"]["depth"]
        rounds = len(pietrzak_lengths(t))
        if not _is_json_int(depth) or not 0 <= depth <= rounds:
            raise Reject(f"field 'pietrzak.depth' must be a JSON integer from 0 to {rounds} (the rounds of t = {t})")
        # Building the plan lists 2^depth subset sums; positions coincide for small t, so the bound is loose.
        if 1 << depth > max(PLAN_BUILD_LIMIT, 2 * stored + 2):
            raise Reject(f"field 'pietrzak.depth' = {depth} names up to {(1 << depth) - 1} values; the file holds "
                         f"{stored}")
        pie = PietrzakPlan(t, depth)
    values: dict[int, int] = {}
    for key, text in values_doc.items():
        if not _POSITION.fullmatch(key):
            raise Reject(f"field 'values' has a key {key[:30]!r} that is not a position (ASCII decimal, "
                         f"no leading zeros, at most 20 digits)")
        values[int(key)] = group.check(f"values[{key}]", parse_element(f"values.{key}", text, group.nbytes))
    if values.get(0, x) != x:
        raise Reject("values[0] differs from x")
    return Evaluation(group, x, t, y, values, wes, pie, "file", 0.0)
