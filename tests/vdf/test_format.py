"""The proof and checkpoint files: round trips, fixed widths, atomic writes, corrupted checkpoints."""

from __future__ import annotations

import json
import os
import re

import pytest

from modforge.arith.base import ParameterError
from modforge.engine import ModRing
from modforge.vdf import (Proof, ProofFailed, evaluate, make_plans, prove, read_checkpoints, read_proof, run,
                          verify, write_checkpoints, write_proof)
from modforge.vdf.formats import atomic_write_text, read_json
from modforge.vdf.group import Reject
from modforge.vdf.parallel import ProofPool, WorkerError

from .helpers import rsa


@pytest.mark.parametrize("bits", [512, 1023])
@pytest.mark.parametrize("ptype", ["wesolowski", "pietrzak"])
def test_document_round_trip_with_fixed_widths(bits: int, ptype: str, tmp_path) -> None:
    g = rsa(bits, 5).group
    x = 2 if g.element_problem(2) is None else 3            # a small x: the encoding pads it
    proof = run(g, x, 300, ptype, backend="gmp", workers=0).proof
    d = proof.to_document()
    assert list(d) == ["format", "version", "type", "modulus", "bits", "x", "t", "y", "proof"]
    assert d["format"] == "modforge-vdf-proof" and d["version"] == 1 and d["type"] == ptype
    assert d["bits"] == bits and isinstance(d["t"], int)
    elems = [d["modulus"], d["x"], d["y"], *(d["proof"].get("mu") or [d["proof"].get("pi")])]
    for e in elems:
        assert re.fullmatch(r"0x[0-9a-f]{%d}" % (2 * g.nbytes), e), e
    assert d["x"].endswith("0" * 10 + hex(x)[2:])
    assert Proof.from_document(json.loads(json.dumps(d))) == proof
    path = tmp_path / "proof.json"
    write_proof(path, proof)
    assert read_proof(path) == proof
    assert verify(read_json(path)).valid


def test_atomic_write_replaces_and_leaves_no_temporary(tmp_path) -> None:
    path = tmp_path / "out.json"
    path.write_text("old")
    atomic_write_text(path, "new\n")
    assert path.read_text() == "new\n"
    assert sorted(os.listdir(tmp_path)) == ["out.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask      # like open(), not mkstemp's 0600


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch) -> None:
    path = tmp_path / "out.json"
    path.write_text("old")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(path, "new")
    assert path.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["out.json"]


def test_unreadable_files_are_parameter_errors(tmp_path) -> None:
    with pytest.raises(ParameterError, match="^FILE: cannot read"):
        read_json(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ParameterError, match="^FILE: .* is not JSON"):
        read_json(bad)
    bad.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ParameterError, match="^FILE: cannot read"):
        read_json(bad)


@pytest.mark.parametrize("ptype", ["wesolowski", "pietrzak"])
def test_prove_from_a_checkpoints_file(tmp_path, ptype: str) -> None:
    key = rsa(512)
    g = key.group
    x = g.hash_to_group(b"checkpoints")
    t = 3000
    r = run(g, x, t, None, backend="gmp", workers=0, keep=("wesolowski", "pietrzak"))
    assert r.proof is None
    path = tmp_path / "ck.json"
    write_checkpoints(path, r.evaluation)
    ev = read_checkpoints(path)
    assert ev.y == r.evaluation.y and ev.values == r.evaluation.values
    proof = prove(ev, ptype)
    assert verify(proof).valid
    assert proof == run(g, x, t, ptype, backend="gmp", workers=0).proof


def test_corrupted_checkpoint_is_caught_by_the_self_check(tmp_path) -> None:
    key = rsa(512)
    g = key.group
    x = g.hash_to_group(b"corrupt")
    t = 2000
    wes, pie = make_plans(g, t, ["wesolowski", "pietrzak"])
    ev = evaluate(g, x, t, ModRing(g.modulus, "gmp"), wesolowski=wes, pietrzak=pie)
    for ptype, plan in (("wesolowski", wes), ("pietrzak", pie)):
        positions = [p for p in plan.positions() if p]
        victim = positions[len(positions) // 2]
        saved = ev.values[victim]
        ev.values[victim] = g.canon(saved * 4)
        with pytest.raises(ProofFailed, match="does not verify"):
            prove(ev, ptype)
        ev.values[victim] = saved
        assert verify(prove(ev, ptype)).valid


def test_bad_checkpoint_files(tmp_path) -> None:
    key = rsa(512)
    g = key.group
    r = run(g, 2, 500, None, backend="gmp", workers=0, keep=("wesolowski",))
    path = tmp_path / "ck.json"
    write_checkpoints(path, r.evaluation)
    doc = json.loads(path.read_text())
    doc["values"]["0"] = g.to_hex(key.n - 2)
    path.write_text(json.dumps(doc))
    with pytest.raises(ParameterError, match=r"^checkpoints: .*values\[0\] is not in canonical"):
        read_checkpoints(path)
    doc["format"] = "modforge-vdf-proof"
    path.write_text(json.dumps(doc))
    with pytest.raises(ParameterError, match="^checkpoints: .*format"):
        read_checkpoints(path)
    write_checkpoints(path, r.evaluation)
    ev = read_checkpoints(path)
    del ev.values[max(ev.values)]
    with pytest.raises(ParameterError, match="^checkpoints: a Wesolowski proof needs"):
        prove(ev, "wesolowski")


def test_a_failing_helper_is_reported() -> None:
    ring = ModRing(rsa(512).n, "gmp")
    with ProofPool(ring, workers=1) as pool:
        with pytest.raises(WorkerError, match="proof worker .* failed"):
            pool.run("fold", [([1, 2, 3], []), ([1], [])])     # 3 values for 0 challenges: the worker raises


def test_a_checkpoints_file_without_end_is_refused_at_its_limit(monkeypatch) -> None:
    """``/dev/zero`` has no size: it was read until the kernel killed the process (64 GiB limit on a 24 GB
    machine).  The limit is now a sixteenth of the machine's memory, and a read that runs out of memory is
    a clear refusal too."""
    from modforge.vdf import formats

    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert formats.checkpoints_file_limit() <= max(256 << 20, memory // 16)
    monkeypatch.setattr(formats, "checkpoints_file_limit", lambda: 4 << 20)
    with pytest.raises(ParameterError, match=r"^checkpoints: /dev/zero: more than the 4194304-byte limit"):
        read_checkpoints("/dev/zero")

    def out_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(formats, "read_bounded", out_of_memory)
    with pytest.raises(ParameterError, match=r"^checkpoints: .* too large to read in the memory"):
        read_checkpoints("/dev/zero")


@pytest.mark.parametrize("reader", ["proof", "checkpoints"])
def test_a_bits_field_of_thousands_of_digits_is_an_invalid_document(tmp_path, reader: str) -> None:
    """A 5001-digit 'bits' reached an f-string before its range check: a ValueError traceback."""
    key = rsa(512)
    g = key.group
    r = run(g, 2, 500, "wesolowski", backend="gmp", workers=0, keep=("wesolowski",))
    path = tmp_path / "doc.json"
    if reader == "proof":
        write_proof(path, r.proof)
    else:
        write_checkpoints(path, r.evaluation)
    path.write_text(path.read_text().replace('"bits":512', '"bits":1' + "0" * 5000)
                    .replace('"bits": 512', '"bits": 1' + "0" * 5000))
    assert "0" * 5000 in path.read_text()
    if reader == "proof":
        with pytest.raises(Reject, match=r"field 'bits' is a \d+-bit number, more than the 16384 bits"):
            read_proof(path)
    else:
        with pytest.raises(ParameterError, match=r"field 'bits' is a \d+-bit number, more than the 16384"):
            read_checkpoints(path)
