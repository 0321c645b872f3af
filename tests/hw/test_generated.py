"""Generated files: lint, the forbidden-operator scan, headers, no machine paths, byte-identical
regeneration, and a manifest that says what the parameters say."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from modforge.hw import verilator as vl
from modforge.hw.common import digest
from modforge.hw.flow import ensure_built, generate, rtl_name
from modforge.hw.scan import multiplications, scan

from .helpers import CASES, design

ABSOLUTE_PATH = re.compile(r"(?<![\w.])/(?:home|work|tmp|usr|root|opt|var|Users)/")


@pytest.mark.parametrize("arch,bits", CASES, ids=[f"{a}-{b}" for a, b in CASES])
def test_generated_files_lint_scan_and_regenerate_byte_for_byte(arch: str, bits: int) -> None:
    d = design(arch, bits)
    build = ensure_built(d)                      # generated, linted and compiled (or cached) in any process
    files = generate(d)                          # generated again, here
    assert set(files) == {rtl_name(d), "harness.cpp", "manifest.json"}
    for name, text in files.items():
        on_disk = (build.directory / name).read_text()
        assert text == on_disk, f"{name} did not regenerate byte for byte"
        assert "DO NOT EDIT" in text.splitlines()[0 if name != "manifest.json" else 1], name
        assert digest(arch, d) in text, name
        assert not ABSOLUTE_PATH.search(text), f"{name} carries a machine path: {ABSOLUTE_PATH.search(text)}"
        assert str(Path.cwd()) not in text and os.path.expanduser("~") not in text
    rtl = files[rtl_name(d)]
    # Lint: -Wall with the documented waivers only, and nothing left to report.
    assert "%Warning" not in build.lint_output and "%Error" not in build.lint_output, build.lint_output
    # The forbidden-operator scan: no %, no /, no multiplication wider than the DSP tile.
    violations = scan(rtl, d.dsp_bits)
    assert violations == [], "\n".join(map(str, violations[:10]))
    assert multiplications(rtl) > 0
    assert multiplications(rtl) <= d.resources()["dsp"]
    man = json.loads(files["manifest.json"])
    assert man["latency"] == d.latency() and man["params_sha256"] == digest(arch, d)
    assert man["params"]["modulus"] == hex(d.modulus)
    assert {f["path"] for f in man["files"]} == {rtl_name(d), "harness.cpp"}
    assert man["ports"]["in_x"] == d.words * d.digit_bits


def test_the_waivers_are_the_documented_ones() -> None:
    assert vl.WAIVERS == ("WIDTH", "UNUSEDSIGNAL", "DECLFILENAME", "PROCASSINIT")
    doc = (Path(__file__).resolve().parents[2] / "docs" / "hardware.md").read_text()
    for w in vl.WAIVERS:
        assert f"`{w}`" in doc, w


@pytest.mark.parametrize("snippet,what", [
    ("assign y = a % b;", "modulo"),
    ("assign y = a / b;", "division"),
    ("assign y = a ** 2;", "power"),
    ("assign y = a * b;", "wider than the 17-bit"),
    ("assign y = a[16:0] * { 2'h0, b[16:0] };", "wider than the 17-bit"),
    ("assign y = (a + b) * c[3:0];", "unknown width"),
])
def test_the_scan_catches_forbidden_operators(snippet: str, what: str) -> None:
    text = f"module t(a, b, c, y);\n  input [33:0] a;\n  input [33:0] b;\n  input [3:0] c;\n  output [67:0] y;\n  {snippet}\nendmodule\n"
    found = scan(text, 17)
    assert found and what in str(found[0]), found


def test_the_scan_ignores_comments_attributes_and_sensitivity_lists() -> None:
    text = ("// a / b % c * d\n/* x / y */\n(* keep = \"a/b\" *)\nmodule t(a, b, y);\n  input [16:0] a;\n"
            "  input [16:0] b;\n  output [33:0] y;\n  wire \\$auto$verilog_backend.cc:1$2 ;\n"
            "  assign y = a * b[16:0];\n  always @* begin end\nendmodule\n")
    assert scan(text, 17) == []
