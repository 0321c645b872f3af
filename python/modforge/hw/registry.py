"""The architectures the generators know, imported lazily (Amaranth loads only when a design is built)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from ..arith.base import ParameterError
from ..zk.bls12_377 import BLS12_377


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
    fixed_modulus: int | None = None     # a field design (seed 003's NTT): this modulus when none is given
    default_modulus: int | None = None        # taken when neither --bits nor --modulus is given

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
    "pam-mpu": ArchInfo(
        "pam-mpu", "modforge.hw.pam",
        "DEC PAM modular product unit: bit-serial Montgomery, carry-save, carry-completion detect, command stream",
        "004 (Sec. 3.1, 3.4, 4.3, Fig. 4)", two_operands=True,
        defaults={"extra_bits": 2},
        options={"extra_bits": "beta = 2^(bits + extra_bits), 2..16 (2)"}),
    "goldilocks-mul": ArchInfo(
        "goldilocks-mul", "modforge.hw.goldilocks_mul",
        "Goldilocks multiplier (p = 2^64 - 2^32 + 1): 64x64 product from DSP tiles, adder-only reduction, pipelined",
        "003 (NTT: the cores' field multiplier)", two_operands=True, fixed_modulus=(1 << 64) - (1 << 32) + 1,
        defaults={"cycles": 6, "dsp_bits": 17},
        options={"cycles": "latency, 1..layers (6)", "dsp_bits": "DSP tile operand width (17)"}),
    "ntt-core": ArchInfo(
        "ntt-core", "modforge.hw.ntt_core",
        "NTT core: radix-2 DIT over Goldilocks, one butterfly per cycle, ping-pong RAMs, twiddle ROM, runtime size",
        "003 (NTT: the 2^12-point cores)", fixed_modulus=(1 << 64) - (1 << 32) + 1,
        defaults={"log_n": 12, "mul_cycles": 6, "dsp_bits": 17},
        options={"log_n": "largest transform 2^log_n, 1..16 (12)", "mul_cycles": "multiplier latency (6; --cycles)",
                 "dsp_bits": "DSP tile operand width (17)"}),
    "ntt-cluster": ArchInfo(
        "ntt-cluster", "modforge.hw.ntt_cluster",
        "NTT cluster: cores under one controller running the 4-step (columns, twiddles, rows) from a memory model",
        "003 (NTT: 8 cores per controller, 4-step)", fixed_modulus=(1 << 64) - (1 << 32) + 1,
        defaults={"cores": 8, "log_n1": 12, "log_n2": 12, "mul_cycles": 6, "dsp_bits": 17},
        options={"cores": "cores per controller (8)", "log_n1": "column transforms 2^log_n1 (12)",
                 "log_n2": "row transforms 2^log_n2 (12)", "mul_cycles": "multiplier latency (6; --cycles)",
                 "dsp_bits": "DSP tile operand width (17)"}),
    "fq-mul": ArchInfo(
        "fq-mul", "modforge.hw.fq_mul",
        "Fq multiplier of the MSM adder: Karatsuba-Ofman to DSP tiles, truncated Barrett, LUT + mux; pipelined",
        "003 (MSM: the field multiplier of the point adder)", two_operands=True,
        defaults={"karatsuba_depth": 3, "dsp_bits": 17, "guard_bits": 0, "lut_bits": None},
        options={"karatsuba_depth": "Karatsuba-Ofman levels, 0..6 (3)", "dsp_bits": "DSP tile operand width (17)",
                 "guard_bits": "quotient tiles kept below bit n+1 (0)",
                 "lut_bits": "final table address bits (default: the fewest that work)"},
        default_modulus=BLS12_377.q),
    "msm-adder": ArchInfo(
        "msm-adder", "modforge.hw.msm_adder",
        "BLS12-377 scaled twisted Edwards mixed adder: 7 fq-mul + 6 add/sub, fully pipelined, one addition per cycle",
        "003 (MSM: the pipelined point adder)",
        defaults={"karatsuba_depth": 3, "dsp_bits": 17, "guard_bits": 0, "lut_bits": None},
        options={"karatsuba_depth": "Karatsuba-Ofman levels of each multiplier (3)",
                 "dsp_bits": "DSP tile operand width (17)", "guard_bits": "as fq-mul (0)",
                 "lut_bits": "as fq-mul"},
        default_modulus=BLS12_377.q),
    "msm-controller": ArchInfo(
        "msm-controller", "modforge.hw.msm_controller",
        "MSM bucket controller: busy bits, per-window stall FIFOs, the three scheduling rules, bucket RAM, adder",
        "003 (MSM: the hazard-avoiding bucket controller)",
        defaults={"adder": "standin", "windows": 4, "window_bits": 4, "fifo_depth": 4, "standin_bits": 16,
                  "standin_latency": 8, "karatsuba_depth": 3},
        options={"adder": "standin or edwards (standin)", "windows": "windows (4)",
                 "window_bits": "bits per window; 0 = the MSM layout of 253-bit scalars (4)",
                 "fifo_depth": "stall FIFO entries (4)", "standin_bits": "stand-in adder width (16)",
                 "standin_latency": "stand-in adder stages (8)", "karatsuba_depth": "edwards adder (3)"},
        default_modulus=BLS12_377.q),
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
