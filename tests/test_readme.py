"""The README's Python API example runs as written (so the documentation cannot drift from the library)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_python_block_runs(tmp_path, monkeypatch) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) == 1, "expected one ```python block in README.md"
    monkeypatch.chdir(tmp_path)                                  # it writes proof.json and puzzle.json
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))   # and the named puzzle's checkpoints
    exec(compile(blocks[0], str(README), "exec"), {"__name__": "readme"})
    assert (tmp_path / "proof.json").is_file() and (tmp_path / "puzzle.json").is_file()
