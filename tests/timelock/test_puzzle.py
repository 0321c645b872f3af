"""Creating and opening puzzles: key generation, the trapdoor against plain squaring, the AEAD, named puzzles."""

from __future__ import annotations

import base64
import json
import math

import gmpy2
import pytest

from .helpers import make_puzzle, plain_squaring
from modforge.arith.base import ParameterError
from modforge.timelock import (AuthenticationError, CheckpointStore, create_puzzle, generate_modulus, load_puzzle_file,
                               named_puzzle, render_message, resolve_puzzle, solve, trapdoor_solution)
from modforge.timelock import create as create_module
from modforge.timelock.puzzle import parse_puzzle


@pytest.mark.parametrize("bits", [512, 513, 768, 1024])
def test_generated_modulus_is_exactly_bits_wide_with_distinct_bpsw_primes(bits: int) -> None:
    n, p, q = generate_modulus(bits)
    assert n == p * q and n.bit_length() == bits and p != q
    assert gmpy2.is_strong_bpsw_prp(p) and gmpy2.is_strong_bpsw_prp(q)
    assert abs(p.bit_length() - q.bit_length()) <= 1


@pytest.mark.parametrize("bits", [0, 255, 16385])
def test_bits_out_of_range_is_a_parameter_error(bits: int, tmp_path) -> None:
    with pytest.raises(ParameterError, match="^bits: "):
        create_puzzle(bits, b"x", tmp_path / "p.json", t=10)


@pytest.mark.parametrize("bits, t, random_base", [(512, 1, False), (512, 4000, True), (1024, 2500, False)])
def test_trapdoor_equals_plain_squaring_and_the_solver(tmp_path, bits: int, t: int, random_base: bool) -> None:
    made, p, q = make_puzzle(tmp_path, bits=bits, t=t, random_base=random_base)
    task = made.puzzle.task
    assert task.bits == bits and task.t == t and p * q == task.n
    assert (task.x == 2) != random_base
    w_plain = plain_squaring(task.x, t, task.n)
    assert trapdoor_solution(task, p, q) == w_plain
    assert pow(task.x, pow(2, t, (p - 1) * (q - 1)), task.n) == w_plain    # the phi(N) route of create
    result = solve(load_puzzle_file(made.path), checkpoint_dir=tmp_path / "ck", interval=0.05)
    assert result.finished and result.w == w_plain
    assert result.payload == b"open sesame"


@pytest.mark.parametrize("payload", [b"", b"\x00\xff" * 300, "γειά σου".encode(), bytes(range(256))])
def test_round_trip_of_any_payload(tmp_path, payload: bytes) -> None:
    made, _, _ = make_puzzle(tmp_path, t=300, payload=payload)
    result = solve(load_puzzle_file(made.path), use_checkpoints=False)
    assert result.payload == payload


def test_created_puzzle_times_itself_from_a_duration(tmp_path) -> None:
    made = create_puzzle(512, b"m", tmp_path / "p.json", duration=0.2, calibration_seconds=0.05)
    cal = made.calibration
    assert made.puzzle.task.t == max(1, int(cal["squarings_per_second"] * 0.2))
    assert made.estimated_seconds == pytest.approx(0.2, rel=0.01)
    assert cal["target_seconds"] == 0.2 and cal["backend"] and cal["sample_squarings"] > 0
    assert made.trapdoor_seconds < 1.0


def test_the_primes_never_touch_the_disk_without_keep_trapdoor(tmp_path, monkeypatch) -> None:
    seen = {}
    real = create_module.generate_modulus

    def spy(bits):
        seen["n"], seen["p"], seen["q"] = real(bits)
        return seen["n"], seen["p"], seen["q"]

    monkeypatch.setattr(create_module, "generate_modulus", spy)
    made = create_puzzle(1024, b"secret", tmp_path / "p.json", t=50, calibration_seconds=0.01)
    assert made.trapdoor_path is None
    files = list(tmp_path.rglob("*"))
    assert files == [tmp_path / "p.json"]
    blob = (tmp_path / "p.json").read_text().lower()
    for prime in (seen["p"], seen["q"]):
        assert format(prime, "x") not in blob and str(prime) not in blob
    assert format(seen["n"], "x") in blob


def test_trapdoor_file_is_private(tmp_path) -> None:
    made, p, q = make_puzzle(tmp_path, t=10)
    assert made.trapdoor_path.stat().st_mode & 0o077 == 0


def _tamper(path, mutate) -> None:
    doc = json.loads(path.read_text())
    mutate(doc)
    path.write_text(json.dumps(doc))


def _flip_b64(value: str, index: int = 0) -> str:
    raw = bytearray(base64.b64decode(value))
    raw[index] ^= 0x01
    return base64.b64encode(bytes(raw)).decode()


@pytest.mark.parametrize("mutate", [
    lambda d: d.__setitem__("ciphertext", _flip_b64(d["ciphertext"])),
    lambda d: d.__setitem__("ciphertext", _flip_b64(d["ciphertext"], -1)),      # the tag
    lambda d: d.__setitem__("nonce", _flip_b64(d["nonce"])),
    lambda d: d.__setitem__("created", "1999-04-04T00:00:00Z"),                   # associated data
    lambda d: d.__setitem__("t", hex(int(d["t"], 16) - 1)),                       # a different w
    lambda d: d.__setitem__("x", "0x3"),
], ids=["ciphertext", "tag", "nonce", "created", "t", "x"])
def test_any_change_fails_authentication_loudly(tmp_path, mutate) -> None:
    made, _, _ = make_puzzle(tmp_path, t=200)
    _tamper(made.path, mutate)
    with pytest.raises(AuthenticationError, match="authentication failed"):
        solve(load_puzzle_file(made.path), use_checkpoints=False)


def test_a_wrong_w_fails_authentication(tmp_path) -> None:
    made, p, q = make_puzzle(tmp_path, t=200)
    puzzle = load_puzzle_file(made.path)
    w = trapdoor_solution(puzzle.task, p, q)
    assert puzzle.open(w) == b"open sesame"
    for wrong in (w ^ 1, w + 1, 0, 1, puzzle.task.n - 1, pow(2, 1 << 199, puzzle.task.n)):
        with pytest.raises(AuthenticationError):
            puzzle.open(wrong)


@pytest.mark.parametrize("mutate, problem", [
    (lambda d: d.__setitem__("version", 2), "unsupported version 2"),
    (lambda d: d.__setitem__("format", "other"), "format is 'other'"),
    (lambda d: d.pop("nonce"), "missing field(s): nonce"),
    (lambda d: d.__setitem__("n", "123"), "must be a 0x-prefixed lowercase hex string"),
    (lambda d: d.__setitem__("n", d["n"].upper().replace("0X", "0x")), "must be a 0x-prefixed lowercase hex"),
    (lambda d: d.__setitem__("t", "0x00" + d["t"][2:]), "without leading zeros"),
    (lambda d: d.__setitem__("t", hex(1 << 64 | 1)), "t is larger than 2^64 - 1"),
    (lambda d: d.__setitem__("t", hex(1 << 64)), "t is larger than 2^64 - 1"),      # the VDF's bound too
    (lambda d: d.__setitem__("bits", str(d["bits"])), "field 'bits' must be a JSON integer"),
    (lambda d: d.__setitem__("bits", float(d["bits"])), "field 'bits' must be a JSON integer"),
    (lambda d: d.__setitem__("n", "0x" + "f" * 20), "bits says"),
    (lambda d: d.__setitem__("ciphertext", "!!"), "not valid base64"),
    (lambda d: d.__setitem__("x", "0x0"), "the base must satisfy"),
    (lambda d: d.__setitem__("t", "0x0"), "t: must be at least 1"),
])
def test_malformed_puzzle_files_are_parameter_errors(tmp_path, mutate, problem: str) -> None:
    made, _, _ = make_puzzle(tmp_path, t=20)
    _tamper(made.path, mutate)
    with pytest.raises(ParameterError) as exc:
        load_puzzle_file(made.path)
    assert problem in str(exc.value)


def test_a_byte_order_mark_or_a_key_given_twice_is_refused(tmp_path) -> None:
    """As in the proof files: a repeated key was read as its last value ("n" twice: one shown, one used),
    and a UTF-8 byte-order mark or UTF-16 text was taken."""
    from modforge.timelock.puzzle import load_trapdoor

    made, _, _ = make_puzzle(tmp_path, t=20)
    data = made.path.read_bytes()
    for bad, problem in ((b"\xef\xbb\xbf" + data, "starts with a byte-order mark"),
                         (data.decode().encode("utf-16"), "utf-8"),
                         (data.replace(b'"t":', b'"t": "0x5", "t":', 1), "field 't' appears twice")):
        with pytest.raises(ParameterError, match=f"^puzzle: not a JSON puzzle file: .*{problem}"):
            parse_puzzle(bad)
    trapdoor = made.trapdoor_path
    text = trapdoor.read_text()
    assert '"p":' in text
    trapdoor.write_text(text.replace('"p":', '"p": "0x3", "p":', 1))
    with pytest.raises(ParameterError, match="^trapdoor: not a JSON trapdoor file: field 'p' appears twice"):
        load_trapdoor(trapdoor, load_puzzle_file(made.path))


def test_not_json_and_missing_file(tmp_path) -> None:
    with pytest.raises(ParameterError, match="^puzzle: not a JSON puzzle file"):
        parse_puzzle(b"\x00garbage")
    with pytest.raises(ParameterError, match="^puzzle: no such file"):
        resolve_puzzle(str(tmp_path / "missing.json"))
    with pytest.raises(ParameterError, match="built in: lcs35, lcs35-toy, csail2019"):
        named_puzzle("lcs36")


def test_lcs35_toy_gives_71() -> None:
    toy = named_puzzle("lcs35-toy")
    assert (toy.n, toy.t, toy.task.x) == (253, 10, 2)
    result = solve(toy, use_checkpoints=False)
    assert result.w == 71 == pow(2, 2**10, 253)
    assert render_message(result.payload) == ("text", chr(71 ^ 19))


@pytest.mark.parametrize("name, bits, t", [("lcs35", 2046, 79685186856218), ("csail2019", 3072, 2**56)])
def test_named_puzzles_keep_their_original_form(name: str, bits: int, t: int) -> None:
    puzzle = resolve_puzzle(name)
    assert puzzle.task.bits == bits and puzzle.t == t and puzzle.task.x == 2
    assert math.gcd(2, puzzle.n) == 1
    assert puzzle.open(puzzle.z ^ int.from_bytes(b"Hi!", "big")) == b"Hi!"     # message = w XOR z


def test_lcs35_starts_and_resumes(tmp_path) -> None:
    lcs = named_puzzle("lcs35")
    first = solve(lcs, checkpoint_dir=tmp_path, interval=0.05, stop_after=3000)
    assert not first.finished and first.step == 3000 and first.w is None
    second = solve(lcs, checkpoint_dir=tmp_path, interval=0.05, stop_after=2000)
    assert second.start_step == 3000 and second.step == 5000
    ck, rejected = CheckpointStore(tmp_path, lcs.task).latest()
    assert not rejected and ck.value == pow(2, 1 << 5000, lcs.n)


@pytest.mark.parametrize("data, kind", [(b"hello\n", "text"), (b"\x00\x01", "hex"), ("ü".encode(), "text"),
                                        (b"\xff\xfe", "hex"), (b"", "hex")])
def test_render_message(data: bytes, kind: str) -> None:
    assert render_message(data)[0] == kind
