"""Our RFC 8017 encodings on their own: derived constants, round trips, and every OAEP failure looking alike."""

from __future__ import annotations

import pytest

from modforge.arith.base import ParameterError
from modforge.rsa.encodings import (HASHES, eme_oaep_decode, eme_oaep_encode, emsa_pkcs1_v15_encode,
                                    emsa_pss_encode, emsa_pss_verify, hash_info, i2osp, mgf1, os2ip, _xor)
from modforge.rsa.errors import DecryptionError

# RFC 8017 Sec. 9.2, note 1: the DER encodings T of DigestInfo, up to the hash value.
RFC8017_PREFIXES = {
    "sha1": "30 21 30 09 06 05 2b 0e 03 02 1a 05 00 04 14",
    "sha224": "30 2d 30 0d 06 09 60 86 48 01 65 03 04 02 04 05 00 04 1c",
    "sha512-224": "30 2d 30 0d 06 09 60 86 48 01 65 03 04 02 05 05 00 04 1c",
    "sha512-256": "30 31 30 0d 06 09 60 86 48 01 65 03 04 02 06 05 00 04 20",
    "sha256": "30 31 30 0d 06 09 60 86 48 01 65 03 04 02 01 05 00 04 20",
    "sha384": "30 41 30 0d 06 09 60 86 48 01 65 03 04 02 02 05 00 04 30",
    "sha512": "30 51 30 0d 06 09 60 86 48 01 65 03 04 02 03 05 00 04 40",
}


@pytest.mark.parametrize("name", sorted(RFC8017_PREFIXES))
def test_derived_digest_info_prefix_is_rfc8017s(name: str) -> None:
    assert HASHES[name].digest_info_prefix == bytes.fromhex(RFC8017_PREFIXES[name])


def test_hash_names() -> None:
    assert hash_info(None).name == "sha256"
    assert hash_info("SHA-384").name == "sha384"
    # OpenSSL's, hashlib's and the standards' spellings of one hash (issue 31, item 11).
    for spelling in ("sha512-224", "SHA512/224", "sha512_224", "SHA-512/224"):
        assert hash_info(spelling).name == "sha512-224"
    for spelling in ("sha3-256", "SHA3-256", "sha3_256"):
        assert hash_info(spelling).name == "sha3-256"
    assert [h.name for h in HASHES.values() if not h.signing] == ["sha1"]
    with pytest.raises(ParameterError, match=r"^hash: unsupported hash 'md5'; choose one of: sha1, sha224, sha256, "
                                             r"sha384, sha512, sha512-224, sha512-256, sha3-224, sha3-256, sha3-384, "
                                             r"sha3-512$"):
        hash_info("md5")


@pytest.mark.parametrize("name", sorted(HASHES))
def test_every_hash_is_hashlibs(name: str) -> None:
    import hashlib

    h = HASHES[name]
    want = hashlib.new(h.hashlib_name, b"abc").digest()
    assert h.digest(b"abc") == want and h.digest_size == len(want)
    # The DigestInfo prefix ends in the OCTET STRING header of this digest length.
    assert h.digest_info_prefix[-2:] == bytes([0x04, len(want)])


def test_i2osp_os2ip() -> None:
    assert i2osp(0, 3) == b"\x00\x00\x00" and i2osp(258, 2) == b"\x01\x02"
    assert os2ip(b"\x00\x01\x02") == 258
    with pytest.raises(ParameterError, match="^integer: too large for 2 octets$"):
        i2osp(1 << 16, 2)


def test_mgf1_is_counter_mode_hash() -> None:
    import hashlib

    h = HASHES["sha256"]
    want = hashlib.sha256(b"seed" + bytes(4)).digest() + hashlib.sha256(b"seed" + b"\x00\x00\x00\x01").digest()
    assert mgf1(b"seed", 40, h) == want[:40]
    assert mgf1(b"seed", 0, h) == b""


def test_pkcs1_v15_layout() -> None:
    h = HASHES["sha256"]
    em = emsa_pkcs1_v15_encode(b"abc", 128, h)
    t = h.digest_info_prefix + h.digest(b"abc")
    assert len(em) == 128 and em.startswith(b"\x00\x01\xff") and em.endswith(b"\x00" + t)
    assert em[2:128 - len(t) - 1] == b"\xff" * (128 - len(t) - 3)
    with pytest.raises(ParameterError, match="^hash: sha512 PKCS#1 v1.5 needs a modulus of at least 94 bytes"):
        emsa_pkcs1_v15_encode(b"", 93, HASHES["sha512"])


@pytest.mark.parametrize("em_bits", [1023, 1024, 1030, 2047])
@pytest.mark.parametrize("salt_len", [0, 20, 32])
def test_pss_round_trip_and_rejections(em_bits: int, salt_len: int) -> None:
    h = HASHES["sha256"]
    m_hash = h.digest(b"message")
    salt = bytes(range(salt_len))
    em = emsa_pss_encode(m_hash, em_bits, h, salt)
    assert len(em) == (em_bits + 7) // 8 and em[-1] == 0xBC
    assert os2ip(em).bit_length() <= em_bits
    assert emsa_pss_verify(m_hash, em, em_bits, h, salt_len) is None
    assert emsa_pss_verify(m_hash, em, em_bits, h, None) is None          # any salt length
    assert emsa_pss_verify(h.digest(b"other"), em, em_bits, h, salt_len) == "hash does not match"
    assert emsa_pss_verify(m_hash, em[:-1] + b"\xbb", em_bits, h, salt_len) == "encoded message does not end in 0xbc"
    assert emsa_pss_verify(m_hash, em, em_bits, h, salt_len + 1) is not None
    assert emsa_pss_verify(m_hash, em[1:], em_bits, h, salt_len) == "encoded message has the wrong length"


def test_pss_salt_too_long_for_key() -> None:
    h = HASHES["sha512"]
    with pytest.raises(ParameterError, match="^salt_length: 64-byte salt with sha512 needs at least 130 encoded bytes"):
        emsa_pss_encode(h.digest(b""), 1023, h, bytes(64))


@pytest.mark.parametrize("name", sorted(HASHES))
@pytest.mark.parametrize("mlen", [0, 1, 20])
def test_oaep_round_trip(name: str, mlen: int) -> None:
    h = HASHES[name]
    k = 256
    msg = bytes(range(mlen))
    em = eme_oaep_encode(msg, k, h, b"label", bytes(h.digest_size))
    assert len(em) == k and em[0] == 0
    assert eme_oaep_decode(em, k, h, b"label") == msg


def test_oaep_longest_message_and_one_more() -> None:
    h = HASHES["sha256"]
    k = 128
    longest = bytes(k - 2 * 32 - 2)
    seed = bytes(32)
    assert eme_oaep_decode(eme_oaep_encode(longest, k, h, b"", seed), k, h, b"") == longest
    with pytest.raises(ParameterError, match=r"^message: too long for OAEP: at most 62 bytes with this key and sha256, got 63$"):
        eme_oaep_encode(longest + b"x", k, h, b"", seed)
    with pytest.raises(ParameterError, match="^hash: sha512 OAEP needs a modulus of at least 130 bytes, this key has 128$"):
        eme_oaep_encode(b"", k, HASHES["sha512"], b"", bytes(64))


def _unmask(em: bytes, k: int, h) -> tuple[int, bytes, bytes]:
    h_len = h.digest_size
    masked_seed, masked_db = em[1:1 + h_len], em[1 + h_len:]
    seed = _xor(masked_seed, mgf1(masked_db, h_len, h))
    return em[0], seed, _xor(masked_db, mgf1(seed, k - h_len - 1, h))


def _remask(y: int, seed: bytes, db: bytes, k: int, h) -> bytes:
    h_len = h.digest_size
    masked_db = _xor(db, mgf1(seed, k - h_len - 1, h))
    return bytes([y]) + _xor(seed, mgf1(masked_db, h_len, h)) + masked_db


def _corruptions(k: int, h) -> dict[str, bytes]:
    """Well-masked encodings each broken in exactly one way RFC 8017 Sec. 7.1.2 step 3g names."""
    msg = b"attack at dawn"
    em = eme_oaep_encode(msg, k, h, b"", bytes(range(h.digest_size)))
    y, seed, db = _unmask(em, k, h)
    h_len = h.digest_size
    sep = h_len + (k - len(msg) - 2 * h_len - 2)
    assert db[sep] == 1
    out = {
        "y nonzero": _remask(1, seed, db, k, h),
        "label hash differs": _remask(0, seed, bytes([db[0] ^ 1]) + db[1:], k, h),
        "separator missing": _remask(0, seed, db[:sep] + b"\x00" + db[sep + 1:].replace(b"\x01", b"\x02"), k, h),
        "nonzero padding byte": _remask(0, seed, db[:sep - 1] + b"\x07" + db[sep:], k, h),
        "separator is 0x02": _remask(0, seed, db[:sep] + b"\x02" + db[sep + 1:], k, h),
    }
    return out


def test_every_oaep_failure_raises_the_same_error() -> None:
    h = HASHES["sha256"]
    k = 128
    for what, em in _corruptions(k, h).items():
        with pytest.raises(DecryptionError) as info:
            eme_oaep_decode(em, k, h, b"")
        assert str(info.value) == "decryption failed", what
        assert info.value.__cause__ is None and info.value.__context__ is None, what
    with pytest.raises(DecryptionError, match="^decryption failed$"):
        eme_oaep_decode(eme_oaep_encode(b"x", k, h, b"a", bytes(32)), k, h, b"b")   # wrong label


def test_oaep_decoder_reads_every_byte() -> None:
    """No early exit: the decoder touches every byte of DB whatever the padding (counted through a spy)."""
    h = HASHES["sha256"]
    k = 128

    class Spy(bytes):
        reads = 0

        def __iter__(self):
            for b in bytes.__iter__(self):
                Spy.reads += 1
                yield b

        def __getitem__(self, item):
            got = bytes.__getitem__(self, item)
            return Spy(got) if isinstance(item, slice) else got

    import modforge.rsa.encodings as enc

    counts = []
    real = enc._xor
    try:
        enc._xor = lambda a, b: Spy(real(a, b))
        for em in [eme_oaep_encode(b"hi", k, h, b"", bytes(32)), *_corruptions(k, h).values()]:
            Spy.reads = 0
            try:
                eme_oaep_decode(em, k, h, b"")
            except DecryptionError:
                pass
            counts.append(Spy.reads)
    finally:
        enc._xor = real
    assert len(set(counts)) == 1 and counts[0] == k - 2 * h.digest_size - 1, counts
