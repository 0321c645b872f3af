"""The simulation harness fails for a broken design: mutants of the generated RTL, one line
changed each, must make the harness exit 1 with the breach printed.

The value mutant flips the low bit of the result bus (a wrong result); the handshake
mutants hold ``out_valid`` high outside results or ``in_ready`` high while busy, which no
value or latency check sees in a one-cycle design (docs/hardware.md: ``in_ready`` is 1
exactly while idle, ``out_valid`` is a one-cycle pulse per result).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from modforge.hw import verilator as vl
from modforge.hw.flow import generate, rtl_name, top_name
from modforge.hw.vectors import source_for, write_vectors

from .helpers import design

MUTANTS = [
    # (architecture, what the mutant breaks, pattern, replacement, the line the harness must print)
    ("ozturk", "result", r"out_z <= ([^;]+);", r"out_z <= (\1) ^ 1'h1;", "MISMATCH"),
    ("ozturk", "out_valid", r"out_valid <= [^;]+;", "out_valid <= ~ rst;", "PROTOCOL"),
    # No result ever: mismatches, without a breach reported for every cycle it waited.
    ("ozturk", "no out_valid", r"out_valid <= [^;]+;", "out_valid <= 1'h0;", "MISMATCH"),
    ("predictive-montgomery", "in_ready", r"assign in_ready = [^;]+;", "assign in_ready = 1'h1;", "PROTOCOL"),
]


def simulate_edited(tmp_path: Path, arch: str, edit=lambda rtl: rtl) -> subprocess.CompletedProcess:
    """Build the 64-bit design of ``arch`` with ``edit`` applied to its RTL and run a short vector file."""
    d = design(arch, 64)
    files = generate(d)
    (tmp_path / "top.v").write_text(edit(files[rtl_name(d)]))
    (tmp_path / "harness.cpp").write_text(files["harness.cpp"])
    exe = vl.build([tmp_path / "top.v"], tmp_path / "harness.cpp", top_name(d), tmp_path / "obj", jobs=1)
    vectors = tmp_path / "vectors.txt"
    write_vectors(source_for(d), vectors, vectors=30, chain=20, seed=7)
    return subprocess.run([str(exe), str(vectors)], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("arch,broken,pattern,replacement,marker", MUTANTS,
                         ids=[f"{m[0]}-{m[1].replace(' ', '_')}" for m in MUTANTS])
def test_a_mutant_fails_the_simulation(tmp_path: Path, arch: str, broken: str, pattern: str, replacement: str,
                                       marker: str) -> None:
    def mutate(rtl: str) -> str:
        mutated, count = re.subn(pattern, replacement, rtl)
        assert count == 1, f"the pattern {pattern!r} should match one line of the generated RTL, matched {count}"
        return mutated

    res = simulate_edited(tmp_path, arch, mutate)
    assert res.returncode == 1, f"the {broken} mutant passed:\n{res.stdout[-2000:]}"
    assert marker in res.stdout, res.stdout[-2000:]
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    # At most two breaches per result (while waiting, and at it), not one per cycle waited.
    assert summary["protocol_errors"] <= 2 * summary["outputs"], summary


def test_the_unmutated_design_passes_the_same_run(tmp_path: Path) -> None:
    """The control: the same flow without a mutation exits 0, so the failures above are the mutations'."""
    res = simulate_edited(tmp_path, "predictive-montgomery")
    assert res.returncode == 0, res.stdout[-2000:]
    assert '"protocol_errors": 0' in res.stdout
