"""Errors that name the real cause, and one behaviour across the rsa commands (issue 31, items 5 and 9)."""

from __future__ import annotations

import json

import gmpy2
import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa as crsa

from modforge.arith.base import ParameterError
from modforge.cli.rsa import rsa
from modforge.rsa import load_private_key, load_public_key

from ..support import one_line_error
from .helpers import rng

Enc, PrivF, PubF = serialization.Encoding, serialization.PrivateFormat, serialization.PublicFormat


def run(*args):
    return CliRunner().invoke(rsa, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def files(k1024, tmp_path) -> dict:
    out = {"dir": tmp_path, "priv": tmp_path / "key.pem", "msg": tmp_path / "msg"}
    out["priv"].write_bytes(k1024.pem)
    out["msg"].write_bytes(b"pay 100 to alice\n")
    for name, encoding, fmt in (("pub.pem", Enc.PEM, PubF.SubjectPublicKeyInfo), ("pub.der", Enc.DER, PubF.PKCS1),
                                ("spki.der", Enc.DER, PubF.SubjectPublicKeyInfo)):
        out[name] = tmp_path / name
        out[name].write_bytes(k1024.pub.public_bytes(encoding, fmt))
    return out


def _prime(bits: int, r) -> int:
    return int(gmpy2.next_prime(r.getrandbits(bits) | (1 << (bits - 1))))


# ------------------------------------------------------------------------------------------- item 5


@pytest.mark.parametrize("public", ["pub.pem", "pub.der", "spki.der"])
@pytest.mark.parametrize("command", ["sign", "decrypt"])
def test_a_public_key_where_the_private_key_is_needed_says_so(files, public: str, command: str) -> None:
    # It was "Are you sure this is a private key?" (PEM) or "ASN.1 parsing error: unexpected tag" (DER).
    extra = ["--scheme", "pss"] if command == "sign" else ["--scheme", "oaep"]
    res = run(command, "--key", files[public], "--in", files["msg"], "--out", files["dir"] / "out", *extra)
    one_line_error(res, "--key: this is a public key; this command needs the private key")
    assert "Are you sure" not in res.stderr and "unexpected tag" not in res.stderr


def test_a_der_private_key_of_unsupported_size_says_its_size(tmp_path, files) -> None:
    r = rng(5)
    p, q = _prime(256, r), _prime(256, r)
    d = int(gmpy2.invert(65537, (p - 1) * (q - 1)))
    small = crsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), int(gmpy2.invert(q, p)),
                                   crsa.RSAPublicNumbers(65537, p * q)).private_key()
    bits = (p * q).bit_length()
    der = tmp_path / "small.der"
    der.write_bytes(small.private_bytes(Enc.DER, PrivF.PKCS8, serialization.NoEncryption()))
    with pytest.raises(ParameterError, match=rf"^key: modulus is {bits} bits; supported sizes are 1024 to 8192 bits "
                                             r"\(512-bit keys and up only with --backend sim:pam, to check the "
                                             r"simulated hardware\) \(a DER private key, read for its public half\)$"):
        load_public_key(der.read_bytes())
    res = run("verify", "--key", der, "--in", files["msg"], "--sig", files["msg"], "--scheme", "pss")
    one_line_error(res, f"--key: modulus is {bits} bits; supported sizes are 1024 to 8192 bits")
    assert "unexpected tag" not in res.stderr


def test_a_key_whose_factor_is_not_prime_says_so() -> None:
    """Consistent numbers (d inverts e modulo lcm(p-1, q-1)) around a composite p: only a primality test
    finds it.  The message names p."""
    r = rng(31)
    p = q = 1
    while (p * q).bit_length() != 1024:
        p, q = _prime(256, r) * _prime(256, r), _prime(512, r)
    lam = (p - 1) // gmpy2.gcd(p - 1, q - 1) * (q - 1)
    d = int(gmpy2.invert(65537, lam))
    numbers = crsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), int(gmpy2.invert(q, p)),
                                     crsa.RSAPublicNumbers(65537, p * q))
    pem = numbers.private_key(unsafe_skip_rsa_key_validation=True).private_bytes(
        Enc.PEM, PrivF.PKCS8, serialization.NoEncryption())
    with pytest.raises(ParameterError, match=r"^key: p is not a prime \(a corrupt or forged key\)$"):
        load_private_key(pem)


def test_a_multi_prime_key_is_read_not_called_invalid() -> None:
    """A 3-prime key built here (the openssl-made ones are in test_rsa_interop): it was "Invalid key"."""
    from modforge.rsa import RSAPrivateKey, sign, verify

    r = rng(7)
    primes = [_prime(352, r) for _ in range(3)]
    key = _three_prime_key(primes)
    pem = _pkcs1_multi_prime_pem(key)
    loaded = load_private_key(pem)
    assert isinstance(loaded, RSAPrivateKey) and loaded.primes == tuple(primes) and loaded == key
    assert verify(loaded.public, b"m", sign(loaded, b"m", "pkcs1v15"), "pkcs1v15")


def _three_prime_key(primes: list[int]):
    from modforge.rsa import RSAPrivateKey

    p, q, r3 = primes
    n = p * q * r3
    lam = 1
    for x in primes:
        lam = lam // int(gmpy2.gcd(lam, x - 1)) * (x - 1)
    d = int(gmpy2.invert(65537, lam))
    return RSAPrivateKey(n=n, e=65537, d=d, p=p, q=q, dp=d % (p - 1), dq=d % (q - 1), qinv=int(gmpy2.invert(q, p)),
                         other_primes=((r3, d % (r3 - 1), int(gmpy2.invert(p * q, r3))),))


def _pkcs1_multi_prime_pem(key) -> bytes:
    """RFC 8017 App. A.1.2 by hand: version 1 and otherPrimeInfos (a DER writer independent of the reader)."""
    import base64

    def length(n: int) -> bytes:
        if n < 0x80:
            return bytes([n])
        body = n.to_bytes((n.bit_length() + 7) // 8, "big")
        return bytes([0x80 | len(body)]) + body

    def integer(v: int) -> bytes:
        body = v.to_bytes(v.bit_length() // 8 + 1, "big")
        return b"\x02" + length(len(body)) + body

    def seq(*parts: bytes) -> bytes:
        body = b"".join(parts)
        return b"\x30" + length(len(body)) + body

    others = seq(*(seq(integer(r), integer(d), integer(t)) for r, d, t in key.other_primes))
    der = seq(integer(1), *(integer(getattr(key, f)) for f in ("n", "e", "d", "p", "q", "dp", "dq", "qinv")), others)
    body = base64.encodebytes(der).decode()
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\n".encode()


# ------------------------------------------------------------------------------------------- item 9


def test_wrong_length_signature_and_ciphertext_are_both_bad_input(files) -> None:
    short = files["dir"] / "short"
    short.write_bytes(bytes(127))
    one_line_error(run("verify", "--key", files["pub.pem"], "--in", files["msg"], "--sig", short, "--scheme", "pss"),
                   "--sig: is 127 bytes; a signature of this 1024-bit key is 128 bytes (the modulus length)")
    one_line_error(run("decrypt", "--key", files["priv"], "--in", short, "--out", files["dir"] / "p", "--scheme",
                       "oaep"), "--in: is 127 bytes; a ciphertext of this 1024-bit key is 128 bytes")
    # The right length but not below n: a failed check in both (RFC 8017 8.2.2 and 7.1.2), exit 1.
    high = files["dir"] / "high"
    high.write_bytes(b"\xff" * 128)
    res = run("verify", "--key", files["pub.pem"], "--in", files["msg"], "--sig", high, "--scheme", "pss")
    assert res.exit_code == 1 and res.stdout == "invalid: signature representative is not below the modulus\n"
    res = run("decrypt", "--key", files["priv"], "--in", high, "--out", files["dir"] / "p", "--scheme", "oaep")
    assert res.exit_code == 1 and res.stderr == "modforge: error: decryption failed\n"


def test_e_is_hex_in_keygen_and_verify_json(tmp_path, files) -> None:
    res = run("keygen", "--bits", 2048, "--out", tmp_path / "k.pem", "--public-out", tmp_path / "k.pub", "--json")
    assert res.exit_code == 0, res.output
    keygen_e = json.loads(res.stdout)["e"]
    sig = tmp_path / "s"
    res = run("sign", "--key", tmp_path / "k.pem", "--in", files["msg"], "--out", sig, "--scheme", "pss")
    assert res.exit_code == 0, res.output
    res = run("verify", "--key", tmp_path / "k.pub", "--in", files["msg"], "--sig", sig, "--scheme", "pss", "--json")
    assert keygen_e == json.loads(res.stdout)["e"] == hex(65537)


def test_errors_name_the_option_as_typed(files) -> None:
    empty = files["dir"] / "pw"
    empty.write_bytes(b"\n")
    res = run("sign", "--key", files["priv"], "--key-password-file", empty, "--in", files["msg"], "--out",
              files["dir"] / "s", "--scheme", "pss")
    one_line_error(res, "--key-password-file: ")
    assert "key_password_file" not in res.stderr
    res = run("sign", "--key", files["priv"], "--in", files["msg"], "--out", files["dir"] / "s", "--scheme", "pss",
              "--salt-length", "-1")
    one_line_error(res, "--salt-length: ")


@pytest.mark.parametrize("command", ["sign", "encrypt", "decrypt"])
def test_outputs_are_replaced_only_with_force(files, k1024, command: str) -> None:
    """One policy with keygen's (and timelock create's): an existing --out is an error without --force."""
    out = files["dir"] / "out"
    out.write_bytes(b"precious")
    if command == "decrypt":
        from modforge.rsa import encrypt

        source = files["dir"] / "ct"
        source.write_bytes(encrypt(k1024.key.public, b"x", "oaep"))
        args = ["decrypt", "--key", files["priv"], "--in", source, "--scheme", "oaep"]
    elif command == "encrypt":
        args = ["encrypt", "--key", files["pub.pem"], "--in", files["msg"], "--scheme", "oaep"]
    else:
        args = ["sign", "--key", files["priv"], "--in", files["msg"], "--scheme", "pss"]
    one_line_error(run(*args, "--out", out), f"--out: {str(out)!r} exists; give --force to replace it")
    assert out.read_bytes() == b"precious"
    assert run(*args, "--out", out, "--force").exit_code == 0 and out.read_bytes() != b"precious"


def test_batch_signatures_are_replaced_only_with_force(files) -> None:
    docs = files["dir"] / "docs"
    docs.mkdir()
    (docs / "a.txt").write_bytes(b"a")
    (docs / "a.txt.sig").write_bytes(b"old")
    one_line_error(run("sign", "--key", files["priv"], "--batch", docs, "--scheme", "pss", "--jobs", 1),
                   "exists; give --force to replace it")
    assert (docs / "a.txt.sig").read_bytes() == b"old"
    res = run("sign", "--key", files["priv"], "--batch", docs, "--scheme", "pss", "--jobs", 1, "--force")
    assert res.exit_code == 0 and len((docs / "a.txt.sig").read_bytes()) == 128, res.output
