"""``modforge rsa`` at its edges: outputs that are not plain new files, keys it must refuse or read with a
password, large inputs hashed in pieces, batch inputs that are each other's outputs."""

from __future__ import annotations

import hashlib
import os

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa as crsa

from modforge.arith.base import ParameterError
from modforge.cli.rsa import rsa
from modforge.rsa import Prehashed, decrypt, digest_file, load_private_key, sign, verify
from modforge.rsa import batch as batch_module

from ..support import one_line_error, peak_python_memory


def run(*args):
    return CliRunner().invoke(rsa, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def files(k1024, tmp_path):
    key = tmp_path / "key.pem"
    key.write_bytes(k1024.pem)
    msg = tmp_path / "msg.txt"
    msg.write_bytes(b"pay 100 to alice\n")
    return key, msg, tmp_path


def test_outputs_that_are_not_regular_files_are_refused(files) -> None:
    key, msg, d = files
    os.mkfifo(d / "fifo")
    (d / "link").symlink_to(d / "elsewhere.sig")
    one_line_error(run("sign", "--key", key, "--in", msg, "--out", d / "fifo", "--scheme", "pss"),
                   "is not a regular file (a device or FIFO)")
    one_line_error(run("sign", "--key", key, "--in", msg, "--out", d / "link", "--scheme", "pss"),
                   "is a symbolic link")
    assert (d / "link").is_symlink() and not (d / "elsewhere.sig").exists()


def test_outputs_follow_the_umask(files) -> None:
    key, msg, d = files
    old = os.umask(0o077)
    try:
        assert run("sign", "--key", key, "--in", msg, "--out", d / "s", "--scheme", "pss").exit_code == 0
    finally:
        os.umask(old)
    assert (d / "s").stat().st_mode & 0o777 == 0o600


def test_an_encrypted_key_reads_with_its_password_file(files, k1024) -> None:
    key, msg, d = files
    enc = d / "enc.pem"
    enc.write_bytes(k1024.ck.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.BestAvailableEncryption(b"s3cret")))
    one_line_error(run("sign", "--key", enc, "--in", msg, "--out", d / "s", "--scheme", "pss"),
                   "key: the private key is encrypted")
    (d / "pw").write_bytes(b"s3cret\n")
    (d / "bad").write_bytes(b"wrong\n")
    res = run("sign", "--key", enc, "--key-password-file", d / "bad", "--in", msg, "--out", d / "s",
              "--scheme", "pss")
    one_line_error(res, "wrong password")
    res = run("sign", "--key", enc, "--key-password-file", d / "pw", "--in", msg, "--out", d / "s", "--scheme", "pss")
    assert res.exit_code == 0, res.output
    (d / "pw2").write_bytes(b"s3cret\r\nsecond line, not part of it\n")          # the first line only
    assert run("sign", "--key", enc, "--key-password-file", d / "pw2", "--in", msg, "--out", d / "s2",
               "--scheme", "pss").exit_code == 0
    one_line_error(run("sign", "--key", enc, "--key-password-file", d / "pw", "--in", msg, "--out", d / "pw",
                       "--scheme", "pss"), "out: is the same file as --key-password-file")
    assert (d / "pw").read_bytes() == b"s3cret\n"
    for empty in (b"", b"\n", b"\r\nsecond line\n"):       # not "the key is not encrypted"
        (d / "empty").write_bytes(empty)
        one_line_error(run("sign", "--key", enc, "--key-password-file", d / "empty", "--in", msg, "--out",
                           d / "s3", "--scheme", "pss"), "holds an empty password (its first line)")
    # A public operation names the way out: the public key, which needs no password.
    one_line_error(run("verify", "--key", enc, "--in", msg, "--sig", d / "s", "--scheme", "pss"),
                   "key: an encrypted private key: give the public key instead")
    k1024.pub.verify((d / "s").read_bytes(), msg.read_bytes(),
                     padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256())


@pytest.mark.parametrize("guarded", ["key", "key-password-file"])
def test_batch_signatures_never_replace_the_key_or_its_password(files, k1024, guarded) -> None:
    """`--key d.sig --batch d`: d's signature would be written over the key."""
    key, msg, d = files
    enc = d / "enc.pem"
    enc.write_bytes(k1024.ck.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.BestAvailableEncryption(b"s3cret")))
    (d / "pw").write_bytes(b"s3cret\n")
    victim = d / "victim.sig"
    victim.write_bytes(enc.read_bytes() if guarded == "key" else b"s3cret\n")
    before = victim.read_bytes()
    (d / "victim").write_bytes(b"sign me\n")
    args = ["--key", victim, "--key-password-file", d / "pw"] if guarded == "key" else \
        ["--key", enc, "--key-password-file", victim]
    one_line_error(run("sign", *args, "--batch", d / "victim", "--scheme", "pss", "--jobs", 1),
                   f"is the file given as --{guarded}")
    assert victim.read_bytes() == before


def test_batch_targets_are_checked_like_out_before_any_work(files) -> None:
    key, msg, d = files
    (d / "c").write_bytes(b"c\n")
    (d / "c.sig").symlink_to(d / "target")
    one_line_error(run("sign", "--key", key, "--batch", d / "c", "--scheme", "pss"), "is a symbolic link")
    assert (d / "c.sig").is_symlink() and not (d / "target").exists()
    (d / "e").write_bytes(b"e\n")
    (d / "e.sig").mkdir()
    one_line_error(run("sign", "--key", key, "--batch", d / "e", "--scheme", "pss"), "is a directory")


def test_rsa_pss_restricted_keys_with_malformed_parameters_are_refused() -> None:
    # An id-RSASSA-PSS PKCS#8 key whose AlgorithmIdentifier keeps rsaEncryption's NULL parameters (RFC 4055
    # allows none, or RSASSA-PSS-params).  Built from an ordinary key by swapping the OID.  Well-formed
    # restricted keys load and are enforced: tests/rsa/test_rsa_interop.py.
    ordinary = crsa.generate_private_key(65537, 1024).private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    rsa_oid, pss_oid = bytes.fromhex("06092a864886f70d010101"), bytes.fromhex("06092a864886f70d01010a")
    assert rsa_oid in ordinary[:40]
    restricted = ordinary.replace(rsa_oid, pss_oid, 1)
    with pytest.raises(ParameterError, match="RSA-PSS-restricted key"):
        load_private_key(restricted)
    load_private_key(ordinary)
    # As PEM, also with text around the block (as `openssl pkcs12` writes "Bag Attributes" lines).
    import base64

    body = base64.encodebytes(restricted).decode()
    pem = f"Bag Attributes\n    localKeyID: 01 02\n-----BEGIN PRIVATE KEY-----\n{body}-----END PRIVATE KEY-----\n"
    with pytest.raises(ParameterError, match="RSA-PSS-restricted key"):
        load_private_key(pem.encode())


def test_a_prime_wider_than_the_native_kernel_is_a_key_error(files, tmp_path) -> None:
    import gmpy2

    from modforge.native import available

    if not available():
        pytest.skip("no native extension")
    p = int(gmpy2.next_prime(1 << 2099))
    q = int(gmpy2.next_prime(3 << 1994))
    e = 65537
    d = pow(e, -1, (p - 1) * (q - 1))
    nums = crsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p), crsa.RSAPublicNumbers(e, p * q))
    key = tmp_path / "unbalanced.pem"
    key.write_bytes(nums.private_key().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                     serialization.NoEncryption()))
    _, msg, _ = files
    res = run("sign", "--key", key, "--in", msg, "--out", tmp_path / "s", "--scheme", "pkcs1v15")
    one_line_error(res, "key: the auto kernel cannot use this key (p: at most 2048 bits, got 2100 bits)")
    assert "--backend python" in res.stderr
    res = run("sign", "--key", key, "--in", msg, "--out", tmp_path / "s", "--scheme", "pkcs1v15", "--backend", "python")
    assert res.exit_code == 0, res.output


def test_large_inputs_are_hashed_in_pieces(files, k1024) -> None:
    key, _, d = files
    big = d / "big.bin"
    with open(big, "wb") as fh:
        for i in range(40):
            fh.write(bytes([i]) * (1 << 20))
    pre, peak = peak_python_memory(lambda: digest_file(big, "sha384"))
    assert peak < 8 << 20 and pre == Prehashed("sha384", hashlib.sha384(big.read_bytes()).digest())
    assert run("sign", "--key", key, "--in", big, "--out", d / "s", "--scheme", "pss", "--hash", "sha384").exit_code == 0
    k1024.pub.verify((d / "s").read_bytes(), big.read_bytes(), padding.PSS(padding.MGF1(hashes.SHA384()), 48),
                     hashes.SHA384())
    assert run("verify", "--key", key, "--in", big, "--sig", d / "s", "--scheme", "pss", "--hash", "sha384").exit_code == 0


def test_prehashed_messages_through_the_api(k1024) -> None:
    from modforge.rsa import load_private_key as load

    key = load(k1024.pem)
    message = b"firmware image"
    for scheme in ("pkcs1v15", "pss"):
        pre = Prehashed("sha384", hashlib.sha384(message).digest())
        sig = sign(key, pre, scheme, "sha384")
        assert verify(key.public, message, sig, scheme, "sha384") and verify(key.public, pre, sig, scheme, "sha384")
        with pytest.raises(ParameterError, match="a sha384 digest given for a sha256 signature"):
            sign(key, pre, scheme, "sha256")
    with pytest.raises(ParameterError, match="the raw scheme signs the message itself"):
        sign(key, Prehashed("sha256", bytes(32)), "raw")
    with pytest.raises(ParameterError, match="the raw scheme signs the message itself"):
        verify(key.public, Prehashed("sha256", bytes(32)), bytes(key.size), "raw")


def test_a_public_key_where_a_private_one_is_needed_is_a_key_error(k1024) -> None:
    public = load_private_key(k1024.pem).public
    with pytest.raises(ParameterError, match="key: a private key is needed, got RSAPublicKey"):
        sign(public, b"m", "pss")
    with pytest.raises(ParameterError, match="key: a private key is needed"):
        decrypt(public, bytes(128), "oaep")


def test_a_label_that_is_not_utf8_is_used_byte_for_byte(files, k1024) -> None:
    key, msg, d = files
    assert run("encrypt", "--key", key, "--in", msg, "--out", d / "c", "--scheme", "oaep",
               "--label", "caf\udce9").exit_code == 0
    plain = k1024.ck.decrypt((d / "c").read_bytes(), padding.OAEP(padding.MGF1(hashes.SHA256()), hashes.SHA256(),
                                                                   b"caf\xe9"))
    assert plain == msg.read_bytes()


def test_batch_refuses_an_input_that_is_another_inputs_signature(files) -> None:
    key, _, d = files
    docs = d / "docs"
    docs.mkdir()
    (docs / "a").write_bytes(b"a")
    (docs / "a.sig").write_bytes(b"old")
    one_line_error(run("sign", "--key", key, "--batch", docs / "a.sig", docs / "a", "--scheme", "pss", "--jobs", 1),
                   "the signature of")
    assert (docs / "a.sig").read_bytes() == b"old"


def test_a_batch_file_that_runs_out_of_memory_does_not_stop_the_others(files, monkeypatch) -> None:
    key, _, d = files
    docs = d / "docs"
    docs.mkdir()
    for name in ("a", "b", "c"):
        (docs / name).write_bytes(name.encode())
    real = batch_module.read_message

    def picky(path, *args):
        if path.name == "b":
            raise MemoryError
        return real(path, *args)

    monkeypatch.setattr(batch_module, "read_message", picky)
    res = run("sign", "--key", key, "--batch", docs, "--scheme", "pss", "--jobs", 1)
    assert res.exit_code == 2 and "1 of 3 inputs failed" in res.stderr and "MemoryError" in res.stderr
    assert (docs / "a.sig").exists() and (docs / "c.sig").exists() and not (docs / "b.sig").exists()


# -- keygen ---------------------------------------------------------------------------------------------------
def test_keygen_makes_a_pair_that_signs_verifies_and_openssl_reads(tmp_path) -> None:
    key, pub, msg = tmp_path / "k.pem", tmp_path / "k.pub", tmp_path / "m"
    msg.write_bytes(b"keygen")
    res = run("keygen", "--bits", 2048, "--out", key, "--public-out", pub, "--json")
    assert res.exit_code == 0, res.output
    assert os.stat(key).st_mode & 0o777 == 0o600
    private = load_private_key(key.read_bytes())
    assert private.n.bit_length() == 2048 and private.e == 65537 and private.p * private.q == private.n
    # An independent reader: cryptography's own loader of the files we wrote.
    theirs = serialization.load_pem_public_key(pub.read_bytes())
    assert theirs.public_numbers().n == private.n
    assert run("sign", "--key", key, "--in", msg, "--out", tmp_path / "m.sig", "--scheme", "pss").exit_code == 0
    theirs.verify((tmp_path / "m.sig").read_bytes(), b"keygen",
                  padding.PSS(padding.MGF1(hashes.SHA256()), padding.PSS.MAX_LENGTH), hashes.SHA256())
    assert run("verify", "--key", pub, "--in", msg, "--sig", tmp_path / "m.sig", "--scheme", "pss").exit_code == 0


def test_keygen_encrypts_with_the_password_file(tmp_path) -> None:
    (tmp_path / "pw").write_bytes(b"correct horse\nignored second line\n")
    res = run("keygen", "--bits", 2048, "--out", tmp_path / "k.pem", "--key-password-file", tmp_path / "pw")
    assert res.exit_code == 0 and "encrypted" in res.output, res.output
    data = (tmp_path / "k.pem").read_bytes()
    assert b"ENCRYPTED PRIVATE KEY" in data
    assert load_private_key(data, b"correct horse").n.bit_length() == 2048
    with pytest.raises(ParameterError):
        load_private_key(data, b"wrong")


@pytest.mark.parametrize("extra, param", [
    (["--bits", 1024], "--bits"), (["--bits", 2049], "--bits"), (["--bits", 8200], "--bits"),
    (["--public-out", "{out}"], "--public-out"),
])
def test_keygen_refuses_weak_odd_or_clashing_requests(tmp_path, extra, param) -> None:
    out = tmp_path / "k.pem"
    args = [str(a).format(out=out) for a in extra]
    one_line_error(run("keygen", "--out", out, *args), param)
    assert not out.exists()


def test_keygen_never_replaces_a_key_unless_forced(tmp_path) -> None:
    out = tmp_path / "k.pem"
    out.write_bytes(b"an existing key")
    one_line_error(run("keygen", "--bits", 2048, "--out", out), "exists; give --force")
    assert out.read_bytes() == b"an existing key"
    assert run("keygen", "--bits", 2048, "--out", out, "--force").exit_code == 0
    assert load_private_key(out.read_bytes()).n.bit_length() == 2048


def _fail_for_public_key(monkeypatch, name: str) -> None:
    """Make ``fileio.<name>`` (stage_file or commit_staged) fail for the .pub file: a full disk."""
    import modforge.fileio as fileio

    real = getattr(fileio, name)

    def failing(*args, **kwargs):
        path = args[1] if name == "commit_staged" else args[0]
        if str(path).endswith(".pub"):
            if name == "commit_staged":
                fileio.discard_staged(args[0])
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(fileio, name, failing)


@pytest.mark.parametrize("force", [False, True])
def test_keygen_on_a_full_disk_changes_nothing(tmp_path, monkeypatch, force) -> None:
    """Both files are staged before either is replaced: a full disk leaves the old pair (or nothing)."""
    key, pub = tmp_path / "k.pem", tmp_path / "k.pub"
    if force:
        key.write_bytes(b"old private key")
        pub.write_bytes(b"old public key")
    _fail_for_public_key(monkeypatch, "stage_file")
    args = ["keygen", "--bits", 2048, "--out", key, "--public-out", pub] + (["--force"] if force else [])
    one_line_error(run(*args), "No space left on device")
    if force:
        assert key.read_bytes() == b"old private key" and pub.read_bytes() == b"old public key"
    assert sorted(p.name for p in tmp_path.iterdir()) == (["k.pem", "k.pub"] if force else [])


def test_keygen_takes_a_new_private_key_back_when_its_public_key_cannot_be_put_in_place(tmp_path,
                                                                                      monkeypatch) -> None:
    _fail_for_public_key(monkeypatch, "commit_staged")
    one_line_error(run("keygen", "--bits", 2048, "--out", tmp_path / "k.pem", "--public-out", tmp_path / "k.pub"),
                   "No space left on device")
    assert list(tmp_path.iterdir()) == []


def test_keygen_force_never_leaves_the_user_without_a_private_key(tmp_path, monkeypatch) -> None:
    """With --force the old key is replaced first; a public key that then cannot be put in place must not
    take the new private key with it (there would be none left), and the old public key, which no longer
    matches, goes."""
    key, pub = tmp_path / "k.pem", tmp_path / "k.pub"
    key.write_bytes(b"old private key")
    pub.write_bytes(b"old public key")
    _fail_for_public_key(monkeypatch, "commit_staged")
    res = run("keygen", "--bits", 2048, "--out", key, "--public-out", pub, "--force")
    one_line_error(res, "the new private key is in")
    assert "old public key is removed" in res.stderr
    assert load_private_key(key.read_bytes()).n.bit_length() == 2048
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.pem"]


def test_keygen_password_lengths(tmp_path) -> None:
    for line, ok in ((b"x" * 1023, True), (b"x" * 1024, False), (b"", False)):
        (tmp_path / "pw").write_bytes(line + b"\n")
        out = tmp_path / f"k{len(line)}.pem"
        res = run("keygen", "--bits", 2048, "--out", out, "--key-password-file", tmp_path / "pw")
        if ok:
            assert res.exit_code == 0, res.output
        else:
            one_line_error(res, "--key-password-file: ")
            assert not out.exists()
