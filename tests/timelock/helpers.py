"""Helpers for the time-lock tests: small puzzles made through the public API, the dumb squaring oracle."""

from __future__ import annotations

import json
from pathlib import Path

import gmpy2

from modforge.timelock import create_puzzle


def make_puzzle(directory: Path, *, bits: int = 512, t: int = 3000, payload: bytes = b"open sesame",
                random_base: bool = False, name: str = "p.json"):
    """A puzzle file with its trapdoor beside it; returns (Created, p, q)."""
    made = create_puzzle(bits, payload, directory / name, t=t, random_base=random_base,
                         keep_trapdoor=directory / (name + ".trapdoor"), calibration_seconds=0.01)
    doc = json.loads(made.trapdoor_path.read_text())
    return made, int(doc["p"], 16), int(doc["q"], 16)


def plain_squaring(x: int, t: int, n: int) -> int:
    """The dumb oracle: t squarings one by one with gmpy2."""
    y, m = gmpy2.mpz(x), gmpy2.mpz(n)
    for _ in range(t):
        y = y * y % m
    return int(y)
