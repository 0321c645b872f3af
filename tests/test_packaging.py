"""What the wheel and sdist must carry: every data file the package reads is in pyproject's include list."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "modforge"
CODE_SUFFIXES = {".py", ".pyc", ".so", ".pyd", ".typed"}


def test_every_data_file_of_the_package_is_shipped() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["maturin"]
    globs = [entry["path"] for entry in config["include"] if {"sdist", "wheel"} <= set(entry["format"])]
    data = [path.relative_to(ROOT).as_posix() for path in PACKAGE.rglob("*")
            if path.is_file() and path.suffix not in CODE_SUFFIXES and "__pycache__" not in path.parts]
    assert data, "no data files found: the package layout changed"
    missing = [name for name in data if not any(fnmatch.fnmatch(name, glob) for glob in globs)]
    assert not missing, f"not in [tool.maturin] include, so absent from wheels: {missing}"
