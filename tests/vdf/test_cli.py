"""`modforge vdf eval|prove|verify` through click's runner, on the `vdf` group directly: exit codes 0/1/2."""

from __future__ import annotations

import json
import random
import sys

import gmpy2
import pytest
from click.testing import CliRunner

from modforge.cli.vdf import vdf
from modforge.data import vdf_alliance_modulus
from modforge.vdf import Group

from .helpers import oracle, rsa


def invoke(*args: str):
    return CliRunner().invoke(vdf, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def n() -> int:
    return rsa(512).n


def test_eval_json_prints_y_as_lowercase_hex(n: int) -> None:
    res = invoke("eval", "--modulus", hex(n), "--x", "5", "--t", "1000", "--backend", "gmp", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    g = Group(n)
    assert out["y"] == hex(oracle(g, 5, 1000)) and out["y"] == out["y"].lower()
    assert out["modulus"] == hex(n) and out["t"] == 1000 and "proof" not in out


@pytest.mark.parametrize("ptype", ["wesolowski", "pietrzak"])
def test_eval_prove_verify_round_trip(n: int, ptype: str, tmp_path) -> None:
    out = tmp_path / "proof.json"
    res = invoke("eval", "--modulus", n, "--x", "hash:hello", "--t", "2^10", "--proof", ptype, "--out", out, "--json")
    assert res.exit_code == 0, res.output
    printed = json.loads(res.stdout)
    assert printed["proof"] == json.loads(out.read_text())
    assert printed["proof"]["type"] == ptype
    g = Group(n)
    assert printed["x"] == hex(g.hash_to_group(b"hello"))
    assert printed["y"] == hex(oracle(g, g.hash_to_group(b"hello"), 1024))
    res = invoke("verify", out)
    assert res.exit_code == 0 and res.stdout.startswith("valid: ")
    res = invoke("verify", out, "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["valid"] is True
    # Tamper: wrong t -> exit 1 with the reason.
    doc = json.loads(out.read_text())
    doc["t"] += 1
    out.write_text(json.dumps(doc))
    res = invoke("verify", out)
    assert res.exit_code == 1 and res.stdout.startswith("invalid: ")
    res = invoke("verify", out, "--json")
    assert res.exit_code == 1 and not json.loads(res.stdout)["valid"] and json.loads(res.stdout)["reason"]


def test_human_output(n: int, tmp_path) -> None:
    res = invoke("eval", "--modulus", n, "--x", "7", "--t", "300", "--proof", "wesolowski", "--out",
                 tmp_path / "p.json")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("y ") and "written" in res.stdout


def test_vdf_alliance_modulus_by_name() -> None:
    res = invoke("eval", "--modulus", "vdf-alliance", "--x", "2", "--t", "64", "--json", "--proof", "pietrzak")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert int(out["modulus"], 16) == vdf_alliance_modulus()
    assert int(out["y"], 16) == Group(vdf_alliance_modulus()).canon(pow(2, 1 << 64, vdf_alliance_modulus()))


def test_prove_from_checkpoints(n: int, tmp_path) -> None:
    ck = tmp_path / "ck.json"
    res = invoke("eval", "--modulus", n, "--x", "hash:ck", "--t", "777", "--checkpoints", ck, "--json")
    assert res.exit_code == 0, res.output
    for ptype in ("wesolowski", "pietrzak"):
        out = tmp_path / f"{ptype}.json"
        res = invoke("prove", "--checkpoints", ck, "--proof", ptype, "--out", out)
        assert res.exit_code == 0, res.output
        assert invoke("verify", out).exit_code == 0
        res = invoke("prove", "--checkpoints", ck, "--proof", ptype, "--json")
        assert json.loads(res.stdout) == json.loads(out.read_text())


def test_verify_unreadable_is_exit_2(tmp_path) -> None:
    res = CliRunner().invoke(vdf, ["verify", str(tmp_path / "nope.json")])
    assert res.exit_code == 2 and "modforge: error: FILE: cannot read" in res.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("not json at all")
    res = CliRunner().invoke(vdf, ["verify", str(bad)])
    assert res.exit_code == 2 and "is not JSON" in res.stderr
    res = CliRunner().invoke(vdf, ["verify"])
    assert res.exit_code == 2


def test_verify_garbage_document_is_exit_1(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "modforge-vdf-proof", "version": 9}')
    res = invoke("verify", bad)
    assert res.exit_code == 1 and "unknown version 9" in res.stdout


@pytest.mark.parametrize("args, fragment", [
    (("--modulus", "12345", "--x", "2", "--t", "5"), "modulus: must have 256"),
    (("--modulus", "zz", "--x", "2", "--t", "5"), "modulus: not a decimal or 0x-hex"),
    (("--modulus", "N", "--x", "N-2", "--t", "5"), "x: is not in canonical signed form"),
    (("--modulus", "N", "--x", "0", "--t", "5"), "x: is zero"),
    (("--modulus", "N", "--x", "2", "--t", "0"), "t: must be between 1"),
    (("--modulus", "N", "--x", "2", "--t", "3^4"), "t: only powers of two"),
    (("--modulus", "N", "--x", "2", "--t", "5", "--backend", "ifma-turbo"), "backend: unknown backend 'ifma-turbo'"),
    (("--modulus", "N", "--x", "2", "--t", "5", "--out", "p.json"), "out: --out writes a proof file"),
    (("--modulus", "N", "--x", "2", "--t", "5", "--memory", "0"), "memory: must be at least 1 MiB"),
    (("--modulus", "N", "--x", "2", "--t", "5", "--proof", "snark"), "Invalid value for '--proof'"),
    # Past Python's 4300-digit int() limit: said 'not a decimal' (modulus), raised ValueError (t, workers).
    (("--modulus", "1" * 10000, "--x", "2", "--t", "5"),
     "modulus: too long: 10000 decimal digits, at most 9865 are read (no modforge input is wider than 16384 bits)"),
    (("--modulus", "N", "--x", "2", "--t", "1" + "0" * 5000), "t: must be between 1 and 2^64 - 1, got a 16610-bit number"),
    (("--modulus", "N", "--x", "2", "--t", "0x" + "f" * 5000), "t: must be between 1 and 2^64 - 1, got a 20000-bit number"),
    (("--modulus", "N", "--x", "2", "--t", "5", "--workers", "-" + "9" * 5000),
     "Invalid value for '--workers': a negative 16610-bit number is out of range"),
])
def test_bad_input_is_exit_2(n: int, args, fragment: str, tmp_path) -> None:
    args = [{"N": str(n), "N-1": str(n - 1), "N-2": str(n - 2)}.get(a, a) for a in args]
    res = CliRunner().invoke(vdf, ["eval", *args])
    assert res.exit_code == 2, res.output
    assert fragment in res.stderr
    if fragment[0].islower() and ":" in fragment:
        assert res.stderr.startswith("modforge: error: ") and res.stderr.count("\n") == 1


def test_a_modulus_past_pythons_digit_limit_is_read_in_decimal() -> None:
    """A 14999-bit N has 4515 decimal digits; int() stops at 4300 (sys.get_int_max_str_digits()), and such an N
    was 'not a decimal or 0x-hex integer'.  The process-wide limit is left as it was."""
    r, small = random.Random(14999), gmpy2.primorial(1 << 16)
    m = next(m for m in (r.getrandbits(14999) | 1 << 14998 | 1 for _ in range(10 ** 4)) if gmpy2.gcd(m, small) == 1)
    text, limit = gmpy2.mpz(m).digits(10), sys.get_int_max_str_digits()
    assert 0 < limit < len(text)
    res = invoke("eval", "--modulus", text, "--x", "2", "--t", "10", "--backend", "gmp", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["modulus"] == hex(m) and out["y"] == hex(oracle(Group(m), 2, 10))
    assert sys.get_int_max_str_digits() == limit


def test_prove_with_a_bad_checkpoints_file_is_exit_2(tmp_path) -> None:
    bad = tmp_path / "ck.json"
    bad.write_text('{"format": "something-else"}')
    res = CliRunner().invoke(vdf, ["prove", "--checkpoints", str(bad), "--proof", "wesolowski", "--json"])
    assert res.exit_code == 2 and "checkpoints:" in res.stderr


def test_the_top_level_command_loads_the_group() -> None:
    from modforge.cli.main import cli

    res = CliRunner().invoke(cli, ["vdf", "eval", "--modulus", "vdf-alliance", "--x", "2", "--t", "8", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["y"] == hex(Group(vdf_alliance_modulus()).canon(pow(2, 256, vdf_alliance_modulus())))


# -- eval: t is read and checked first, and its errors name the whole text ----------------------------------
@pytest.mark.parametrize("t, fragment", [
    ("2^64-1", "t: not a number of squarings: '2^64-1' (write N (decimal), 0xHEX or 2^K)"),
    ("2**x", "t: not a number of squarings: '2**x' (write N (decimal), 0xHEX or 2^K)"),
    ("1e6", "t: not a number of squarings: '1e6' (write N (decimal), 0xHEX or 2^K)"),
    ("2^65", "t: exponent out of range in '2^65'"),
    # int() takes these, and '\u0661\u0660' ran as t = 10.
    ("\u0661\u0660", "t: not a number of squarings: '\u0661\u0660' (write N (decimal), 0xHEX or 2^K; ASCII digits only)"),
    ("0x_10", "t: not a number of squarings: '0x_10' (write N (decimal), 0xHEX or 2^K; no '_' separators)"),
    ("+10", "t: not a number of squarings: '+10' (write N (decimal), 0xHEX or 2^K; no '+' sign)"),
])
def test_a_t_that_is_no_number_is_named_whole(n: int, t: str, fragment: str) -> None:
    res = CliRunner().invoke(vdf, ["eval", "--modulus", str(n), "--x", "2", "--t", t])
    assert res.exit_code == 2 and res.stderr == f"modforge: error: {fragment}\n", res.stderr


@pytest.mark.parametrize("t, proof, fragment", [
    ("2^64", "pietrzak", "t: must be between 1 and 2^64 - 1"),
    ("2^64", "wesolowski", "t: must be between 1 and 2^64 - 1"),
    ("0xffffffffffffffff", "pietrzak", "beyond a Pietrzak proof's range"),
])
def test_an_invalid_t_is_reported_before_the_out_requirement(n: int, t: str, proof: str, fragment: str) -> None:
    """t >= 2^28 makes the evaluation resumable, which wants --out with --proof: t is what is wrong."""
    res = CliRunner().invoke(vdf, ["eval", "--modulus", str(n), "--x", "2", "--t", t, "--proof", proof])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and fragment in res.stderr, res.stderr
    assert "--out" not in res.stderr


# -- verify: the statement pinned by --modulus, --x, --t -------------------------------------------------------
NOTICE = "the prover's choice"


@pytest.fixture(scope="module")
def pinned_proof(n: int, tmp_path_factory):
    out = tmp_path_factory.mktemp("pinned") / "proof.json"
    res = invoke("eval", "--modulus", n, "--x", "hash:hello", "--t", "2^10", "--proof", "wesolowski", "--out", out,
                 "--backend", "gmp")
    assert res.exit_code == 0, res.output
    return out


def test_verify_with_the_statement_pinned(n: int, pinned_proof) -> None:
    for args in (("--modulus", hex(n), "--x", "hash:hello", "--t", "2^10"),
                 ("--modulus", str(n), "--t", "1024"), ("--t", "0x400"), ("--x", "hash:hello"), ()):
        res = invoke("verify", pinned_proof, *args)
        assert res.exit_code == 0 and res.stdout.startswith("valid: "), (args, res.output)
        # Without --modulus, N is whatever the file says: one line on stderr says so.
        assert (NOTICE in res.stderr) == ("--modulus" not in args), (args, res.stderr)
        assert res.stderr.count("\n") == ("--modulus" not in args)
    x = Group(n).hash_to_group(b"hello")
    assert invoke("verify", pinned_proof, "--modulus", hex(n), "--x", hex(x)).exit_code == 0


@pytest.mark.parametrize("args, reason", [
    (("--modulus", "vdf-alliance"), "modulus differs from --modulus"),
    (("--modulus", "N2"), "modulus differs from --modulus"),
    (("--modulus", "N2", "--x", "hash:hello", "--t", "2^10"), "modulus differs from --modulus"),
    (("--x", "hash:hello!"), "x differs from --x"),
    (("--modulus", "N", "--x", "5"), "x differs from --x"),
    (("--x", "5"), "x differs from --x"),
    # Read in the proof's group (the prover's N): no element of it is another statement, not bad usage.
    (("--x", "N-1"), "x differs from --x: --x is no element of the proof's group"),
    (("--t", "2^11"), "t differs from --t"),
    (("--modulus", "N", "--x", "hash:hello", "--t", "1023"), "t differs from --t"),
])
def test_verify_of_another_statement_is_invalid(n: int, pinned_proof, args, reason: str) -> None:
    args = [{"N": str(n), "N-1": str(n - 1), "N2": str(rsa(512, seed=1).n)}.get(a, a) for a in args]
    res = invoke("verify", pinned_proof, *args)
    assert res.exit_code == 1 and res.stdout.startswith(f"invalid: {reason}"), res.output
    res = invoke("verify", pinned_proof, *args, "--json")
    out = json.loads(res.stdout)
    assert res.exit_code == 1 and out["valid"] is False and out["reason"].startswith(reason)
    assert res.stderr == ""                     # no notice with --json


def test_verify_json_names_the_statement_as_the_file_does(n: int, pinned_proof) -> None:
    doc = json.loads(pinned_proof.read_text())
    res = invoke("verify", pinned_proof, "--json")
    assert res.exit_code == 0 and res.stderr == "", res.output
    out = json.loads(res.stdout)
    assert out["valid"] is True and out["modulus"] == doc["modulus"] and out["x"] == doc["x"]
    assert int(out["modulus"], 16) == n and out["t"] == 1024 and out["bits"] == 512


def test_verify_pins_the_vdf_alliance_modulus_by_name(tmp_path) -> None:
    out = tmp_path / "p.json"
    assert invoke("eval", "--modulus", "vdf-alliance", "--x", "2", "--t", "64", "--proof", "pietrzak",
                  "--out", out).exit_code == 0
    res = invoke("verify", out, "--modulus", "vdf-alliance", "--x", "2", "--t", "2^6")
    assert res.exit_code == 0 and res.stderr == "", res.output
    assert invoke("verify", out, "--modulus", "vdf_alliance", "--x", "3").exit_code == 1


@pytest.mark.parametrize("args, fragment", [
    (("--t", "2^64-1"), "t: not a number of squarings"),
    (("--t", "0"), "t: must be between 1"),
    (("--modulus", "12345"), "modulus: must have 256"),
    (("--modulus", "N", "--x", "N-2"), "x: is not in canonical signed form"),
    (("--x", "zz"), "x: not a decimal or 0x-hex"),
])
def test_verify_with_a_bad_pin_is_bad_usage(n: int, pinned_proof, args, fragment: str) -> None:
    from ..support import one_line_error

    args = [{"N": str(n), "N-1": str(n - 1), "N-2": str(n - 2)}.get(a, a) for a in args]
    one_line_error(invoke("verify", pinned_proof, *args), fragment)


@pytest.mark.parametrize("which", ["1", "N-1", "0x1"])
def test_eval_refuses_the_identity_as_x(n: int, which: str) -> None:
    from ..support import one_line_error

    x = {"1": "1", "N-1": hex(n - 1), "0x1": "0x0001"}[which]
    res = invoke("eval", "--modulus", hex(n), "--x", x, "--t", "1000", "--backend", "gmp")
    one_line_error(res, "x: is " + ("N - 1" if which == "N-1" else "1") + ", the identity of the group")


def test_eval_says_which_backend_was_picked_and_why(n: int) -> None:
    from modforge.engine import tuning

    doc = json.loads(invoke("eval", "--modulus", hex(n), "--x", "5", "--t", "100", "--json").stdout)
    assert doc["backend_choice"] == tuning.explain(512, doc["backend"])
    assert doc["backend_choice"]["text"].startswith(f"{doc['backend']}: auto; ")
    text = invoke("eval", "--modulus", hex(n), "--x", "5", "--t", "100").stdout
    assert f"\nbackend      {doc['backend_choice']['text']}\n" in text
    doc = json.loads(invoke("eval", "--modulus", hex(n), "--x", "5", "--t", "100", "--backend", "gmp", "--json").stdout)
    assert doc["backend_choice"]["source"] == "requested"
