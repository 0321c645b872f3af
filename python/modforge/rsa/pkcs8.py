"""The first bytes of an encrypted PKCS#8 private key, decrypted: enough to read the key's algorithm.

``cryptography`` loads an id-RSASSA-PSS key as a plain RSA key and drops the marker, and in an encrypted
PKCS#8 file (RFC 5958 ``EncryptedPrivateKeyInfo``) the marker is inside the ciphertext.  So
:func:`decrypted_prefix` decrypts the first cipher blocks itself, which hold the ``PrivateKeyInfo``'s
``AlgorithmIdentifier``.  It covers the schemes OpenSSL 1.1 and 3 and ``cryptography`` write (RFC 8018
PBES2 with PBKDF2-HMAC-SHA1/224/256/384/512 or scrypt, then AES-128/192/256-CBC or DES-EDE3-CBC) and the
one OpenSSL 1.0 wrote by default (RFC 7292 ``pbeWithSHAAnd3-KeyTripleDES-CBC``), and returns ``None`` for
any other (PBES1 with DES or RC2, the PKCS#12 RC2 and RC4 schemes); the key itself is still loaded by
``cryptography``, which checks the password.  The DER reader here only walks the few fields it needs.
"""
from __future__ import annotations

from typing import Callable

# OIDs as DER content bytes (RFC 8018, RFC 7914, NIST CSOR).
_PBES2 = bytes.fromhex("2a864886f70d01050d")
_PBKDF2 = bytes.fromhex("2a864886f70d01050c")
_SCRYPT = bytes.fromhex("2b06010401da47040b")
_HMAC_SHA1 = bytes.fromhex("2a864886f70d0207")      # PBKDF2's default PRF
_PRFS = {_HMAC_SHA1: "SHA1", bytes.fromhex("2a864886f70d0208"): "SHA224",
         bytes.fromhex("2a864886f70d0209"): "SHA256", bytes.fromhex("2a864886f70d020a"): "SHA384",
         bytes.fromhex("2a864886f70d020b"): "SHA512"}
# cipher OID -> (key bytes, block bytes, name)
_CIPHERS = {bytes.fromhex("608648016503040102"): (16, 16, "AES"),
            bytes.fromhex("608648016503040116"): (24, 16, "AES"),
            bytes.fromhex("60864801650304012a"): (32, 16, "AES"),
            bytes.fromhex("2a864886f70d0307"): (24, 8, "TripleDES")}

# pbeWithSHAAnd3-KeyTripleDES-CBC (RFC 7292, appendix C).
_PKCS12_SHA1_3DES = bytes.fromhex("2a864886f70d010c0103")

_SEQUENCE, _INTEGER, _OCTETS, _OID = 0x30, 0x02, 0x04, 0x06
# A hostile file must not make this second decryption (after cryptography's own) unbounded: an OpenSSL
# scrypt default is N = 2^14, r = 8, p = 1 (16 MiB); far beyond that, skip the check.
_SCRYPT_MAX_BYTES = 1 << 30
_PKCS12_MAX_ITERATIONS = 1 << 20


class _Malformed(ValueError):
    pass


def _tlv(buf: bytes, pos: int, end: int) -> tuple[int, int, int]:
    """(tag, content start, content end) of the DER element at ``pos`` (definite lengths only)."""
    if pos + 2 > end:
        raise _Malformed("truncated")
    tag, first = buf[pos], buf[pos + 1]
    pos += 2
    if first < 0x80:
        length = first
    else:
        count = first & 0x7F
        if count == 0 or count > 4 or pos + count > end:
            raise _Malformed("bad length")
        length = int.from_bytes(buf[pos:pos + count], "big")
        pos += count
    if pos + length > end:
        raise _Malformed("truncated")
    return tag, pos, pos + length


def _children(buf: bytes, start: int, end: int) -> list[tuple[int, int, int]]:
    out, pos = [], start
    while pos < end:
        tag, s, e = _tlv(buf, pos, end)
        out.append((tag, s, e))
        pos = e
    return out


def _expect(item: tuple[int, int, int], tag: int) -> tuple[int, int]:
    if item[0] != tag:
        raise _Malformed(f"tag {item[0]:#x} where {tag:#x} was expected")
    return item[1], item[2]


def _integer(buf: bytes, item: tuple[int, int, int]) -> int:
    s, e = _expect(item, _INTEGER)
    if e - s > 8:
        raise _Malformed("integer too large")
    return int.from_bytes(buf[s:e], "big", signed=True)


def _algorithm(buf: bytes, item: tuple[int, int, int]) -> tuple[bytes, list[tuple[int, int, int]]]:
    """(OID, parameter elements) of an AlgorithmIdentifier."""
    s, e = _expect(item, _SEQUENCE)
    parts = _children(buf, s, e)
    if not parts:
        raise _Malformed("empty AlgorithmIdentifier")
    os_, oe = _expect(parts[0], _OID)
    return buf[os_:oe], parts[1:]


def _kdf(buf: bytes, item: tuple[int, int, int], key_bytes: int) -> Callable[[bytes], bytes] | None:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
    from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

    oid, params = _algorithm(buf, item)
    if len(params) != 1:
        raise _Malformed("KDF parameters")
    fields = _children(buf, *_expect(params[0], _SEQUENCE))
    if len(fields) < 2:
        raise _Malformed("KDF parameters")
    ss, se = _expect(fields[0], _OCTETS)
    salt = buf[ss:se]
    if oid == _PBKDF2:
        iterations = _integer(buf, fields[1])
        prf, rest = _HMAC_SHA1, fields[2:]
        if rest and rest[0][0] == _INTEGER:
            if _integer(buf, rest[0]) != key_bytes:
                return None
            rest = rest[1:]
        if rest:
            prf = _algorithm(buf, rest[0])[0]
        if prf not in _PRFS or iterations < 1:
            return None
        algorithm = getattr(hashes, _PRFS[prf])()
        return lambda password: PBKDF2HMAC(algorithm, key_bytes, salt, iterations).derive(password)
    if oid == _SCRYPT:
        if len(fields) < 4:
            raise _Malformed("scrypt parameters")
        n, r, p = (_integer(buf, f) for f in fields[1:4])
        if len(fields) > 4 and _integer(buf, fields[4]) != key_bytes:
            return None
        if n < 2 or r < 1 or p < 1 or 128 * n * r * p > _SCRYPT_MAX_BYTES:
            return None
        return lambda password: Scrypt(salt, key_bytes, n, r, p).derive(password)
    return None


def decrypted_prefix(der: bytes, password: bytes, length: int = 48) -> bytes | None:
    """The first ``length`` bytes (rounded up to whole cipher blocks, at most the whole ciphertext) of the
    ``PrivateKeyInfo`` inside the encrypted PKCS#8 key ``der``, or ``None`` when ``der`` is not an
    ``EncryptedPrivateKeyInfo`` in one of the schemes named in the module's docstring.  The cipher's
    padding is not checked: only ``cryptography``'s load of the whole key says whether the password was
    right, and this is meant to run after it."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    try:
        s, e = _expect(_tlv(der, 0, len(der)), _SEQUENCE)
        top = _children(der, s, e)
        if len(top) != 2:
            return None
        scheme, scheme_params = _algorithm(der, top[0])
        cs, ce = _expect(top[1], _OCTETS)
        if scheme == _PKCS12_SHA1_3DES and len(scheme_params) == 1:
            return _pkcs12_3des_prefix(der, scheme_params[0], der[cs:ce], password, length)
        if scheme != _PBES2 or len(scheme_params) != 1:
            return None
        kdf_item, cipher_item = _children(der, *_expect(scheme_params[0], _SEQUENCE))
        cipher_oid, cipher_params = _algorithm(der, cipher_item)
        if cipher_oid not in _CIPHERS or len(cipher_params) != 1:
            return None
        key_bytes, block, name = _CIPHERS[cipher_oid]
        ivs, ive = _expect(cipher_params[0], _OCTETS)
        iv = der[ivs:ive]
        if len(iv) != block:
            return None
        derive = _kdf(der, kdf_item, key_bytes)
        if derive is None:
            return None
        blocks = min(-(-length // block), (ce - cs) // block)
        if blocks == 0:
            return None
        key = derive(password)
        algorithm = algorithms.AES(key) if name == "AES" else _triple_des(key)
        decryptor = Cipher(algorithm, modes.CBC(iv)).decryptor()
        return decryptor.update(der[cs:cs + blocks * block]) + decryptor.finalize()
    except (_Malformed, ValueError):
        return None


def _pkcs12_kdf(password: bytes, salt: bytes, iterations: int, purpose: int, size: int) -> bytes:
    """RFC 7292 appendix B.2 with SHA-1 (u = 20, v = 64 bytes): ``purpose`` 1 derives key bytes, 2 an IV.
    The password is the BMPString OpenSSL forms from it (UTF-16BE with a two-byte terminator)."""
    import hashlib

    v, u = 64, 20
    text = password.decode("utf-8").encode("utf-16-be") + b"\0\0"
    def fill(b: bytes) -> bytes:   # copies of b, the last one cut, to a whole number of v-byte blocks
        whole = v * -(-len(b) // v)
        return (b * -(-whole // len(b)))[:whole] if b else b""

    i_block = bytearray(fill(salt) + fill(text))
    out = b""
    while len(out) < size:
        a = bytes([purpose]) * v + bytes(i_block)
        for _ in range(iterations):
            a = hashlib.sha1(a).digest()
        out += a
        b = int.from_bytes((a * -(-v // u))[:v], "big") + 1
        for j in range(0, len(i_block), v):
            word = (int.from_bytes(i_block[j:j + v], "big") + b) % (1 << (8 * v))
            i_block[j:j + v] = word.to_bytes(v, "big")
    return out[:size]


def _pkcs12_3des_prefix(der: bytes, params: tuple[int, int, int], ciphertext: bytes, password: bytes,
                        length: int) -> bytes | None:
    from cryptography.hazmat.primitives.ciphers import Cipher, modes

    fields = _children(der, *_expect(params, _SEQUENCE))
    if len(fields) != 2:
        return None
    ss, se = _expect(fields[0], _OCTETS)
    iterations = _integer(der, fields[1])
    blocks = min(-(-length // 8), len(ciphertext) // 8)
    # The KDF runs in Python here (about 0.5 us per iteration, twice): beyond a million iterations
    # (OpenSSL writes 2048) the check is skipped rather than keep the loader busy for a second or more.
    if not 1 <= iterations <= _PKCS12_MAX_ITERATIONS or blocks == 0:
        return None
    try:
        key = _pkcs12_kdf(password, der[ss:se], iterations, 1, 24)
        iv = _pkcs12_kdf(password, der[ss:se], iterations, 2, 8)
    except UnicodeDecodeError:
        return None
    decryptor = Cipher(_triple_des(key), modes.CBC(iv)).decryptor()
    return decryptor.update(ciphertext[:blocks * 8]) + decryptor.finalize()


def _triple_des(key: bytes):   # type: ignore[no-untyped-def]
    # TripleDES moved to the "decrepit" module in cryptography 43; both names work in the versions we allow.
    try:
        from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
    except ImportError:   # pragma: no cover - older cryptography
        from cryptography.hazmat.primitives.ciphers.algorithms import TripleDES  # type: ignore[attr-defined]
    return TripleDES(key)
