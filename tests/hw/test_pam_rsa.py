"""``sim:pam``: an RSA-512 CRT signature computed on the Verilated pam-mpu (seed 004's use of it).

The key is 512 bits (two 256-bit primes, the 256-bit build that test_pam.py shares).  The kernel's two
halves are compared with the native kernel's bit for bit (the same blinded exponents) and assembled
into a PKCS #1 v1.5 signature that ``cryptography`` verifies; then ``modforge rsa sign --backend
sim:pam`` signs with the same key as a PEM file (the loader reads 512-bit keys for sim:pam only, with a
warning) and ``cryptography`` verifies that signature too; every other backend refuses the key.
"""

from __future__ import annotations

import random

import gmpy2
from click.testing import CliRunner
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from modforge.rsa.encodings import emsa_pkcs1_v15_encode, hash_info, i2osp, os2ip
from modforge.rsa.exp import blind_exponent, resolve_backend

E = 65537


def _prime(rng: random.Random, bits: int) -> int:
    while True:
        v = int(gmpy2.next_prime(rng.getrandbits(bits) | (3 << (bits - 2))))
        if v.bit_length() == bits and (v - 1) % E:
            return v


def test_rsa512_signature_on_the_simulated_unit_verifies() -> None:
    from modforge.hw.pam_rsa import last_report

    seed = 512004
    rng = random.Random(seed)
    p, q = _prime(rng, 256), _prime(rng, 256)
    n, d = p * q, pow(E, -1, (p - 1) * (q - 1))
    message = b"seed 004: RSA on the PAM modular product unit"
    em = emsa_pkcs1_v15_encode(message, 64, hash_info("sha256"))
    c = os2ip(em)
    dp, dq = blind_exponent(d % (p - 1), p, 64), blind_exponent(d % (q - 1), q, 64)
    bits = 256 + 64
    xp, xq = resolve_backend("sim:pam")(c, p, dp, q, dq, bits)
    assert (xp, xq) == resolve_backend("native")(c, p, dp, q, dq, bits), f"seed {seed}"
    s = xq + q * ((xp - xq) * pow(q, -1, p) % p)
    pub = rsa.RSAPublicNumbers(E, n).public_key()
    pub.verify(i2osp(s, 64), message, padding.PKCS1v15(), hashes.SHA256())   # raises if invalid
    rep = last_report()
    # Every exponent bit is one Square (plus a MultB where it is 1), plus entering and leaving the domain.
    for half, e in (("p", dp), ("q", dq)):
        assert rep["halves"][half]["products"] == bits + bin(e).count("1") + 1
    assert rep["busy_per_product"] > 256 + 2 + 1
    assert rep["projected_bits_per_s"] > 0


def test_rsa_sign_command_on_sim_pam_takes_a_512_bit_key_and_the_signature_verifies(tmp_path) -> None:
    from modforge.cli.main import cli

    seed = 512005
    rng = random.Random(seed)
    p, q = _prime(rng, 256), _prime(rng, 256)
    n, d = p * q, pow(E, -1, (p - 1) * (q - 1))
    numbers = rsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p), rsa.RSAPublicNumbers(E, n))
    key = tmp_path / "rsa512.pem"
    key.write_bytes(numbers.private_key().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                        serialization.NoEncryption()))
    message = tmp_path / "message"
    message.write_bytes(b"seed 004: RSA-512 through the command")
    sig = tmp_path / "message.sig"
    args = ["rsa", "sign", "--key", str(key), "--in", str(message), "--out", str(sig), "--scheme", "pkcs1v15"]
    res = CliRunner().invoke(cli, [*args, "--backend", "sim:pam"])
    assert res.exit_code == 0, f"seed {seed}: {res.output}"
    assert "far too short" in res.output and "simulated" in res.output
    pub = rsa.RSAPublicNumbers(E, n).public_key()
    pub.verify(sig.read_bytes(), message.read_bytes(), padding.PKCS1v15(), hashes.SHA256())   # raises if invalid
    # Any other backend refuses the key by its size and names sim:pam as the only way.
    other = CliRunner().invoke(cli, [*args[:-2], "--out", str(tmp_path / "other.sig"), "--scheme", "pkcs1v15"])
    assert other.exit_code == 2 and "512 bits" in other.output and "sim:pam" in other.output, other.output
