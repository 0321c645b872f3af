"""The seeds' published hardware figures, as data: plotted beside ours, never measured here.

Every row names its seed, table and tool.  These are *published* results (Vivado / Vivado HLS on
Xilinx UltraScale+ parts); `modforge hw report` and `modforge hw explore` measure our RTL with
Yosys, which is a different tool and a different kind of number (see docs/hardware.md, "What Yosys estimates can and cannot say against Vivado").

* Seed 000 (Jane Street blog, the VDF Alliance FPGA competition), its closing table: the two
  1024-bit squarers, area in KLUT and latency per squaring.
* Seed 002 (San, "Low-latency Montgomery modular multiplication ..."), Tables I and II (Vivado HLS
  2019.2 estimates for a VU9P) and Table III (placed and routed on a VCU118).  Table II's
  512-bit, d = 16 row is printed in the extraction as "9  7.53": a clock of 9 ns with 7.53 cycles is
  impossible, so the two columns are swapped there (clock 7.53 ns, 9 cycles); the row says so.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

PUBLISHED_NOTE = "published, not measured here"


@dataclass(frozen=True)
class PublishedRow:
    seed: str                 # "000" or "002"
    table: str                # "000 comparison", "002 Table I", ...
    arch: str                 # our architecture the row corresponds to
    label: str
    bits: int
    word_bits: int | None
    digits: int | None        # k of seed 002
    cycles: int | None        # clock cycles per operation
    clock_ns: float | None
    latency_ns: float | None  # per operation (cycles x clock, or as published)
    lut: int | None
    ff: int | None
    dsp: int | None
    bram: int | None = None
    tool: str = ""
    note: str = ""
    alm: int | None = None        # Intel ALMs (seed 001): not LUTs, so never plotted as LUTs
    m20k: int | None = None       # Intel M20K memory blocks (seed 001)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["source"] = PUBLISHED_NOTE
        return d


def _lat(clock: float | None, cycles: int | None) -> float | None:
    if clock is None or cycles is None:
        return None
    return round(clock * cycles, 3)


_T1 = "002 Table I"
_T2 = "002 Table II"
_T3 = "002 Table III"
_HLS = "Vivado HLS 2019.2, VU9P (synthesis estimate)"
_PAR = "Vivado 2017.4 place and route, VCU118 (VU9P)"

# (bits, d, k, clock ns, cycles, LUT, FF, DSP), transcribed from seed 002 Table I.
_TABLE_I = [
    (64, 16, 4, 17.77, 1, 12034, 1622, 75),
    (64, 32, 2, 16.85, 1, 12921, 1793, 69),
    (128, 16, 8, 19.44, 1, 31276, 2992, 243),
    (128, 32, 4, 20.86, 1, 26569, 3222, 300),
    (128, 64, 2, 22.72, 1, 27789, 3725, 230),
    (256, 16, 16, 21.15, 1, 77419, 5763, 867),
    (256, 32, 8, 22.86, 1, 58376, 5776, 972),
    (256, 64, 4, 27.81, 1, 51583, 6166, 1200),
    (512, 16, 32, 22.91, 1, 202906, 10997, 3267),
    (512, 32, 16, 24.86, 1, 149247, 11251, 3468),
    (512, 64, 8, 30.36, 1, 102271, 11056, 3888),
    (1024, 16, 64, 24.70, 1, 636603, 17155, 12675),
    (1024, 32, 32, 26.85, 1, 414185, 21605, 13068),
    (1024, 64, 16, 32.93, 1, 253382, 17727, 13872),
]

# Seed 002 Table II (rows printed as dashes are omitted: 64/128/256 bits with d = 16).
_TABLE_II = [
    (64, 32, 2, 11.04, 2, 12126, 2559, 42, ""),
    (128, 32, 4, 8.13, 3, 24098, 4253, 200, ""),
    (128, 64, 2, 15.10, 2, 25783, 5375, 140, ""),
    (256, 32, 8, 8.79, 3, 50062, 7559, 648, ""),
    (256, 64, 4, 10.90, 3, 46105, 11005, 800, ""),
    (512, 16, 32, 7.53, 9, 169799, 26753, 1307,
     "extraction prints '9  7.53' (clock, cycles); read as 7.53 ns and 9 cycles"),
    (512, 32, 16, 9.22, 5, 149262, 16750, 3468, ""),
    (512, 64, 8, 11.25, 3, 84735, 14097, 2592, ""),
    (1024, 16, 64, 16.90, 3, 511958, 40303, 5634, ""),
    (1024, 32, 32, 10.491, 5, 302360, 38646, 5808, ""),
    (1024, 64, 16, 12.11, 16, 171356, 59821, 1760, ""),
    (1024, 64, 16, 8.61, 18, 172305, 65471, 2080, ""),
]

# Seed 002 Table III: (bits, d, k, LUT, FF, DSP, BRAM, target ns, logic ns, route ns, total ns, cycles,
# cycles for t = 10000).  The 1024-bit row has dashes except the target (20 ns) and 3 cycles.
_TABLE_III = [
    (128, 16, 8, 6498, 2278, 181, 1, 40, 10.99, 15.50, 26.49, 1, 10086),
    (256, 16, 16, 18741, 4121, 621, 1, 40, 13.05, 19.17, 32.22, 1, 10103),
    (512, 16, 32, 69302, 7833, 2269, 1, 50, 14.65, 32.07, 46.72, 1, 10137),
]


def rows() -> list[PublishedRow]:
    out = [
        PublishedRow("000", "000 comparison", "ozturk", "Ozturk (VDF Alliance round 2)", 1024, 16, 64, None,
                     None, 25.2, 464_000, None, None, tool="Vivado (competition entry)",
                     note="464 KLUT, 25.2 ns per squaring (158.6 MHz, 4-stage pipeline)"),
        PublishedRow("000", "000 comparison", "predictive-montgomery", "Predictive Montgomery", 1024, 17, 65, 3,
                     round(1000 / 65, 3), 46.0, 201_000, None, 2272, tool="Vivado (competition entry)",
                     note="201 KLUT, 2272 DSPs, 46 ns per squaring (3 cycles at 65 MHz)"),
    ]
    for n, d, k, clk, cyc, lut, ff, dsp in _TABLE_I:
        out.append(PublishedRow("002", _T1, "san-montgomery", f"San d={d} k={k} (Table I)", n, d, k, cyc, clk,
                                _lat(clk, cyc), lut, ff, dsp, tool=_HLS))
    for n, d, k, clk, cyc, lut, ff, dsp, note in _TABLE_II:
        out.append(PublishedRow("002", _T2, "san-montgomery", f"San d={d} k={k} {cyc} cycles (Table II)", n, d, k,
                                cyc, clk, _lat(clk, cyc), lut, ff, dsp, tool=_HLS, note=note))
    for n, d, k, lut, ff, dsp, bram, target, logic, route, total, cyc, t10k in _TABLE_III:
        out.append(PublishedRow("002", _T3, "san-montgomery", f"San d={d} k={k} (Table III, P&R)", n, d, k, cyc,
                                total, _lat(total, cyc), lut, ff, dsp, bram, tool=_PAR,
                                note=f"target {target} ns; logic {logic} ns + route {route} ns; "
                                     f"{t10k} cycles for t = 10000"))
    out.append(PublishedRow("002", _T3, "san-montgomery", "San d=16 k=64 (Table III, P&R)", 1024, 16, 64, 3, 20.0,
                            60.0, None, None, None, tool=_PAR,
                            note="only the target clock (20 ns) and 3 cycles are published; area dashes"))
    out += seed001_rows()
    return out


# Seed 001 Table I, the "ours" rows: (device, bits, breakdown, folding steps, latency in cycles, ALMs, DSPs,
# M20Ks, Fmax MHz).  Quartus Prime 23.4, single seed, fastest speed grades (Sec. VIII-A); fully pipelined, one
# product per cycle.  The Stratix10 row "Reduction, 3 steps" prints its normalised area as "22.148".
_T001 = "001 Table I"
_TABLE_001 = [
    ("Agilex7", 256, "Multiplier", None, 23, 5147, 45, 0, 865),
    ("Agilex7", 256, "Reduction", 1, 34, 6681, 30, 105, 796),
    ("Agilex7", 256, "Total", 1, 57, 11505, 75, 105, 804),
    ("Agilex7", 512, "Multiplier", None, 35, 18200, 135, 0, 808),
    ("Agilex7", 512, "Reduction", 1, 47, 22580, 90, 377, 791),
    ("Agilex7", 512, "Total", 1, 82, 40127, 225, 377, 758),
    ("Agilex7", 512, "Reduction", 2, 63, 23496, 150, 195, 780),
    ("Agilex7", 512, "Total", 2, 98, 41261, 285, 195, 771),
    ("Agilex7", 1024, "Multiplier", None, 47, 60236, 405, 0, 747),
    ("Agilex7", 1024, "Reduction", 2, 88, 81475, 450, 754, 608),
    ("Agilex7", 1024, "Total", 2, 135, 140831, 855, 756, 635),
    ("Agilex7", 1024, "Reduction", 3, 104, 83721, 570, 390, 610),
    ("Agilex7", 1024, "Total", 3, 151, 142972, 975, 392, 623),
    ("Agilex7", 2048, "Multiplier", None, 60, 192866, 1215, 0, 667),
    ("Agilex7", 2048, "Reduction", 3, 141, 277344, 1710, 1586, 557),
    ("Agilex7", 2048, "Total", 3, 201, 470627, 2925, 1587, 569),
    ("Stratix10", 1024, "Multiplier", None, 47, 93495, 405, 0, 507),
    ("Stratix10", 1024, "Reduction", 2, 88, 122202, 450, 754, 460),
    ("Stratix10", 1024, "Total", 2, 135, 217106, 855, 756, 447),
    ("Stratix10", 1024, "Reduction", 3, 104, 127347, 570, 390, 484),
    ("Stratix10", 1024, "Total", 3, 151, 219871, 975, 392, 442),
]


def seed001_rows() -> list[PublishedRow]:
    out = []
    for device, n, part, steps, latency, alm, dsp, m20k, fmax in _TABLE_001:
        clock = round(1000 / fmax, 3)
        label = f"{device} {n} {part}" + (f", {steps} step{'s' if steps > 1 else ''}" if steps else "")
        out.append(PublishedRow("001", _T001, "hybrid", label, n, None, None, 1, clock,
                                round(latency * clock, 3), None, None, dsp, m20k,
                                tool=f"Quartus Prime 23.4, {device} (fastest speed grade), single seed",
                                note=f"{alm} ALMs, {m20k} M20K, {fmax} MHz, latency {latency} cycles; "
                                     f"one product per cycle", alm=alm, m20k=m20k))
    return out


def table(name: str) -> list[PublishedRow]:
    return [r for r in rows() if r.table == name]


__all__ = ["PUBLISHED_NOTE", "PublishedRow", "rows", "table"]
