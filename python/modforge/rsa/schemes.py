"""Signature and encryption schemes on octet strings (RFC 8017 Sec. 7 and 8).

Signatures (``scheme``):

* ``raw``: RSASP1 / RSAVP1 on a message of exactly ``k`` bytes (the modulus
  length) whose value is below ``n``; no hashing, no padding;
* ``pkcs1v15``: RSASSA-PKCS1-v1_5 with SHA-256/384/512;
* ``pss``: RSASSA-PSS, MGF1 with the message hash, salt length = hash length
  unless told (``"max"`` for the largest the key allows; when verifying,
  ``"auto"`` accepts any).

Encryption (``scheme``): ``raw`` (RSAEP / RSADP on ``k``-byte blocks) and
``oaep`` (RSAES-OAEP, MGF1 with the same hash, optional label).
RSAES-PKCS1-v1_5 is deliberately not offered: its decryption is a padding
oracle (Bleichenbacher) unless done with implicit rejection.

A message may be given as its :class:`Prehashed` digest (:func:`digest_file`
hashes a file in chunks), so a signature of a large file never holds the file.

Bad input (wrong lengths, values not below ``n``, a hash too large for the
key) raises ParameterError; a failed OAEP decryption raises
:class:`~modforge.rsa.errors.DecryptionError` with the single message
``"decryption failed"``.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from ..arith.base import ParameterError
from ..inttext import brief, decimal_to_int
from .encodings import (HashInfo, check_oaep_size, eme_oaep_decode, eme_oaep_encode, emsa_pkcs1_v15_encode_digest,
                        emsa_pss_encode, emsa_pss_verify, hash_info, i2osp, os2ip, pss_max_salt_length)
from .errors import unreadable
from .exp import DEFAULT_BLIND_BITS
from .keys import RSAPrivateKey, RSAPublicKey
from .primitives import rsadp, rsaep, rsasp1, rsavp1

SIGNATURE_SCHEMES = ("raw", "pkcs1v15", "pss")
ENCRYPTION_SCHEMES = ("raw", "oaep")

SaltLength = Union[int, str, None]
READ_CHUNK = 1 << 20


@dataclass(frozen=True)
class Prehashed:
    """A message given by its hash (``hash_name`` digest), for pkcs1v15 and pss."""

    hash_name: str
    digest: bytes


def digest_file(path: str | Path, hash_name: str | None, name: str = "in") -> Prehashed:
    """The hash of a file read in 1 MiB chunks (memory stays flat whatever its size); ParameterError naming
    ``name`` when it cannot be read."""
    h = hash_info(hash_name)
    state = h.new()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(READ_CHUNK):
                state.update(chunk)
    except OSError as exc:
        raise unreadable(exc, path, name) from None
    return Prehashed(h.name, state.digest())


def _message_hash(message: bytes | Prehashed, h: HashInfo) -> bytes:
    if isinstance(message, Prehashed):
        if message.hash_name != h.name or len(message.digest) != h.digest_size:
            raise ParameterError("message", f"a {message.hash_name} digest given for a {h.name} signature")
        return message.digest
    if not isinstance(message, (bytes, bytearray)):
        raise ParameterError("message", f"must be bytes or Prehashed, got {type(message).__name__}")
    return h.digest(message)


def _private(key: object) -> RSAPrivateKey:
    if not isinstance(key, RSAPrivateKey):
        raise ParameterError("key", f"a private key is needed, got {type(key).__name__}")
    return key


def _scheme(scheme: str, allowed: tuple[str, ...]) -> str:
    s = (scheme or "").lower()
    if s not in allowed:
        raise ParameterError("scheme", f"unknown scheme {scheme!r}; choose one of: {', '.join(allowed)}")
    return s


def _hash_for(scheme: str, hash_name: str | None) -> HashInfo | None:
    if scheme == "raw":
        if hash_name is not None:
            raise ParameterError("hash", "the raw scheme does not hash; leave the hash out")
        return None
    return hash_info(hash_name)


def _raw_block(name: str, data: bytes, key: RSAPublicKey | RSAPrivateKey) -> int:
    if len(data) != key.size:
        raise ParameterError(name, f"raw RSA needs exactly {key.size} bytes (the modulus length), got {len(data)}")
    value = os2ip(data)
    if value >= key.n:
        raise ParameterError(name, "as a big-endian integer it is not below the modulus n")
    return value


def _sign_salt_length(salt_length: SaltLength, em_bits: int, h: HashInfo) -> int:
    if salt_length is None:
        return h.digest_size
    if salt_length == "max":
        return max(pss_max_salt_length(em_bits, h), 0)
    if isinstance(salt_length, str):
        try:
            salt_length = decimal_to_int(salt_length)
        except ValueError:
            raise ParameterError("salt_length", f"expected a byte count or 'max', got {brief(salt_length)}") from None
    if isinstance(salt_length, bool) or not isinstance(salt_length, int) or salt_length < 0:
        raise ParameterError("salt_length", f"must be a byte count >= 0, got {brief(salt_length)}")
    _check_salt_fits(salt_length, em_bits, h)
    return salt_length


def _check_salt_fits(salt_length: int, em_bits: int, h: HashInfo) -> None:
    """ParameterError unless a ``salt_length``-byte salt with ``h`` fits the key (RFC 8017 9.1.1 step 3).

    Checked before a salt of that many random bytes is drawn (10^20 used to be an OverflowError), and on
    verification too: options the key cannot take are bad input (exit 2), not an invalid signature."""
    em_len = (em_bits + 7) // 8
    if em_len < h.digest_size + salt_length + 2:
        if not brief(salt_length).isdigit():    # thousands of digits: its size says it
            raise ParameterError("salt_length", f"{brief(salt_length)} of bytes, far more than this key's {em_len} "
                                                f"encoded bytes")
        raise ParameterError("salt_length", f"{salt_length}-byte salt with {h.name} needs at least "
                                            f"{h.digest_size + salt_length + 2} encoded bytes, this key gives "
                                            f"{em_len}")


def _verify_salt_length(salt_length: SaltLength, h: HashInfo) -> int | None:
    if salt_length is None:
        return h.digest_size
    if salt_length == "auto":
        return None
    if isinstance(salt_length, str):
        try:
            salt_length = decimal_to_int(salt_length)
        except ValueError:
            raise ParameterError("salt_length", f"expected a byte count or 'auto', got {brief(salt_length)}") from None
    if isinstance(salt_length, bool) or not isinstance(salt_length, int) or salt_length < 0:
        raise ParameterError("salt_length", f"must be a byte count >= 0, got {brief(salt_length)}")
    return salt_length


# ---------------------------------------------------------------------------------------- signatures


def check_sign_options(key: RSAPublicKey | RSAPrivateKey, scheme: str, hash_name: str | None = None,
                       salt_length: SaltLength = None) -> None:
    """Raise the ParameterError :func:`sign` would raise for these options whatever the message."""
    scheme = _scheme(scheme, SIGNATURE_SCHEMES)
    h = _hash_for(scheme, hash_name)
    if scheme != "pss" and salt_length is not None:
        raise ParameterError("salt_length", f"only the pss scheme has a salt, not {scheme}")
    if scheme == "pkcs1v15":
        emsa_pkcs1_v15_encode_digest(bytes(h.digest_size), key.size, h)
    elif scheme == "pss":
        em_bits = key.bits - 1
        emsa_pss_encode(h.digest(b""), em_bits, h, bytes(_sign_salt_length(salt_length, em_bits, h)))


def sign(key: RSAPrivateKey, message: bytes, scheme: str, hash_name: str | None = None, *,
         salt_length: SaltLength = None, salt: bytes | None = None, backend: str = "auto",
         blind_bits: int = DEFAULT_BLIND_BITS) -> bytes:
    """Sign ``message``; the signature is ``key.size`` bytes.  ``salt`` fixes the PSS salt (tests)."""
    key = _private(key)
    scheme = _scheme(scheme, SIGNATURE_SCHEMES)
    h = _hash_for(scheme, hash_name)
    k = key.size
    if scheme != "pss" and (salt_length is not None or salt is not None):
        raise ParameterError("salt_length", f"only the pss scheme has a salt, not {scheme}")
    if scheme == "raw":
        if isinstance(message, Prehashed):
            raise ParameterError("message", "the raw scheme signs the message itself, not a hash")
        m = _raw_block("message", message, key)
    elif scheme == "pkcs1v15":
        m = os2ip(emsa_pkcs1_v15_encode_digest(_message_hash(message, h), k, h))
    else:
        em_bits = key.bits - 1
        if salt is None:
            salt = secrets.token_bytes(_sign_salt_length(salt_length, em_bits, h))
        m = os2ip(emsa_pss_encode(_message_hash(message, h), em_bits, h, salt))
    return i2osp(rsasp1(key, m, backend=backend, blind_bits=blind_bits), k)


def check_signature(key: RSAPublicKey | RSAPrivateKey, message: bytes, signature: bytes, scheme: str,
                    hash_name: str | None = None, *, salt_length: SaltLength = None) -> str | None:
    """None when ``signature`` is a valid signature of ``message``, else the reason (all public data)."""
    scheme = _scheme(scheme, SIGNATURE_SCHEMES)
    h = _hash_for(scheme, hash_name)
    k = key.size
    if scheme != "pss" and salt_length is not None:
        raise ParameterError("salt_length", f"only the pss scheme has a salt, not {scheme}")
    if scheme == "raw":
        if isinstance(message, Prehashed):
            raise ParameterError("message", "the raw scheme signs the message itself, not a hash")
        _raw_block("message", message, key)
    elif scheme == "pkcs1v15":
        emsa_pkcs1_v15_encode_digest(bytes(h.digest_size), k, h)        # the key is large enough for the hash
    else:
        s_len = _verify_salt_length(salt_length, h)
        _check_salt_fits(s_len or 0, key.bits - 1, h)
    if len(signature) != k:
        return f"signature is {len(signature)} bytes, the key needs {k}"
    s = os2ip(signature)
    if s >= key.n:
        return "signature representative is not below the modulus"
    m = rsavp1(key, s)
    if scheme == "raw":
        return None if hmac.compare_digest(i2osp(m, k), message) else "signature does not match the message"
    if scheme == "pkcs1v15":
        expected = emsa_pkcs1_v15_encode_digest(_message_hash(message, h), k, h)
        return None if hmac.compare_digest(i2osp(m, k), expected) else "signature does not match the message"
    em_bits = key.bits - 1
    em_len = (em_bits + 7) // 8
    if m >> (8 * em_len):
        return "signature does not match the message (encoded message too long)"
    return emsa_pss_verify(_message_hash(message, h), i2osp(m, em_len), em_bits, h, s_len)


def verify(key: RSAPublicKey | RSAPrivateKey, message: bytes, signature: bytes, scheme: str,
           hash_name: str | None = None, *, salt_length: SaltLength = None) -> bool:
    return check_signature(key, message, signature, scheme, hash_name, salt_length=salt_length) is None


# ---------------------------------------------------------------------------------------- encryption


def encrypt(key: RSAPublicKey | RSAPrivateKey, message: bytes, scheme: str, hash_name: str | None = None, *,
            label: bytes = b"", seed: bytes | None = None) -> bytes:
    """Encrypt ``message``; the ciphertext is ``key.size`` bytes.  ``seed`` fixes the OAEP seed (tests)."""
    scheme = _scheme(scheme, ENCRYPTION_SCHEMES)
    h = _hash_for(scheme, hash_name)
    k = key.size
    if scheme == "raw":
        if label:
            raise ParameterError("label", "the raw scheme takes no label")
        m = _raw_block("message", message, key)
    else:
        if seed is None:
            seed = secrets.token_bytes(h.digest_size)
        m = os2ip(eme_oaep_encode(message, k, h, label, seed))
    return i2osp(rsaep(key, m), k)


def decrypt(key: RSAPrivateKey, ciphertext: bytes, scheme: str, hash_name: str | None = None, *,
            label: bytes = b"", backend: str = "auto", blind_bits: int = DEFAULT_BLIND_BITS) -> bytes:
    """Decrypt ``ciphertext`` (``key.size`` bytes); OAEP failures raise DecryptionError, nothing more."""
    key = _private(key)
    scheme = _scheme(scheme, ENCRYPTION_SCHEMES)
    h = _hash_for(scheme, hash_name)
    k = key.size
    if scheme == "raw" and label:
        raise ParameterError("label", "the raw scheme takes no label")
    if len(ciphertext) != k:
        raise ParameterError("ciphertext", f"must be exactly {k} bytes (the modulus length), got {len(ciphertext)}")
    c = os2ip(ciphertext)
    if c >= key.n:
        raise ParameterError("ciphertext", "as a big-endian integer it is not below the modulus n")
    if scheme == "oaep":
        check_oaep_size(k, h)            # before the private operation: a key too small is bad input
    m = rsadp(key, c, backend=backend, blind_bits=blind_bits)
    if scheme == "raw":
        return i2osp(m, k)
    return eme_oaep_decode(i2osp(m, k), k, h, label)
