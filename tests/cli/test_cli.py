"""The `modforge` command: its stable interface and its exit codes."""

from __future__ import annotations

import json
import os
import sys

import gmpy2
import pytest
from click.testing import CliRunner

from modforge.arith import registry
from modforge.arith.base import Outcome
from modforge.cli.main import cli, deterministic_modulus
from modforge.data import vdf_alliance_modulus

FAMILIES = {"karatsuba", "montgomery", "rbr", "ozturk", "predictive", "barrett", "hybrid"}


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_algos_json_lists_all_seven_families() -> None:
    res = run("algos", "--json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert {r["family"] for r in rows} == FAMILIES
    assert all(r["name"] and r["seed"] for r in rows)
    # Users have no seed files: every citation also names its publication.
    from modforge.arith.seeds import PUBLICATIONS

    for r in rows:
        numbers = [n for n in PUBLICATIONS if f"{n}_" in r["seed"]]
        assert numbers and r["sources"] == [PUBLICATIONS[n] for n in numbers], (r["name"], r["seed"])
    names = [r["name"] for r in rows]
    assert len(names) == len(set(names))


def test_algos_table_prints() -> None:
    res = run("algos", "--bits", "256")
    assert res.exit_code == 0
    assert "predictive-montgomery" in res.output


@pytest.mark.parametrize("info", registry.all_algorithms(), ids=lambda i: i.name)
def test_modmul_json_result_is_the_canonical_residue(info) -> None:
    m = vdf_alliance_modulus()
    a, b = m - 1, 0x1234567890ABCDEF
    res = run("modmul", "--algo", info.name, "--modulus", str(m), hex(a), str(b), "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["result"] == hex(a * b % m)
    assert doc["oracle_agrees"] is True
    assert doc["modulus"] == hex(m)
    assert isinstance(doc["cost"]["word_products"], int)


def test_modmul_bits_makes_a_reproducible_modulus() -> None:
    res = run("modmul", "--algo", "ozturk", "--bits", "300", "--seed", "4", "5", "7", "--json")
    doc = json.loads(res.output)
    assert int(doc["modulus"], 16) == deterministic_modulus(300, 4) and deterministic_modulus(300, 4).bit_length() == 300
    assert "digits" in doc and doc["redundant_bound"].startswith("0x")


def test_modmul_human_output_shows_digits_and_cost() -> None:
    res = run("modmul", "--algo", "predictive-montgomery", "--bits", "128", "3", "5")
    assert res.exit_code == 0
    assert "result      0xf" in res.output
    assert "digits" in res.output and "word products" in res.output


@pytest.mark.parametrize("args, message", [
    (("modmul", "--algo", "nope", "--modulus", "7", "1", "2"), "algo: unknown algorithm 'nope'"),
    (("modmul", "--algo", "montgomery", "--modulus", "100", "1", "2"), "modulus: must be odd"),
    (("modmul", "--algo", "ozturk", "--modulus", "101", "101", "2"), "a: operand out of range"),
    (("modmul", "--algo", "ozturk", "--modulus", "0xzz", "1", "2"), "modulus: not a decimal or 0x-hex integer"),
    (("modmul", "--algo", "ozturk", "1", "2"), "modulus: give exactly one of --modulus N or --bits N"),
    (("modmul", "--algo", "ozturk", "--modulus", "101", "--opt", "lut_bits", "1", "2"), "opt: expected KEY=VALUE"),
    (("modmul", "--algo", "barrett", "--bits", "64", "--opt", "foo=1", "3", "4"),
     "opt: 'foo' is not an option of barrett; its options: radix_bits, word_bits (docs/algorithms.md)"),
    (("modmul", "--algo", "montgomery-ozturk", "--bits", "64", "--opt", "feedback=maybe", "3", "4"),
     "feedback: must be true or false, got 'maybe'"),
    (("modmul", "--algo", "ozturk", "--bits", "1024", "--opt", "lut_bits=20", "3", "4"),
     "lut_bits: 69 tables of 2^20 entries of 1024 bits hold 8832 MiB"),
    (("modmul", "--algo", "barrett", "--bits", "99999999999999999999", "3", "4"), "bits: must be between 3 and 16384"),
    (("modmul", "--algo", "barrett", "--modulus", hex((1 << 16385) - 1), "3", "4"), "modulus: is 16385 bits wide; the models take at most 16384"),
    (("algos", "--bits", "99999999999999999999"), "bits: must be between 3 and 16384"),
    # Option values past any model: refused at once (they raised MemoryError or ran for many minutes).
    (("modmul", "--algo", "montgomery", "--bits", "64", "--opt", "bits=99999999999999", "3", "5"),
     "opt: bits=99999999999999: at most 65536"),
    (("modmul", "--algo", "barrett", "--bits", "64", "--opt", "radix_bits=99999999999999", "3", "5"),
     "opt: radix_bits=99999999999999: at most 65536"),
    (("modmul", "--algo", "schoolbook", "--bits", "64", "--opt", "bits=10000000", "3", "5"), "at most 65536"),
    (("modmul", "--algo", "montgomery-cios", "--bits", "1024", "--opt", "words=60000", "3", "5"),
     "word products per operation; a model runs in Python, so modmul takes at most 16777216"),
    (("modmul", "--algo", "ozturk", "--bits", "64", "--opt", "=3", "3", "5"), "opt: '' is not an option name"),
    (("modmul", "--algo", "montgomery", "--bits", "64", "--opt", "x.y=3", "3", "5"), "opt: 'x.y' is not an option"),
    (("modmul", "--algo", "schoolbook", "--modulus", "0", "1", "1"), "modulus: must be at least 3, got 0"),
    # demo: refused before its banner and key generation (it ran, then exited 1 as if a check had failed).
    (("demo", "--duration", "0"), "duration: must be positive"),
    (("demo", "--bits", "0"), "bits: must be between 256 and 16384"),
    (("demo", "--models", "--bits", "5"), "bits: does not go with --models"),
])
def test_bad_input_exits_2_with_one_line(args, message) -> None:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 2
    assert message in res.stderr
    assert res.stderr.count("\n") == 1


@pytest.mark.parametrize("algo, opt", [("karatsuba", "tile_chunks=5"), ("hybrid", "m20k_depth=1024"),
                                       ("ozturk", "lut_bits=4")])
def test_options_the_models_take_are_accepted(algo: str, opt: str) -> None:
    """Every option a model's parameters take, documented in docs/algorithms.md or not in `algos`."""
    res = CliRunner().invoke(cli, ["modmul", "--algo", algo, "--bits", "256", "--opt", opt, "3", "5", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["oracle_agrees"]


@pytest.mark.parametrize("algo, switch", [("dec-mpu", "carry_save"), ("montgomery-ozturk", "feedback")])
def test_switch_options_are_read_as_booleans(algo: str, switch: str) -> None:
    """``--opt carry_save=False`` used to stay the string "False" (truthy): the option silently did nothing."""
    def run(*opts: str) -> dict:
        res = CliRunner().invoke(cli, ["modmul", "--algo", algo, "--bits", "64", *opts, "3", "4", "--json"])
        assert res.exit_code == 0, res.output
        return json.loads(res.stdout)

    default, on, off = run(), run("--opt", f"{switch}=True"), run("--opt", f"{switch}=false")
    assert default["cost"] == on["cost"] and default["events"] == on["events"]
    assert (off["cost"], off["events"], off["stages"]) != (on["cost"], on["events"], on["stages"])
    assert off["result"] == on["result"] and off["oracle_agrees"]


def test_failed_check_exits_1(monkeypatch) -> None:
    """A model that disagrees with the oracle makes `modmul` exit 1."""
    real = registry.get("ozturk")

    class Broken:
        modulus = 101
        redundant_bound = 202

        def modmul(self, a, b):
            return Outcome(result=(a * b + 1) % 101, raw=(a * b + 1) % 101)

        def cost(self):
            return real.build(101).cost()

    import dataclasses
    broken = dataclasses.replace(real, build=lambda modulus, **kw: Broken())
    monkeypatch.setattr(registry, "get", lambda name: broken)
    res = CliRunner().invoke(cli, ["modmul", "--algo", "ozturk", "--modulus", "101", "3", "4"])
    assert res.exit_code == 1
    assert "disagrees with the oracle" in res.stderr


def test_help_everywhere() -> None:
    for args in ((), ("algos",), ("modmul",), ("demo",)):
        res = run(*args, "--help")
        assert res.exit_code == 0 and "Usage" in res.output


def test_demo_model_tour_agrees_with_the_oracle() -> None:
    res = CliRunner().invoke(cli, ["demo", "--models"])
    assert res.exit_code == 0, res.output
    assert "12 of 12 models agree with the oracle" in res.output


def test_shell_completion_reaches_lazy_groups_and_cache_areas() -> None:
    """The README's completion line works: commands of lazily imported groups and the cache's areas."""
    import os
    import subprocess
    import sys

    def complete(words: str, cword: int) -> list[str]:
        env = dict(os.environ, COMP_WORDS=words, COMP_CWORD=str(cword), _MODFORGE_COMPLETE="bash_complete")
        out = subprocess.run([sys.executable, "-c", "from modforge.cli.main import cli; cli(prog_name='modforge')"],
                             env=env, capture_output=True, text=True, check=False).stdout
        return [line.split(",", 1)[1] for line in out.splitlines() if "," in line]

    assert complete("modforge ca", 1) == ["cache"]
    assert complete("modforge vdf ev", 2) == ["eval"]
    assert complete("modforge cache clean t", 3) == ["timelock", "tuning"]
    assert "anchors" in complete("modforge cache list a", 3) and "anchors" not in complete("modforge cache clean a", 3)


def _all_commands():
    """Every command of the tree, the lazily imported groups included."""
    import click

    ctx = click.Context(cli)
    stack = [cli]
    while stack:
        command = stack.pop()
        yield command
        if isinstance(command, click.Group):
            stack.extend(command.get_command(ctx, name) for name in command.list_commands(ctx))


def test_every_number_option_takes_hex_and_every_seconds_option_refuses_nan() -> None:
    """README: numbers in decimal or 0x-hex, everywhere; click's own int and float types are not."""
    import click

    from modforge.cli.main import INTEGER, SECONDS

    params = [p for c in _all_commands() for p in c.params]
    assert params and not [p.name for p in params if p.type in (click.INT, click.FLOAT)]
    assert INTEGER.convert("0x400", None, None) == 1024 == INTEGER.convert("1024", None, None)
    for bad in ("nan", "inf", "-1", "0", "soon"):
        with pytest.raises(click.BadParameter):
            SECONDS.convert(bad, None, None)
    assert run("algos", "--bits", "0x400", "--json").stdout == run("algos", "--bits", "1024", "--json").stdout


@pytest.mark.parametrize("args", [("timelock", "info", "lcs35-toy"), ("algos",), ("--help",), ("--version",)])
def test_a_reader_that_goes_away_is_not_an_error(args) -> None:
    """`modforge ... | head -1`: exit 141 (as for SIGPIPE) and nothing on stderr."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "from modforge.cli.main import cli; cli(prog_name='modforge')",
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()             # before the interpreter has even started: every write fails
    stderr = proc.stderr.read()
    assert proc.wait(timeout=60) == 141 and stderr == b"", stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", [("--help",), ("--version",), ("vdf", "--help"), ("algos",)])
def test_a_full_standard_output_is_a_clear_error(args) -> None:
    """Top-level --help and --version print while the arguments are parsed, before the handlers that turn
    an OSError into one line: they gave a traceback on a full disk."""
    import subprocess
    import sys

    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-c", "from modforge.cli.main import cli; cli(prog_name='modforge')",
                               *args], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr == "modforge: error: No space left on device\n", proc.stderr


def test_only_a_broken_standard_output_counts_as_the_reader_going_away(tmp_path, monkeypatch) -> None:
    """Another broken pipe (a helper process, stderr) is an error like any other, not a quiet exit."""
    import os
    import sys

    from modforge.cli.main import _stdout_is_broken

    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as out:
        monkeypatch.setattr(sys, "stdout", out)
        assert not _stdout_is_broken()               # a reader is there
        os.close(read_end)
        assert _stdout_is_broken()                   # gone
        monkeypatch.undo()
    with open(tmp_path / "f", "w") as out:
        monkeypatch.setattr(sys, "stdout", out)
        assert not _stdout_is_broken()               # a file never is
        monkeypatch.undo()


def test_a_16384_bit_modulus_is_read_in_decimal_past_pythons_digit_limit() -> None:
    """4933 decimal digits: int() stops at 4300 (sys.get_int_max_str_digits()), and such a modulus (or operand)
    was 'not a decimal or 0x-hex integer'."""
    m = (1 << 16384) - 3
    text = gmpy2.mpz(m).digits(10)
    assert 0 < sys.get_int_max_str_digits() < len(text)
    res = run("modmul", "--algo", "barrett", "--modulus", text, "3", gmpy2.mpz(m - 2).digits(10), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["result"] == hex(3 * (m - 2) % m)


@pytest.mark.parametrize("args, message", [
    (("modmul", "--algo", "barrett", "--modulus", "9" * 9866, "3", "4"),
     "modulus: too long: 9866 decimal digits, at most 9865 are read (no modforge input is wider than 16384 bits)"),
    (("modmul", "--algo", "barrett", "--modulus", "0x" + "f" * 8193, "3", "4"),
     "modulus: too long: 8193 hex digits, at most 8192 are read"),
    # Values that used to raise ValueError in str() while their message was written (a traceback).
    (("modmul", "--algo", "barrett", "--bits", "64", "--opt", "word_bits=" + "9" * 5000, "3", "4"),
     "opt: word_bits=a 16610-bit number: at most 65536 in absolute value"),
    (("modmul", "--algo", "barrett", "--bits", "64", "--seed", "9" * 5000, "3", "4"),
     "Invalid value for '--seed': a 16610-bit number is out of range: number options (widths, counts, seeds) take "
     "at most 256 bits"),
    (("demo", "--bits", "-0x" + "f" * 5000), "Invalid value for '--bits': a negative 20000-bit number is out of range"),
])
def test_numbers_past_any_input_are_refused_by_their_size(args, message) -> None:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 2 and message in res.stderr and res.stderr.count("\n") == 1, res.output


@pytest.mark.parametrize("text, hint", [("\u0661\u0660", "ASCII digits only"), ("0x_10", "no '_' separators"),
                                        ("1_000", "no '_' separators"), ("+10", "no '+' sign"), ("1e3", None)])
def test_a_number_is_ascii_decimal_or_0x_hex_and_nothing_else(text: str, hint: str | None) -> None:
    """int() also takes the digits of every script, '_' and '+': modforge read '--t \u0661\u0660' as 10."""
    res = CliRunner().invoke(cli, ["modmul", "--algo", "barrett", "--modulus", text, "3", "4"])
    expected = f"modforge: error: modulus: not a decimal or 0x-hex integer: {text!r}" + (f" ({hint})" if hint else "")
    assert res.exit_code == 2 and res.stderr == expected + "\n", res.stderr
    res = CliRunner().invoke(cli, ["algos", "--bits", text])
    assert res.exit_code == 2 and "not a decimal or 0x-hex integer" in res.stderr, res.stderr


def test_demo_shows_the_commands_it_runs_and_each_notice_once(monkeypatch, capsys) -> None:
    """It showed `$ modforge bench vdf ... --json` and then a table of its own, repeating the benchmark's
    'skipped engine-ifma' notice; `timelock solve --json` was shown, and a line of its own printed."""
    import shlex
    import subprocess
    from pathlib import Path

    from modforge.cli import demo

    runs: list[list[str]] = []
    given: dict[str, str] = {}

    def fake_run(cmd, text, stdout=None):
        args = cmd[3:]
        runs.append(args)
        assert stdout is None, "output read behind the user's back"
        if args[:2] == ["timelock", "create"]:
            given["message"] = args[args.index("--message") + 1]
            Path(args[args.index("--out") + 1]).write_text(json.dumps({"n": "0x" + "c5" * 32, "t": "0x10"}))
        elif args[:2] == ["timelock", "solve"]:
            Path(args[args.index("--output") + 1]).write_text(given["message"])
        elif args[:2] == ["bench", "vdf"]:
            print("skipped engine-ifma: backend registered but not supported here")
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setenv("COLUMNS", "400")                 # rich: one line per command shown
    monkeypatch.setattr(demo.subprocess, "run", fake_run)
    assert demo.run_main_job("1s", 256) == 0
    out = capsys.readouterr().out
    shown = [line.removeprefix("$ modforge ") for line in out.splitlines() if line.startswith("$ modforge ")]
    assert shown == [" ".join(shlex.quote(a if len(a) <= 40 else a[:18] + "..." + a[-6:]) for a in args)
                     for args in runs]
    assert [args[:2] for args in runs] == [["timelock", "create"], ["timelock", "solve"], ["vdf", "eval"],
                                           ["vdf", "verify"], ["bench", "vdf"]]
    assert not any("--json" in args for args in runs)
    assert out.count("skipped engine-ifma") == 1 and "payload recovered, proof verified" in out
