"""Interoperability with the ``openssl`` command (issue 31, items 11-14): every hash, every MGF1 mix and
every key type, signatures and ciphertexts made by OpenSSL 3 accepted by modforge and modforge's accepted
by OpenSSL.  OpenSSL is the outside oracle here; the module is skipped where the command is not installed.

Keys are made once per module by ``openssl genpkey`` (2048-bit, multi-prime with 3 and 4 primes, two
RSA-PSS-restricted keys); the 8192-bit key is a committed test-only file (tests/rsa/data/README).
"""

from __future__ import annotations

import dataclasses
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from modforge.arith.base import ParameterError
from modforge.cli.rsa import rsa
from modforge.rsa import check_signature, decrypt, encrypt, read_private_key, read_public_key, sign
from modforge.rsa.encodings import HASHES
from modforge.rsa.exp import backend_name
from modforge.rsa.primitives import private_op

from ..support import one_line_error
from .helpers import KERNELS

OPENSSL = shutil.which("openssl")
pytestmark = pytest.mark.skipif(OPENSSL is None, reason="the openssl command is not installed")

DATA = Path(__file__).parent / "data"
KEY_8192 = DATA / "test-only-rsa8192.pem"
# The hashes issue 31 asks for, in OpenSSL's spelling (the list is the spec, not read from the code).
SIGNING_HASHES = ["sha224", "sha256", "sha384", "sha512", "sha512-224", "sha512-256", "sha3-224", "sha3-256",
                  "sha3-384", "sha3-512"]
ALL_HASHES = ["sha1", *SIGNING_HASHES]
MESSAGE = b"interop: pay 100 to alice\n"


def ossl(*args, data: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([OPENSSL, *map(str, args)], input=data, capture_output=True, check=check)


@dataclasses.dataclass(frozen=True)
class KeyFiles:
    private: Path
    public: Path


def _genpkey(d: Path, name: str, *opts: str, algorithm: str = "RSA") -> KeyFiles:
    private, public = d / f"{name}.pem", d / f"{name}.pub"
    ossl("genpkey", "-algorithm", algorithm, *(x for o in opts for x in ("-pkeyopt", o)), "-out", private)
    ossl("pkey", "-in", private, "-pubout", "-out", public)
    return KeyFiles(private, public)


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> dict[str, KeyFiles]:
    d = tmp_path_factory.mktemp("interop")
    public_8192 = d / "rsa8192.pub"
    ossl("pkey", "-in", KEY_8192, "-pubout", "-out", public_8192)
    return {
        "rsa2048": _genpkey(d, "rsa2048", "rsa_keygen_bits:2048"),
        "primes3": _genpkey(d, "primes3", "rsa_keygen_bits:2048", "rsa_keygen_primes:3"),
        "primes4": _genpkey(d, "primes4", "rsa_keygen_bits:4096", "rsa_keygen_primes:4"),
        "pss": _genpkey(d, "pss", "rsa_keygen_bits:2048", "rsa_pss_keygen_md:sha384",
                        "rsa_pss_keygen_mgf1_md:sha256", "rsa_pss_keygen_saltlen:24", algorithm="RSA-PSS"),
        "pss-any": _genpkey(d, "pss-any", "rsa_keygen_bits:2048", algorithm="RSA-PSS"),
        "rsa8192": KeyFiles(KEY_8192, public_8192),
    }


class _Loaded(dict):
    """Keys read on first use and kept: loading the 8192-bit key runs cryptography's key check (primality
    tests of two 4096-bit primes), seconds, so once."""

    def __init__(self, keys: dict[str, KeyFiles]) -> None:
        super().__init__()
        self.keys = keys

    def __missing__(self, name: str):
        self[name] = read_private_key(self.keys[name].private)
        return self[name]


@pytest.fixture(scope="module")
def loaded(keys) -> dict[str, object]:
    return _Loaded(keys)


@pytest.fixture
def msg(tmp_path) -> Path:
    path = tmp_path / "msg"
    path.write_bytes(MESSAGE)
    return path


def _pss_opts(salt: int | str, mgf1: str | None = None) -> list[str]:
    opts = ["-sigopt", "rsa_padding_mode:pss", "-sigopt", f"rsa_pss_saltlen:{salt}"]
    return opts + (["-sigopt", f"rsa_mgf1_md:{mgf1}"] if mgf1 else [])


def openssl_sign(key: Path, msg: Path, out: Path, hash_name: str, scheme: str, salt: int | str = "digest",
                 mgf1: str | None = None) -> bytes:
    opts = _pss_opts(salt, mgf1) if scheme == "pss" else []
    ossl("dgst", f"-{hash_name}", "-sign", key, *opts, "-out", out, msg)
    return out.read_bytes()


def openssl_verifies(pub: Path, msg: Path, sig: Path, hash_name: str, scheme: str, salt: int | str = "digest",
                     mgf1: str | None = None) -> bool:
    opts = _pss_opts(salt, mgf1) if scheme == "pss" else []
    res = ossl("dgst", f"-{hash_name}", "-verify", pub, *opts, "-signature", sig, msg, check=False)
    return res.returncode == 0 and b"Verified OK" in res.stdout


def _oaep_opts(hash_name: str | None, mgf1: str | None, label: bytes = b"") -> list[str]:
    opts = ["-pkeyopt", "rsa_padding_mode:oaep"]
    if hash_name:
        opts += ["-pkeyopt", f"rsa_oaep_md:{hash_name}"]
    if mgf1:
        opts += ["-pkeyopt", f"rsa_mgf1_md:{mgf1}"]
    if label:
        opts += ["-pkeyopt", f"rsa_oaep_label:{label.hex()}"]
    return opts


def run(*args):
    return CliRunner().invoke(rsa, [str(a) for a in args], catch_exceptions=False)


# ------------------------------------------------------------------------------------ item 11: hashes


@pytest.mark.parametrize("scheme", ["pkcs1v15", "pss"])
@pytest.mark.parametrize("hash_name", SIGNING_HASHES)
def test_every_signing_hash_both_ways(keys, loaded, tmp_path, msg, hash_name: str, scheme: str) -> None:
    key, pub = loaded["rsa2048"], keys["rsa2048"].public
    ours = tmp_path / "ours.sig"
    ours.write_bytes(sign(key, MESSAGE, scheme, hash_name))
    assert openssl_verifies(pub, msg, ours, hash_name, scheme), f"{scheme} {hash_name}: OpenSSL refused ours"
    theirs = openssl_sign(keys["rsa2048"].private, msg, tmp_path / "theirs.sig", hash_name, scheme)
    assert check_signature(key.public, MESSAGE, theirs, scheme, hash_name) is None
    if scheme == "pkcs1v15":     # deterministic: the very same bytes
        assert theirs == ours.read_bytes()
    # The wrong hash is refused, by both.
    other = "sha256" if hash_name != "sha256" else "sha384"
    assert check_signature(key.public, MESSAGE, theirs, scheme, other) is not None
    assert not openssl_verifies(pub, msg, ours, other, scheme)


@pytest.mark.parametrize("scheme", ["pkcs1v15", "pss"])
def test_sha1_verifies_openssls_signatures_but_signs_nothing(keys, loaded, tmp_path, msg, scheme: str) -> None:
    key = loaded["rsa2048"]
    theirs = openssl_sign(keys["rsa2048"].private, msg, tmp_path / "theirs.sig", "sha1", scheme)
    assert check_signature(key.public, MESSAGE, theirs, scheme, "sha1") is None
    res = run("verify", "--key", keys["rsa2048"].public, "--in", msg, "--sig", tmp_path / "theirs.sig",
              "--scheme", scheme, "--hash", "sha1")
    assert res.exit_code == 0 and res.stdout == "valid\n", res.output
    with pytest.raises(ParameterError, match="^hash: SHA-1 is refused for new signatures"):
        sign(key, MESSAGE, scheme, "sha1")
    one_line_error(run("sign", "--key", keys["rsa2048"].private, "--in", msg, "--out", tmp_path / "s",
                       "--scheme", scheme, "--hash", "SHA-1"), "--hash: SHA-1 is refused for new signatures")
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("hash_name", ALL_HASHES)
def test_oaep_with_every_hash_both_ways(keys, loaded, tmp_path, hash_name: str) -> None:
    key, files = loaded["rsa2048"], keys["rsa2048"]
    plain = tmp_path / "plain"
    plain.write_bytes(b"session key 0123456789abcdef")
    theirs = ossl("pkeyutl", "-encrypt", "-pubin", "-inkey", files.public, "-in", plain,
                  *_oaep_opts(hash_name, hash_name, b"v1")).stdout
    assert decrypt(key, theirs, "oaep", hash_name, label=b"v1") == plain.read_bytes()
    ours = tmp_path / "ours.bin"
    ours.write_bytes(encrypt(key.public, plain.read_bytes(), "oaep", hash_name, label=b"v1"))
    back = ossl("pkeyutl", "-decrypt", "-inkey", files.private, "-in", ours,
                *_oaep_opts(hash_name, hash_name, b"v1")).stdout
    assert back == plain.read_bytes()


# --------------------------------------------------------------------------------- item 12: MGF1 mixes

# Every hash as the message hash and as the MGF1 hash, each with another: the MGF1 hash is the one a few
# places further in the list.  The two common defaults (Java's OAEP, OpenSSL's) are named first.
PSS_MIXES = [("sha256", "sha1")] + [(h, ALL_HASHES[(i + 4) % len(ALL_HASHES)])
                                    for i, h in enumerate(ALL_HASHES) if h != "sha1"]
OAEP_MIXES = [("sha256", "sha1")] + [(h, ALL_HASHES[(i + 3) % len(ALL_HASHES)]) for i, h in enumerate(ALL_HASHES)]


@pytest.mark.parametrize("hash_name, mgf1", PSS_MIXES)
def test_pss_with_another_mgf1_hash_both_ways(keys, loaded, tmp_path, msg, hash_name: str, mgf1: str) -> None:
    files = keys["rsa2048"]
    ours = tmp_path / "ours.sig"
    res = run("sign", "--key", files.private, "--in", msg, "--out", ours, "--scheme", "pss", "--hash", hash_name,
              "--mgf1-hash", mgf1, "--json")
    assert res.exit_code == 0, res.output
    assert '"mgf1_hash": "' + mgf1 + '"' in res.stdout
    assert openssl_verifies(files.public, msg, ours, hash_name, "pss", mgf1=mgf1)
    # MGF1 with the message hash (the old and only behaviour) does not verify it.
    assert not openssl_verifies(files.public, msg, ours, hash_name, "pss")
    theirs = tmp_path / "theirs.sig"
    openssl_sign(files.private, msg, theirs, hash_name, "pss", mgf1=mgf1)
    res = run("verify", "--key", files.public, "--in", msg, "--sig", theirs, "--scheme", "pss", "--hash",
              hash_name, "--mgf1-hash", mgf1)
    assert res.exit_code == 0 and res.stdout == "valid\n", res.output
    res = run("verify", "--key", files.public, "--in", msg, "--sig", theirs, "--scheme", "pss", "--hash", hash_name)
    assert res.exit_code == 1 and res.stdout.startswith("invalid: ")


@pytest.mark.parametrize("hash_name, mgf1", OAEP_MIXES)
def test_oaep_with_another_mgf1_hash_both_ways(keys, tmp_path, hash_name: str, mgf1: str) -> None:
    files = keys["rsa2048"]
    plain, theirs, out = tmp_path / "plain", tmp_path / "theirs.bin", tmp_path / "out"
    plain.write_bytes(b"java's default is OAEP-SHA-256 with MGF1-SHA-1")
    ossl("pkeyutl", "-encrypt", "-pubin", "-inkey", files.public, "-in", plain, "-out", theirs,
         *_oaep_opts(hash_name, mgf1))
    res = run("decrypt", "--key", files.private, "--in", theirs, "--out", out, "--scheme", "oaep", "--hash",
              hash_name, "--mgf1-hash", mgf1)
    assert res.exit_code == 0 and out.read_bytes() == plain.read_bytes(), res.output
    res = run("decrypt", "--key", files.private, "--in", theirs, "--out", out, "--scheme", "oaep", "--hash",
              hash_name, "--force")
    assert res.exit_code == 1 and res.stderr == "modforge: error: decryption failed\n"
    ours = tmp_path / "ours.bin"
    res = run("encrypt", "--key", files.public, "--in", plain, "--out", ours, "--scheme", "oaep", "--hash",
              hash_name, "--mgf1-hash", mgf1)
    assert res.exit_code == 0, res.output
    back = ossl("pkeyutl", "-decrypt", "-inkey", files.private, "-in", ours, *_oaep_opts(hash_name, mgf1)).stdout
    assert back == plain.read_bytes()


def test_openssls_default_oaep_is_sha1_with_mgf1_sha1(keys, tmp_path) -> None:
    files = keys["rsa2048"]
    plain, theirs, out = tmp_path / "plain", tmp_path / "theirs.bin", tmp_path / "out"
    plain.write_bytes(b"pkeyutl's defaults")
    ossl("pkeyutl", "-encrypt", "-pubin", "-inkey", files.public, "-in", plain, "-out", theirs, "-pkeyopt",
         "rsa_padding_mode:oaep")
    res = run("decrypt", "--key", files.private, "--in", theirs, "--out", out, "--scheme", "oaep", "--hash", "sha1")
    assert res.exit_code == 0 and out.read_bytes() == plain.read_bytes(), res.output


def test_mgf1_hash_only_goes_with_pss_and_oaep(keys, tmp_path, msg) -> None:
    one_line_error(run("sign", "--key", keys["rsa2048"].private, "--in", msg, "--out", tmp_path / "s", "--scheme",
                       "pkcs1v15", "--mgf1-hash", "sha1"), "--mgf1-hash: only pss and oaep use MGF1, not pkcs1v15")
    one_line_error(run("sign", "--key", keys["rsa2048"].private, "--in", msg, "--out", tmp_path / "s", "--scheme",
                       "pss", "--mgf1-hash", "md5"), "--mgf1-hash: unsupported hash 'md5'")


# ------------------------------------------------------------------------- item 13: multi-prime keys


@pytest.mark.parametrize("name, count", [("primes3", 3), ("primes4", 4)])
def test_multi_prime_keys_load_and_sign_as_openssl_does(keys, loaded, tmp_path, msg, name: str, count: int) -> None:
    key, files = loaded[name], keys[name]
    assert len(key.primes) == count and key.n == read_public_key(files.public).n
    theirs = openssl_sign(files.private, msg, tmp_path / "theirs.sig", "sha256", "pkcs1v15")
    for backend in KERNELS:
        ours = sign(key, MESSAGE, "pkcs1v15", "sha256", backend=backend)
        assert ours == theirs, f"{name} on {backend}: PKCS#1 v1.5 signature differs from OpenSSL's"
    (tmp_path / "pss.sig").write_bytes(sign(key, MESSAGE, "pss", "sha384", mgf1_hash="sha1"))
    assert openssl_verifies(files.public, msg, tmp_path / "pss.sig", "sha384", "pss", mgf1="sha1")


@pytest.mark.parametrize("der", [False, True], ids=["pem", "der"])
def test_encrypted_multi_prime_keys_load_with_their_password(keys, loaded, tmp_path, der: bool) -> None:
    encrypted = tmp_path / "enc"
    ossl("pkcs8", "-topk8", "-in", keys["primes3"].private, "-passout", "pass:hunter2", "-v2", "aes-256-cbc",
         *(["-outform", "DER"] if der else []), "-out", encrypted)
    assert read_private_key(encrypted, b"hunter2") == loaded["primes3"]
    with pytest.raises(ParameterError, match=r"^key: could not decrypt the private key \(wrong password\?\)$"):
        read_private_key(encrypted, b"hunter3")


@pytest.mark.parametrize("name", ["primes3", "primes4"])
def test_multi_prime_keys_decrypt_openssls_ciphertexts(keys, tmp_path, name: str) -> None:
    files = keys[name]
    plain, theirs, out = tmp_path / "plain", tmp_path / "theirs.bin", tmp_path / "out"
    plain.write_bytes(b"to a key of many primes")
    ossl("pkeyutl", "-encrypt", "-pubin", "-inkey", files.public, "-in", plain, "-out", theirs,
         *_oaep_opts("sha256", "sha1"))
    for backend in KERNELS:
        res = run("decrypt", "--key", files.private, "--in", theirs, "--out", out, "--scheme", "oaep", "--hash",
                  "sha256", "--mgf1-hash", "sha1", "--backend", backend, "--force")
        assert res.exit_code == 0 and out.read_bytes() == plain.read_bytes(), res.output
    # And the other way: OpenSSL decrypts with the multi-prime key what we encrypt to its public half.
    ours = tmp_path / "ours.bin"
    assert run("encrypt", "--key", files.public, "--in", plain, "--out", ours, "--scheme", "oaep", "--hash",
               "sha512").exit_code == 0
    assert ossl("pkeyutl", "-decrypt", "-inkey", files.private, "-in", ours,
                *_oaep_opts("sha512", "sha512")).stdout == plain.read_bytes()


@pytest.mark.parametrize("name", ["primes3", "primes4"])
def test_crt_over_every_prime_is_the_plain_power(loaded, name: str) -> None:
    """The CRT result against ``x^d mod n`` by GMP (an independent oracle), edge values first, then seeded."""
    import gmpy2

    key = loaded[name]
    seed = random.randrange(1 << 32)
    r = random.Random(seed)
    cases = [0, 1, 2, key.n - 1, key.p, key.q, key.primes[-1], key.n - key.primes[-1]]
    cases += [r.randrange(key.n) for _ in range(8)]
    for backend in KERNELS:
        for x in cases:
            assert private_op(key, x, backend=backend) == gmpy2.powmod(x, key.d, key.n), \
                f"{name}, {backend}, x = {x:#x} (seed {seed})"


def test_a_multi_prime_key_with_a_wrong_number_names_it(keys) -> None:
    from modforge.rsa import RSAPrivateKey

    key = read_private_key(keys["primes3"].private)
    r, d, t = key.other_primes[0]
    with pytest.raises(ParameterError, match="^key: t of prime 3 is not"):
        RSAPrivateKey(**{**{f.name: getattr(key, f.name) for f in dataclasses.fields(key)},
                         "other_primes": ((r, d, t + 1),)})


# -------------------------------------------------------------------- item 13: RSA-PSS-restricted keys


def test_pss_restricted_keys_load_with_their_restriction(loaded, keys) -> None:
    from modforge.rsa.keyder import PssRestriction

    want = PssRestriction(HASHES["sha384"], HASHES["sha256"], 24)
    assert loaded["pss"].pss == want and read_public_key(keys["pss"].public).pss == want
    assert loaded["pss-any"].pss == PssRestriction() and loaded["rsa2048"].pss is None


def test_pss_restricted_keys_sign_and_verify_as_openssl(keys, loaded, tmp_path, msg) -> None:
    files = keys["pss"]
    ours = tmp_path / "ours.sig"
    res = run("sign", "--key", files.private, "--in", msg, "--out", ours, "--scheme", "pss", "--json")
    assert res.exit_code == 0 and '"hash": "sha384"' in res.stdout and '"mgf1_hash": "sha256"' in res.stdout
    # OpenSSL's defaults with this key are its parameters, salt exactly 24 bytes.
    assert ossl("dgst", "-sha384", "-verify", files.public, "-sigopt", "rsa_padding_mode:pss", "-signature", ours,
                msg, check=False).returncode == 0
    theirs = tmp_path / "theirs.sig"
    ossl("dgst", "-sha384", "-sign", files.private, "-sigopt", "rsa_padding_mode:pss", "-out", theirs, msg)
    res = run("verify", "--key", files.public, "--in", msg, "--sig", theirs, "--scheme", "pss")
    assert res.exit_code == 0 and res.stdout == "valid\n", res.output
    # Without parameters the key takes any PSS parameters, and still nothing but PSS.
    any_files = keys["pss-any"]
    openssl_sign(any_files.private, msg, theirs, "sha512", "pss", mgf1="sha1")
    assert check_signature(loaded["pss-any"].public, MESSAGE, theirs.read_bytes(), "pss", "sha512",
                           mgf1_hash="sha1") is None
    ours.write_bytes(sign(loaded["pss-any"], MESSAGE, "pss", "sha3-256"))
    assert openssl_verifies(any_files.public, msg, ours, "sha3-256", "pss")


@pytest.mark.parametrize("args, message", [
    (("--scheme", "pkcs1v15"), "--scheme: pkcs1v15 with an RSA-PSS-restricted key"),
    (("--scheme", "pss", "--hash", "sha256"), "--hash: sha256 with an RSA-PSS-restricted key"),
    (("--scheme", "pss", "--mgf1-hash", "sha384"), "--mgf1-hash: MGF1-sha384 with an RSA-PSS-restricted key"),
    (("--scheme", "pss", "--salt-length", "20"), "--salt-length: 20-byte salt with an RSA-PSS-restricted key that "
                                                 "requires at least 24"),
])
def test_pss_restrictions_are_enforced_when_signing(keys, tmp_path, msg, args, message) -> None:
    one_line_error(run("sign", "--key", keys["pss"].private, "--in", msg, "--out", tmp_path / "s", *args), message)
    assert not (tmp_path / "s").exists()


def test_pss_restrictions_are_enforced_when_verifying_and_encrypting(keys, loaded, tmp_path, msg) -> None:
    files = keys["pss"]
    # A salt longer than the key states: OpenSSL's default (exactly the stated length) refuses it, so does
    # ours; --salt-length auto takes it (at least the stated length).
    long_salt = tmp_path / "long.sig"
    openssl_sign(files.private, msg, long_salt, "sha384", "pss", salt=40)
    res = run("verify", "--key", files.public, "--in", msg, "--sig", long_salt, "--scheme", "pss")
    assert res.exit_code == 1 and "salt length differs" in res.stdout, res.output
    res = run("verify", "--key", files.public, "--in", msg, "--sig", long_salt, "--scheme", "pss", "--salt-length",
              "auto")
    assert res.exit_code == 0, res.output
    # A salt shorter than the key allows (made with the same numbers, unrestricted): refused even with auto.
    short = tmp_path / "short.sig"
    short.write_bytes(sign(dataclasses.replace(loaded["pss"], pss=None), MESSAGE, "pss", "sha384",
                           salt_length=10, mgf1_hash="sha256"))
    res = run("verify", "--key", files.public, "--in", msg, "--sig", short, "--scheme", "pss", "--salt-length",
              "auto")
    assert res.exit_code == 1 and res.stdout == "invalid: salt is 10 bytes, the key requires at least 24\n"
    assert not openssl_verifies(files.public, msg, short, "sha384", "pss", salt="auto")
    one_line_error(run("verify", "--key", files.public, "--in", msg, "--sig", short, "--scheme", "pkcs1v15"),
                   "--scheme: pkcs1v15 with an RSA-PSS-restricted key")
    one_line_error(run("encrypt", "--key", files.public, "--in", msg, "--out", tmp_path / "c", "--scheme", "oaep"),
                   "--scheme: oaep with an RSA-PSS-restricted key")


# ---------------------------------------------------------------------------------- item 13: 8192 bits


def test_8192_bit_keys_sign_verify_and_decrypt_with_openssl(keys, loaded, tmp_path, msg) -> None:
    key, files = loaded["rsa8192"], keys["rsa8192"]
    assert key.bits == 8192 and backend_name("auto", key) == "python"     # the documented slower path
    ours = tmp_path / "ours.sig"
    ours.write_bytes(sign(key, MESSAGE, "pss", "sha512"))
    assert openssl_verifies(files.public, msg, ours, "sha512", "pss")
    theirs = openssl_sign(files.private, msg, tmp_path / "theirs.sig", "sha3-512", "pkcs1v15")
    assert check_signature(read_public_key(files.public), MESSAGE, theirs, "pkcs1v15", "sha3-512") is None
    ct = ossl("pkeyutl", "-encrypt", "-pubin", "-inkey", files.public, "-in", msg, *_oaep_opts("sha256", "sha1")).stdout
    assert decrypt(key, ct, "oaep", "sha256", mgf1_hash="sha1") == MESSAGE
    (tmp_path / "ours.bin").write_bytes(encrypt(read_public_key(files.public), MESSAGE, "oaep", "sha3-256"))
    assert ossl("pkeyutl", "-decrypt", "-inkey", files.private, "-in", tmp_path / "ours.bin",
                *_oaep_opts("sha3-256", "sha3-256")).stdout == MESSAGE


def test_the_native_kernel_names_its_limit_for_8192_bits(loaded) -> None:
    if "native" not in KERNELS:
        pytest.skip("the native kernel is not built")
    with pytest.raises(ParameterError, match="^key: the native kernel cannot use this key .*at most 2048 bits.*"
                                             "--backend python can"):
        sign(loaded["rsa8192"], MESSAGE, "pss", backend="native")


def test_keygen_makes_8192_bit_keys(tmp_path, monkeypatch) -> None:
    """The CLI path of an 8192-bit keygen, the generation itself replaced by the committed test key (OpenSSL
    takes about a minute for a real one): the size is accepted and the key read back as made.  cryptography's
    key check (seconds at this size, run by the other 8192-bit tests) is skipped here to keep this one fast."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa as crypto_rsa

    made = serialization.load_pem_private_key(KEY_8192.read_bytes(), None, unsafe_skip_rsa_key_validation=True)
    real_load = serialization.load_pem_private_key
    monkeypatch.setattr(serialization, "load_pem_private_key", lambda data, password, **kw: real_load(
        data, password, unsafe_skip_rsa_key_validation=True))
    calls = []

    def generate(public_exponent: int, key_size: int):
        calls.append(key_size)
        return made

    monkeypatch.setattr(crypto_rsa, "generate_private_key", generate)
    out, pub = tmp_path / "k.pem", tmp_path / "k.pub"
    res = run("keygen", "--bits", 8192, "--out", out, "--public-out", pub, "--json")
    assert res.exit_code == 0, res.output
    assert calls == [8192] and '"bits": 8192' in res.stdout
    assert read_public_key(pub).n == made.public_key().public_numbers().n
    assert ossl("pkey", "-in", out, "-noout", check=False).returncode == 0


# ------------------------------------------------------------------------ item 14: salt length modes


def test_salt_length_modes_of_verify(keys, tmp_path, msg) -> None:
    files = keys["rsa2048"]
    max_salt, digest_salt = tmp_path / "max.sig", tmp_path / "digest.sig"
    openssl_sign(files.private, msg, max_salt, "sha256", "pss", salt="max")
    openssl_sign(files.private, msg, digest_salt, "sha256", "pss", salt="digest")

    def verdict(sig: Path, *mode: str) -> int:
        return run("verify", "--key", files.public, "--in", msg, "--sig", sig, "--scheme", "pss", *mode).exit_code

    assert [verdict(max_salt), verdict(max_salt, "--salt-length", "max"), verdict(max_salt, "--salt-length", "auto"),
            verdict(max_salt, "--salt-length", "222")] == [1, 0, 0, 0]
    assert [verdict(digest_salt), verdict(digest_salt, "--salt-length", "digest"),
            verdict(digest_salt, "--salt-length", "max"), verdict(digest_salt, "--salt-length", "auto"),
            verdict(digest_salt, "--salt-length", "33")] == [0, 0, 1, 0, 1]
    ours = tmp_path / "ours.sig"
    assert run("sign", "--key", files.private, "--in", msg, "--out", ours, "--scheme", "pss", "--salt-length",
               "max").exit_code == 0
    assert openssl_verifies(files.public, msg, ours, "sha256", "pss", salt="max")
    assert not openssl_verifies(files.public, msg, ours, "sha256", "pss", salt="digest")


def test_help_says_the_salt_length_default_and_what_auto_does() -> None:
    text = " ".join(run("verify", "--help").stdout.split())
    assert "auto accepts any length" in text and "Default: digest" in text and "N|digest|max|auto" in text
    text = " ".join(run("sign", "--help").stdout.split())
    assert "Default: digest" in text and "N|digest|max" in text
