"""The package's import graph points one way (docs/architecture.md, "Layers").

Every ``import`` in the package is read from the source, including the ones inside functions (an import
deferred to call time is still a dependency, and a circle of them breaks as soon as one moves to the top).
Two rules: nothing outside ``modforge.cli`` imports from it, and no two modules reach each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1] / "python" / "modforge"


def module_name(path: Path, root: Path = PACKAGE_ROOT) -> str:
    parts = ["modforge", *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def import_graph(root: Path = PACKAGE_ROOT) -> dict[str, set[str]]:
    """``{module: {module it imports, ...}}`` over the package's own modules."""
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if is_package(path) else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                # `from .pkg import sub` names a module when sub is one; else the import is of `pkg` itself.
                targets = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in files else stem for a in node.names]
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.add(target)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def package_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_the_reader_sees_deferred_and_relative_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "modforge"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("from .x import helper\n")
    (pkg / "a" / "x.py").write_text("def f():\n    from ..b import y\n")
    (pkg / "b.py").write_text("from .a import x\n")
    graph = import_graph(pkg)
    assert graph["modforge.a"] == {"modforge.a.x"}
    assert graph["modforge.a.x"] == {"modforge.b"}
    assert graph["modforge.b"] == {"modforge.a.x"}
    assert cycles(graph) == [["modforge.a.x", "modforge.b"]]


def test_nothing_outside_the_command_line_imports_from_it() -> None:
    graph = import_graph()
    offenders = sorted(f"{m} -> {t}" for m, targets in graph.items() if package_of(m) != "modforge.cli"
                       for t in targets if package_of(t) == "modforge.cli")
    assert not offenders, "library code imports the command line: " + "; ".join(offenders)


@pytest.mark.parametrize("pair", [("modforge.cli.hw", "modforge.cli.hw_report"),
                                  ("modforge.engine.backends", "modforge.engine.tuning"),
                                  ("modforge.rsa.files", "modforge.rsa.schemes"),
                                  ("modforge.timelock.check", "modforge.timelock.create")])
def test_the_four_former_circles_stay_open(pair: tuple[str, str]) -> None:
    graph = import_graph()
    a, b = pair
    assert not (b in graph[a] and a in graph[b]), f"{a} and {b} import each other"


def test_no_module_reaches_back_to_itself() -> None:
    found = cycles(import_graph())
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)
