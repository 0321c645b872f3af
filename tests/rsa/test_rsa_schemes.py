"""Our schemes against cryptography (OpenSSL): each side accepts what the other produces."""

from __future__ import annotations

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import padding

from modforge.arith.base import ParameterError
from modforge.rsa import DecryptionError, check_signature, decrypt, encrypt, sign, verify
from modforge.rsa.encodings import i2osp

from .helpers import SIZES, h, oaep, pss, rng

HASH_NAMES = ("sha256", "sha384", "sha512")
MESSAGES = (b"", b"a", b"The quick brown fox jumps over the lazy dog", bytes(range(256)) * 9)


@pytest.mark.parametrize("bits", SIZES)
def test_signatures_verify_with_cryptography_at_every_size(keyring, bits: int) -> None:
    pair = keyring.get(bits)
    for scheme, padder in (("pkcs1v15", padding.PKCS1v15()), ("pss", pss("sha256"))):
        sig = sign(pair.key, b"size test", scheme)
        assert len(sig) == bits // 8
        pair.pub.verify(sig, b"size test", padder, h("sha256"))          # raises InvalidSignature if not
        assert verify(pair.key.public, b"size test", sig, scheme)


@pytest.mark.parametrize("hash_name", HASH_NAMES)
def test_pkcs1v15_both_ways(k2048, hash_name: str) -> None:
    for msg in MESSAGES:
        ours = sign(k2048.key, msg, "pkcs1v15", hash_name)
        k2048.pub.verify(ours, msg, padding.PKCS1v15(), h(hash_name))
        theirs = k2048.ck.sign(msg, padding.PKCS1v15(), h(hash_name))
        assert ours == theirs                                      # deterministic scheme: identical bytes
        assert verify(k2048.key.public, msg, theirs, "pkcs1v15", hash_name)
        assert not verify(k2048.key.public, msg + b"x", theirs, "pkcs1v15", hash_name)


@pytest.mark.parametrize("hash_name", HASH_NAMES)
def test_pss_both_ways(k2048, hash_name: str) -> None:
    pub = k2048.key.public
    for msg in MESSAGES:
        ours = sign(k2048.key, msg, "pss", hash_name)
        k2048.pub.verify(ours, msg, pss(hash_name), h(hash_name))
        k2048.pub.verify(ours, msg, pss(hash_name, padding.PSS.AUTO), h(hash_name))
        theirs = k2048.ck.sign(msg, pss(hash_name), h(hash_name))
        assert verify(pub, msg, theirs, "pss", hash_name)
        assert not verify(pub, msg + b"x", theirs, "pss", hash_name)
    longest = k2048.ck.sign(b"m", pss(hash_name, padding.PSS.MAX_LENGTH), h(hash_name))
    assert check_signature(pub, b"m", longest, "pss", hash_name) is not None      # salt length differs
    assert verify(pub, b"m", longest, "pss", hash_name, salt_length="auto")
    assert verify(pub, b"m", longest, "pss", hash_name, salt_length=256 - h(hash_name).digest_size - 2)
    ours = sign(k2048.key, b"m", "pss", hash_name, salt_length="max")
    k2048.pub.verify(ours, b"m", pss(hash_name, padding.PSS.MAX_LENGTH), h(hash_name))
    zero = sign(k2048.key, b"m", "pss", hash_name, salt_length=0)
    k2048.pub.verify(zero, b"m", pss(hash_name, 0), h(hash_name))
    assert sign(k2048.key, b"m", "pss", hash_name, salt_length=0) == zero        # no salt: deterministic


@pytest.mark.parametrize("bits", [1025, 1031, 1032, 1033])
def test_pss_when_the_modulus_is_not_a_whole_number_of_bytes(keyring, bits: int) -> None:
    """emBits = modBits - 1: at 1025 and 1033 bits the encoded message is one byte shorter than k."""
    pair = keyring.get(bits)
    for hash_name in ("sha256", "sha384"):
        ours = sign(pair.key, b"odd", "pss", hash_name)
        pair.pub.verify(ours, b"odd", pss(hash_name), h(hash_name))
        assert verify(pair.key.public, b"odd", pair.ck.sign(b"odd", pss(hash_name), h(hash_name)), "pss", hash_name)
        ours = sign(pair.key, b"odd", "pkcs1v15", hash_name)
        pair.pub.verify(ours, b"odd", padding.PKCS1v15(), h(hash_name))


@pytest.mark.parametrize("hash_name", HASH_NAMES)
@pytest.mark.parametrize("label", [b"", b"a label"])
def test_oaep_both_ways(k2048, hash_name: str, label: bytes) -> None:
    limit = 256 - 2 * h(hash_name).digest_size - 2
    for msg in (b"", b"x", b"secret message", bytes(range(limit))):
        theirs = k2048.pub.encrypt(msg, oaep(hash_name, label))
        assert decrypt(k2048.key, theirs, "oaep", hash_name, label=label) == msg
        ours = encrypt(k2048.key.public, msg, "oaep", hash_name, label=label)
        assert k2048.ck.decrypt(ours, oaep(hash_name, label)) == msg


@pytest.mark.parametrize("bits", SIZES)
def test_we_decrypt_what_cryptography_encrypts_at_every_size(keyring, bits: int) -> None:
    pair = keyring.get(bits)
    r = rng(bits)
    for _ in range(2):
        msg = r.randbytes(r.randrange(1, 40))
        assert decrypt(pair.key, pair.pub.encrypt(msg, oaep("sha256")), "oaep") == msg


def test_raw_both_ways(k1024) -> None:
    key = k1024.key
    n = key.n
    d = k1024.ck.private_numbers().d
    for m in (0, 1, n - 1, 123456789):
        block = i2osp(m, 128)
        s = sign(key, block, "raw")
        assert s == i2osp(pow(m, d, n), 128) and verify(key.public, block, s, "raw")
        c = encrypt(key.public, block, "raw")
        assert c == i2osp(pow(m, key.e, n), 128) and decrypt(key, c, "raw") == block


# ------------------------------------------------------------------------------------- bad input


def test_wrong_lengths_and_ranges(k1024) -> None:
    key, pub = k1024.key, k1024.key.public
    with pytest.raises(ParameterError, match=r"^message: raw RSA needs exactly 128 bytes \(the modulus length\), got 5$"):
        sign(key, b"short", "raw")
    with pytest.raises(ParameterError, match="^message: as a big-endian integer it is not below the modulus n$"):
        sign(key, b"\xff" * 128, "raw")
    with pytest.raises(ParameterError, match=r"^ciphertext: is 127 bytes; a ciphertext of this 1024-bit key is 128 "
                                             r"bytes \(the modulus length\)$"):
        decrypt(key, bytes(127), "oaep")
    with pytest.raises(ParameterError, match="^ciphertext: as a big-endian integer it is not below the modulus n$"):
        decrypt(key, b"\xff" * 128, "raw")
    with pytest.raises(DecryptionError, match="^decryption failed$"):     # RFC 8017 7.1.2 step 2.b
        decrypt(key, b"\xff" * 128, "oaep")
    with pytest.raises(ParameterError, match=r"^message: too long for OAEP: at most 62 bytes with this key and sha256, got 63$"):
        encrypt(pub, bytes(63), "oaep")
    with pytest.raises(ParameterError, match="^hash: sha512 OAEP needs a modulus of at least 130 bytes, this key has 128$"):
        encrypt(pub, b"", "oaep", "sha512")
    with pytest.raises(ParameterError, match="^hash: sha512 OAEP needs a modulus of at least 130 bytes"):
        decrypt(key, bytes(128), "oaep", "sha512")
    with pytest.raises(ParameterError, match="^salt_length: 64-byte salt with sha512 needs at least 130 encoded bytes"):
        sign(key, b"m", "pss", "sha512")
    # The same two faults of a signature are bad input too (they were "invalid", exit 1, before issue 31).
    with pytest.raises(ParameterError, match=r"^signature: is 127 bytes; a signature of this 1024-bit key is 128 "
                                             r"bytes \(the modulus length\)$"):
        check_signature(pub, b"m", bytes(127), "pss")
    assert check_signature(pub, b"m", b"\xff" * 128, "pss") == "signature representative is not below the modulus"


def test_bad_options(k1024) -> None:
    key = k1024.key
    with pytest.raises(ParameterError, match="^scheme: unknown scheme 'pkcs1'; choose one of: raw, pkcs1v15, pss$"):
        sign(key, b"m", "pkcs1")
    with pytest.raises(ParameterError, match="^scheme: unknown scheme 'pkcs1v15'; choose one of: raw, oaep$"):
        encrypt(key.public, b"m", "pkcs1v15")          # PKCS#1 v1.5 encryption is not offered
    with pytest.raises(ParameterError, match="^hash: the raw scheme does not hash; leave the hash out$"):
        sign(key, bytes(128), "raw", "sha256")
    with pytest.raises(ParameterError, match="^hash: unsupported hash 'md5'"):
        sign(key, b"m", "pss", "md5")
    with pytest.raises(ParameterError, match="^salt_length: must be a byte count >= 0, got -1$"):
        sign(key, b"m", "pss", salt_length=-1)
    with pytest.raises(ParameterError, match="^label: the raw scheme takes no label$"):
        encrypt(key.public, bytes(128), "raw", label=b"x")


def test_tampered_signatures_are_invalid(k2048) -> None:
    pub = k2048.key.public
    for scheme in ("pkcs1v15", "pss"):
        sig = bytearray(sign(k2048.key, b"msg", scheme))
        assert verify(pub, b"msg", bytes(sig), scheme)
        for pos in (0, 100, 255):
            bad = bytearray(sig)
            bad[pos] ^= 0x40
            reason = check_signature(pub, b"msg", bytes(bad), scheme)
            assert reason is not None
            with pytest.raises(InvalidSignature):
                k2048.pub.verify(bytes(bad), b"msg", pss("sha256") if scheme == "pss" else padding.PKCS1v15(),
                                 h("sha256"))
        assert not verify(pub, b"msg", bytes(sig), scheme, "sha384")


def test_oaep_failures_all_look_alike(k2048) -> None:
    key = k2048.key
    good = k2048.pub.encrypt(b"secret", oaep("sha256"))
    cases = {
        "wrong label": (good, dict(label=b"other")),
        "wrong hash": (good, dict(hash_name="sha384")),
        "random ciphertext": (i2osp(rng(9).randrange(key.n), 256), {}),
        "ciphertext of a raw block": (encrypt(key.public, i2osp(12345, 256), "raw"), {}),
        "pkcs1v15 ciphertext": (k2048.pub.encrypt(b"secret", padding.PKCS1v15()), {}),
    }
    for what, (ct, kw) in cases.items():
        with pytest.raises(DecryptionError) as info:
            decrypt(key, ct, "oaep", **kw)
        assert str(info.value) == "decryption failed" and info.value.__context__ is None, what
