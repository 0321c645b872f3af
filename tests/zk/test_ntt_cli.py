"""``modforge ntt``: files, --random, --json, the error lines and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from modforge.cli.main import cli
from modforge.zk import ntt_files

from .ntt_oracle import P, naive_dft, naive_inverse_dft


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["ntt", *args])
    return result.exit_code, result.stdout, result.stderr


def write(path: Path, values: list[int]) -> None:
    path.write_bytes(np.array(values, dtype="<u8").tobytes())


def test_file_round_trip(tmp_path: Path) -> None:
    values = [5, 0, P - 1, 12345678901234567, 1, 2, 3, 4]
    write(tmp_path / "in.bin", values)
    code, out, err = run("--in", str(tmp_path / "in.bin"), "--out", str(tmp_path / "f.bin"), "--json")
    assert code == 0, err
    forward = np.fromfile(tmp_path / "f.bin", dtype="<u8").tolist()
    assert forward == naive_dft(values)
    doc = json.loads(out)
    assert doc["n"] == 8 and doc["transform"] == "forward" and doc["root"] == hex(pow(7, (P - 1) // 8, P))
    assert doc["output_sha256"] == ntt_files.digest(np.array(forward, dtype=np.uint64))
    code, _, err = run("--in", str(tmp_path / "f.bin"), "--out", str(tmp_path / "b.bin"), "--inverse")
    assert code == 0, err
    assert np.fromfile(tmp_path / "b.bin", dtype="<u8").tolist() == values


def test_columns_and_coset(tmp_path: Path) -> None:
    rows = [[1, 2], [3, 4], [5, 6], [7, 8]]
    write(tmp_path / "in.bin", [x for row in rows for x in row])
    code, _, err = run("--in", str(tmp_path / "in.bin"), "--out", str(tmp_path / "o.bin"), "--columns", "2",
                       "--inverse")
    assert code == 0, err
    out = np.fromfile(tmp_path / "o.bin", dtype="<u8").reshape(4, 2)
    for c in range(2):
        assert out[:, c].tolist() == naive_inverse_dft([r[c] for r in rows])


def test_random_json_matches_the_shared_generator() -> None:
    code, out, err = run("--random", "2^10", "--seed", "3", "--json")
    assert code == 0, err
    doc = json.loads(out)
    expected = naive_dft(ntt_files.random_elements(1 << 10, 3).tolist())
    assert doc["output_sha256"] == ntt_files.digest(np.array(expected, dtype=np.uint64))
    assert doc["log_n"] == 10


def test_value_not_below_p_is_refused_with_its_index(tmp_path: Path) -> None:
    write(tmp_path / "in.bin", [0, 1, 2, P])
    code, _, err = run("--in", str(tmp_path / "in.bin"), "--out", str(tmp_path / "o.bin"))
    assert code == 2
    assert err.startswith("modforge: error: a: element 3 is") and err.count("\n") == 1
    assert not (tmp_path / "o.bin").exists()
    code, _, err = run("--in", str(tmp_path / "in.bin"), "--out", str(tmp_path / "o.bin"), "--reduce")
    assert code == 0, err


def test_bad_sizes_and_usage(tmp_path: Path) -> None:
    write(tmp_path / "six.bin", [1] * 6)
    code, _, err = run("--in", str(tmp_path / "six.bin"), "--out", str(tmp_path / "o.bin"))
    assert code == 2 and "power of two, got 6" in err
    (tmp_path / "odd.bin").write_bytes(b"\0" * 12)
    code, _, err = run("--in", str(tmp_path / "odd.bin"), "--out", str(tmp_path / "o.bin"))
    assert code == 2 and "not a whole number of 8-byte" in err
    code, _, err = run("--random", "2^33")
    assert code == 2 and "at most 2^32" in err
    code, _, err = run()
    assert code == 2 and "exactly one of --in FILE and --random N" in err
    code, _, err = run("--random", "8", "--inverse", "--zprize")
    assert code == 2 and err.startswith("modforge: error: zprize:")


def test_model_prints_every_core_count() -> None:
    code, out, err = run("model")
    assert code == 0, err
    for cores, seconds in ((8, "0.2315"), (16, "0.1238"), (32, "0.0691"), (64, "0.0450")):
        assert any(line.split()[:1] == [str(cores)] and seconds in line for line in out.splitlines())
    code, out, _ = run("model", "--json")
    doc = json.loads(out)
    assert [r["cores"] for r in doc["rows"]] == [8, 16, 32, 64] and doc["parameters"]["pipeline_cycles"] == 8
