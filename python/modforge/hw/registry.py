"""The architectures the generators know, imported lazily (Amaranth loads only when a design is built)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from ..arith.base import ParameterError


@dataclass(frozen=True)
class ArchInfo:
    name: str
    module: str
    summary: str
    seed: str
    two_operands: bool = False
    flags: bool = False
    defaults: dict[str, Any] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)

    def make(self, modulus: int, bits: int | None, options: dict[str, Any]) -> Any:
        mod = importlib.import_module(self.module)
        return mod.design_from_options(modulus, bits, options)


ARCHITECTURES: dict[str, ArchInfo] = {
    "ozturk": ArchInfo(
        "ozturk", "modforge.hw.ozturk",
        "Ozturk's fixed-modulus RBR squarer with ROM table reduction; cycles per squaring a parameter",
        "000 (Ozturk multiplier), 002 Sec. I",
        defaults={"word_bits": 16, "redundant_bits": 1, "redundant_words": 2, "lut_bits": 6, "cycles": 1,
                  "dsp_bits": 17},
        options={"word_bits": "d (16)", "redundant_bits": "r (1)", "redundant_words": "extra digits (2)",
                 "lut_bits": "ROM address bits (6)", "cycles": "cycles per squaring, 1..layers (1)",
                 "dsp_bits": "DSP tile operand width (17)"}),
    "predictive-montgomery": ArchInfo(
        "predictive-montgomery", "modforge.hw.predictive",
        "Predictive redundant Montgomery squarer: one multi-mode array, 3 passes, boundary checks, fallback",
        "000 (Predictive Montgomery multiplier)", flags=True,
        defaults={"word_bits": 16, "redundant_bits": 1, "extra_words": 1, "guard_words": 3, "dsp_bits": 17},
        options={"word_bits": "d (16)", "redundant_bits": "r (1)", "extra_words": "words above ceil(n/d) (1)",
                 "guard_words": "x (3; at most W - 1)", "dsp_bits": "DSP tile operand width (17)"}),
    "san-montgomery": ArchInfo(
        "san-montgomery", "modforge.hw.san",
        "San's low-latency Montgomery multiplier on Ozturk RBR products (Alg. 4/6), exact low carry",
        "002 (Alg. 4, 6, Tables I-II)", two_operands=True,
        defaults={"word_bits": 16, "digits": None, "cycles": 1, "dsp_bits": 17},
        options={"word_bits": "d, at least 4 (16)", "digits": "k (default: smallest with feedback; at most 8 more)",
                 "cycles": "cycles per product, 1..layers (1)", "dsp_bits": "DSP tile operand width (17)"}),
    "hybrid": ArchInfo(
        "hybrid", "modforge.hw.hybrid",
        "Intel's hybrid-reduction modular multiplier: Karatsuba over 130-bit Karatsuba-by-5 tiles, folding "
        "steps, table coarse and two-candidate fine reduction; fixed modulus, canonical output",
        "001 (Algorithm 1, Sec. III-VII, Table I)", two_operands=True, flags=True,
        defaults={"beta": 9, "steps": None, "high_part_rounding": "floor", "tile_bits": 130, "trim_limit": None,
                  "dsp": "27x27"},
        options={"beta": "table address bits (9)", "steps": "folding steps s (default: the model's, Table I's)",
                 "high_part_rounding": "floor (Algorithm 1) | ceil (Sec. V text)", "tile_bits": "Karatsuba leaf (130)",
                 "trim_limit": "bits k may exceed a sweet spot and be trimmed (26)",
                 "dsp": "27x27 (Agilex) | 26x17 (UltraScale+ DSP48E2: two per tile product)"}),
}


def arch_info(name: str) -> ArchInfo:
    try:
        return ARCHITECTURES[name]
    except KeyError:
        raise ParameterError("arch", f"unknown architecture {name!r}; choose one of: "
                                     f"{', '.join(ARCHITECTURES)}") from None
