"""Parameters are one value; latency, schedule and resources are functions of it (no simulator)."""

from __future__ import annotations

import pytest

from modforge.arith.base import ParameterError
from modforge.hw.common import schedule, tree_levels, Layer
from modforge.hw.flow import make_design, regenerate_command
from modforge.hw.ozturk import OzturkDesign
from modforge.hw.predictive import PredictiveDesign
from modforge.hw.san import SanDesign

from .helpers import hw_modulus


def test_latency_is_the_cycles_parameter_and_depth_falls_as_cycles_grow() -> None:
    m = hw_modulus(128)
    depths = []
    n_layers = len(OzturkDesign(m, cycles=1).layers())
    for cycles in range(1, n_layers + 1):
        d = OzturkDesign(m, cycles=cycles)
        assert d.latency() == cycles == d.cycles_per_op()
        assert len(d.schedule[0]) == cycles - 1
        depths.append(d.depth_estimate_ps())
    assert depths == sorted(depths, reverse=True) and depths[0] > depths[-1]
    with pytest.raises(ParameterError, match=r"^cycles: must be at most"):
        OzturkDesign(m, cycles=n_layers + 1)
    with pytest.raises(ParameterError, match=r"^cycles: must be at least 1"):
        OzturkDesign(m, cycles=0)


def test_schedule_balances_stages() -> None:
    layers = [Layer(str(i), d) for i, d in enumerate([5, 1, 1, 1, 1, 5])]
    cuts, worst = schedule(layers, 3)
    assert worst == 5 and cuts == {"0", "4"}
    assert schedule(layers, 1) == (frozenset(), 14)
    assert [tree_levels(h) for h in (1, 2, 3, 4, 6, 9, 13, 19, 28)] == [0, 0, 1, 2, 3, 4, 5, 6, 7]


def test_ozturk_resources_follow_the_model() -> None:
    d = OzturkDesign(hw_modulus(256))
    r = d.resources()
    cost = d.model().cost(square=True)
    assert r["dsp"] == cost.word_products == 18 * 19 // 2
    assert r["roms"] == cost.table_count == 63
    assert r["reduction_tree_height"] == cost.extra["reduction_tree_inputs"]
    assert r["rom_bits"] == sum((1 << w) * 256 for _, _, w in d.tables())


def test_predictive_array_is_the_largest_mode_and_matches_the_seed_at_1024_bits() -> None:
    from modforge.data import vdf_alliance_modulus

    d = PredictiveDesign(vdf_alliance_modulus())
    assert d.words == 65 and d.array_size() == 2272          # seed 000: 2272 DSPs
    assert d.latency() == 3 and d.latency(1) == 1 + 3 * 65 + 2
    win = d.model_params.window_products()
    assert d.resources()["mode_products"] == {"square": win["square"], "lower": win["lower"],
                                             "upper": win["upper"], "fallback_row": 65}
    with pytest.raises(ParameterError, match=r"^cycles: predictive-montgomery takes 3 cycles"):
        make_design("predictive-montgomery", bits=64, options={"cycles": 2})


def test_san_products_and_tiles() -> None:
    d = SanDesign(hw_modulus(256))
    counts = d.model_params.product_counts()
    r = d.resources()
    assert r["digit_products"] == {"t": counts["t"], "q": counts["q"], "res": counts["res_with_top_carry"]}
    wide = SanDesign(hw_modulus(256), word_bits=64)
    assert wide.resources()["tiles_per_digit_product"] == 16      # 65-bit digits in 17-bit tiles: 4 x 4
    assert SanDesign(hw_modulus(256), word_bits=32).resources()["tiles_per_digit_product"] == 4


def test_unknown_options_and_bad_values_name_the_parameter() -> None:
    with pytest.raises(ParameterError, match=r"^lut: is not a parameter of ozturk"):
        make_design("ozturk", bits=64, options={"lut": 6})
    with pytest.raises(ParameterError, match=r"^arch: unknown architecture 'booth'"):
        make_design("booth", bits=64)
    with pytest.raises(ParameterError, match=r"^word_bits: digits of 32 \+ 1 = 33 bits do not fit"):
        make_design("predictive-montgomery", bits=128, options={"word_bits": 32})
    with pytest.raises(ParameterError, match=r"^dsp_bits: must be between 2 and 64"):
        make_design("san-montgomery", bits=64, options={"dsp_bits": 1})


def test_regenerate_command_names_the_non_default_parameters() -> None:
    d = make_design("ozturk", bits=64, options={"cycles": 3})
    cmd = regenerate_command(d)
    assert cmd.startswith("modforge hw gen ozturk --bits 64 --modulus 0x") and "--opt cycles=3" in cmd
    assert "word_bits" not in cmd


@pytest.mark.parametrize("arch", ["ozturk", "predictive-montgomery", "san-montgomery"])
def test_tiles_for_hierarchical_synthesis_are_clean_modules(arch: str) -> None:
    from modforge.hw.scan import scan
    from modforge.hw.tiles import tile_rtl, tiles

    d = make_design(arch, bits=64)
    ts = tiles(d)
    assert ts[0].kind == "dsp" and ts[0].count == d.resources()["dsp"]
    assert sum(t.count for t in ts if t.kind == "column") > 0
    if arch == "ozturk":
        assert sum(t.kind == "rom" for t in ts) == d.resources()["roms"]
    rtl = tile_rtl(d)
    for name, t in rtl.items():
        assert t["verilog"].startswith("// DO NOT EDIT") and f"module {t['module']}(" in t["verilog"]
        assert scan(t["verilog"], d.dsp_bits) == [], name
