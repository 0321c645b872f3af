"""What ``cryptography`` does not read from an RSA key file: PSS restrictions and multi-prime keys.

* An id-RSASSA-PSS key (RFC 4055 Sec. 3.1, RFC 8017 App. A.2.3): ``cryptography`` loads it as a plain RSA
  key and drops its ``AlgorithmIdentifier``, which restricts the key to RSASSA-PSS and, when it carries
  ``RSASSA-PSS-params``, to one hash, one MGF1 hash and a minimum salt length.  :func:`pss_restriction`
  reads them from the file (a ``PrivateKeyInfo`` or a ``SubjectPublicKeyInfo``).
* A multi-prime key (RFC 8017 Sec. 3.2 and App. A.1.2: ``version`` 1 and ``otherPrimeInfos``), as
  ``openssl genpkey -pkeyopt rsa_keygen_primes:3`` writes it: ``cryptography`` refuses it ("Invalid
  key").  :func:`multi_prime_numbers` reads its integers (PKCS#1, or inside a PKCS#8 ``PrivateKeyInfo``);
  :class:`~modforge.rsa.keys.RSAPrivateKey` checks them.

The DER walk is :mod:`.pkcs8`'s (definite lengths only); only the few fields needed are read.
"""

from __future__ import annotations

from dataclasses import dataclass

from .encodings import HashInfo, hash_by_oid, hash_info
from .pkcs8 import _Malformed, _children, _expect, _tlv

_SEQUENCE, _INTEGER, _OCTETS, _OID, _NULL = 0x30, 0x02, 0x04, 0x06, 0x05
_RSA_ENCRYPTION = bytes.fromhex("2a864886f70d010101")     # 1.2.840.113549.1.1.1
_RSASSA_PSS = bytes.fromhex("2a864886f70d01010a")         # 1.2.840.113549.1.1.10
_MGF1 = bytes.fromhex("2a864886f70d010108")               # 1.2.840.113549.1.1.8
# RFC 4055 Sec. 3.1: the defaults of RSASSA-PSS-params when a field is absent.
_DEFAULT_HASH, _DEFAULT_SALT, _DEFAULT_TRAILER = "sha1", 20, 1


@dataclass(frozen=True)
class PssRestriction:
    """An id-RSASSA-PSS key's limits: RSASSA-PSS only; with parameters, only ``hash`` and MGF1 with
    ``mgf1_hash``, and salts of at least ``min_salt_length`` bytes (OpenSSL's reading of ``saltLength``).
    Without parameters (``hash is None``) any PSS parameters go."""

    hash: HashInfo | None = None
    mgf1_hash: HashInfo | None = None
    min_salt_length: int = 0

    def describe(self) -> str:
        if self.hash is None:
            return "RSA-PSS-restricted key (RSASSA-PSS only)"
        return (f"RSA-PSS-restricted key (RSASSA-PSS with {self.hash.name}, MGF1-{self.mgf1_hash.name}, "
                f"salt >= {self.min_salt_length} bytes)")


class KeyFormatError(ValueError):
    """The key's parameters are malformed or name something unsupported (the text says which)."""


def _big_integer(buf: bytes, item: tuple[int, int, int]) -> int:
    s, e = _expect(item, _INTEGER)
    return int.from_bytes(buf[s:e], "big", signed=True)


def _hash_of(buf: bytes, item: tuple[int, int, int], what: str) -> HashInfo:
    parts = _children(buf, *_expect(item, _SEQUENCE))
    if not parts or parts[0][0] != _OID or any(p[0] != _NULL for p in parts[1:]):
        raise KeyFormatError(f"malformed {what} in the RSASSA-PSS parameters")
    s, e = parts[0][1], parts[0][2]
    found = hash_by_oid(buf[s - 2:e] if e - s < 0x80 else b"")
    if found is None:
        raise KeyFormatError(f"the RSASSA-PSS parameters name a {what} this tool does not support")
    return found


def _algorithm_identifier(der: bytes) -> tuple[bytes, tuple[int, int, int] | None] | None:
    """(OID, its parameters element or None) of the key algorithm of a PrivateKeyInfo or
    SubjectPublicKeyInfo; the outer length is not checked, so a decrypted prefix of the file will do."""
    if len(der) < 4 or der[0] != _SEQUENCE:
        return None
    first = der[1]
    pos = 2 + (first & 0x7F if first & 0x80 else 0)
    # version INTEGER (PrivateKeyInfo only), then the AlgorithmIdentifier SEQUENCE
    tag, s, e = _tlv(der, pos, len(der))
    if tag == _INTEGER:
        tag, s, e = _tlv(der, e, len(der))
    if tag != _SEQUENCE:
        return None
    parts = _children(der, s, e)
    if not parts or parts[0][0] != _OID:
        return None
    return der[parts[0][1]:parts[0][2]], (parts[1] if len(parts) > 1 else None)


def pss_restriction(der: bytes) -> PssRestriction | None:
    """The PSS restriction of the key in ``der`` (or a prefix of it), or None for any other key.
    KeyFormatError when the parameters are malformed or unsupported."""
    try:
        found = _algorithm_identifier(der)
    except _Malformed:
        return None
    if found is None or found[0] != _RSASSA_PSS:
        return None
    params = found[1]
    if params is None:
        return PssRestriction()
    if params[0] != _SEQUENCE:
        # NULL (as rsaEncryption has) or anything else: RFC 4055 allows absent or RSASSA-PSS-params only.
        raise KeyFormatError("parameters that are not RSASSA-PSS-params (RFC 4055 Sec. 3.1)")
    try:
        fields = {tag: (tag, s, e) for tag, s, e in _children(der, *_expect(params, _SEQUENCE))}
        h = hash_info(_DEFAULT_HASH)
        mgf = h
        salt, trailer = _DEFAULT_SALT, _DEFAULT_TRAILER
        if 0xA0 in fields:
            h = _hash_of(der, _tlv(der, fields[0xA0][1], fields[0xA0][2]), "hash")
            mgf = h if 0xA1 not in fields else mgf
        if 0xA1 in fields:
            mgf_alg = _children(der, *_expect(_tlv(der, fields[0xA1][1], fields[0xA1][2]), _SEQUENCE))
            if len(mgf_alg) != 2 or mgf_alg[0][0] != _OID or der[mgf_alg[0][1]:mgf_alg[0][2]] != _MGF1:
                raise KeyFormatError("the RSASSA-PSS parameters name a mask generation function other than MGF1")
            mgf = _hash_of(der, mgf_alg[1], "MGF1 hash")
        if 0xA2 in fields:
            salt = _big_integer(der, _tlv(der, fields[0xA2][1], fields[0xA2][2]))
        if 0xA3 in fields:
            trailer = _big_integer(der, _tlv(der, fields[0xA3][1], fields[0xA3][2]))
    except _Malformed as exc:
        raise KeyFormatError(f"malformed RSASSA-PSS parameters ({exc})") from None
    if trailer != 1:
        raise KeyFormatError(f"RSASSA-PSS trailer field {trailer} (only 1, the 0xbc byte, is defined)")
    if not 0 <= salt < 1 << 16:
        raise KeyFormatError(f"RSASSA-PSS salt length {salt} is out of range")
    return PssRestriction(h, mgf, salt)


def multi_prime_numbers(der: bytes) -> dict[str, object] | None:
    """The integers of a multi-prime RSAPrivateKey in ``der`` (PKCS#1, or PKCS#8 around it), as
    ``n, e, d, p, q, dp, dq, qinv`` and ``other_primes`` (``(r, d, t)`` triples); None when ``der`` is
    not one (a two-prime key, or something else)."""
    try:
        s, e = _expect(_tlv(der, 0, len(der)), _SEQUENCE)
        top = _children(der, s, e)
        if len(top) == 3 and top[0][0] == _INTEGER and top[1][0] == _SEQUENCE and top[2][0] == _OCTETS:
            alg = _children(der, top[1][1], top[1][2])
            if not alg or der[alg[0][1]:alg[0][2]] not in (_RSA_ENCRYPTION, _RSASSA_PSS):
                return None
            inner = der[top[2][1]:top[2][2]]
            s, e = _expect(_tlv(inner, 0, len(inner)), _SEQUENCE)
            der, top = inner, _children(inner, s, e)
        if len(top) != 10 or any(t[0] != _INTEGER for t in top[:9]) or top[9][0] != _SEQUENCE:
            return None
        values = [_big_integer(der, t) for t in top[:9]]
        if values[0] != 1:
            return None
        others = []
        for tag, s, e in _children(der, top[9][1], top[9][2]):
            if tag != _SEQUENCE:
                return None
            triple = _children(der, s, e)
            if len(triple) != 3:
                return None
            others.append(tuple(_big_integer(der, t) for t in triple))
    except _Malformed:
        return None
    if not others:
        return None
    names = ("n", "e", "d", "p", "q", "dp", "dq", "qinv")
    return {**dict(zip(names, values[1:])), "other_primes": tuple(others)}
