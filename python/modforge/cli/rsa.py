"""``modforge rsa keygen|sign|verify|encrypt|decrypt``: RSA with keys in PEM or DER files.

Exit codes: 0 success / valid signature; 1 a check failed (an invalid
signature - the reason on stdout or in the JSON -, a failed decryption, a
private-key result withheld by the fault check); 2 bad usage or bad input
(unreadable or malformed key, a signature or ciphertext of the wrong length
or not below n, unknown scheme or hash), one line on stderr naming the
option (``--key-password-file: ...``).  JSON output writes big integers,
``e`` included, as 0x-prefixed lowercase hex.

Outputs: a file that exists is replaced only with ``--force`` (keygen's
``--out``/``--public-out``, sign's ``--out`` and batch ``.sig`` files,
encrypt's and decrypt's ``--out``), always atomically.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from ..arith.base import ParameterError
from .main import EXIT_CHECK_FAILED, INTEGER, ErrorExitGroup, parse_int

SIGN_SCHEMES = "raw|pkcs1v15|pss"
ENCRYPT_SCHEMES = "raw|oaep"
_HASH_LIST = ("sha224, sha256 (default), sha384, sha512, sha512-224, sha512-256, sha3-224, sha3-256, "
              "sha3-384, sha3-512; sha1 to verify only")
# Each command names its own schemes: encrypt and decrypt have no pkcs1v15 or pss.
SIGN_HASH_HELP = f"Hash for pkcs1v15 and pss: {_HASH_LIST} (a PSS-restricted key's by default). Not with raw."
ENCRYPT_HASH_HELP = ("Hash for oaep (the label hash, and MGF1's unless --mgf1-hash): sha1, sha224, sha256 "
                     "(default), sha384, sha512, sha512-224, sha512-256, sha3-224 ... sha3-512. Not with raw.")
SIGN_MGF1_HELP = "MGF1 hash for pss (default: the --hash one, or a PSS-restricted key's); e.g. sha1."
ENCRYPT_MGF1_HELP = ("MGF1 hash for oaep (default: the --hash one). OpenSSL's pkeyutl default is sha1 with "
                     "sha1; Java's common one --hash sha256 --mgf1-hash sha1.")
FORCE_HELP = "Replace --out if it exists (without it an existing file is an error)."


class RsaGroup(ErrorExitGroup):
    """Bad input exits 2; a failed check (fault, bad padding, invalid signature) 1.  A ParameterError about
    one of the command's options is said with the option's name (``--key-password-file: ...``)."""

    def exit_codes(self) -> list[tuple[type[BaseException], int, str]]:
        from ..rsa.errors import RSAError

        return [*super().exit_codes(), (RSAError, EXIT_CHECK_FAILED, "error: ")]


class RsaCommand(click.Command):
    """An rsa subcommand: a ParameterError about one of its options is said with the option's name as
    typed (``--key-password-file: ...``, not ``key_password_file: ...``)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ParameterError as exc:
            wanted = "--" + exc.param.replace("_", "-")
            if any(wanted in param.opts for param in self.params if isinstance(param, click.Option)):
                raise ParameterError(wanted, exc.problem) from None
            raise


RsaGroup.command_class = RsaCommand


def _dump(doc: dict[str, Any]) -> None:
    click.echo(json.dumps(doc, indent=1))


def _salt(text: str | None) -> int | str | None:
    if text is None or text in ("max", "auto", "digest"):
        return text
    return parse_int(text, "salt_length", expected="a byte count, 'digest', 'max' or 'auto' (verify)")


def _check_out(out_path: str, force: bool, **inputs: str | None) -> None:
    """--out writable, a regular file or new (existing only with --force), and not one of the files the
    command reads (the key!)."""
    from ..fileio import check_output_path, same_file

    check_output_path(out_path, "out")
    for name, path in inputs.items():
        if path is not None and same_file(out_path, path):
            raise ParameterError("out", f"is the same file as --{name}")
    # Last, so that a more specific problem (a FIFO, the key itself) is the one said.
    check_output_path(out_path, "out", overwrite=force)


def _password(password_file: str | None) -> bytes | None:
    from ..rsa.files import read_input

    if password_file is None:
        return None
    # Its first line, without the line end (as `openssl -passin file:F` reads it).
    password = read_input(password_file, "key_password_file", 1 << 16).split(b"\n", 1)[0].rstrip(b"\r")
    if not password:
        raise ParameterError("key_password_file", f"{password_file!r} holds an empty password (its first line)")
    return password


def _private_key(key_path: str, password_file: str | None):
    from ..rsa import read_private_key

    return read_private_key(key_path, _password(password_file))


KEY_PASSWORD_HELP = "File holding the password of an encrypted private key (its first line)."


def _hash_label(scheme: str, hash_name: str | None, key: Any = None) -> str | None:
    from ..rsa.schemes import effective_hash_name

    return effective_hash_name(key, scheme, hash_name)


def _mgf1_label(scheme: str, hash_name: str | None, mgf1_hash: str | None, key: Any = None) -> str | None:
    """The MGF1 hash in use (pss, oaep), for the output; None for the other schemes."""
    from ..rsa.encodings import hash_info

    if scheme not in ("pss", "oaep"):
        return None
    restriction = getattr(key, "pss", None)
    if mgf1_hash is None and restriction is not None and restriction.mgf1_hash is not None:
        return restriction.mgf1_hash.name
    return hash_info(mgf1_hash or _hash_label(scheme, hash_name, key), "mgf1_hash").name


@click.group(cls=RsaGroup)
def rsa() -> None:
    """RSA signatures and encryption (RFC 8017) with a checked CRT private-key operation."""


def _batch_progress(enabled: bool | None):
    """A rich progress bar on stderr (on a terminal unless forced), or None."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None, None
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    bar = Progress(TextColumn("[bold]signing"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("[cyan]{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"),
                   TimeRemainingColumn(), console=Console(stderr=True), refresh_per_second=8)
    state: dict[str, Any] = {"task": None, "start": time.perf_counter()}

    def update(done: int, total: int) -> None:
        if state["task"] is None:
            state["task"] = bar.add_task("signing", total=total, rate="-")
        elapsed = time.perf_counter() - state["start"]
        rate = f"{done / elapsed:.1f} sig/s" if done and elapsed > 0 else "-"
        bar.update(state["task"], completed=done, rate=rate)

    return bar, update


@rsa.command("keygen")
@click.option("--bits", type=INTEGER, default=3072, show_default=True,
              help="Modulus size: 2048 to 8192, a multiple of 8 (8192 takes about a minute).")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="Private key to write: PKCS#8 PEM, mode 0600.")
@click.option("--public-out", "public_path", type=click.Path(dir_okay=False),
              help="Also write the public key here (SubjectPublicKeyInfo PEM).")
@click.option("--key-password-file", "password_file", type=click.Path(dir_okay=False),
              help="Encrypt the private key with the password in this file (its first line).")
@click.option("--force", is_flag=True, help="Replace existing --out / --public-out files.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def keygen_cmd(bits: int, out_path: str, public_path: str | None, password_file: str | None, force: bool,
               as_json: bool) -> None:
    """Make a new key pair (e = 65537; the primes from OpenSSL, through `cryptography`)."""
    import hashlib

    from ..fileio import check_output_path, commit_staged, discard_staged, output_errors, same_file, stage_file
    from ..rsa import generate_private_key_pem, load_public_key

    check_output_path(out_path, "out", overwrite=force)
    if public_path is not None:
        check_output_path(public_path, "public_out", overwrite=force)
        if same_file(out_path, public_path):
            raise ParameterError("public_out", "is the same file as --out")
    for name, path in (("out", out_path), ("public_out", public_path)):
        if path is not None and password_file is not None and same_file(path, password_file):
            raise ParameterError(name, "is the same file as --key-password-file")
    password = _password(password_file)
    start = time.perf_counter()
    private_pem, public_pem = generate_private_key_pem(bits, password)
    seconds = time.perf_counter() - start
    # Both files are staged (written and fsynced beside their names) before either is replaced, so a full
    # disk leaves the old pair as it was.  Then the private key goes in first: if the public key cannot
    # follow, a private key this call created is removed again, and one that replaced an older key stays
    # (the old one is gone) with the old public key, which no longer matches, removed too.
    replaced = Path(out_path).exists()
    with output_errors(out_path, "out"):
        staged_private = stage_file(out_path, private_pem, mode=0o600)
    try:
        with output_errors(public_path or "", "public_out"):
            staged_public = stage_file(public_path, public_pem) if public_path is not None else None
    except BaseException:
        discard_staged(staged_private)
        raise
    try:
        with output_errors(out_path, "out"):
            commit_staged(staged_private, out_path, exclusive=not force)
    except BaseException:
        if staged_public is not None:
            discard_staged(staged_public)
        raise
    if staged_public is not None:
        try:
            commit_staged(staged_public, public_path, exclusive=not force)
        except BaseException as exc:
            if not replaced:
                discard_staged(Path(out_path))
                raise
            stale = Path(public_path).exists()
            discard_staged(Path(public_path))
            if isinstance(exc, OSError):
                raise ParameterError("public_out", f"cannot write {public_path!r} ({exc.strerror or exc}); the new "
                                                   f"private key is in {out_path!r} (the old one is replaced)"
                                                   f"{' and the old public key is removed' if stale else ''}: "
                                                   f"derive the public key with `openssl pkey -in {out_path} "
                                                   f"-pubout`") from None
            raise
    public = load_public_key(public_pem)
    der = public.n.to_bytes((public.n.bit_length() + 7) // 8, "big")
    fingerprint = hashlib.sha256(der).hexdigest()
    if as_json:
        _dump({"bits": bits, "e": hex(public.e), "out": out_path, "public_out": public_path,
               "encrypted": password is not None, "modulus_sha256": fingerprint, "seconds": round(seconds, 6)})
    else:
        click.echo(f"key          {out_path} ({bits} bits, e = {public.e}"
                   f"{', encrypted' if password is not None else ''}, mode 0600)")
        if public_path is not None:
            click.echo(f"public key   {public_path}")
        click.echo(f"modulus      SHA-256 {fingerprint}")


@rsa.command("sign")
@click.option("--key", "key_path", required=True, type=click.Path(dir_okay=False), help="Private key, PEM or DER.")
@click.option("--in", "in_path", type=click.Path(dir_okay=False), help="File to sign.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), help="Signature file to write (k bytes).")
@click.option("--batch", "batch", type=click.Path(), metavar="DIR|FILE",
              help="Sign many files: a directory (its files) or files, more may follow as arguments. "
                   "Each signature goes to <file>.sig, or into --out-dir.")
@click.option("--out-dir", "out_dir", type=click.Path(file_okay=False), help="With --batch: where the .sig files go.")
@click.option("--jobs", type=INTEGER, default=None, help="With --batch: worker processes (default: every core).")
@click.option("--progress/--no-progress", "progress", default=None,
              help="With --batch: show a progress bar (default: when stderr is a terminal).")
@click.option("--scheme", required=True, metavar=SIGN_SCHEMES, help="Signature scheme.")
@click.option("--hash", "hash_name", metavar="NAME", help=SIGN_HASH_HELP)
@click.option("--mgf1-hash", "mgf1_hash", metavar="NAME", help=SIGN_MGF1_HELP)
@click.option("--salt-length", "salt_text", metavar="N|digest|max",
              help="PSS salt bytes: a count, digest (the hash length) or max (the largest the key allows). "
                   "Default: digest, or the length a PSS-restricted key states.")
@click.option("--backend", default="auto", show_default=True,
              help="Kernel of the private-key exponentiations: auto, python or native (auto: native, or "
                   "python for 8192-bit keys); sim:pam runs them on the Verilated seed-004 unit.")
@click.option("--key-password-file", "password_file", type=click.Path(dir_okay=False), help=KEY_PASSWORD_HELP)
@click.option("--force", is_flag=True, help="Replace --out (or, with --batch, .sig files) that exist.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.argument("more", nargs=-1, type=click.Path(), metavar="[FILES]...")
def sign_cmd(key_path: str, in_path: str | None, out_path: str | None, batch: str | None, out_dir: str | None,
             jobs: int | None, progress: bool | None, scheme: str, hash_name: str | None, mgf1_hash: str | None,
             salt_text: str | None, backend: str, password_file: str | None, force: bool, as_json: bool,
             more: tuple[str, ...]) -> None:
    """Sign --in into --out, or every file of --batch (using every core)."""
    from ..rsa import sign
    from ..rsa.encodings import os2ip
    from ..rsa.exp import backend_name
    from ..rsa.files import read_message, write_output
    from ..rsa.schemes import check_sign_options

    salt_length = _salt(salt_text)
    if salt_length == "auto":
        raise ParameterError("salt_length", "'auto' is for verify; sign takes a byte count, 'digest' or 'max'")
    if batch is None:
        if more:
            raise ParameterError("batch", f"extra arguments {' '.join(more)!r} are batch inputs: give --batch first")
        if in_path is None or out_path is None:
            raise ParameterError("in", "give --in FILE and --out SIG, or --batch DIR|FILES")
        if out_dir is not None or jobs is not None or progress is not None:
            raise ParameterError("out_dir", "--out-dir, --jobs and --progress go with --batch")
        _check_out(out_path, force, **{"in": in_path, "key": key_path, "key-password-file": password_file})
    elif in_path is not None or out_path is not None:
        raise ParameterError("batch", "--batch replaces --in/--out (use --out-dir for the signatures)")

    if backend == "sim:pam":
        # Seed 004's RSA-512 runs on the simulated unit: shorter keys are read for it, and said to be unsafe.
        from ..rsa.keys import MIN_BITS, short_keys_for_simulation

        with short_keys_for_simulation():
            key = _private_key(key_path, password_file)
        if key.bits < MIN_BITS:
            click.echo(f"modforge: warning: a {key.bits}-bit key is read only to check the simulated hardware "
                       f"(sim:pam); it is far too short to protect anything", err=True)
    else:
        key = _private_key(key_path, password_file)
    check_sign_options(key, scheme, hash_name, salt_length, mgf1_hash)
    used_backend = backend_name(backend, key)
    scheme_name = scheme.lower()
    hash_label = _hash_label(scheme_name, hash_name, key)
    head = {"scheme": scheme_name, "hash": hash_label, "bits": key.bits, "backend": used_backend}
    if scheme_name == "pss":
        head["mgf1_hash"] = _mgf1_label(scheme_name, hash_name, mgf1_hash, key)

    if batch is not None:
        _sign_batch(key, [batch, *more], out_dir, jobs, progress, scheme_name, hash_label, salt_length, backend,
                    as_json, head, {"key": key_path, "key-password-file": password_file}, mgf1_hash, force)
        return

    message = read_message(in_path, scheme_name, hash_label)
    signature = sign(key, message, scheme_name, hash_label, salt_length=salt_length, backend=backend,
                     mgf1_hash=mgf1_hash)
    write_output(out_path, signature, "out", overwrite=force)
    sim = _sim_report(used_backend)
    if as_json:
        _dump({**head, "in": in_path, "out": out_path, "signature": hex(os2ip(signature)),
               "signature_bytes": len(signature), **({"sim": sim} if sim else {})})
    else:
        detail = scheme_name + (f", {hash_label}" if hash_label else "")
        click.echo(f"signed {in_path} -> {out_path} ({detail}, {key.bits}-bit key, {used_backend} kernel)")
        if sim:
            click.echo(f"simulated {sim['cycles']} cycles ({sim['busy_per_product']} per product); "
                       f"{sim['projected_seconds'] * 1e3:.3f} ms at the seed's {sim['clock_ns']:g} ns clock, two "
                       f"units in parallel (projected, not a timing result)")


def _sim_report(backend: str) -> dict[str, Any] | None:
    """The cycles of a simulated-hardware kernel's last operation (``sim:pam``), else None."""
    if backend != "sim:pam":
        return None
    from ..hw.pam_rsa import last_report

    return last_report() or None


def _sign_batch(key, inputs: list[str], out_dir: str | None, jobs: int | None, progress: bool | None,
                scheme: str, hash_name: str | None, salt_length, backend: str, as_json: bool,
                head: dict[str, Any], protected: dict[str, str | None], mgf1_hash: str | None = None,
                force: bool = False) -> None:
    from ..rsa.batch import collect_inputs, default_jobs, plan, sign_batch

    items = plan(collect_inputs(inputs), out_dir, protected, overwrite=force)
    jobs = default_jobs() if jobs is None else jobs
    bar, update = _batch_progress(progress)
    start = time.perf_counter()
    if bar is not None:
        bar.start()
    try:
        results = sign_batch(key, items, scheme, hash_name, salt_length=salt_length, backend=backend, jobs=jobs,
                             progress=update, mgf1_hash=mgf1_hash, overwrite=force)
    finally:
        if bar is not None:
            bar.stop()
    seconds = time.perf_counter() - start
    failed = [r for r in results if not r.ok]
    signed = len(results) - len(failed)
    if as_json:
        _dump({**head, "jobs": min(jobs, len(items)), "files": len(results), "signed": signed,
               "failed": len(failed), "seconds": round(seconds, 3),
               "results": [{"in": str(r.source), "out": str(r.target), "ok": r.ok, "error": r.error}
                           for r in results]})
    else:
        for r in failed:
            click.echo(f"failed  {r.source}: {r.error}")
        rate = f", {signed / seconds:.1f} signatures/s" if seconds > 0 and signed else ""
        click.echo(f"signed {signed} of {len(results)} files in {seconds:.2f} s on {min(jobs, len(items))} "
                   f"process(es){rate}")
    if any(r.fault for r in failed):
        click.echo(f"modforge: error: {sum(r.fault for r in failed)} private-key result(s) failed the fault "
                   "check and were withheld", err=True)
        sys.exit(EXIT_CHECK_FAILED)
    if failed:
        first = failed[0]
        raise ParameterError("batch", f"{len(failed)} of {len(results)} inputs failed; first: {first.source}: "
                                      f"{first.error}")


@rsa.command("verify")
@click.option("--key", "key_path", required=True, type=click.Path(dir_okay=False),
              help="Public key (or private key), PEM or DER.")
@click.option("--in", "in_path", required=True, type=click.Path(dir_okay=False), help="The signed file.")
@click.option("--sig", "sig_path", required=True, type=click.Path(dir_okay=False), help="The signature file.")
@click.option("--scheme", required=True, metavar=SIGN_SCHEMES, help="Signature scheme.")
@click.option("--hash", "hash_name", metavar="NAME", help=SIGN_HASH_HELP)
@click.option("--mgf1-hash", "mgf1_hash", metavar="NAME", help=SIGN_MGF1_HELP)
@click.option("--salt-length", "salt_text", metavar="N|digest|max|auto",
              help="PSS salt length required: exactly N bytes, exactly the hash length (digest) or exactly the "
                   "largest (max); auto accepts any length (a PSS-restricted key's minimum still holds). "
                   "Default: digest, or exactly the length a PSS-restricted key states (as OpenSSL).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def verify_cmd(key_path: str, in_path: str, sig_path: str, scheme: str, hash_name: str | None,
               mgf1_hash: str | None, salt_text: str | None, as_json: bool) -> None:
    """Check a signature: exit 0 if valid, 1 if not (with the reason); 2 for bad input, a signature of the
    wrong length included."""
    from ..rsa import check_signature, read_public_key
    from ..rsa.files import SMALL_INPUT_LIMIT, read_input, read_message

    salt_length = _salt(salt_text)
    key = read_public_key(key_path)
    scheme_name = scheme.lower()
    hash_label = _hash_label(scheme_name, hash_name, key)
    message = read_message(in_path, scheme_name, hash_label)
    signature = read_input(sig_path, "sig", SMALL_INPUT_LIMIT)
    try:
        reason = check_signature(key, message, signature, scheme_name, hash_label, salt_length=salt_length,
                                 mgf1_hash=mgf1_hash)
    except ParameterError as exc:
        if exc.param == "signature":    # the file given as --sig
            raise ParameterError("sig", exc.problem) from None
        raise
    if as_json:
        doc = {"scheme": scheme_name, "hash": hash_label, "bits": key.bits, "n": hex(key.n), "e": hex(key.e),
               "in": in_path, "sig": sig_path, "valid": reason is None, "reason": reason}
        if scheme_name == "pss":
            doc["mgf1_hash"] = _mgf1_label(scheme_name, hash_name, mgf1_hash, key)
        _dump(doc)
    else:
        click.echo("valid" if reason is None else f"invalid: {reason}")
    if reason is not None:
        sys.exit(EXIT_CHECK_FAILED)


def _label(text: str | None) -> bytes:
    # surrogateescape: argument bytes that are not UTF-8 are the label exactly as given.
    return b"" if text is None else text.encode("utf-8", "surrogateescape")


@rsa.command("encrypt")
@click.option("--key", "key_path", required=True, type=click.Path(dir_okay=False),
              help="Public key (or private key), PEM or DER.")
@click.option("--in", "in_path", required=True, type=click.Path(dir_okay=False), help="Plaintext file.")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), help="Ciphertext file (k bytes).")
@click.option("--scheme", required=True, metavar=ENCRYPT_SCHEMES, help="Encryption scheme.")
@click.option("--hash", "hash_name", metavar="NAME", help=ENCRYPT_HASH_HELP)
@click.option("--mgf1-hash", "mgf1_hash", metavar="NAME", help=ENCRYPT_MGF1_HELP)
@click.option("--label", help="OAEP label, UTF-8 text (default: empty).")
@click.option("--force", is_flag=True, help=FORCE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def encrypt_cmd(key_path: str, in_path: str, out_path: str, scheme: str, hash_name: str | None,
                mgf1_hash: str | None, label: str | None, force: bool, as_json: bool) -> None:
    """Encrypt --in into --out (raw: exactly k bytes below n; oaep: at most k - 2*hLen - 2 bytes)."""
    from ..rsa import encrypt, read_public_key
    from ..rsa.encodings import os2ip
    from ..rsa.files import SMALL_INPUT_LIMIT, read_input, write_output

    _check_out(out_path, force, **{"in": in_path, "key": key_path})
    key = read_public_key(key_path)
    message = read_input(in_path, "in", SMALL_INPUT_LIMIT)
    ciphertext = encrypt(key, message, scheme, hash_name, label=_label(label), mgf1_hash=mgf1_hash)
    write_output(out_path, ciphertext, "out", overwrite=force)
    scheme_name = scheme.lower()
    if as_json:
        _dump({"scheme": scheme_name, "hash": _hash_label(scheme_name, hash_name),
               "mgf1_hash": _mgf1_label(scheme_name, hash_name, mgf1_hash), "bits": key.bits,
               "in": in_path, "out": out_path, "ciphertext": hex(os2ip(ciphertext)),
               "ciphertext_bytes": len(ciphertext)})
    else:
        click.echo(f"encrypted {in_path} -> {out_path} ({scheme_name}, {key.bits}-bit key)")


@rsa.command("decrypt")
@click.option("--key", "key_path", required=True, type=click.Path(dir_okay=False), help="Private key, PEM or DER.")
@click.option("--in", "in_path", required=True, type=click.Path(dir_okay=False), help="Ciphertext file (k bytes).")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="Plaintext file to write (mode 0600).")
@click.option("--scheme", required=True, metavar=ENCRYPT_SCHEMES, help="Encryption scheme.")
@click.option("--hash", "hash_name", metavar="NAME", help=ENCRYPT_HASH_HELP)
@click.option("--mgf1-hash", "mgf1_hash", metavar="NAME", help=ENCRYPT_MGF1_HELP)
@click.option("--label", help="OAEP label, UTF-8 text (default: empty).")
@click.option("--backend", default="auto", show_default=True,
              help="Kernel of the private-key exponentiations: auto, python or native (auto: native, or "
                   "python for 8192-bit keys).")
@click.option("--key-password-file", "password_file", type=click.Path(dir_okay=False), help=KEY_PASSWORD_HELP)
@click.option("--force", is_flag=True, help=FORCE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def decrypt_cmd(key_path: str, in_path: str, out_path: str, scheme: str, hash_name: str | None,
                mgf1_hash: str | None, label: str | None, backend: str, password_file: str | None, force: bool,
                as_json: bool) -> None:
    """Decrypt --in into --out; a failed OAEP decryption says only "decryption failed" (exit 1)."""
    from ..rsa import decrypt
    from ..rsa.exp import backend_name
    from ..rsa.files import SMALL_INPUT_LIMIT, read_input, write_output

    _check_out(out_path, force, **{"in": in_path, "key": key_path, "key-password-file": password_file})
    key = _private_key(key_path, password_file)
    ciphertext = read_input(in_path, "in", SMALL_INPUT_LIMIT)
    used_backend = backend_name(backend, key)
    try:
        plaintext = decrypt(key, ciphertext, scheme, hash_name, label=_label(label), backend=backend,
                            mgf1_hash=mgf1_hash)
    except ParameterError as exc:
        if exc.param == "ciphertext":   # the file given as --in
            raise ParameterError("in", exc.problem) from None
        raise
    write_output(out_path, plaintext, "out", mode=0o600, overwrite=force)
    scheme_name = scheme.lower()
    if as_json:
        _dump({"scheme": scheme_name, "hash": _hash_label(scheme_name, hash_name),
               "mgf1_hash": _mgf1_label(scheme_name, hash_name, mgf1_hash), "bits": key.bits,
               "backend": used_backend, "in": in_path, "out": out_path, "plaintext_bytes": len(plaintext)})
    else:
        click.echo(f"decrypted {in_path} -> {out_path} ({len(plaintext)} bytes, {scheme_name}, {key.bits}-bit key)")


def _bench_command() -> click.Command:
    """``modforge rsa bench`` is ``modforge bench rsa`` (one command object, two places in the tree)."""
    from .bench import rsa as bench_rsa

    return bench_rsa


rsa.add_command(_bench_command(), name="bench")
