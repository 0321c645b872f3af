"""benchmarks/kernel_mix.py: the instruction classes, the nested-loop trip count, and,
where binutils and the IFMA kernels are present, that the loop it finds in the built
extension is a whole squaring step (at least the IFMA count the step's products need)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_script():
    spec = importlib.util.spec_from_file_location("kernel_mix", ROOT / "benchmarks" / "kernel_mix.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["kernel_mix"] = module
    spec.loader.exec_module(module)
    return module


km = load_script()


@pytest.mark.parametrize("mnemonic, operands, classes", [
    ("vpmadd52luq", "zmm5,zmm11,zmm14", ["ifma"]),
    ("vpmadd52huq", "zmm5,zmm11,ZMMWORD PTR [rdx+0x40]", ["ifma", "load"]),
    ("vpxor", "xmm5,xmm5,xmm5", ["zero"]),
    ("vpxord", "zmm5,zmm6,zmm5", ["p05"]),
    ("vpbroadcastq", "zmm11,QWORD PTR [rdi+0xa0]", ["load"]),
    ("vpbroadcastq", "zmm11,xmm3", ["p5"]),
    ("vmovdqa64", "ZMMWORD PTR [rsp+0x700],zmm7", ["store"]),
    ("vmovdqa64", "zmm7,ZMMWORD PTR [rdx+0x80]", ["load"]),
    ("vmovdqa64", "zmm7{k1},ZMMWORD PTR [rdx+0x80]", ["load", "p05"]),
    ("vmovdqa64", "zmm7,zmm8", ["move"]),
    ("vpaddq", "zmm1,zmm2,zmm3", ["p05"]),
    ("vpaddq", "zmm1,zmm2,ZMMWORD PTR [rdi]", ["p05", "load"]),
    ("valignq", "zmm13,zmm1,zmm13,0x3", ["p5"]),
    ("vpsrlq", "zmm1,zmm2,0x32", ["p0"]),
    ("vpsllvq", "zmm13,zmm10,zmm0", ["p0"]),
    ("vpexpandq", "zmm12{k1}{z},zmm9", ["p5", "p5"]),
    ("mov", "rdi,rax", ["scalar"]),
    ("mov", "QWORD PTR [rsp+0x8],rax", ["store"]),
])
def test_classes(mnemonic: str, operands: str, classes: list[str]) -> None:
    operands = operands.replace("PTR", " PTR ").replace("  ", " ")
    assert km.classify(mnemonic, operands) == classes


def rows(lines: list[str]) -> list[tuple[int, str, str]]:
    out = []
    for at, line in enumerate(lines):
        mnemonic, _, operands = line.partition(" ")
        out.append((at, mnemonic, operands))
    return out


@pytest.mark.parametrize("setup, step, branch, passes", [
    ("mov r9d,0x2b", "add r9,0xffffffffffffffff", "jb 0x1", 44),
    ("mov r9,0x2b", "add r9,0xffffffffffffffff", "jb 0x1", 44),
    ("mov eax,0x7", "dec rax", "jne 0x1", 7),
])
def test_trip_count(setup: str, step: str, branch: str, passes: int) -> None:
    code = rows([setup, "vpbroadcastq zmm2,QWORD PTR [r8+r9*8]", "vpaddq zmm1,zmm1,zmm2", step, branch])
    assert km.trip_count(code, 1, 4) == passes


@pytest.mark.parametrize("setup, step, final, passes", [
    # The fold's middle rows (2048 bits): from row 43 down to row 6.
    ("mov r15d,0x2b", "dec r15", "0x5", 38),
    ("xor r15d,r15d", "inc r15", "0x26", 38),
    ("mov r15,0x2", "add r15,0x3", "0x1a", 8),
    ("mov r15,0x1a", "add r15,0xfffffffffffffffd", "0x2", 8),
])
def test_trip_count_of_a_compared_counter(setup: str, step: str, final: str, passes: int) -> None:
    code = rows([setup, "vpbroadcastq zmm2,QWORD PTR [r11+r15*8]", step,
                 "add r12,0xfffffffffffffe80", f"cmp r15,{final}", "jne 0x1"])
    assert km.trip_count(code, 1, 5) == passes


def test_trip_count_of_a_compared_counter_refuses_what_never_ends() -> None:
    code = rows(["mov r15d,0x2b", "vpaddq zmm1,zmm1,zmm2", "dec r15", "cmp r15,0x30", "jne 0x1"])
    with pytest.raises(SystemExit, match="never reaches"):
        km.trip_count(code, 1, 4)
    code = rows(["mov r15d,0x2b", "vpaddq zmm1,zmm1,zmm2", "dec r15", "dec r15", "cmp r15,0x5", "jne 0x1"])
    with pytest.raises(SystemExit, match="steps"):
        km.trip_count(code, 1, 5)


def test_trip_count_refuses_what_it_cannot_read() -> None:
    code = rows(["mov r9d,0x2b", "vpaddq zmm1,zmm1,zmm2", "cmp r9,r10", "jb 0x1"])
    with pytest.raises(SystemExit, match="trip count"):
        km.trip_count(code, 1, 3)
    code = rows(["mov r9,r11", "vpaddq zmm1,zmm1,zmm2", "add r9,0xffffffffffffffff", "jb 0x1"])
    with pytest.raises(SystemExit, match="counter"):
        km.trip_count(code, 1, 3)


def built_library() -> Path:
    if shutil.which("objdump") is None or shutil.which("nm") is None:
        pytest.skip("binutils not installed")
    from modforge import _native
    library = Path(_native.__file__)
    if not km.kernel_symbols(library):
        pytest.skip("the extension holds no generated IFMA kernels")
    return library


@pytest.mark.parametrize("bits", [1024, 2048])
def test_the_loop_is_one_whole_step(bits: int) -> None:
    """The IFMA count of the loop covers every product of one step (both halves, eight
    lanes each) and the fold's 2HV: an inner loop counted once, or a loop that is not
    the step's, would fall below."""
    library = built_library()
    (mix,) = km.analyse(library, [bits], mca=False, mcpu="sapphirerapids")
    digits = mix.digits
    k, rows_h, vectors = digits - 1, digits + 1, -(-digits // 8)
    products = digits * (digits + 1) // 2 + rows_h * k
    assert mix.mnemonics["vpmadd52luq"] == mix.mnemonics["vpmadd52huq"]
    assert mix.counts["ifma"] >= 2 * -(-products // 8)
    assert mix.counts["ifma"] >= 2 * rows_h * vectors
    assert mix.counts["ifma"] <= 4 * products // 8, "more IFMAs than twice the lane floor"
    assert mix.bound_cycles >= mix.port05 / 2
