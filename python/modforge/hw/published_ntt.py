"""Seed 003's published NTT figures, as data: printed beside ours, never measured here.

Seed 003 (Jane Street, "ZPrize"), section "NTT / Results": a 2^24-point transform on a C1100 Varium card
(Xilinx UltraScale+ with HBM), Vivado place-and-route figures, one row per core count.  Our rows come from
Yosys 0.70 on our RTL (:mod:`modforge.hw.synth`), a different tool and a different design in the details (see
docs/hardware.md, "What Yosys estimates can and cannot say against Vivado"), so the two are labelled
``measured`` and ``published`` and never merged.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .published import PUBLISHED_NOTE

SEED_NTT_TABLE = "003 NTT results"
SEED_NTT_TOOL = "Vivado (ZPrize entry, C1100 Varium card)"


@dataclass(frozen=True)
class PublishedNttRow:
    cores: int
    latency_s: float          # a full 2^24 transform
    power_w: float
    lut: int
    ff: int                   # "Registers"
    dsp: int
    bram36: int
    uram: int
    seed: str = "003"
    table: str = SEED_NTT_TABLE
    tool: str = SEED_NTT_TOOL

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["source"] = PUBLISHED_NOTE
        return d


# Transcribed from seed 003, "NTT / Results": cores, latency (s), power (W), LUTs, registers, DSP, BRAM36, URAM.
_ROWS = [
    (8, 0.2315, 16.97, 107291, 141006, 260, 162, 48),
    (16, 0.1238, 18.19, 126422, 156149, 512, 162, 96),
    (32, 0.0691, 21.13, 166488, 184436, 1028, 162, 192),
    (64, 0.0450, 27.70, 265523, 246385, 2052, 162, 384),
]


def rows() -> list[PublishedNttRow]:
    return [PublishedNttRow(*r) for r in _ROWS]


def row(cores: int) -> PublishedNttRow | None:
    return next((r for r in rows() if r.cores == cores), None)


__all__ = ["PublishedNttRow", "SEED_NTT_TABLE", "rows", "row"]
