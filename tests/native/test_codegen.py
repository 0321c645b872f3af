"""The built extension calls no SIMD intrinsic as a function.

An intrinsic used where the target features are not enabled (a closure inside a
``#[target_feature]`` function does not inherit them) is compiled as an
out-of-line call.  The code stays correct but slows by an order of magnitude: a
1024-bit IFMA product took 2.5 us instead of 0.1 that way (rustc 1.95).  The
digit-level tests cannot see this, so this test reads the machine code.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

# A call to a function of core::arch, which would be inlined if the caller's target features allowed it.
# CPU feature detection (cpuid, xgetbv) is called, by design, from std_detect.
CALL = re.compile(r"\bcall\s+\S+\s+<(?P<callee>[^>]*core_arch[^>]*)>")
ALLOWED = ("cpuid", "xgetbv", "xsave")


def out_of_line_intrinsic_calls(disassembly: str) -> dict[str, set[str]]:
    """``{caller: {callee, ...}}`` for every call into ``core::arch`` in ``objdump -d`` output."""
    found: dict[str, set[str]] = {}
    caller = "?"
    for line in disassembly.splitlines():
        if line.endswith(">:"):
            caller = line.split("<", 1)[1][:-2]
            continue
        m = CALL.search(line)
        if m and not any(word in m["callee"] for word in ALLOWED):
            found.setdefault(caller, set()).add(m["callee"])
    return found


def function_names(disassembly: str) -> list[str]:
    """The name of every function ``objdump -d`` labels (``<name>:`` lines)."""
    return [line.split("<", 1)[1][:-2] for line in disassembly.splitlines() if line.endswith(">:")]


def test_finds_calls_in_objdump_text() -> None:
    text = """
00000000000abfd0 <_ZN15modforge_native4ifma13mul_fold_with28_$u7b$$u7b$closure$u7d$$u7d$17h5E>:
   abfd0:\tpush   %rbp
   abfe2:\tcall   1234 <_RNvNtNtNtCsgE_4core9core_arch3x8610avx512ifma21__mm512_madd52lo_epu64>
00000000000ac000 <_RNvNtNtCs6d_10std_detect6detect5cache21detect_and_initialize>:
   ac010:\tcall   5678 <_RNvNtNtNtCsgE_4core9core_arch3x865xsave7__xgetbv>
   ac020:\tcall   9abc <memcpy@plt>
"""
    calls = out_of_line_intrinsic_calls(text)
    assert list(calls) == ["_ZN15modforge_native4ifma13mul_fold_with28_$u7b$$u7b$closure$u7d$$u7d$17h5E"]
    assert calls[next(iter(calls))] == {"_RNvNtNtNtCsgE_4core9core_arch3x8610avx512ifma21__mm512_madd52lo_epu64"}


def test_the_extension_inlines_every_intrinsic() -> None:
    if shutil.which("objdump") is None:
        pytest.skip("binutils (objdump) not installed")
    from modforge import _native

    if not _native.RELEASE_BUILD:
        pytest.skip("a debug build of the extension (maturin develop without --release) does not inline intrinsics")
    library = Path(_native.__file__)
    text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(library)],
                          check=True, capture_output=True, text=True).stdout
    # Positive control: no calls found means something only if the test read a build that has the kernels
    # under their names. A stripped library (8 names left, the instructions anonymous) or one without the
    # SIMD kernels would pass the check below for want of anything to look at.
    ours = [name for name in function_names(text) if "modforge_" in name]
    assert len(ours) >= 100, f"only {len(ours)} modforge functions named in {library}: stripped?"
    for kernel in ("ifma", "adx"):
        assert any(kernel in name for name in ours), f"no {kernel} kernel function named in {library}"
    assert "vpmadd52luq" in text and "adcx" in text, "the IFMA and ADX instructions are not in the library"
    calls = out_of_line_intrinsic_calls(text)
    report = "; ".join(f"{caller} calls {', '.join(sorted(callees)[:3])}" for caller, callees in sorted(calls.items()))
    assert not calls, f"{len(calls)} functions call SIMD intrinsics out of line: {report}"
