"""Batch signing: inputs, targets, the process pool, and per-file failures that do not stop the rest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from modforge.arith.base import ParameterError
from modforge.rsa.batch import collect_inputs, plan, sign_batch

from .helpers import h, pss


def _files(directory: Path, count: int) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(count):
        path = directory / f"doc{i:02d}.txt"
        path.write_bytes(f"document {i}\n".encode() * (i + 1))
        out.append(path)
    return out


def test_collect_inputs(tmp_path) -> None:
    files = _files(tmp_path / "d", 3)
    (tmp_path / "d" / ".hidden").write_bytes(b"x")
    (tmp_path / "d" / "old.txt.sig").write_bytes(b"x")
    (tmp_path / "d" / "sub").mkdir()
    assert collect_inputs([tmp_path / "d"]) == files
    assert collect_inputs([files[2], tmp_path / "d"]) == [files[2], files[0], files[1]]     # no duplicates
    with pytest.raises(ParameterError, match=r"^batch: '.*nope' is not a file or directory$"):
        collect_inputs([tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ParameterError, match="^batch: no input files in directory"):
        collect_inputs([tmp_path / "empty"])
    with pytest.raises(ParameterError, match="^batch: no input given$"):
        collect_inputs([])


def test_plan_targets(tmp_path) -> None:
    a = _files(tmp_path / "a", 2)
    b = _files(tmp_path / "b", 1)
    assert [i.target for i in plan(a)] == [p.with_name(p.name + ".sig") for p in a]
    out = tmp_path / "out"
    out.mkdir()
    assert [i.target for i in plan(a, out)] == [out / "doc00.txt.sig", out / "doc01.txt.sig"]
    with pytest.raises(ParameterError, match="^out_dir: .* would both write"):
        plan([a[0], b[0]], out)                               # both are named doc00.txt
    with pytest.raises(ParameterError, match="^out_dir: '.*missing' is not a directory$"):
        plan(a, tmp_path / "missing")


@pytest.mark.parametrize("jobs", [1, 2])
def test_sign_batch_verifies_with_cryptography(k1024, tmp_path, jobs: int) -> None:
    files = _files(tmp_path / "in", 9)
    seen = []
    results = sign_batch(k1024.key, plan(files), "pss", "sha256", jobs=jobs,
                         progress=lambda done, total: seen.append((done, total)))
    assert [r.source for r in results] == files and all(r.ok for r in results)
    assert seen[0] == (0, 9) and seen[-1] == (9, 9) and len(seen) == 10
    for r in results:
        k1024.pub.verify(r.target.read_bytes(), r.source.read_bytes(), pss("sha256"), h("sha256"))
    assert not list((tmp_path / "in").glob(".*tmp-*"))        # atomic writes leave no temporaries


def test_failures_are_per_file(k1024, tmp_path) -> None:
    good = tmp_path / "good.bin"
    good.write_bytes(bytes(127) + b"\x07")                      # one raw block of k = 128 bytes
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"too short")
    results = sign_batch(k1024.key, plan([good, bad]), "raw", jobs=2)
    assert [r.ok for r in results] == [True, False]
    assert results[1].error == "message: raw RSA needs exactly 128 bytes (the modulus length), got 9"
    assert not results[1].fault and not results[1].target.exists()
    assert pow(int.from_bytes(results[0].target.read_bytes(), "big"), k1024.key.e, k1024.key.n) == 7


def test_bad_options_fail_before_any_work(k1024, tmp_path) -> None:
    files = _files(tmp_path, 2)
    with pytest.raises(ParameterError, match="^scheme: unknown scheme"):
        sign_batch(k1024.key, plan(files), "rsa", jobs=2)
    with pytest.raises(ParameterError, match="^backend: unknown backend"):
        sign_batch(k1024.key, plan(files), "pss", backend="nope", jobs=2)
    with pytest.raises(ParameterError, match="^jobs: must be at least 1, got 0$"):
        sign_batch(k1024.key, plan(files), "pss", jobs=0)
    assert not list(tmp_path.glob("*.sig"))


def test_a_stopped_batch_exits_promptly_and_leaves_only_whole_signatures(k1024, tmp_path) -> None:
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) or SIGTERM to the command, at seeded
    random moments: it exits 130 within seconds every time (it used to hang in the pool's shutdown when
    the interrupt landed inside ``concurrent.futures``), and every signature written verifies."""
    import random
    import signal
    import subprocess
    import sys
    import time

    from cryptography.hazmat.primitives.asymmetric import padding

    key = tmp_path / "key.pem"
    key.write_bytes(k1024.pem)
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(4000):
        (docs / f"d{i:04d}").write_bytes(f"{i}\n".encode())
    seed = random.randrange(1 << 32)
    rng = random.Random(seed)
    for attempt, how in enumerate(["TERM", "INT", "TERM", "INT", "TERM", "INT"]):
        out = tmp_path / f"sigs{attempt}"
        out.mkdir()
        proc = subprocess.Popen([sys.executable, "-m", "modforge.cli.main", "rsa", "sign", "--key", str(key),
                                 "--batch", str(docs), "--out-dir", str(out), "--scheme", "pkcs1v15",
                                 "--jobs", "2", "--no-progress"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        where = f"seed {seed}, attempt {attempt} (SIG{how})"
        # Wait until signing is under way (the spawned workers take a moment to start), then a little more.
        deadline = time.monotonic() + 60
        while not any(out.iterdir()) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.5))
        assert proc.poll() is None, f"{where}: the batch ended before it was stopped: {proc.stderr.read()}"
        if how == "TERM":
            proc.send_signal(signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"{where}: still running 20 s after the signal")
        assert proc.returncode == 130, f"{where}: exit {proc.returncode}: {err}"
        assert "interrupted" in err, f"{where}: {err}"
        sigs = list(out.iterdir())
        # Whole signatures only: no temporary file of an atomic write left behind.
        assert sigs and all(p.suffix == ".sig" and not p.name.startswith(".") for p in sigs), (where, sigs[:5])
        for sig in sigs:
            source = docs / sig.name[: -len(".sig")]
            k1024.pub.verify(sig.read_bytes(), source.read_bytes(), padding.PKCS1v15(), h("sha256"))
