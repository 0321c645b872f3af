"""The ``hybrid`` generator (seed 001): Table I's structure, the tile and the whole design against the model.

* Structure, no build: every Table I row's DSP and M20K counts come out of the hardware design's own
  resources (the model's counts, seed 001 Table I), the 26 x 17 variant doubles the DSPs, the latency is
  the sum of its blocks.
* The Karatsuba-by-5 tile, in Amaranth's simulator (both DSP shapes, a variable and a constant second
  operand): its nine coefficients equal :func:`karatsuba.tile_coefficients` of the model and its product
  the integer product, at exactly the derived stage.
* The 256-bit design through Verilator (one build shared by the tests and the pytest workers): lint,
  the forbidden-operator scan, byte-for-byte regeneration, and 2 x 5,000 random products after the named
  edge cases, each equal to :class:`HybridModel` with its fine-reduction flag, at exactly the latency.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from modforge.arith import karatsuba
from modforge.hw.flow import ensure_built, generate, rtl_name, simulate
from modforge.hw.hybrid import DSP_SHAPES, HybridHwDesign
from modforge.hw.scan import multiplications, operand_width, scan, strip_verilog
from modforge.hw.vectors import write_vectors

from .helpers import design, hw_modulus

# ---------------------------------------------------------------------------------------- 256 bits, Verilator
# The build first (this test), the regeneration and the simulations last: under pytest -n 2 the other
# worker runs the Python tests in between while one builds.
BITS = 256


def _mult_shapes(rtl: str) -> list[tuple[int, int]]:
    from modforge.hw.scan import _widths, _module_of_lines

    clean = strip_verilog(rtl)
    widths = _widths(clean)
    lines = clean.splitlines()
    mods = _module_of_lines(lines)
    out = []
    for line, mod in zip(lines, mods):
        m = re.match(r"^\s*assign\s+(.+?)\s*=\s*(.+?)\s*\*\s*(.+?)\s*;\s*$", line)
        if m:
            out.append((operand_width(m.group(2), widths[mod]), operand_width(m.group(3), widths[mod])))
    return out


def test_256_bit_rtl_lints_and_scans() -> None:
    d = design("hybrid", BITS)
    build = ensure_built(d)
    files = {name: (build.directory / name).read_text() for name in (rtl_name(d), "manifest.json")}
    rtl = files[rtl_name(d)]
    assert "%Warning" not in build.lint_output and "%Error" not in build.lint_output, build.lint_output
    assert scan(rtl, d.dsp_bits) == []
    # Table I's 75 DSPs at 256 bits: one 27 x 27 multiplication per declared DSP, none wider.
    shapes = _mult_shapes(rtl)
    assert len(shapes) == multiplications(rtl) == d.resources()["dsp"] == 75
    assert max(max(s) for s in shapes) <= 27
    man = json.loads(files["manifest.json"])
    assert man["latency"] == d.latency() == sum(man["resources"]["latency_breakdown"].values())
    assert man["ports"]["in_x"] == man["ports"]["in_y"] == man["ports"]["out_z"] == BITS
    assert man["ports"]["out_flags"] == 1


# (bits, steps, multiplier DSPs, reduction DSPs, reduction M20Ks): seed 001 Table I, Agilex7 "ours" rows.
# 2048 bits prints 1586 M20Ks for the reduction: its 1508 tables (Sec. V: 52 x 29) plus delay lines.
TABLE_I = [(256, 1, 45, 30, 105), (512, 1, 135, 90, 377), (512, 2, 135, 150, 195), (1024, 2, 405, 450, 754),
           (1024, 3, 405, 570, 390), (2048, 3, 1215, 1710, 1508)]


@pytest.mark.parametrize("bits,steps,mult,red,m20k", TABLE_I)
def test_every_table_i_row_is_a_parameter_choice(bits, steps, mult, red, m20k) -> None:
    d = HybridHwDesign(modulus=hw_modulus(bits), bits=bits, steps=steps)
    res = d.resources()
    assert (res["dsp_multiplier"], res["dsp_reduction"], res["m20k"]) == (mult, red, m20k)
    assert res["dsp"] == mult + red and res["dsp_tile"] == "27x27"
    assert d.latency() == sum(d.latency_breakdown().values()) == sum(res["latency_breakdown"].values())
    assert set(d.latency_breakdown()) == {"multiplier", "tables", "fine"} | {f"fold{i}" for i in range(steps)}
    wide = HybridHwDesign(modulus=hw_modulus(bits), bits=bits, steps=steps, dsp="26x17")
    assert wide.resources()["dsp"] == 2 * (mult + red)


def test_default_steps_are_table_i_s_and_bad_parameters_are_refused() -> None:
    assert [HybridHwDesign(modulus=hw_modulus(n), bits=n).model_design.step_count
            for n in (256, 512, 1024, 2048)] == [1, 1, 2, 3]
    from modforge.arith.base import ParameterError

    with pytest.raises(ParameterError, match="dsp"):
        HybridHwDesign(modulus=hw_modulus(256), bits=256, dsp="18x18")
    with pytest.raises(ParameterError, match="modulus"):
        design("hybrid", 256, beta=9).__class__(modulus=hw_modulus(256) >> 1, bits=256)
    with pytest.raises(ParameterError, match="beta"):
        HybridHwDesign(modulus=hw_modulus(256), bits=256, beta=0)


# ---------------------------------------------------------------------------------------- the tile
def _tile_sim(dsp: str, const_y: int | None, vectors: list[tuple[int, int]]):
    """Run the tile in Amaranth's simulator; returns the design, products and coefficients per vector."""
    from amaranth.hdl import Elaboratable, Module, Signal
    from amaranth.sim import Simulator

    from modforge.hw.common import Namer
    from modforge.hw.hybrid import W, Builder

    p = HybridHwDesign(modulus=hw_modulus(256), bits=256, dsp=dsp)
    t = p.tile

    class Top(Elaboratable):
        def __init__(self):
            self.x = Signal(t.tile_bits)
            self.y = Signal(t.tile_bits)
            self.probes = {}

        def elaborate(self, platform):
            m = Module()
            b = Builder(m, Namer(m), p)
            out = b.tile(W(self.x, 0), const_y if const_y is not None else W(self.y, 0), "t")
            self.out = out
            self.probes = b.probes
            return m

    top = Top()
    from amaranth.hdl import Fragment

    frag = Fragment.get(top, None)
    sim = Simulator(frag)
    sim.add_clock(1e-6)
    lat = top.out.stage
    coef = {c: top.probes[f"t_coefficient{c}"] for c in range(t.coefficient_count)}
    got_products, got_coefs = [], [[None] * t.coefficient_count for _ in vectors]

    async def bench(ctx):
        for i in range(len(vectors) + lat):
            if i < len(vectors):
                ctx.set(top.x, vectors[i][0])
                ctx.set(top.y, vectors[i][1])
            await ctx.tick()
            if 0 <= i + 1 - lat < len(vectors):
                got_products.append(ctx.get(top.out.value))
            for c, w in coef.items():
                k = i + 1 - w.stage
                if 0 <= k < len(vectors):
                    got_coefs[k][c] = ctx.get(w.value)

    sim.add_testbench(bench)
    sim.run()
    return p, lat, got_products, got_coefs


@pytest.mark.parametrize("dsp", list(DSP_SHAPES))
@pytest.mark.parametrize("constant", [False, True], ids=["variable", "constant"])
def test_the_tile_computes_the_model_s_coefficients_and_product(dsp: str, constant: bool) -> None:
    seed = 2026 + constant
    rng = random.Random(seed)
    tile = karatsuba.TileParams()
    top = (1 << tile.tile_bits) - 1
    chunk = (1 << tile.chunk_bits) - 1
    alternating = sum(chunk << (tile.chunk_bits * i) for i in range(0, tile.chunks, 2))
    const_y = rng.randrange(1 << tile.tile_bits) | alternating if constant else None
    edges = [(0, 0), (top, top), (alternating, top ^ alternating), (top ^ alternating, alternating), (1, top),
             (alternating, alternating)]
    vectors = edges + [(rng.randrange(1 << tile.tile_bits), rng.randrange(1 << tile.tile_bits)) for _ in range(150)]
    if constant:
        vectors = [(x, const_y) for x, _ in vectors]
    p, lat, products, coefs = _tile_sim(dsp, const_y, vectors)
    assert lat == p.tile_latency
    assert len(products) == len(vectors)
    for i, (x, y) in enumerate(vectors):
        want = karatsuba.tile_coefficients(tile, karatsuba.tile_products(tile, x, y))
        assert coefs[i] == want, f"seed {seed}, vector {i}: coefficients {coefs[i]} != model {want}"
        assert products[i] == x * y == karatsuba.tile_multiply(tile, x, y), f"seed {seed}, vector {i}"


def test_the_vectors_reach_every_table_and_both_fine_candidates(tmp_path) -> None:
    """The same vectors the simulations run: every table is addressed, every full chunk reaches all ones."""
    d = design("hybrid", BITS)
    src = d.vector_source()
    write_vectors(src, tmp_path / "v.txt", vectors=5_000, chain=0, seed=1)
    cov = src.coverage
    md = d.model_design
    assert min(cov["second_candidate"]) > 0, cov["second_candidate"]
    assert all(cov["table_nonzero"]), cov["table_nonzero"]
    for t, ch in enumerate(md.chunks):
        if ch.bits == md.beta and ch.position < max(c.position for c in md.chunks if c.source == ch.source):
            assert cov["table_max"][t] == (1 << md.beta) - 1, (t, cov["table_max"][t])
    assert len(cov["fine_index"]) >= 3


# ---------------------------------------------------------------------------------------- the whole datapath
def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) else v


@pytest.mark.parametrize("options", [{"tile_bits": 20}, {"tile_bits": 20, "trim_limit": 12, "steps": 2},
                                     {"dsp": "26x17"}], ids=["plain", "trimmed", "130-bit-tile-26x17"])
def test_the_datapath_streams_one_product_per_cycle_with_the_model_s_intermediates(options) -> None:
    """64 bits on 20-bit tiles (the same generator, small enough for Amaranth's simulator): a new operand
    pair every cycle, and at its own stage each of P_0 .. P_s, P_coarse, Q1, Q2, Q and the flag equals the
    model's.  The second design trims (Algorithm 1's U item goes to the tables); the third has the 130-bit
    tile with UltraScale+ DSPs (products split at 17 bits)."""
    from amaranth.hdl import Elaboratable, Fragment, Module, Signal
    from amaranth.sim import Simulator

    from modforge.hw.common import Namer
    from modforge.hw.hybrid import Builder

    bits = 64
    p = HybridHwDesign(modulus=hw_modulus(bits), bits=bits, **options)
    if "trim_limit" in options:
        assert any(st.trim_bits for st in p.model_design.fold_steps)
    model = p.model()
    m_ = p.modulus

    class Top(Elaboratable):
        def __init__(self):
            self.x, self.y = Signal(bits), Signal(bits)

        def elaborate(self, platform):
            m = Module()
            b = Builder(m, Namer(m), p, rom_instances=False)
            self.q, self.flag, self.stage = b.run(self.x, self.y)
            self.probes = b.probes
            return m

    top = Top()
    sim = Simulator(Fragment.get(top, None))
    sim.add_clock(1e-6)
    seed = 64
    rng = random.Random(seed)
    vectors = [(0, m_ - 1), (m_ - 1, m_ - 1), (1, 1)] + [(rng.randrange(m_), rng.randrange(m_)) for _ in range(80)]
    outs = [model.modmul(x, y) for x, y in vectors]
    d = p.model_design
    watch = {f"P{i}": top.probes[f"P{i}"] for i in range(d.step_count + 1)}
    watch.update({k: top.probes[k] for k in ("P_coarse", "Q1", "Q2")})
    e = d.coarse_bits + 2
    seen = {k: [None] * len(vectors) for k in list(watch) + ["Q", "flag"]}

    async def bench(ctx):
        for i in range(len(vectors) + top.stage + 1):
            if i < len(vectors):
                ctx.set(top.x, vectors[i][0])
                ctx.set(top.y, vectors[i][1])
            for k, w in watch.items():            # a registered value of stage s shows input i - s now
                j = i - w.stage
                if 0 <= j < len(vectors):
                    seen[k][j] = ctx.get(w.value)
            j = i - top.stage
            if 0 <= j < len(vectors):
                seen["Q"][j] = ctx.get(top.q)
                seen["flag"][j] = ctx.get(top.flag)
            await ctx.tick()

    sim.add_testbench(bench)
    sim.run()
    assert top.stage + 1 == p.latency()
    for j, out in enumerate(outs):
        st = out.stages
        for k in watch:
            got = seen[k][j]
            want = st[k]
            if k in ("Q1", "Q2"):
                got = _signed(got, e)
            assert got == want, f"seed {seed}, vector {j}: {k} {got:#x} != model {want:#x}"
        assert seen["Q"][j] == out.result and seen["flag"][j] == out.events["second_candidate"], (seed, j)


# ---------------------------------------------------------------------------------------- 256 bits, Verilator again
def test_256_bit_rtl_regenerates_byte_for_byte() -> None:
    """Generated here before the build is waited for (it is made by the other worker in parallel)."""
    d = design("hybrid", BITS)
    files = generate(d)
    build = ensure_built(d)
    assert set(files) == {rtl_name(d), "harness.cpp", "manifest.json"}
    for name, text in files.items():
        assert text == (build.directory / name).read_text(), f"{name} did not regenerate byte for byte"
        assert "DO NOT EDIT" in text.splitlines()[0 if name != "manifest.json" else 1], name


EDGES = {"zero_times_m_minus_1", "one_times_one", "m_minus_1_squared", "all_ones_chunks_squared",
         "alternating_chunks_times_inverse", "fine_candidate_first", "fine_candidate_second", "largest_p_coarse",
         "smallest_p_coarse"}


@pytest.mark.parametrize("seed", [1, 2])
def test_256_bit_simulation_matches_the_model_bit_for_bit(seed: int) -> None:
    """Two halves of 5,000 random products (one per pytest worker, one shared build)."""
    d = design("hybrid", BITS)
    doc = simulate(d, vectors=5_000, chain=200, seed=seed)
    report = doc["mismatch_report"][:4000]
    assert doc["mismatches"] == 0 and doc["exit_code"] == 0, f"seed {seed}:\n{report}"
    assert doc["latency_mismatches"] == 0 and doc["protocol_errors"] == 0, report
    assert doc["outputs"] == doc["expected_outputs"] == doc["vectors"] + 200
    assert doc["chain_checked_against_pow"]
    assert EDGES <= set(doc["edge_cases"]), EDGES - set(doc["edge_cases"])
    assert doc["cycles_per_op"] == doc["chain_cycles_per_op"] == d.latency()
    # Both fine-reduction candidates were taken, and flagged by the RTL exactly where the model took Q2.
    assert 0 < doc["flags"]["second_candidate"] < doc["vectors"]
