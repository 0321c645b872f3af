"""``modforge rsa``: interface and exit codes (0 ok / valid, 1 a check failed, 2 bad input), via CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import padding

from modforge.cli.main import cli
from modforge.cli.rsa import rsa

from .helpers import h, oaep, pss


def run(*args, group=rsa):
    return CliRunner().invoke(group, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def keys(k1024, tmp_path) -> dict[str, Path]:
    priv = tmp_path / "key.pem"
    priv.write_bytes(k1024.pem)
    pub = tmp_path / "pub.der"
    pub.write_bytes(k1024.pub.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.PKCS1))
    msg = tmp_path / "msg.txt"
    msg.write_bytes(b"pay 100 to alice\n")
    return {"priv": priv, "pub": pub, "msg": msg, "dir": tmp_path}


@pytest.mark.parametrize("scheme,hash_name", [("pkcs1v15", "sha256"), ("pkcs1v15", "sha512"), ("pss", None),
                                              ("pss", "sha384")])
def test_sign_then_verify(keys, k1024, scheme: str, hash_name: str | None) -> None:
    sig = keys["dir"] / "msg.sig"
    extra = ["--hash", hash_name] if hash_name else []
    res = run("sign", "--key", keys["priv"], "--in", keys["msg"], "--out", sig, "--scheme", scheme, *extra)
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith(f"signed {keys['msg']} -> {sig} ({scheme}, {hash_name or 'sha256'}, 1024-bit key")
    padder = padding.PKCS1v15() if scheme == "pkcs1v15" else pss(hash_name or "sha256")
    k1024.pub.verify(sig.read_bytes(), keys["msg"].read_bytes(), padder, h(hash_name or "sha256"))
    res = run("verify", "--key", keys["pub"], "--in", keys["msg"], "--sig", sig, "--scheme", scheme, *extra)
    assert res.exit_code == 0 and res.stdout == "valid\n"
    keys["msg"].write_bytes(b"pay 900 to alice\n")
    res = run("verify", "--key", keys["pub"], "--in", keys["msg"], "--sig", sig, "--scheme", scheme, *extra)
    assert res.exit_code == 1 and res.stdout.startswith("invalid: ")


def test_sign_and_verify_json(keys, k1024) -> None:
    sig = keys["dir"] / "msg.sig"
    res = run("sign", "--key", keys["priv"], "--in", keys["msg"], "--out", sig, "--scheme", "pss", "--json")
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert doc["scheme"] == "pss" and doc["hash"] == "sha256" and doc["bits"] == 1024
    assert doc["signature"] == hex(int.from_bytes(sig.read_bytes(), "big")) and doc["signature_bytes"] == 128
    assert doc["backend"] in ("python", "native")
    res = run("verify", "--key", keys["pub"], "--in", keys["msg"], "--sig", sig, "--scheme", "pss", "--json")
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and doc["valid"] is True and doc["reason"] is None
    assert doc["n"] == hex(k1024.key.n) and doc["e"] == "0x10001"
    res = run("verify", "--key", keys["pub"], "--in", keys["msg"], "--sig", sig, "--scheme", "pkcs1v15", "--json")
    doc = json.loads(res.stdout)
    assert res.exit_code == 1 and doc["valid"] is False and doc["reason"] == "signature does not match the message"


def test_verify_cryptography_pss_with_max_salt(keys, k1024) -> None:
    sig = keys["dir"] / "theirs.sig"
    sig.write_bytes(k1024.ck.sign(keys["msg"].read_bytes(), pss("sha256", padding.PSS.MAX_LENGTH), h("sha256")))
    base = ("verify", "--key", keys["pub"], "--in", keys["msg"], "--sig", sig, "--scheme", "pss")
    assert run(*base).exit_code == 1
    assert run(*base, "--salt-length", "auto").exit_code == 0
    assert run(*base, "--salt-length", str(128 - 32 - 2)).exit_code == 0


def test_raw_sign(keys, k1024) -> None:
    block = keys["dir"] / "block.bin"
    block.write_bytes(bytes(126) + b"\x01\x00")
    sig = keys["dir"] / "block.sig"
    assert run("sign", "--key", keys["priv"], "--in", block, "--out", sig, "--scheme", "raw").exit_code == 0
    assert int.from_bytes(sig.read_bytes(), "big") == pow(256, k1024.key.d, k1024.key.n)
    assert run("verify", "--key", keys["pub"], "--in", block, "--sig", sig, "--scheme", "raw").exit_code == 0


@pytest.mark.parametrize("hash_name", ["sha256", "sha384"])
def test_encrypt_decrypt(keys, k1024, hash_name: str) -> None:
    ct, pt = keys["dir"] / "c.bin", keys["dir"] / "p.txt"
    res = run("encrypt", "--key", keys["pub"], "--in", keys["msg"], "--out", ct, "--scheme", "oaep",
              "--hash", hash_name, "--label", "v1", "--json")
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert doc["ciphertext"] == hex(int.from_bytes(ct.read_bytes(), "big")) and doc["ciphertext_bytes"] == 128
    assert k1024.ck.decrypt(ct.read_bytes(), oaep(hash_name, b"v1")) == keys["msg"].read_bytes()
    ct.write_bytes(k1024.pub.encrypt(b"from openssl", oaep(hash_name, b"v1")))
    res = run("decrypt", "--key", keys["priv"], "--in", ct, "--out", pt, "--scheme", "oaep", "--hash", hash_name,
              "--label", "v1", "--json")
    assert res.exit_code == 0 and pt.read_bytes() == b"from openssl"
    assert json.loads(res.stdout)["plaintext_bytes"] == 12
    assert pt.stat().st_mode & 0o777 == 0o600
    res = run("decrypt", "--key", keys["priv"], "--in", ct, "--out", pt, "--scheme", "oaep", "--hash", hash_name,
              "--force")
    assert res.exit_code == 1 and res.stderr == "modforge: error: decryption failed\n"      # label differs


def test_raw_encrypt_decrypt(keys) -> None:
    block, ct, back = keys["dir"] / "b.bin", keys["dir"] / "c.bin", keys["dir"] / "back.bin"
    block.write_bytes(bytes(100) + bytes(range(28)))
    assert run("encrypt", "--key", keys["pub"], "--in", block, "--out", ct, "--scheme", "raw").exit_code == 0
    assert run("decrypt", "--key", keys["priv"], "--in", ct, "--out", back, "--scheme", "raw").exit_code == 0
    assert back.read_bytes() == block.read_bytes()


BAD_INPUT = [
    (("sign", "--key", "{msg}", "--in", "{msg}", "--out", "{dir}/s", "--scheme", "pss"),
     r"--key: not PEM \(no '-----BEGIN' line\) nor a valid DER RSA private key"),
    (("sign", "--key", "{dir}/nokey.pem", "--in", "{msg}", "--out", "{dir}/s", "--scheme", "pss"),
     "--key: cannot read '.*nokey.pem': No such file or directory"),
    (("sign", "--key", "{priv}", "--in", "{dir}/none.txt", "--out", "{dir}/s", "--scheme", "pss"),
     "--in: cannot read '.*none.txt': No such file or directory"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{dir}/s", "--scheme", "md5"),
     "--scheme: unknown scheme 'md5'; choose one of: raw, pkcs1v15, pss"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{dir}/s", "--scheme", "pss", "--hash", "sha1"),
     "--hash: SHA-1 is refused for new signatures"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{dir}/s", "--scheme", "raw"),
     r"message: raw RSA needs exactly 128 bytes \(the modulus length\), got 17"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{dir}/s", "--scheme", "pss", "--salt-length", "lots"),
     "--salt-length: not a byte count, 'digest', 'max' or 'auto' \\(verify\\): 'lots'"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{dir}/s", "--scheme", "pss", "--backend", "gpu"),
     "--backend: unknown backend 'gpu'"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{dir}/no/such/dir/s", "--scheme", "pss"),
     "--out: directory '.*' does not exist"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{priv}", "--scheme", "pss"), "--out: is the same file as --key"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{msg}", "--scheme", "pss"), "--out: is the same file as --in"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{dir}/s/", "--scheme", "pss"), "--out: '.*s/' is a directory"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{dir}/s", "--scheme", "pss", "--salt-length",
      "99999999999999999999"), "--salt-length: 99999999999999999999-byte salt with sha256 needs at least"),
    # Past Python's 4300-digit int() limit (was 'expected a byte count'), and the digits of other scripts.
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{dir}/s", "--scheme", "pss", "--salt-length",
      "9" * 5000), "--salt-length: a 16610-bit number of bytes, far more than this key's 128 encoded bytes"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{dir}/s", "--scheme", "pss", "--salt-length",
      "-" + "9" * 5000), "--salt-length: must be a byte count >= 0, got a negative 16610-bit number"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{dir}/s", "--scheme", "pss", "--salt-length", "\u0663\u0662"),
     "--salt-length: not a byte count, 'digest', 'max' or 'auto' \\(verify\\): '\u0663\u0662' \\(ASCII digits only\\)"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{dir}/s", "--scheme", "pkcs1v15", "--salt-length", "7"),
     "--salt-length: only the pss scheme has a salt, not pkcs1v15"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--out", "{dir}/s", "--scheme", "pss", "--progress"),
     "--out-dir: --out-dir, --jobs and --progress go with --batch"),
    (("sign", "--key", "{priv}", "--scheme"), r"Option '--scheme' requires an argument. \(see '.*rsa sign --help'\)"),
    (("verify", "--key", "{pub}", "--in", "{msg}", "--sig", "{msg}", "--scheme", "pss", "--hash", "sha512",
      "--salt-length", "64"), "--salt-length: 64-byte salt with sha512 needs at least 130 encoded bytes"),
    (("verify", "--key", "{pub}", "--in", "{msg}", "--sig", "{msg}", "--scheme", "raw", "--salt-length", "8"),
     "--salt-length: only the pss scheme has a salt, not raw"),
    (("decrypt", "--key", "{priv}", "--in", "{msg}", "--out", "{msg}", "--scheme", "oaep"), "--out: is the same file as --in"),
    (("sign", "--key", "{priv}", "--scheme", "pss"), "--in: give --in FILE and --out SIG, or --batch DIR|FILES"),
    (("sign", "--key", "{priv}", "--in", "{msg}", "--batch", "{dir}", "--scheme", "pss"),
     "--batch: --batch replaces --in/--out"),
    (("sign", "--key", "{pub}", "--in", "{msg}", "--out", "{dir}/s", "--scheme", "pss"),
     "--key: this is a public key; this command needs the private key"),
    (("verify", "--key", "{pub}", "--in", "{msg}", "--sig", "{dir}/none.sig", "--scheme", "pss"),
     "--sig: cannot read"),
    (("decrypt", "--key", "{priv}", "--in", "{msg}", "--out", "{dir}/p", "--scheme", "oaep"),
     r"--in: is 17 bytes; a ciphertext of this 1024-bit key is 128 bytes \(the modulus length\)"),
    (("encrypt", "--key", "{pub}", "--in", "{msg}", "--out", "{dir}/c", "--scheme", "pkcs1v15"),
     "--scheme: unknown scheme 'pkcs1v15'; choose one of: raw, oaep"),
    (("encrypt", "--key", "{pub}", "--in", "{msg}", "--out", "{dir}/c", "--scheme", "oaep", "--hash", "sha512"),
     "--hash: sha512 OAEP needs a modulus of at least 130 bytes, this key has 128"),
]


@pytest.mark.parametrize("args,pattern", BAD_INPUT, ids=[f"{a[0]}-{i}" for i, (a, _) in enumerate(BAD_INPUT)])
def test_bad_input_exits_2_with_one_line(keys, args, pattern) -> None:
    import re

    fields = {k: str(v) for k, v in keys.items()}
    res = run(*(a.format(**fields) for a in args))
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and re.match("modforge: error: " + pattern, lines[0]), res.stderr


def test_batch(keys, k1024) -> None:
    docs = keys["dir"] / "docs"
    docs.mkdir()
    for i in range(6):
        (docs / f"d{i}.txt").write_bytes(f"doc {i}".encode())
    res = run("sign", "--key", keys["priv"], "--batch", docs, "--scheme", "pss", "--jobs", "2", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["files"] == 6 and doc["signed"] == 6 and doc["failed"] == 0 and doc["jobs"] == 2
    for i in range(6):
        src = docs / f"d{i}.txt"
        k1024.pub.verify((docs / f"d{i}.txt.sig").read_bytes(), src.read_bytes(), pss("sha256"), h("sha256"))
    out = keys["dir"] / "sigs"
    out.mkdir()
    files = [docs / "d0.txt", docs / "d1.txt", docs / "d2.txt"]
    res = run("sign", "--key", keys["priv"], "--batch", *files, "--out-dir", out, "--scheme", "pkcs1v15",
              "--no-progress")
    assert res.exit_code == 0 and "signed 3 of 3 files" in res.stdout
    assert sorted(p.name for p in out.iterdir()) == ["d0.txt.sig", "d1.txt.sig", "d2.txt.sig"]
    k1024.pub.verify((out / "d1.txt.sig").read_bytes(), b"doc 1", padding.PKCS1v15(), h("sha256"))


def test_batch_progress_bar(keys) -> None:
    docs = keys["dir"] / "docs"
    docs.mkdir()
    for i in range(3):
        (docs / f"d{i}.txt").write_bytes(b"x" * i)
    res = run("sign", "--key", keys["priv"], "--batch", docs, "--scheme", "pss", "--jobs", "1", "--progress")
    assert res.exit_code == 0 and "3/3" in res.stderr and "signing" in res.stderr


def test_batch_with_failures_exits_2(keys) -> None:
    docs = keys["dir"] / "docs"
    docs.mkdir()
    (docs / "a.bin").write_bytes(bytes(128))
    (docs / "b.bin").write_bytes(b"short")
    res = run("sign", "--key", keys["priv"], "--batch", docs, "--scheme", "raw", "--jobs", "1")
    assert res.exit_code == 2
    assert res.stderr == ("modforge: error: --batch: 1 of 2 inputs failed; first: " + str(docs / "b.bin")
                          + ": message: raw RSA needs exactly 128 bytes (the modulus length), got 5\n")
    assert (docs / "a.bin.sig").exists() and not (docs / "b.bin.sig").exists()
    assert "failed  " in res.stdout and "signed 1 of 2 files" in res.stdout


def test_fault_exits_1(keys, monkeypatch) -> None:
    from modforge.rsa import exp

    def broken(c, p, dp, q, dq, bits):
        xp, xq = exp.python_halves(c, p, dp, q, dq, bits)
        return xp ^ 1, xq

    monkeypatch.setitem(exp._BACKENDS, "broken", broken)
    sig = keys["dir"] / "s"
    res = run("sign", "--key", keys["priv"], "--in", keys["msg"], "--out", sig, "--scheme", "pss", "--backend", "broken")
    assert res.exit_code == 1 and not sig.exists()
    assert res.stderr.startswith("modforge: error: private-key operation failed its public-exponent check")


def test_under_the_modforge_command(keys) -> None:
    sig = keys["dir"] / "s"
    res = run("rsa", "sign", "--key", keys["priv"], "--in", keys["msg"], "--out", sig, "--scheme", "pss", group=cli)
    assert res.exit_code == 0
    res = run("rsa", "verify", "--key", keys["pub"], "--in", keys["msg"], "--sig", sig, "--scheme", "pkcs1v15",
              group=cli)
    assert res.exit_code == 1
    res = run("rsa", "sign", "--key", keys["priv"], "--in", keys["msg"], "--out", sig, "--scheme", "x", group=cli)
    assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1
    assert "rsa" in run("--help", group=cli).stdout
    # issue 5's `modforge rsa bench` is the benchmark's own command (`modforge bench rsa`), not a copy
    assert "bench" in run("--help").stdout and run("bench", "--help").exit_code == 0


@pytest.mark.parametrize("command, schemes, others", [("sign", "pkcs1v15 and pss", "oaep"),
                                                      ("verify", "pkcs1v15 and pss", "oaep"),
                                                      ("encrypt", "oaep", "pss"), ("decrypt", "oaep", "pss")])
def test_hash_help_names_the_commands_own_schemes(command: str, schemes: str, others: str) -> None:
    """`rsa encrypt --help` said --hash was "for pkcs1v15, pss and oaep"; encrypt has raw and oaep only."""
    res = run(command, "--help")
    text = " ".join(res.stdout.split())                   # click wraps the help
    assert res.exit_code == 0 and f"Hash for {schemes}" in text and others not in text.split("--hash")[1][:120]
