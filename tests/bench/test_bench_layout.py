"""`bench vdf` and `bench rsa` tables read whole in an 80-column terminal: nothing cut with an ellipsis, no
line past 80 (issue 31 item 3: `implement…`, `ours/open…`, `gmp-native-mul…`)."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console

from modforge.bench import report
from modforge.bench import rsa as brsa
from modforge.cli.main import cli

ELLIPSIS = "\u2026"


def rendered(draw, doc: dict) -> str:
    out = io.StringIO()
    draw(doc, Console(file=out, width=80, force_terminal=False, color_system=None))
    return out.getvalue()


def assert_fits(text: str, *needles: str) -> None:
    lines = text.splitlines()
    assert ELLIPSIS not in text, [line for line in lines if ELLIPSIS in line][:3]
    assert max(map(len, lines)) <= 80, [line for line in lines if len(line) > 80][:3]
    for needle in needles:                       # folded onto the next line of its column is fine; cut is not
        assert any(needle in line for line in lines) or folded(lines, needle), needle


def folded(lines: list[str], needle: str) -> bool:
    """Whether ``needle`` starts at the end of a cell of one line and goes on in the same column below."""
    for i, line in enumerate(lines[:-1]):
        for k in range(len(needle) - 1, 0, -1):
            col = line.find(needle[:k])
            if col >= 0 and lines[i + 1][col:].startswith(needle[k:]):
                return True
    return False


def test_vdf_table_with_the_longest_names_and_widest_figures() -> None:
    res = CliRunner().invoke(cli, ["bench", "vdf", "--bits", "256", "--repeats", "2", "--seconds", "0.002",
                                   "--no-anchors", "--json"], catch_exceptions=False)
    doc = json.loads(res.stdout)
    row = next(r for r in doc["results"] if r["kind"] == "anchor")
    for name, ns in (("gmp-native-mulmod", 123_456.7), ("engine-fold32-portable", 98_765.4), ("openssl-mont", 5.5)):
        extra = copy.deepcopy(row)
        extra.update(impl=name, ns_per_sqr_median=ns, paired_ratio_vs_best_anchor=12.34,
                     paired_ratio_range=[10.01, 14.99], ratio_vs_best_anchor=12.34)
        extra["spread"].update(min=ns * 0.9, max=ns * 11.1, q1=ns * 0.95, q3=ns * 1.05)
        doc["results"].append(extra)
    assert_fits(rendered(report.print_tables, doc), "gmp-native-mulmod", "engine-fold32-portable",
                "12.34x", "(10.01-14.99)")


def test_rsa_table_with_every_implementation(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["bench", "rsa", "--bits", "1024", "--seconds", "0.1", "--repeats", "1",
                                   "--no-openssl", "--json"], env={"MODFORGE_BENCH_CACHE": str(tmp_path)},
                             catch_exceptions=False)
    doc = json.loads(res.stdout)
    ours = next(r for r in doc["results"] if r["impl"] == brsa.OURS)
    ours.update(ratio_vs_openssl=1.234, ratio_vs_cryptography=12.345)
    for name in (brsa.OPENSSL, brsa.OPENSSL_MULTI):
        extra = copy.deepcopy(next(r for r in doc["results"] if r["impl"] == brsa.CRYPTOGRAPHY))
        extra.update(impl=name, ops_per_s_median=123_456.7)
        extra["spread"].update(min=100_000.1, max=199_999.9)
        doc["results"].append(extra)
    doc["params"]["bits"] = [1024]
    assert_fits(rendered(brsa.print_table, doc), brsa.OPENSSL_MULTI, "1.234x", "12.345x", "x openssl")
