"""Where hardware builds are cached: light (no Amaranth), so that ``modforge cache`` can list them."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$MODFORGE_HW_CACHE``, else ``.cache/modforge-hw`` in a source checkout, else
    ``$XDG_CACHE_HOME/modforge/hw``."""
    env = os.environ.get("MODFORGE_HW_CACHE")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").exists() and (parent / "python" / "modforge").is_dir():
            return parent / ".cache" / "modforge-hw"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "modforge" / "hw"
