"""Signature and encryption schemes on octet strings (RFC 8017 Sec. 7 and 8).

Signatures (``scheme``):

* ``raw``: RSASP1 / RSAVP1 on a message of exactly ``k`` bytes (the modulus
  length) whose value is below ``n``; no hashing, no padding;
* ``pkcs1v15``: RSASSA-PKCS1-v1_5 with any hash of :data:`~.encodings.HASHES`;
* ``pss``: RSASSA-PSS, MGF1 with the message hash unless ``mgf1_hash`` names
  another, salt length = hash length unless told (``"max"`` for the largest
  the key allows).  Verification checks the salt length it is told exactly
  (a byte count, ``"digest"``, ``"max"``); ``"auto"`` accepts any length.

SHA-1 verifies and serves OAEP and MGF1, and signs nothing (``require_signing_hash``).

Encryption (``scheme``): ``raw`` (RSAEP / RSADP on ``k``-byte blocks) and
``oaep`` (RSAES-OAEP, MGF1 with the label hash unless ``mgf1_hash`` names
another, optional label).

An RSA-PSS-restricted key (``key.pss``) signs and verifies with ``pss`` only,
with its hash and MGF1 hash (the defaults, and the only ones taken) and salts
of at least its stated length (exactly that length by default, as OpenSSL).
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
                        emsa_pss_encode, emsa_pss_verify, hash_info, i2osp, os2ip, pss_max_salt_length,
                        require_signing_hash)
from .errors import DecryptionError, unreadable
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


def _hash_for(scheme: str, hash_name: str | None, key: object = None) -> HashInfo | None:
    if scheme == "raw":
        if hash_name is not None:
            raise ParameterError("hash", "the raw scheme does not hash; leave the hash out")
        return None
    restriction = getattr(key, "pss", None)
    if restriction is not None and restriction.hash is not None:
        if hash_name is None:
            return restriction.hash
        h = hash_info(hash_name)
        if h != restriction.hash:
            raise ParameterError("hash", f"{h.name} with an {restriction.describe()}: it takes "
                                         f"{restriction.hash.name} only")
        return h
    return hash_info(hash_name)


def effective_hash_name(key: object, scheme: str, hash_name: str | None) -> str | None:
    """The hash a scheme will use with ``key``: ``hash_name``, else the key's (a PSS-restricted key
    names one), else the default; None for raw.  Callers that hash a file first ask this."""
    h = _hash_for(_scheme(scheme, SIGNATURE_SCHEMES + ENCRYPTION_SCHEMES), hash_name, key)
    return None if h is None else h.name


def _mgf_for(scheme: str, h: HashInfo | None, mgf1_hash: str | None, key: object = None) -> HashInfo | None:
    """The MGF1 hash: ``mgf1_hash``, else the message (label) hash; only pss and oaep have one."""
    if scheme not in ("pss", "oaep"):
        if mgf1_hash is not None:
            raise ParameterError("mgf1_hash", f"only pss and oaep use MGF1, not {scheme}")
        return None
    restriction = getattr(key, "pss", None)
    if restriction is not None and restriction.mgf1_hash is not None:
        if mgf1_hash is None:
            return restriction.mgf1_hash
        mgf = hash_info(mgf1_hash, "mgf1_hash")
        if mgf != restriction.mgf1_hash:
            raise ParameterError("mgf1_hash", f"MGF1-{mgf.name} with an {restriction.describe()}: it takes "
                                              f"MGF1-{restriction.mgf1_hash.name} only")
        return mgf
    return h if mgf1_hash is None else hash_info(mgf1_hash, "mgf1_hash")


def _check_restriction(key: object, scheme: str) -> None:
    """An RSA-PSS-restricted key does RSASSA-PSS and nothing else (RFC 4055 Sec. 1.2)."""
    restriction = getattr(key, "pss", None)
    if restriction is not None and scheme != "pss":
        raise ParameterError("scheme", f"{scheme} with an {restriction.describe()}: it signs and verifies "
                                       "with pss only")


def _min_salt(key: object) -> int:
    """The least salt length the key allows (0 unless it is PSS-restricted with parameters)."""
    restriction = getattr(key, "pss", None)
    return restriction.min_salt_length if restriction is not None else 0


def _stated_salt(key: object) -> int | None:
    """The salt length a PSS-restricted key states (its parameters' ``saltLength``), else None."""
    restriction = getattr(key, "pss", None)
    return restriction.min_salt_length if restriction is not None and restriction.hash is not None else None


def _raw_block(name: str, data: bytes, key: RSAPublicKey | RSAPrivateKey) -> int:
    if len(data) != key.size:
        raise ParameterError(name, f"raw RSA needs exactly {key.size} bytes (the modulus length), got {len(data)}")
    value = os2ip(data)
    if value >= key.n:
        raise ParameterError(name, "as a big-endian integer it is not below the modulus n")
    return value


def _sign_salt_length(salt_length: SaltLength, em_bits: int, h: HashInfo, min_salt: int = 0,
                      stated: int | None = None) -> int:
    """The salt length to sign with: a byte count, ``"digest"`` (the hash length), ``"max"``; by default
    the hash length, or the length a PSS-restricted key states (``stated``; OpenSSL's default too)."""
    if salt_length is None:
        salt_length = h.digest_size if stated is None else stated
    elif salt_length == "digest":
        salt_length = h.digest_size
    elif salt_length == "max":
        salt_length = max(pss_max_salt_length(em_bits, h), 0)
    elif isinstance(salt_length, str):
        try:
            salt_length = decimal_to_int(salt_length)
        except ValueError:
            raise ParameterError("salt_length", f"expected a byte count, 'digest' or 'max', "
                                                f"got {brief(salt_length)}") from None
    if isinstance(salt_length, bool) or not isinstance(salt_length, int) or salt_length < 0:
        raise ParameterError("salt_length", f"must be a byte count >= 0, got {brief(salt_length)}")
    _check_salt_fits(salt_length, em_bits, h)
    if salt_length < min_salt:
        raise ParameterError("salt_length", f"{salt_length}-byte salt with an RSA-PSS-restricted key that "
                                            f"requires at least {min_salt}")
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


VERIFY_SALT_MODES = ("auto", "digest", "max")


def _verify_salt_length(salt_length: SaltLength, h: HashInfo, em_bits: int, min_salt: int = 0,
                        stated: int | None = None) -> int | None:
    """The exact salt length to require, or None for any length (``"auto"``; a PSS-restricted key's
    minimum ``min_salt`` still holds).  Default: exactly the length the key states (``stated``), else
    exactly the hash length."""
    if salt_length is None:
        return h.digest_size if stated is None else stated
    if salt_length == "auto":
        return None
    if salt_length == "digest":
        salt_length = h.digest_size
    elif salt_length == "max":
        salt_length = max(pss_max_salt_length(em_bits, h), 0)
    elif isinstance(salt_length, str):
        try:
            salt_length = decimal_to_int(salt_length)
        except ValueError:
            raise ParameterError("salt_length", f"expected a byte count, 'digest', 'max' or 'auto', "
                                                f"got {brief(salt_length)}") from None
    if isinstance(salt_length, bool) or not isinstance(salt_length, int) or salt_length < 0:
        raise ParameterError("salt_length", f"must be a byte count >= 0, got {brief(salt_length)}")
    if salt_length < min_salt:
        raise ParameterError("salt_length", f"{salt_length} bytes with an RSA-PSS-restricted key that requires "
                                            f"at least {min_salt}")
    return salt_length


# ---------------------------------------------------------------------------------------- signatures


def check_sign_options(key: RSAPublicKey | RSAPrivateKey, scheme: str, hash_name: str | None = None,
                       salt_length: SaltLength = None, mgf1_hash: str | None = None) -> None:
    """Raise the ParameterError :func:`sign` would raise for these options whatever the message."""
    scheme = _scheme(scheme, SIGNATURE_SCHEMES)
    _check_restriction(key, scheme)
    h = _hash_for(scheme, hash_name, key)
    mgf = _mgf_for(scheme, h, mgf1_hash, key)
    if h is not None:
        require_signing_hash(h)
    if scheme != "pss" and salt_length is not None:
        raise ParameterError("salt_length", f"only the pss scheme has a salt, not {scheme}")
    if scheme == "pkcs1v15":
        emsa_pkcs1_v15_encode_digest(bytes(h.digest_size), key.size, h)
    elif scheme == "pss":
        em_bits = key.bits - 1
        emsa_pss_encode(h.digest(b""), em_bits, h, bytes(_sign_salt_length(salt_length, em_bits, h, _min_salt(key),
                                                                   _stated_salt(key))),
                        mgf)


def sign(key: RSAPrivateKey, message: bytes, scheme: str, hash_name: str | None = None, *,
         salt_length: SaltLength = None, salt: bytes | None = None, backend: str = "auto",
         blind_bits: int = DEFAULT_BLIND_BITS, mgf1_hash: str | None = None) -> bytes:
    """Sign ``message``; the signature is ``key.size`` bytes.  ``salt`` fixes the PSS salt (tests)."""
    key = _private(key)
    scheme = _scheme(scheme, SIGNATURE_SCHEMES)
    _check_restriction(key, scheme)
    h = _hash_for(scheme, hash_name, key)
    mgf = _mgf_for(scheme, h, mgf1_hash, key)
    if h is not None:
        require_signing_hash(h)
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
            salt = secrets.token_bytes(_sign_salt_length(salt_length, em_bits, h, _min_salt(key), _stated_salt(key)))
        elif len(salt) < _min_salt(key):
            raise ParameterError("salt", f"{len(salt)} bytes with a key that requires at least {_min_salt(key)}")
        m = os2ip(emsa_pss_encode(_message_hash(message, h), em_bits, h, salt, mgf))
    return i2osp(rsasp1(key, m, backend=backend, blind_bits=blind_bits), k)


def check_signature(key: RSAPublicKey | RSAPrivateKey, message: bytes, signature: bytes, scheme: str,
                    hash_name: str | None = None, *, salt_length: SaltLength = None,
                    mgf1_hash: str | None = None) -> str | None:
    """None when ``signature`` is a valid signature of ``message``, else the reason (all public data).

    A ``signature`` that is not ``key.size`` bytes cannot be one of this key's: ParameterError("signature"),
    bad input, as a ciphertext of the wrong length is in :func:`decrypt`.  One of the right length whose value
    is not below ``n`` is invalid (RFC 8017 Sec. 8.2.2 step 2.b), as such a ciphertext fails to decrypt."""
    scheme = _scheme(scheme, SIGNATURE_SCHEMES)
    _check_restriction(key, scheme)
    h = _hash_for(scheme, hash_name, key)
    mgf = _mgf_for(scheme, h, mgf1_hash, key)
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
        s_len = _verify_salt_length(salt_length, h, key.bits - 1, _min_salt(key), _stated_salt(key))
        _check_salt_fits(s_len or _min_salt(key), key.bits - 1, h)
    if len(signature) != k:
        raise ParameterError("signature", f"is {len(signature)} bytes; a signature of this {key.bits}-bit key is "
                                          f"{k} bytes (the modulus length)")
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
    return emsa_pss_verify(_message_hash(message, h), i2osp(m, em_len), em_bits, h, s_len, mgf, _min_salt(key))


def verify(key: RSAPublicKey | RSAPrivateKey, message: bytes, signature: bytes, scheme: str,
           hash_name: str | None = None, *, salt_length: SaltLength = None, mgf1_hash: str | None = None) -> bool:
    """Whether ``signature`` is valid; bad input (a wrong-length signature) still raises ParameterError."""
    return check_signature(key, message, signature, scheme, hash_name, salt_length=salt_length,
                           mgf1_hash=mgf1_hash) is None


# ---------------------------------------------------------------------------------------- encryption


def encrypt(key: RSAPublicKey | RSAPrivateKey, message: bytes, scheme: str, hash_name: str | None = None, *,
            label: bytes = b"", seed: bytes | None = None, mgf1_hash: str | None = None) -> bytes:
    """Encrypt ``message``; the ciphertext is ``key.size`` bytes.  ``seed`` fixes the OAEP seed (tests)."""
    scheme = _scheme(scheme, ENCRYPTION_SCHEMES)
    _check_restriction(key, scheme)
    h = _hash_for(scheme, hash_name)
    mgf = _mgf_for(scheme, h, mgf1_hash)
    k = key.size
    if scheme == "raw":
        if label:
            raise ParameterError("label", "the raw scheme takes no label")
        m = _raw_block("message", message, key)
    else:
        if seed is None:
            seed = secrets.token_bytes(h.digest_size)
        m = os2ip(eme_oaep_encode(message, k, h, label, seed, mgf))
    return i2osp(rsaep(key, m), k)


def decrypt(key: RSAPrivateKey, ciphertext: bytes, scheme: str, hash_name: str | None = None, *,
            label: bytes = b"", backend: str = "auto", blind_bits: int = DEFAULT_BLIND_BITS,
            mgf1_hash: str | None = None) -> bytes:
    """Decrypt ``ciphertext`` (``key.size`` bytes); OAEP failures raise DecryptionError, nothing more."""
    key = _private(key)
    scheme = _scheme(scheme, ENCRYPTION_SCHEMES)
    _check_restriction(key, scheme)
    h = _hash_for(scheme, hash_name)
    mgf = _mgf_for(scheme, h, mgf1_hash)
    k = key.size
    if scheme == "raw" and label:
        raise ParameterError("label", "the raw scheme takes no label")
    if len(ciphertext) != k:
        raise ParameterError("ciphertext", f"is {len(ciphertext)} bytes; a ciphertext of this {key.bits}-bit key is "
                                           f"{k} bytes (the modulus length)")
    c = os2ip(ciphertext)
    if c >= key.n and scheme == "raw":
        raise ParameterError("ciphertext", "as a big-endian integer it is not below the modulus n")
    if c >= key.n:
        # RFC 8017 Sec. 7.1.2 step 2.b: "decryption error", as a signature out of range is "invalid".
        raise DecryptionError()
    if scheme == "oaep":
        check_oaep_size(k, h)            # before the private operation: a key too small is bad input
    m = rsadp(key, c, backend=backend, blind_bits=blind_bits)
    if scheme == "raw":
        return i2osp(m, k)
    return eme_oaep_decode(i2osp(m, k), k, h, label, mgf)
