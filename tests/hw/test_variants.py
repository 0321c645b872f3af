"""Pipeline depths and word sizes beyond the defaults, and the harness's own failure path."""

from __future__ import annotations

import subprocess

import pytest

from modforge.hw.flow import ensure_built, simulate
from modforge.hw.ozturk import OzturkDesign
from modforge.hw.san import SanDesign

from .helpers import design, hw_modulus

N_OZ = len(OzturkDesign(hw_modulus(64)).layers())
N_SAN = len(SanDesign(hw_modulus(64)).layers())
VARIANTS = [("ozturk", 64, {"cycles": 2}), ("ozturk", 64, {"cycles": 4}), ("ozturk", 64, {"cycles": N_OZ}),
            ("san-montgomery", 64, {"cycles": 3}), ("san-montgomery", 64, {"cycles": N_SAN}),
            ("san-montgomery", 128, {"word_bits": 32, "cycles": 2}), ("san-montgomery", 128, {"word_bits": 64})]


@pytest.mark.parametrize("arch,bits,opts", VARIANTS,
                         ids=[f"{a}-{b}-" + "-".join(f"{k}{v}" for k, v in o.items()) for a, b, o in VARIANTS])
def test_pipelined_and_wide_word_variants_match_the_model(arch: str, bits: int, opts: dict) -> None:
    d = design(arch, bits, **opts)
    doc = simulate(d, vectors=2000, chain=200, seed=7)
    assert doc["mismatches"] == 0, doc["mismatch_report"][:3000]
    assert doc["cycles_per_op"] == d.latency() == opts.get("cycles", 1)
    assert doc["chain_checked_against_pow"]


def _vector_file(tmp_path, d, corrupt: str):
    path = tmp_path / "v.txt"
    simulate(d, vectors=20, chain=5, seed=3, keep_vectors=path)
    lines = path.read_text().splitlines()
    idx = next(i for i, line in enumerate(lines) if line.startswith("out "))
    kind, cycles, flags, z = lines[idx].split()
    if corrupt == "value":
        z = format(int(z, 16) ^ (1 << 5), "x")
    else:
        cycles = str(int(cycles) + 1)
    lines[idx] = " ".join((kind, cycles, flags, z))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("corrupt", ["value", "cycle"])
def test_a_mismatch_prints_inputs_expected_obtained_and_cycle_and_fails(tmp_path, corrupt: str) -> None:
    d = design("ozturk", 64)
    build = ensure_built(d)
    path = _vector_file(tmp_path, d, corrupt)
    res = subprocess.run([str(build.exe), str(path)], capture_output=True, text=True)
    assert res.returncode == 1
    out = res.stdout
    assert "MISMATCH op 1 (zero) result 0 at cycle" in out
    for word in ("  x ", "  expected ", "  obtained "):
        assert word in out, out
    assert '"mismatches": 1' in out
    if corrupt == "cycle":
        assert '"latency_mismatches": 1' in out and "(after 2 cycles" in out
