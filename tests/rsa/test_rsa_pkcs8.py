"""Encrypted PKCS#8 keys restricted to RSA-PSS are refused like unencrypted ones.

The files are written by the ``openssl`` command (an implementation independent of ``modforge.rsa.pkcs8``)
in every scheme ``cryptography`` can load; ``openssl genpkey -algorithm RSA-PSS`` makes the restricted key.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from modforge.arith.base import ParameterError
from modforge.rsa import load_private_key
from modforge.rsa.encodings import hash_info
from modforge.rsa.pkcs8 import decrypted_prefix

OPENSSL = shutil.which("openssl")
pytestmark = pytest.mark.skipif(OPENSSL is None, reason="the openssl command writes the test keys")

RSA_OID, PSS_OID = bytes.fromhex("06092a864886f70d010101"), bytes.fromhex("06092a864886f70d01010a")
PASSWORD = b"correct horse"
# (openssl pkcs8 options, what it is): PBES2 as OpenSSL 3 and cryptography write it, its other PRFs and
# ciphers, scrypt, and OpenSSL 1.0's default (PKCS#12 SHA-1 3DES).
SCHEMES = {
    "pbes2-aes256-sha256": ["-v2", "aes-256-cbc"],
    "pbes2-aes128-sha1": ["-v2", "aes-128-cbc", "-v2prf", "hmacWithSHA1"],
    "pbes2-aes192-sha512": ["-v2", "aes-192-cbc", "-v2prf", "hmacWithSHA512"],
    "pbes2-des3-sha256": ["-v2", "des3"],
    "scrypt-aes256": ["-scrypt"],
    "pkcs12-sha1-3des": ["-v1", "PBE-SHA1-3DES"],
}


def _openssl(*args: str | Path, data: bytes | None = None) -> bytes:
    assert OPENSSL is not None
    return subprocess.run([OPENSSL, *map(str, args)], input=data, capture_output=True, check=True).stdout


@pytest.fixture(scope="module")
def plain_keys(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("pkcs8")
    out = {"pss": d / "pss.pem", "rsa": d / "rsa.pem"}
    # With parameters: an AlgorithmIdentifier of 62 bytes, past the first cipher blocks.
    _openssl("genpkey", "-algorithm", "RSA-PSS", "-pkeyopt", "rsa_keygen_bits:1024", "-pkeyopt",
             "rsa_pss_keygen_md:sha384", "-pkeyopt", "rsa_pss_keygen_mgf1_md:sha256", "-pkeyopt",
             "rsa_pss_keygen_saltlen:40", "-out", out["pss"])
    _openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", out["rsa"])
    return out


def _encrypted(key: Path, scheme: str, der: bool = False) -> bytes:
    return _openssl("pkcs8", "-topk8", "-in", key, "-passout", f"pass:{PASSWORD.decode()}", *SCHEMES[scheme],
                    *(["-outform", "DER"] if der else []))


@pytest.mark.parametrize("der", [False, True], ids=["pem", "der"])
@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_encrypted_pss_restricted_keys_keep_their_restriction(plain_keys, scheme: str, der: bool) -> None:
    from modforge.rsa.keyder import PssRestriction

    # The restriction is inside the ciphertext; read there, it is the one the unencrypted file carries.
    restricted = load_private_key(_encrypted(plain_keys["pss"], scheme, der), PASSWORD)
    assert restricted.pss is not None and restricted == load_private_key(plain_keys["pss"].read_bytes())
    assert restricted.pss == PssRestriction(hash_info("sha384"), hash_info("sha256"), 40)
    # An ordinary key in the same scheme still loads, whole, unrestricted.
    key = load_private_key(_encrypted(plain_keys["rsa"], scheme, der), PASSWORD)
    assert key.pss is None
    assert key == load_private_key(plain_keys["rsa"].read_bytes())


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_decrypted_prefix_is_the_private_key_info(plain_keys, scheme: str) -> None:
    # The decrypted bytes are the start of the PKCS#8 DER openssl writes unencrypted.
    for name, oid in (("pss", PSS_OID), ("rsa", RSA_OID)):
        plain = _openssl("pkcs8", "-topk8", "-nocrypt", "-in", plain_keys[name], "-outform", "DER")
        prefix = decrypted_prefix(_encrypted(plain_keys[name], scheme, der=True), PASSWORD)
        assert prefix is not None and len(prefix) >= 40 and plain.startswith(prefix), (scheme, name)
        assert oid in prefix[:40]
        # A wrong password decrypts to something else (and cryptography refuses the key before this runs).
        assert decrypted_prefix(_encrypted(plain_keys[name], scheme, der=True), b"wrong") != prefix


def test_a_wrong_password_is_still_reported_as_such(plain_keys) -> None:
    with pytest.raises(ParameterError, match="could not decrypt the private key"):
        load_private_key(_encrypted(plain_keys["pss"], "pbes2-aes256-sha256"), b"wrong")


def test_an_unsupported_key_encryption_is_named(plain_keys) -> None:
    # Camellia is valid PBES2 that cryptography does not load: not a "wrong password".
    data = _openssl("pkcs8", "-topk8", "-in", plain_keys["rsa"], "-passout", "pass:x", "-v2", "camellia-256-cbc")
    for password in (b"x", b"y"):
        with pytest.raises(ParameterError, match="encryption is not supported .*re-encrypt it"):
            load_private_key(data, password)


def test_other_inputs_give_none(plain_keys) -> None:
    # Not an EncryptedPrivateKeyInfo: unencrypted PKCS#8, an empty or one-byte input, a bare SEQUENCE.
    plain = _openssl("pkcs8", "-topk8", "-nocrypt", "-in", plain_keys["rsa"], "-outform", "DER")
    for der in (plain, b"", b"\x30", b"\x30\x00", b"\x30\x84\xff\xff\xff\xff"):
        assert decrypted_prefix(der, PASSWORD) is None


def test_damaged_structures_never_raise(plain_keys) -> None:
    # Every truncation of the header and seeded random byte changes: a prefix or None, never an exception.
    seed = 20261123
    r = random.Random(seed)
    good = _encrypted(plain_keys["rsa"], "pbes2-aes256-sha256", der=True)
    # Where the ciphertext starts, from openssl's own parse: the last line is the encryptedData OCTET STRING,
    # "offset:d=1  hl=H l=  L prim: OCTET STRING".
    last = _openssl("asn1parse", "-inform", "DER", data=good).decode().strip().splitlines()[-1]
    assert "OCTET STRING" in last, last
    header = int(last.split(":", 1)[0]) + int(last.split("hl=")[1].split()[0])
    assert 60 < header < len(good) - 16, header
    for cut in range(len(good) + 1):
        if cut < header + 8 or cut % 97 == 0:
            decrypted_prefix(good[:cut], PASSWORD)
    for _ in range(300):
        bad = bytearray(good)
        for _ in range(r.randint(1, 3)):
            bad[r.randrange(min(len(bad), header + 8))] = r.randrange(256)
        try:
            decrypted_prefix(bytes(bad), PASSWORD)
        except Exception as exc:   # pragma: no cover - the failure being tested for
            pytest.fail(f"seed {seed}: {bytes(bad[:header]).hex()} raised {exc!r}")


def test_cryptography_writes_a_scheme_we_read(plain_keys) -> None:
    # What modforge's own keygen (cryptography's BestAvailableEncryption) writes is covered too.
    key = serialization.load_pem_private_key(plain_keys["rsa"].read_bytes(), None)
    data = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                             serialization.BestAvailableEncryption(PASSWORD))
    prefix = decrypted_prefix(data, PASSWORD)
    assert prefix is not None and RSA_OID in prefix[:40]
