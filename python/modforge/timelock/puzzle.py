"""Puzzles: the squaring task, named historical puzzles, and modforge's own puzzle files.

A puzzle asks for ``w = x^(2^t) mod n`` (a :class:`SquaringTask`) and turns
``w`` into the hidden message:

* named puzzles (Rivest's LCS35 and CSAIL2019, and the LCS35 toy example) keep
  their original form: ``x = 2`` and the message is ``w XOR z``;
* modforge puzzle files (format ``modforge-timelock-puzzle``, version 1) hold a
  ciphertext under a key derived from ``w`` (HKDF-SHA256, ChaCha20-Poly1305, the
  header as associated data), so a wrong ``w`` fails authentication instead of
  yielding garbage.  See docs/timelock.md for the field list.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..arith.base import ParameterError
from ..fileio import InputTooLarge, read_bounded
from ..inttext import brief, decimal_to_int

PUZZLE_FORMAT = "modforge-timelock-puzzle"
PUZZLE_VERSION = 1
TRAPDOOR_FORMAT = "modforge-timelock-trapdoor"
TRAPDOOR_VERSION = 1
CIPHER = "chacha20-poly1305"
KDF = "hkdf-sha256"
NONCE_BYTES = 12
TAG_BYTES = 16
MAX_PAYLOAD = 64 << 20
# A puzzle file is its header and the base64 ciphertext of at most MAX_PAYLOAD bytes; a trapdoor file is a
# few hex numbers.  Larger files are refused before they are read into memory.
MAX_PUZZLE_FILE_BYTES = 4 * ((MAX_PAYLOAD + TAG_BYTES + 2) // 3) + (1 << 20)
MAX_TRAPDOOR_FILE_BYTES = 1 << 20
KEY_INFO_TAG = b"modforge/timelock/v1/payload-key\x00"
TASK_ID_TAG = "modforge/timelock/v1/task"
# Header fields bound into the ciphertext as associated data (in this order is irrelevant:
# they are serialised canonically).  "calibration" is informational and not bound.
AD_FIELDS = ("format", "version", "cipher", "kdf", "bits", "n", "x", "t", "nonce", "created")

NAMED = {"lcs35": "lcs35", "lcs35-toy": "lcs35_toy", "csail2019": "csail2019"}
# The largest t a puzzle file may ask for: 2^64 squarings take about 600 years at 10^9 per second, so a
# larger t is a mistake or an attack on the tools (times and rates overflow floating point past 2^1024).
# 2^64 - 1, the VDF's bound too, so that `timelock` and `vdf` take the same t (and t fits a u64, the
# count the engine's sqr_n takes).
MAX_T = (1 << 64) - 1


class TimelockError(Exception):
    """A check failed (exit code 1): authentication, unrecoverable checkpoints, persistent faults."""


class AuthenticationError(TimelockError):
    pass


_CANONICAL_HEX = re.compile(r"0x(0|[1-9a-f][0-9a-f]*)")


class _DuplicateKey(ValueError):
    pass


class _Refused(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def load_json(data: bytes, param: str, what: str) -> Any:
    """``json.loads`` for files from outside: every way the parser can fail is a ParameterError naming ``param``
    (bad UTF-8 or syntax, nesting deep enough to exhaust the recursion limit, over-long decimal numbers)."""
    try:
        # UTF-8 only, as the proof files: json.loads would also take UTF-16/32 and a byte-order mark.
        text = data.decode("utf-8")
        if text.startswith("\ufeff"):
            raise _Refused("it starts with a byte-order mark (write plain UTF-8)")
        # Integers of any length (Python's own conversion stops at 4300 digits): too large a number is
        # then refused by the field that holds it, by name.  A key given twice is refused, not read as its
        # last value (an edited file could otherwise show one value and mean another).
        return json.loads(text, parse_int=decimal_to_int, object_pairs_hook=_unique_keys)
    except _DuplicateKey as exc:
        raise ParameterError(param, f"not {what}: field {exc.args[0]!r} appears twice") from None
    except _Refused as exc:
        raise ParameterError(param, f"not {what}: {exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ParameterError(param, f"not {what}: {exc}") from None
    except RecursionError:
        raise ParameterError(param, f"not {what}: nested too deeply") from None
    except ValueError as exc:
        raise ParameterError(param, f"not {what}: {exc}") from None


def canonical_json(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def _int_field(doc: dict, name: str, where: str) -> int:
    value = doc.get(name)
    if isinstance(value, bool):
        raise ParameterError(where, f"field {name!r} must be an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value, 16) if value.lower().startswith("0x") else decimal_to_int(value)
        except ValueError:
            pass
    raise ParameterError(where, f"field {name!r} must be a 0x-hex or decimal integer, got {brief(value)}")


def _b64_field(doc: dict, name: str, where: str) -> bytes:
    value = doc.get(name)
    if not isinstance(value, str):
        raise ParameterError(where, f"field {name!r} must be a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        raise ParameterError(where, f"field {name!r} is not valid base64") from None


@dataclass(frozen=True)
class SquaringTask:
    """``x^(2^t) mod n``: what a solver computes, independent of how the result is used."""

    n: int
    x: int
    t: int

    def __post_init__(self) -> None:
        if self.n < 3 or self.n % 2 == 0:
            raise ParameterError("n", "the modulus must be odd and at least 3")
        if not 1 < self.x < self.n or math.gcd(self.x, self.n) != 1:
            raise ParameterError("x", "the base must satisfy 1 < x < n and be invertible modulo n")
        if self.t < 1:
            raise ParameterError("t", f"must be at least 1, got {self.t}")

    @property
    def bits(self) -> int:
        return self.n.bit_length()

    @property
    def id(self) -> str:
        """SHA-256 over the canonical task: names checkpoints, binds them to (n, x, t)."""
        doc = {"tag": TASK_ID_TAG, "n": hex(self.n), "x": hex(self.x), "t": hex(self.t)}
        return hashlib.sha256(canonical_json(doc)).hexdigest()


def render_message(data: bytes) -> tuple[str, str]:
    """(``"text"``, the text) when ``data`` is printable UTF-8 (ASCII included), else (``"hex"``, hex)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "hex", data.hex()
    if data and all(ch.isprintable() or ch in "\n\r\t" for ch in text):
        return "text", text
    return "hex", data.hex()


@dataclass(frozen=True)
class NamedPuzzle:
    """A published puzzle in its original form: ``w = 2^(2^t) mod n``, message = ``w XOR z``."""

    name: str
    n: int
    t: int
    z: int
    source: str

    @property
    def task(self) -> SquaringTask:
        return SquaringTask(self.n, 2, self.t)

    @property
    def label(self) -> str:
        return self.name

    def open(self, w: int) -> bytes:
        value = w ^ self.z
        return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")

    def describe(self) -> dict[str, Any]:
        return {"kind": "named", "name": self.name, "source": self.source, "bits": self.task.bits,
                "n": self.n, "x": 2, "t": self.t, "z": self.z}


def named_puzzle(name: str) -> NamedPuzzle:
    from ..data import known_puzzles

    try:
        key = NAMED[name]
    except KeyError:
        raise ParameterError("puzzle", f"unknown puzzle name {name!r}; built in: {', '.join(NAMED)}") from None
    doc = known_puzzles()[key]
    return NamedPuzzle(name=name, n=int(doc["n"]), t=int(doc["t"]), z=int(doc["z"]), source=doc.get("source", ""))


def derive_key(w: int, header: dict[str, Any]) -> bytes:
    """HKDF-SHA256: IKM = w big-endian in the modulus' byte width, info = tag || canonical (n, x, t)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    n = _int_field(header, "n", "puzzle")
    ikm = w.to_bytes((n.bit_length() + 7) // 8, "big")
    info = KEY_INFO_TAG + canonical_json({"n": header["n"], "x": header["x"], "t": header["t"]})
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(ikm)


def associated_data(header: dict[str, Any]) -> bytes:
    return canonical_json({k: header[k] for k in AD_FIELDS})


@dataclass(frozen=True)
class PuzzleFile:
    """A modforge puzzle (``header`` is the JSON object without ``ciphertext``)."""

    header: dict[str, Any]
    ciphertext: bytes
    path: Path | None = None
    task: SquaringTask = field(init=False)

    def __post_init__(self) -> None:
        h = self.header
        task = SquaringTask(_int_field(h, "n", "puzzle"), _int_field(h, "x", "puzzle"), _int_field(h, "t", "puzzle"))
        object.__setattr__(self, "task", task)

    @property
    def label(self) -> str:
        return str(self.path) if self.path else f"puzzle {self.task.id[:16]}"

    def open(self, w: int) -> bytes:
        """Decrypt with the key derived from ``w``; :class:`AuthenticationError` when ``w`` is wrong."""
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

        key = derive_key(w, self.header)
        nonce = base64.b64decode(self.header["nonce"])
        try:
            return ChaCha20Poly1305(key).decrypt(nonce, self.ciphertext, associated_data(self.header))
        except InvalidTag:
            raise AuthenticationError(
                "authentication failed: the solution w does not open this puzzle's ciphertext "
                "(the puzzle file was altered, or w is wrong)") from None

    def to_json(self) -> bytes:
        doc = dict(self.header)
        doc["ciphertext"] = base64.b64encode(self.ciphertext).decode("ascii")
        return (json.dumps(doc, indent=1) + "\n").encode("utf-8")

    def describe(self) -> dict[str, Any]:
        h = self.header
        return {"kind": "file", "path": str(self.path) if self.path else None, "format": h["format"],
                "version": h["version"], "bits": self.task.bits, "n": self.task.n, "x": self.task.x,
                "t": self.task.t, "cipher": h["cipher"], "kdf": h["kdf"], "created": h["created"],
                "ciphertext_bytes": len(self.ciphertext), "calibration": h.get("calibration")}


def seal(n: int, x: int, t: int, w: int, payload: bytes, created: str, calibration: dict | None) -> PuzzleFile:
    """Encrypt ``payload`` under the key derived from ``w`` and return the puzzle."""
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    header: dict[str, Any] = {
        "format": PUZZLE_FORMAT, "version": PUZZLE_VERSION, "cipher": CIPHER, "kdf": KDF,
        "bits": n.bit_length(), "n": hex(n), "x": hex(x), "t": hex(t),
        "nonce": base64.b64encode(os.urandom(NONCE_BYTES)).decode("ascii"), "created": created,
        "calibration": calibration,
    }
    key = derive_key(w, header)
    nonce = base64.b64decode(header["nonce"])
    ct = ChaCha20Poly1305(key).encrypt(nonce, payload, associated_data(header))
    return PuzzleFile(header=header, ciphertext=ct)


def parse_puzzle(data: bytes, path: Path | None = None) -> PuzzleFile:
    """Parse and validate a puzzle file's bytes (ParameterError naming ``puzzle`` when malformed)."""
    doc = load_json(data, "puzzle", "a JSON puzzle file")
    if not isinstance(doc, dict):
        raise ParameterError("puzzle", "not a JSON object")
    if doc.get("format") != PUZZLE_FORMAT:
        raise ParameterError("puzzle", f"format is {brief(doc.get('format'))}, expected {PUZZLE_FORMAT!r}")
    if type(doc.get("version")) is not int or doc["version"] != PUZZLE_VERSION:
        raise ParameterError("puzzle", f"unsupported version {brief(doc.get('version'))} (this modforge reads "
                                       f"version {PUZZLE_VERSION})")
    missing = [k for k in (*AD_FIELDS, "ciphertext") if k not in doc]
    if missing:
        raise ParameterError("puzzle", f"missing field(s): {', '.join(missing)}")
    if doc["cipher"] != CIPHER or doc["kdf"] != KDF:
        raise ParameterError("puzzle", f"unsupported cipher/kdf {brief(doc['cipher'])}/{brief(doc['kdf'])}")
    for name in ("n", "x", "t"):
        # Exactly as written (hex() of the value): the header is authenticated byte for byte, so any other
        # spelling of the same number could never open the ciphertext.  Refused here, not after the solve.
        if not isinstance(doc[name], str) or not _CANONICAL_HEX.fullmatch(doc[name]):
            raise ParameterError("puzzle", f"field {name!r} must be a 0x-prefixed lowercase hex string without "
                                           f"leading zeros, got {brief(doc[name])}")
    if int(doc["t"], 16) > MAX_T:
        raise ParameterError("puzzle", "t is larger than 2^64 - 1")
    if type(doc["bits"]) is not int:
        raise ParameterError("puzzle", f"field 'bits' must be a JSON integer, got {brief(doc['bits'])}")
    if not isinstance(doc["created"], str):
        raise ParameterError("puzzle", "field 'created' must be a string")
    if len(_b64_field(doc, "nonce", "puzzle")) != NONCE_BYTES:
        raise ParameterError("puzzle", f"nonce must be {NONCE_BYTES} bytes")
    ct = _b64_field(doc, "ciphertext", "puzzle")
    if len(ct) < TAG_BYTES:
        raise ParameterError("puzzle", "ciphertext is shorter than the authentication tag")
    header = {k: v for k, v in doc.items() if k != "ciphertext"}
    puzzle = PuzzleFile(header=header, ciphertext=ct, path=path)
    if header["bits"] != puzzle.task.bits:
        raise ParameterError("puzzle", f"bits says {brief(header['bits'])} but n has {puzzle.task.bits} bits")
    return puzzle


def load_puzzle_file(path: str | Path) -> PuzzleFile:
    p = Path(path)
    try:
        data = read_bounded(p, MAX_PUZZLE_FILE_BYTES, repr(str(p)))
    except InputTooLarge as exc:
        raise ParameterError("puzzle", f"{exc}: not a puzzle file") from None
    except OSError as exc:
        raise ParameterError("puzzle", f"cannot read {str(p)!r}: {exc.strerror or exc}") from None
    return parse_puzzle(data, p)


def resolve_puzzle(spec: str) -> NamedPuzzle | PuzzleFile:
    """A built-in NAME (lcs35, lcs35-toy, csail2019) or a puzzle FILE (``./lcs35`` for a file of that name)."""
    if spec in NAMED:
        return named_puzzle(spec)
    if not Path(spec).exists():
        raise ParameterError("puzzle", f"no such file {spec!r}, and not a built-in puzzle name "
                                       f"({', '.join(NAMED)})")
    return load_puzzle_file(spec)


def trapdoor_document(puzzle: PuzzleFile, p: int, q: int) -> dict[str, Any]:
    return {"format": TRAPDOOR_FORMAT, "version": TRAPDOOR_VERSION, "task_id": puzzle.task.id,
            "n": hex(puzzle.task.n), "p": hex(p), "q": hex(q)}


def load_trapdoor(path: str | Path, puzzle: PuzzleFile) -> tuple[int, int]:
    """(p, q) from a trapdoor file: two distinct primes whose product is the puzzle's modulus."""
    import gmpy2

    try:
        data = read_bounded(path, MAX_TRAPDOOR_FILE_BYTES, repr(str(path)))
    except InputTooLarge as exc:
        raise ParameterError("trapdoor", f"{exc}: not a trapdoor file") from None
    except OSError as exc:
        raise ParameterError("trapdoor", f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    doc = load_json(data, "trapdoor", "a JSON trapdoor file")
    # The version exactly the integer 1: not true, not 1.0 (both compare equal to 1).
    if not isinstance(doc, dict) or doc.get("format") != TRAPDOOR_FORMAT or type(doc.get("version")) is not int \
            or doc["version"] != TRAPDOOR_VERSION:
        raise ParameterError("trapdoor", f"not a {TRAPDOOR_FORMAT} version {TRAPDOOR_VERSION} file")
    p, q = _int_field(doc, "p", "trapdoor"), _int_field(doc, "q", "trapdoor")
    # A trivial factorisation (p = 1, q = n, or both negated) does multiply to the modulus: say what is wrong.
    trivial = [(name, value) for name, value in (("p", p), ("q", q)) if value < 2]
    if p * q == puzzle.task.n and trivial:
        name, value = trivial[0]
        raise ParameterError("trapdoor", f"{str(path)!r}: field {name!r} is {value}, not a prime (p * q is the "
                                         f"modulus, but trivially: a trapdoor file holds n's two prime factors)")
    if p * q != puzzle.task.n or trivial:
        raise ParameterError("trapdoor", "p * q is not this puzzle's modulus")
    # The CRT in trapdoor_solution needs two distinct primes (p = q has no inverse of q modulo p, and a
    # composite factor gives exponents reduced modulo the wrong group order).
    if p == q:
        raise ParameterError("trapdoor", f"{str(path)!r} has p equal to q: a trapdoor file holds two distinct "
                                         f"primes")
    for name, value in (("p", p), ("q", q)):
        if not gmpy2.is_prime(value):
            raise ParameterError("trapdoor", f"{str(path)!r}: field {name!r} is not a prime")
    return p, q


def trapdoor_solution(task: SquaringTask, p: int, q: int) -> int:
    """``x^(2^t) mod n`` through the factorisation: exponents reduced modulo p-1 and q-1, CRT.

    Uses gmpy2.powmod, which is not constant-time (see docs/timelock.md).
    """
    import gmpy2

    wp = gmpy2.powmod(task.x, gmpy2.powmod(2, task.t, p - 1), p)
    wq = gmpy2.powmod(task.x, gmpy2.powmod(2, task.t, q - 1), q)
    # CRT: w = wq + q * ((wp - wq) * q^-1 mod p)
    h = (wp - wq) * gmpy2.invert(q, p) % p
    return int(wq + q * h)
