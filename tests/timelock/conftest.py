"""Time-lock tests never touch the real ~/.cache and never inherit a fault-injection request."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("MODFORGE_INJECT_FAULT", raising=False)
