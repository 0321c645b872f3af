"""``hw report`` says what it synthesises before each long Yosys run (issue 31, item 10: 84 s of silence for a
flat 1024-bit design, whose only progress line came after its one run)."""

from __future__ import annotations

import pytest

import modforge.hw.synth as synth
from modforge.cli.hw_design import design_from_options


@pytest.mark.parametrize("method", ["flat", "hierarchical"])
def test_progress_is_reported_before_the_first_yosys_run(method, monkeypatch) -> None:
    design = design_from_options("ozturk", 32, None, None, None, None, ())
    events: list[tuple] = []
    monkeypatch.setattr(synth, "yosys_version", lambda: "test")

    def fake_run(*args, **kwargs):
        events.append(("yosys",))
        return {"figures": {}, "method": method}

    if method == "flat":
        monkeypatch.setattr(synth, "synth_flat", fake_run)
    else:
        monkeypatch.setattr(synth, "_synth_batch", lambda work: events.append(("yosys",)) or {})
        monkeypatch.setattr(synth, "synth_hier", _hier_calling(synth.synth_hier, events))
    synth.report(design, ("xilinx",), method=method, progress=lambda t, i, n: events.append((t, i, n)))
    assert events and events[0][:2] == ("xilinx", 0), events
    assert ("yosys",) in events


def _hier_calling(real, events):
    """synth_hier as it is up to its first Yosys run: the progress it reports before that run is what counts."""
    def run(design, target, jobs=1, progress=None, **kw):
        class Stop(Exception):
            pass

        def first_run(work):
            events.append(("yosys",))
            raise Stop

        import modforge.hw.synth as module
        saved = module._synth_batch
        module._synth_batch = first_run
        try:
            real(design, target, jobs=1, progress=progress, **kw)
        except Stop:
            pass
        finally:
            module._synth_batch = saved
        return {"figures": {}, "method": "hierarchical"}
    return run
