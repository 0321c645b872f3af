"""The native workspace's crate graph points one way (docs/architecture.md, "The native workspace").

Read from ``cargo metadata`` (no build): at least the four crates of the split; no crate depends on the
Python binding; the ring depends on no application crate (RSA, the ZK crates) and the constant-time
helpers on no modforge crate at all.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINDING = "modforge-py"


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """``{member crate: {member crates it depends on, any kind}}``."""
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo not installed")
    out = subprocess.run([cargo, "metadata", "--no-deps", "--format-version", "1", "--offline",
                          "--manifest-path", str(ROOT / "native" / "Cargo.toml")],
                         check=True, capture_output=True, text=True).stdout
    meta = json.loads(out)
    members = {p["name"]: p for p in meta["packages"] if p["id"] in meta["workspace_members"]}
    return {name: {d["name"] for d in p["dependencies"] if d["name"] in members} for name, p in members.items()}


def depends_on(graph: dict[str, set[str]], crate: str) -> set[str]:
    """Every member ``crate`` reaches through its dependencies."""
    seen: set[str] = set()
    todo = list(graph[crate])
    while todo:
        c = todo.pop()
        if c not in seen:
            seen.add(c)
            todo.extend(graph.get(c, ()))
    return seen


def test_the_split_crates_are_members(graph) -> None:
    assert {"modforge-ct", "modforge-ring", "modforge-rsa", BINDING} <= set(graph)


def test_no_crate_depends_on_the_binding(graph) -> None:
    assert not [c for c in graph if BINDING in graph[c]]


def test_the_ring_depends_on_the_helpers_only(graph) -> None:
    assert depends_on(graph, "modforge-ring") == {"modforge-ct"}
    assert depends_on(graph, "modforge-ct") == set()


def test_the_graph_has_no_cycle(graph) -> None:
    assert not [c for c in graph if c in depends_on(graph, c)]


def test_the_reading_sees_a_dependency() -> None:
    fake = {"a": {"b"}, "b": {"c"}, "c": set()}
    assert depends_on(fake, "a") == {"b", "c"}
    assert depends_on({"a": {"b"}, "b": {"a"}}, "a") == {"a", "b"}
