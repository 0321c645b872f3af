"""Key loading: every format cryptography writes, and a clear ``key: ...`` error for everything else."""

from __future__ import annotations

import gmpy2
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from modforge.arith.base import ParameterError
from modforge.rsa import (RSAPrivateKey, RSAPublicKey, load_private_key, load_public_key, read_private_key,
                          read_public_key)
from modforge.rsa.keys import short_keys_for_simulation

from .helpers import rng

Enc, PrivF, PubF = serialization.Encoding, serialization.PrivateFormat, serialization.PublicFormat


def _same_private(key: RSAPrivateKey, ck) -> None:
    nums = ck.private_numbers()
    assert (key.n, key.e, key.d, key.p, key.q) == (nums.public_numbers.n, nums.public_numbers.e, nums.d, nums.p,
                                                   nums.q)
    assert (key.dp, key.dq, key.qinv) == (nums.dmp1, nums.dmq1, nums.iqmp)


@pytest.mark.parametrize("encoding", [Enc.PEM, Enc.DER])
@pytest.mark.parametrize("fmt", [PrivF.TraditionalOpenSSL, PrivF.PKCS8])
def test_private_formats(k1024, encoding, fmt) -> None:
    data = k1024.ck.private_bytes(encoding, fmt, serialization.NoEncryption())
    key = load_private_key(data)
    _same_private(key, k1024.ck)
    assert load_public_key(data) == key.public      # a private key serves where a public one is wanted


@pytest.mark.parametrize("encoding", [Enc.PEM, Enc.DER])
@pytest.mark.parametrize("fmt", [PubF.PKCS1, PubF.SubjectPublicKeyInfo])
def test_public_formats(k1024, encoding, fmt) -> None:
    pub = load_public_key(k1024.pub.public_bytes(encoding, fmt))
    assert pub == RSAPublicKey(k1024.key.n, k1024.key.e) and pub.bits == 1024 and pub.size == 128


def test_encrypted_pkcs8(k1024, tmp_path) -> None:
    data = k1024.ck.private_bytes(Enc.PEM, PrivF.PKCS8, serialization.BestAvailableEncryption(b"pw"))
    _same_private(load_private_key(data, b"pw"), k1024.ck)
    with pytest.raises(ParameterError, match="^key: the private key is encrypted: a password is needed$"):
        load_private_key(data)
    with pytest.raises(ParameterError, match=r"^key: could not decrypt the private key \(wrong password\?\)$"):
        load_private_key(data, b"nope")
    plain = k1024.ck.private_bytes(Enc.PEM, PrivF.PKCS8, serialization.NoEncryption())
    with pytest.raises(ParameterError, match="^key: a password was given but the private key is not encrypted$"):
        load_private_key(plain, b"pw")


@pytest.mark.parametrize("fmt", [PrivF.PKCS8, PrivF.TraditionalOpenSSL])
def test_wrong_password_whose_padding_survives(k1024, fmt) -> None:
    """About one wrong password in 500 decrypts to garbage with valid cipher padding, and the garbage then fails
    to parse: still a wrong password, not a malformed file (this made test_encrypted_pkcs8 fail now and then)."""
    data = k1024.ck.private_bytes(Enc.PEM, fmt, serialization.BestAvailableEncryption(b"pw"))
    for i in range(20_000):
        password = b"nope%d" % i
        try:
            serialization.load_pem_private_key(data, password=password)
        except ValueError as exc:
            if "incorrect password" not in str(exc).lower():
                break
    else:
        pytest.fail("no wrong password whose padding survives in 20,000 tries (expected about one in 500)")
    with pytest.raises(ParameterError, match=r"^key: could not decrypt the private key \(wrong password\?\)$"):
        load_private_key(data, password)


def test_files(k1024, tmp_path) -> None:
    path = tmp_path / "k.pem"
    path.write_bytes(k1024.pem)
    assert read_private_key(path) == k1024.key and read_public_key(path) == k1024.key.public
    with pytest.raises(ParameterError, match=r"^key: cannot read '.*missing.pem': No such file or directory$"):
        read_private_key(tmp_path / "missing.pem")


def test_repr_shows_no_secret(k1024) -> None:
    text = repr(k1024.key) + str(k1024.key)
    assert text == "RSAPrivateKey(bits=1024, e=65537)" * 2
    assert hex(k1024.key.p)[2:12] not in text


MALFORMED = {
    "empty": (b"", "^key: empty key data$"),
    "garbage": (b"hello world\n", r"^key: not PEM \(no '-----BEGIN' line\) nor a valid DER RSA private key"),
    "bad base64": (b"-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n",
                   r"^key: not a valid PEM RSA private key \(PKCS#1 or PKCS#8\): "),
}


@pytest.mark.parametrize("what", sorted(MALFORMED))
def test_malformed_private(what: str) -> None:
    data, pattern = MALFORMED[what]
    with pytest.raises(ParameterError, match=pattern) as info:
        load_private_key(data)
    assert info.value.param == "key" and "\n" not in str(info.value)


def test_truncated_pem_and_der(k1024) -> None:
    for data in (k1024.pem[:300], k1024.ck.private_bytes(Enc.DER, PrivF.PKCS8, serialization.NoEncryption())[:200]):
        with pytest.raises(ParameterError, match="^key: not .* RSA private key") as info:
            load_private_key(data)
        assert "\n" not in str(info.value)
    with pytest.raises(ParameterError, match="^key: not .* RSA public key"):
        load_public_key(k1024.pub.public_bytes(Enc.DER, PubF.SubjectPublicKeyInfo)[:-10])


def test_not_rsa() -> None:
    eck = ec.generate_private_key(ec.SECP256R1())
    with pytest.raises(ParameterError, match=r"^key: not an RSA private key \(.*EC.*\)$"):
        load_private_key(eck.private_bytes(Enc.PEM, PrivF.PKCS8, serialization.NoEncryption()))
    with pytest.raises(ParameterError, match=r"^key: not an RSA public key \(.*EC.*\)$"):
        load_public_key(eck.public_key().public_bytes(Enc.PEM, PubF.SubjectPublicKeyInfo))


def _prime(bits: int, r) -> int:
    return int(gmpy2.next_prime(r.getrandbits(bits) | (1 << (bits - 1))))


def test_sizes_outside_1024_to_8192_are_refused() -> None:
    r = rng(5)
    p, q = _prime(256, r), _prime(256, r)
    d = pow(65537, -1, (p - 1) * (q - 1))
    small = rsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p),
                                  rsa.RSAPublicNumbers(65537, p * q)).private_key()
    bits = (p * q).bit_length()
    msg = (rf"^key: modulus is {bits} bits; supported sizes are 1024 to 8192 bits "
           r"\(512-bit keys and up only with --backend sim:pam, to check the simulated hardware\)$")
    with pytest.raises(ParameterError, match=msg):
        load_private_key(small.private_bytes(Enc.PEM, PrivF.PKCS8, serialization.NoEncryption()))
    with pytest.raises(ParameterError, match=msg):
        load_public_key(small.public_key().public_bytes(Enc.DER, PubF.PKCS1))
    big = rsa.RSAPublicNumbers(65537, (1 << 8192) | 1).public_key()       # 8193 bits
    with pytest.raises(ParameterError, match="^key: modulus is 8193 bits; supported sizes are 1024 to 8192 bits$"):
        load_public_key(big.public_bytes(Enc.PEM, PubF.SubjectPublicKeyInfo))
    assert RSAPublicKey((1 << 8191) | 1, 3).bits == 8192 and RSAPublicKey((1 << 1023) | 1, 3).bits == 1024
    # Below 512 bits even sim:pam refuses, without the hint; inside its block 512 bits are read.
    with pytest.raises(ParameterError, match="^key: modulus is 511 bits; supported sizes are 1024 to 8192 bits$"):
        RSAPublicKey((1 << 510) | 1, 3)
    with short_keys_for_simulation():
        assert RSAPublicKey((1 << 511) | 1, 3).bits == 512
        with pytest.raises(ParameterError, match="^key: modulus is 511 bits; supported sizes are 512 to 8192 bits$"):
            RSAPublicKey((1 << 510) | 1, 3)
    with pytest.raises(ParameterError, match="only with --backend sim:pam"):
        RSAPublicKey((1 << 511) | 1, 3)


def test_inconsistent_numbers(k1024) -> None:
    k = k1024.key
    good = dict(n=k.n, e=k.e, d=k.d, p=k.p, q=k.q, dp=k.dp, dq=k.dq, qinv=k.qinv)
    assert RSAPrivateKey(**good) == k
    bad = {
        "n": (k.n + 2, r"^key: p \* q != n"),
        "dp": (k.dp + 1, r"^key: dp != d mod \(p - 1\)$"),
        "dq": (k.dq ^ 2, r"^key: dq != d mod \(q - 1\)$"),
        "qinv": (k.qinv + 1, "^key: qinv is not q\\^-1 mod p$"),
        "d": (k.d + 2, r"^key: d is not an inverse of e modulo lcm\(p-1, q-1\)$"),
        "e": (4, "^key: public exponent must be odd with 3 <= e < n, got 4$"),
    }
    for name, (value, pattern) in bad.items():
        with pytest.raises(ParameterError, match=pattern):
            RSAPrivateKey(**{**good, name: value})
    with pytest.raises(ParameterError, match="^key: modulus is even$"):
        RSAPublicKey((1 << 1100), 65537)


def test_from_numbers_derives_crt_values(k1024) -> None:
    k = k1024.key
    rebuilt = RSAPrivateKey.from_numbers(p=k.p, q=k.q, e=k.e, d=k.d)
    assert (rebuilt.n, rebuilt.dp, rebuilt.dq, rebuilt.qinv) == (k.n, k.dp, k.dq, k.qinv)
    derived = RSAPrivateKey.from_numbers(p=k.p, q=k.q, e=k.e)       # d = e^-1 mod lcm(p-1, q-1)
    assert pow(pow(12345, derived.e, derived.n), derived.d, derived.n) == 12345
    assert rebuilt.public == k.public
    swapped = RSAPrivateKey.from_numbers(p=k.q, q=k.p, e=k.e)       # q > p is fine for Garner
    assert swapped.qinv * swapped.q % swapped.p == 1
    assert rebuilt.to_cryptography().private_numbers() == k1024.ck.private_numbers()
