"""RFC 8017 encodings, written out here (not delegated to a library).

* data conversion: :func:`i2osp`, :func:`os2ip` (Sec. 4);
* :func:`mgf1` (App. B.2.1);
* EMSA-PKCS1-v1_5 (Sec. 9.2) with the DigestInfo of every hash in
  :data:`HASHES`, built by a tiny DER encoder from the hash's object
  identifier, so the prefix bytes are derived, not typed (the tests compare
  them with RFC 8017's Sec. 9.2 note 1);
* EMSA-PSS encode and verify (Sec. 9.1); MGF1 with the message hash unless
  another is given (``mgf``), as OpenSSL's ``rsa_mgf1_md`` allows;
* EME-OAEP encode and decode (Sec. 7.1.1 step 2, 7.1.2 step 3), MGF1 with the
  label hash unless another is given (``mgf``).  The decoder
  runs every check on every byte and combines the results arithmetically:
  no early return and no branch on the padding until the single final
  decision, which raises :class:`~modforge.rsa.errors.DecryptionError`
  with one generic message (no padding oracle, Manger's attack).

The hashes themselves are ``hashlib``'s (OpenSSL's); nothing here computes one.

Every function takes its randomness (PSS salt, OAEP seed) as an argument, so
the tests can run them on fixed values; :mod:`modforge.rsa.schemes` draws it
from :mod:`secrets`.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from dataclasses import dataclass

from ..arith.base import ParameterError
from .errors import DecryptionError

# ------------------------------------------------------------------------------------------------ hashes


def _der_length(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def _der(tag: int, body: bytes) -> bytes:
    return bytes([tag]) + _der_length(len(body)) + body


def _der_oid(arcs: tuple[int, ...]) -> bytes:
    """DER OBJECT IDENTIFIER: first two arcs as 40*a+b, then base-128 big-endian arcs."""
    out = bytearray()
    for arc in (40 * arcs[0] + arcs[1], *arcs[2:]):
        chunk = [arc & 0x7F]
        arc >>= 7
        while arc:
            chunk.append(0x80 | (arc & 0x7F))
            arc >>= 7
        out += bytes(reversed(chunk))
    return _der(0x06, bytes(out))


@dataclass(frozen=True)
class HashInfo:
    """A hash usable in the signature and encryption schemes; its DigestInfo prefix is derived.

    ``name`` is how commands and JSON say it (OpenSSL's spelling), ``hashlib_name`` what computes it;
    ``signing`` is False for a hash refused for new signatures (SHA-1: collisions are practical)."""

    name: str
    hashlib_name: str
    oid: tuple[int, ...]
    digest_size: int
    signing: bool = True

    def digest(self, data: bytes) -> bytes:
        return hashlib.new(self.hashlib_name, data).digest()

    def new(self):
        """A running hash (``update`` / ``digest``), for inputs read in pieces."""
        return hashlib.new(self.hashlib_name)

    @functools.cached_property
    def digest_info_prefix(self) -> bytes:
        """DER of ``DigestInfo ::= SEQUENCE { SEQUENCE { oid, NULL }, OCTET STRING (hLen) }`` up to the digest.

        Derived once per hash (it was 5 us of every 2048-bit signature's ~250)."""
        algorithm = _der(0x30, _der_oid(self.oid) + b"\x05\x00")
        octet_header = bytes([0x04]) + _der_length(self.digest_size)
        inner = algorithm + octet_header
        return bytes([0x30]) + _der_length(len(inner) + self.digest_size) + inner

    @functools.cached_property
    def oid_der(self) -> bytes:
        """The DER OBJECT IDENTIFIER (how key parameters name this hash)."""
        return _der_oid(self.oid)


# NIST hash algorithms arc 2.16.840.1.101.3.4.2 (RFC 8017 App. A.2.4, NIST CSOR); SHA-1 is OIW's
# 1.3.14.3.2.26.  The digest sizes come from hashlib, not typed.
_NIST_HASHES = (2, 16, 840, 1, 101, 3, 4, 2)
_HASH_TABLE = (      # (name, hashlib name, OID)
    ("sha1", "sha1", (1, 3, 14, 3, 2, 26)),
    ("sha224", "sha224", (*_NIST_HASHES, 4)),
    ("sha256", "sha256", (*_NIST_HASHES, 1)),
    ("sha384", "sha384", (*_NIST_HASHES, 2)),
    ("sha512", "sha512", (*_NIST_HASHES, 3)),
    ("sha512-224", "sha512_224", (*_NIST_HASHES, 5)),
    ("sha512-256", "sha512_256", (*_NIST_HASHES, 6)),
    ("sha3-224", "sha3_224", (*_NIST_HASHES, 7)),
    ("sha3-256", "sha3_256", (*_NIST_HASHES, 8)),
    ("sha3-384", "sha3_384", (*_NIST_HASHES, 9)),
    ("sha3-512", "sha3_512", (*_NIST_HASHES, 10)),
)
# SHA-1 verifies old signatures and serves OAEP and MGF1 (neither needs collision resistance); it signs nothing.
NO_SIGNING = {"sha1": "SHA-1 is refused for new signatures (collisions are practical: SHAttered 2017, "
                      "chosen-prefix 2020); it is accepted to verify old ones and for OAEP and MGF1"}
HASHES: dict[str, HashInfo] = {
    name: HashInfo(name, lib, oid, hashlib.new(lib).digest_size, name not in NO_SIGNING)
    for name, lib, oid in _HASH_TABLE
}
DEFAULT_HASH = "sha256"


def _spelling(name: str) -> str:
    """``SHA3-256``, ``sha3_256``, ``SHA512/224`` and ``sha512-224`` are one hash: compare without separators."""
    return name.lower().replace("-", "").replace("_", "").replace("/", "")


_BY_SPELLING = {_spelling(name): info for name, info in HASHES.items()}


def hash_info(name: str | None, param: str = "hash") -> HashInfo:
    """The hash called ``name`` (default sha256); ParameterError naming ``param`` for any other."""
    try:
        return _BY_SPELLING[_spelling(name or DEFAULT_HASH)]
    except KeyError:
        raise ParameterError(param, f"unsupported hash {name!r}; choose one of: {', '.join(HASHES)}") from None


def hash_by_oid(oid_der: bytes) -> HashInfo | None:
    """The hash whose DER OBJECT IDENTIFIER is ``oid_der``, or None."""
    return next((h for h in HASHES.values() if h.oid_der == oid_der), None)


def require_signing_hash(h: HashInfo) -> None:
    """ParameterError("hash") when ``h`` may not make new signatures (it may still verify)."""
    if not h.signing:
        raise ParameterError("hash", NO_SIGNING[h.name])


# ------------------------------------------------------------------------------------------ conversions


def i2osp(x: int, length: int) -> bytes:
    """Integer to big-endian octet string of exactly ``length`` bytes (RFC 8017 Sec. 4.1)."""
    if x < 0 or x >> (8 * length):
        raise ParameterError("integer", f"too large for {length} octets")
    return x.to_bytes(length, "big")


def os2ip(octets: bytes) -> int:
    """Big-endian octet string to integer (RFC 8017 Sec. 4.2)."""
    return int.from_bytes(octets, "big")


def mgf1(seed: bytes, length: int, h: HashInfo) -> bytes:
    """MGF1 (RFC 8017 App. B.2.1): ``Hash(seed || C)`` for counters 0, 1, ... truncated to ``length``."""
    out = bytearray()
    counter = 0
    while len(out) < length:
        out += h.digest(seed + counter.to_bytes(4, "big"))
        counter += 1
    return bytes(out[:length])


def _xor(a: bytes, b: bytes) -> bytes:
    return (int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).to_bytes(len(a), "big")


# ------------------------------------------------------------------------------------ EMSA-PKCS1-v1_5


def emsa_pkcs1_v15_encode(message: bytes, em_len: int, h: HashInfo) -> bytes:
    """EM = 0x00 || 0x01 || PS (0xff...) || 0x00 || DigestInfo(Hash(M)), |PS| >= 8 (RFC 8017 Sec. 9.2)."""
    return emsa_pkcs1_v15_encode_digest(h.digest(message), em_len, h)


def emsa_pkcs1_v15_encode_digest(m_hash: bytes, em_len: int, h: HashInfo) -> bytes:
    """:func:`emsa_pkcs1_v15_encode` from the message hash."""
    t = h.digest_info_prefix + m_hash
    if em_len < len(t) + 11:
        raise ParameterError("hash", f"{h.name} PKCS#1 v1.5 needs a modulus of at least {len(t) + 11} bytes, "
                                     f"this key has {em_len}")
    return b"\x00\x01" + b"\xff" * (em_len - len(t) - 3) + b"\x00" + t


# ------------------------------------------------------------------------------------------ EMSA-PSS


def pss_max_salt_length(em_bits: int, h: HashInfo) -> int:
    return (em_bits + 7) // 8 - h.digest_size - 2


def emsa_pss_encode(m_hash: bytes, em_bits: int, h: HashInfo, salt: bytes, mgf: HashInfo | None = None) -> bytes:
    """EMSA-PSS-ENCODE (RFC 8017 Sec. 9.1.1) from the message hash and the salt; MGF1 with ``mgf`` (default:
    the message hash)."""
    mgf = mgf or h
    h_len = h.digest_size
    em_len = (em_bits + 7) // 8
    if em_len < h_len + len(salt) + 2:
        raise ParameterError("salt_length", f"{len(salt)}-byte salt with {h.name} needs at least "
                                            f"{h_len + len(salt) + 2} encoded bytes, this key gives {em_len}")
    m_prime = b"\x00" * 8 + m_hash + salt
    hh = h.digest(m_prime)
    db = b"\x00" * (em_len - len(salt) - h_len - 2) + b"\x01" + salt
    masked_db = bytearray(_xor(db, mgf1(hh, em_len - h_len - 1, mgf)))
    masked_db[0] &= 0xFF >> (8 * em_len - em_bits)
    return bytes(masked_db) + hh + b"\xbc"


def emsa_pss_verify(m_hash: bytes, em: bytes, em_bits: int, h: HashInfo, salt_length: int | None,
                    mgf: HashInfo | None = None, min_salt_length: int = 0) -> str | None:
    """EMSA-PSS-VERIFY (RFC 8017 Sec. 9.1.2): None when consistent, else why not.

    ``salt_length=None`` accepts any salt length of at least ``min_salt_length`` bytes (the separator
    byte decides; an RSA-PSS-restricted key states such a minimum); MGF1 with ``mgf`` (default: ``h``).
    Verification handles public data only, so the reasons are plain.
    """
    mgf = mgf or h
    h_len = h.digest_size
    em_len = (em_bits + 7) // 8
    if len(em) != em_len:
        return "encoded message has the wrong length"
    if em_len < h_len + (salt_length or 0) + 2:
        return "modulus too short for this hash and salt length"
    if em[-1] != 0xBC:
        return "encoded message does not end in 0xbc"
    masked_db, hh = em[:em_len - h_len - 1], em[em_len - h_len - 1:-1]
    top_mask = (0xFF << (8 - (8 * em_len - em_bits))) & 0xFF
    if masked_db[0] & top_mask:
        return "leftmost bits of the encoded message are not zero"
    db = bytearray(_xor(masked_db, mgf1(hh, em_len - h_len - 1, mgf)))
    db[0] &= 0xFF >> (8 * em_len - em_bits)
    if salt_length is None:
        sep = next((i for i, b in enumerate(db) if b != 0), len(db))
        if sep == len(db) or db[sep] != 0x01:
            return "padding of the encoded message is not 0x00...0x01"
        salt = bytes(db[sep + 1:])
        if len(salt) < min_salt_length:
            return f"salt is {len(salt)} bytes, the key requires at least {min_salt_length}"
    else:
        ps_len = em_len - h_len - salt_length - 2
        if any(db[:ps_len]) or db[ps_len] != 0x01:
            return "padding of the encoded message is not 0x00...0x01 (or the salt length differs)"
        salt = bytes(db[len(db) - salt_length:]) if salt_length else b""
    if not hmac.compare_digest(h.digest(b"\x00" * 8 + m_hash + salt), hh):
        return "hash does not match"
    return None


# ----------------------------------------------------------------------------------------- EME-OAEP


def oaep_max_message_length(k: int, h: HashInfo) -> int:
    return k - 2 * h.digest_size - 2


def check_oaep_size(k: int, h: HashInfo) -> None:
    if oaep_max_message_length(k, h) < 0:
        raise ParameterError("hash", f"{h.name} OAEP needs a modulus of at least {2 * h.digest_size + 2} bytes, "
                                     f"this key has {k}")


def eme_oaep_encode(message: bytes, k: int, h: HashInfo, label: bytes, seed: bytes,
                    mgf: HashInfo | None = None) -> bytes:
    """EM = 0x00 || maskedSeed || maskedDB (RFC 8017 Sec. 7.1.1 step 2); ``seed`` is hLen random bytes; MGF1
    with ``mgf`` (default: ``h``)."""
    mgf = mgf or h
    check_oaep_size(k, h)
    h_len = h.digest_size
    limit = oaep_max_message_length(k, h)
    if len(message) > limit:
        raise ParameterError("message", f"too long for OAEP: at most {limit} bytes with this key and {h.name}, "
                                        f"got {len(message)}")
    if len(seed) != h_len:
        raise ParameterError("seed", f"must be {h_len} bytes, got {len(seed)}")
    db = h.digest(label) + b"\x00" * (limit - len(message)) + b"\x01" + message
    masked_db = _xor(db, mgf1(seed, k - h_len - 1, mgf))
    masked_seed = _xor(seed, mgf1(masked_db, h_len, mgf))
    return b"\x00" + masked_seed + masked_db


def eme_oaep_decode(em: bytes, k: int, h: HashInfo, label: bytes, mgf: HashInfo | None = None) -> bytes:
    """EME-OAEP decoding (RFC 8017 Sec. 7.1.2 step 3), constant-time in structure.

    Every byte is examined whatever the earlier bytes were; each check sets
    bits of one ``bad`` word by arithmetic (``b - 1 >> 8`` is -1 exactly when
    the byte ``b`` is zero), and only the final decision branches.  A failure
    of any kind raises the same :class:`DecryptionError`.
    """
    mgf = mgf or h
    check_oaep_size(k, h)
    h_len = h.digest_size
    if len(em) != k:
        raise DecryptionError()
    y = em[0]
    masked_seed, masked_db = em[1:1 + h_len], em[1 + h_len:]
    seed = _xor(masked_seed, mgf1(masked_db, h_len, mgf))
    db = _xor(masked_db, mgf1(seed, k - h_len - 1, mgf))
    bad = y | (1 - hmac.compare_digest(db[:h_len], h.digest(label)))
    found = 0        # 1 once the 0x01 separator has been seen
    index = 0        # its position in rest
    rest = db[h_len:]
    for i, b in enumerate(rest):
        is_zero = ((b - 1) >> 8) & 1
        is_one = (((b ^ 1) - 1) >> 8) & 1
        first_one = (found ^ 1) & is_one
        index |= i & -first_one
        bad |= (found ^ 1) & (is_zero ^ 1) & (is_one ^ 1)   # a byte other than 0x00 before the separator
        found |= is_one
    bad |= found ^ 1
    if bad:
        raise DecryptionError()
    return rest[index + 1:]
