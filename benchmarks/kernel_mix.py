"""Count the instruction mix of the built IFMA squaring loops and their port bound.

    .venv/bin/python benchmarks/kernel_mix.py                    # 1024..4096 bits, table
    .venv/bin/python benchmarks/kernel_mix.py --bits 1024 --json
    .venv/bin/python benchmarks/kernel_mix.py --mca              # and llvm-mca's view

The `ifma` backend's repeated squaring is one generated function per digit count,
``sqr_n_L`` in ``native/crates/modforge-ring/src/ifma.rs``.  This script disassembles those functions
in the extension module that Python imports (``objdump``, symbols from ``nm``), takes
the loop (the longest backward branch) and sorts its instructions by where they run
on a core with two 512-bit vector ports (ports 0 and 5: Ice Lake and Sapphire
Rapids servers):

* ``ifma``: ``vpmadd52luq`` / ``vpmadd52huq``, port 0 or 5;
* ``p05``: other vector arithmetic, port 0 or 5 (adds, logic, blends);
* ``p0``: vector shifts, port 0 only;  ``p5``: lane crossing (``valignq``,
  permutes, extracts, expands, broadcasts from a register), port 5 only;
* ``load`` (including broadcasts from memory, which take no ALU port),
  ``store``, ``zero`` (xor zero idioms, removed at rename), ``move`` (register to
  register, often eliminated at rename) and ``scalar``.

The bound is the busier of the two ports when the flexible µops are shared out as
evenly as the port-only ones allow: ``max(ceil(all/2), p0 only, p5 only)`` cycles
per squaring, with ``all = ifma + p05 + p0 + p5``.  AMD Zen 4 splits a 512-bit
operation over two 256-bit halves and has four vector pipes, so the same code has
another bound there: one 512-bit IFMA per cycle (measured on the Zen 4 this project
ran on in 2026-11: 0.98 cycles per ``vpmadd52luq zmm`` in an independent stream,
0.49 per ymm; adds and ANDs 0.48 and shifts 0.98 without slowing the IFMAs beside
them; ``valignq`` 0.97, each costing about 0.2 of an IFMA slot when mixed in).  The
``bound (Zen 4)`` column is that IFMA count in cycles.  That is the figure
docs/benchmarks.md compares the measured time with.  Every instruction counts as one
µop, except expands and compresses (two port-5 µops) and a vector instruction with a
memory source (one ALU µop plus a load).  With ``--mca`` the loop also goes through ``llvm-mca`` (``--mcpu``, default
``sapphirerapids``) for a second opinion: its simulated cycles per iteration and
the pressure on its two busiest ports.  (LLVM 14 models Sapphire Rapids with the
Skylake-server port tables, so take its absolute cycles as a cross-check only.)
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

DEFAULT_BITS = [1024, 2048, 3072, 4096]
DIGIT_BITS = 50

# Mnemonic classes (port 0/5 machines).  Anything vector and not listed is "p05".
IFMA = {"vpmadd52luq", "vpmadd52huq"}
PORT0_ONLY = {"vpsllq", "vpsrlq", "vpsraq", "vpsllvq", "vpsrlvq", "vpsravq", "kortestw", "kortestb"}
PORT5_ONLY = {
    "valignq", "valignd", "vpermq", "vpermt2q", "vpermi2q", "vpermd", "vshufi64x2", "vshufi32x4",
    "vextracti64x4", "vextracti32x4", "vinserti64x4", "vinserti32x4",
    "vpunpcklqdq", "vpunpckhqdq", "vpshufd", "kmovw", "kmovb", "kmovq",
}
# Two port-5 µops each (uops.info, Ice Lake and Sapphire Rapids).
TWO_PORT5 = {"vpexpandq", "vpcompressq"}
# Pure moves and broadcasts: a load when the source is memory, a store when the target is.
MOVES = {"vmovdqa64", "vmovdqu64", "vmovdqa", "vmovdqu", "vmovdqa32", "vmovdqu32", "vmovaps", "vmovups"}
BROADCASTS = {"vpbroadcastq", "vbroadcasti64x4", "vbroadcasti64x2", "vbroadcasti32x4"}
ZERO_IDIOMS = {"vpxor", "vpxord", "vpxorq", "vxorps", "vpsubq"}
CLASSES = ("ifma", "p05", "p0", "p5", "load", "store", "zero", "move", "scalar")


def digits_for(bits: int) -> int:
    """Loop digits L = K + 1 of the fold plan for a modulus of `bits` bits.

    The same rule as ``FoldPlan::new`` (native/crates/modforge-ring/src/fold.rs): K is the least digit count
    with ``bits + 1 + bitlen(K + 2) <= 50K``.
    """
    k = 1
    while bits + 1 + (k + 2).bit_length() > DIGIT_BITS * k:
        k += 1
    return k + 1


@dataclass
class LoopMix:
    bits: int
    digits: int
    symbol: str
    instructions: int
    counts: dict[str, int]
    mnemonics: dict[str, int]
    bound_cycles: float = 0.0
    bound_zen4_cycles: float = 0.0
    mca: dict[str, float] | None = field(default=None)

    @property
    def port05(self) -> int:
        return sum(self.counts[c] for c in ("ifma", "p05", "p0", "p5"))


def classify(mnemonic: str, operands: str) -> list[str]:
    """The classes of one instruction (a vector op with a memory source is two)."""
    ops = [o.strip() for o in split_operands(operands)]
    memory = [i for i, o in enumerate(ops) if "PTR" in o or o.startswith("[")]
    vector = any(re.match(r"[xyz]mm\d+", o) for o in ops)
    if mnemonic in ZERO_IDIOMS and len(ops) == 3 and ops[0] == ops[1] == ops[2] and not memory:
        return ["zero"]
    if mnemonic in MOVES or mnemonic in BROADCASTS:
        if memory == [0]:
            return ["store"]
        if memory:
            # A masked load merges into its target: one more ALU µop.
            return ["load", "p05"] if "{k" in ops[0] and "{z}" not in ops[0] else ["load"]
        if mnemonic in BROADCASTS:
            return ["p5"]
        return ["p05"] if "{k" in operands else ["move"]  # often eliminated at rename
    if mnemonic in TWO_PORT5:
        return ["p5", "p5"] + (["load"] if memory else [])
    if mnemonic in IFMA:
        base = "ifma"
    elif mnemonic in PORT0_ONLY:
        base = "p0"
    elif mnemonic in PORT5_ONLY:
        base = "p5"
    elif vector or mnemonic.startswith("k"):
        base = "p05"
    else:
        return ["store"] if memory == [0] and mnemonic == "mov" else ["scalar"]
    if memory == [0]:
        return [base, "store"]
    return [base, "load"] if memory else [base]


def split_operands(text: str) -> list[str]:
    """Operands split at top-level commas (memory operands hold none, masks do not)."""
    return [o for o in text.split(",") if o] if text else []


def run(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    except FileNotFoundError:
        sys.exit(f"error: {cmd[0]} not found (binutils is needed to read the built kernel)")
    except subprocess.CalledProcessError as exc:
        sys.exit(f"error: {' '.join(cmd[:2])} failed: {exc.stderr.strip()[:400]}")


def kernel_symbols(library: Path) -> dict[int, tuple[str, int, int]]:
    """L -> (symbol, address, size) of every generated ``sqr_n_L`` in `library`."""
    found: dict[int, tuple[str, int, int]] = {}
    for line in run(["nm", "-S", "--defined-only", str(library)]).splitlines():
        parts = line.split()
        if len(parts) != 4:
            continue
        address, size, _kind, name = parts
        # Rust's legacy mangling: ...4ifma<len>sqr_n_<L>17h<hash>E, <len> the length of "sqr_n_<L>".
        match = re.search(r"4ifma(\d+)(sqr_n_\d+)", name)
        if not match:
            continue
        ident = match.group(2)[: int(match.group(1))]
        if not re.fullmatch(r"sqr_n_\d+", ident):
            continue
        found[int(ident[len("sqr_n_"):])] = (name, int(address, 16), int(size, 16))
    return found


def loop_body(library: Path, address: int, size: int) -> list[tuple[str, str]]:
    """(mnemonic, operands) of one pass of the function's outer loop, straight-line.

    The outer loop is the backward branch with the longest span.  A loop nested in it
    (the fold's row loop, where the compiler keeps one) is repeated for its trip count,
    read from the counter it sets up: ``mov r, n`` before it and ``add r, -1; jb`` (n + 1
    passes) or ``dec r; jne`` (n passes) at its end.
    """
    text = run([
        "objdump", "-d", "--no-show-raw-insn", "-M", "intel",
        f"--start-address={address:#x}", f"--stop-address={address + size:#x}", str(library),
    ])
    rows: list[tuple[int, str, str]] = []
    for line in text.splitlines():
        match = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if match:
            operands = re.sub(r"\s*<[^>]*>", "", match.group(3)).replace(" ", "")
            operands = operands.replace("PTR", " PTR ")
            rows.append((int(match.group(1), 16), match.group(2), operands))
    loops: list[tuple[int, int]] = []          # (first index, branch index)
    for index, (at, mnemonic, operands) in enumerate(rows):
        if not mnemonic.startswith("j") or mnemonic == "jmp":
            continue
        try:
            target = int(operands.split()[0], 16)
        except (ValueError, IndexError):
            continue
        if target < at:
            loops.append((next(i for i, row in enumerate(rows) if row[0] >= target), index))
    if not loops:
        sys.exit(f"error: no loop found in the function at {address:#x}")
    outer = max(loops, key=lambda span: span[1] - span[0])
    inner = sorted(span for span in loops if span != outer and outer[0] <= span[0] and span[1] <= outer[1])
    body: list[tuple[str, str]] = []
    at = outer[0]
    for start, end in inner:
        if start < at:
            sys.exit(f"error: overlapping inner loops in the function at {address:#x}")
        body += [(m, o) for _, m, o in rows[at:start]]
        passes = trip_count(rows, start, end)
        body += [(m, o) for _, m, o in rows[start:end + 1]] * passes
        at = end + 1
    body += [(m, o) for _, m, o in rows[at:outer[1] + 1]]
    return body


def trip_count(rows: list[tuple[int, str, str]], start: int, end: int) -> int:
    """Passes of the inner loop rows[start..end] (see :func:`loop_body`)."""
    branch = rows[end][1]
    step = rows[end - 1]
    counter = step[2].split(",")[0]
    names = {counter, "e" + counter[1:] if counter[0] == "r" and counter[1:].isalpha() else counter + "d"}
    if step[1] == "add" and step[2].endswith(",0xffffffffffffffff") and branch == "jb":
        extra, final, stride = 1, 0, -1
    elif step[1] == "dec" and branch == "jne":
        extra, final, stride = 0, 0, -1
    elif step[1] == "cmp" and branch == "jne" and step[2].split(",")[1].startswith("0x"):
        # `cmp r, final; jne` with the counter stepped by `inc` / `dec` / `add r, imm`
        # somewhere in the loop (the fold's middle rows, which end above row 0).
        extra, final = 0, int(step[2].split(",")[1], 16)
        steps = [(m, o) for _, m, o in rows[start:end - 1] if o.split(",")[0] in names]
        if len(steps) != 1 or steps[0][0] not in ("inc", "dec", "add", "sub"):
            sys.exit(f"error: cannot find how the loop counter {counter} steps")
        mnemonic, operands = steps[0]
        if mnemonic in ("inc", "dec"):
            stride = 1 if mnemonic == "inc" else -1
        else:
            amount = int(operands.split(",")[1], 16)
            amount = amount - (1 << 64) if amount >= 1 << 63 else amount
            stride = amount if mnemonic == "add" else -amount
    else:
        sys.exit(f"error: cannot read the trip count of the loop ending in {step[1]} {step[2]}; {branch}")
    for _, mnemonic, operands in reversed(rows[:start]):
        target, _, value = operands.partition(",")
        if mnemonic == "mov" and target in names and value.startswith("0x"):
            distance = final - int(value, 16)
            if distance % stride or distance // stride <= 0:
                sys.exit(f"error: loop counter {counter} from {value} by {stride} never reaches {final}")
            return distance // stride + extra
        if mnemonic == "xor" and target in names and value in names:
            distance = final
            if stride <= 0 or distance % stride:
                sys.exit(f"error: loop counter {counter} from 0 by {stride} never reaches {final}")
            return distance // stride + extra
        if target in names:
            break
    sys.exit(f"error: cannot find where the loop counter {counter} is set")


def llvm_mca(body: list[tuple[str, str]], mcpu: str) -> dict[str, float] | None:
    tool = shutil.which("llvm-mca")
    if tool is None:
        return None
    lines = [".intel_syntax noprefix"]
    for mnemonic, operands in body:
        if mnemonic.startswith("j"):
            continue
        lines.append(f"{mnemonic} {operands.replace(' PTR ', ' PTR ')}")
    iterations = 200
    with tempfile.NamedTemporaryFile("w", suffix=".s") as source:
        source.write("\n".join(lines) + "\n")
        source.flush()
        out = run([tool, f"-mcpu={mcpu}", f"-iterations={iterations}", source.name])
    total = re.search(r"Total Cycles:\s+(\d+)", out)
    names = dict(re.findall(r"\[(\d+)\]\s+-\s+(\S+)", out.split("Resource pressure per iteration:")[0]))
    pressure_block = out.split("Resource pressure per iteration:")[1].splitlines()
    values = [float(v) if v != "-" else 0.0 for v in pressure_block[2].split()]
    pressure = {names[str(i)]: v for i, v in enumerate(values) if str(i) in names}
    busiest = sorted(pressure.items(), key=lambda kv: -kv[1])[:2]
    result = {"cycles_per_iteration": int(total.group(1)) / iterations if total else float("nan")}
    for name, value in busiest:
        result[f"pressure_{name}"] = value
    return result


def analyse(library: Path, bits_list: list[int], mca: bool, mcpu: str) -> list[LoopMix]:
    symbols = kernel_symbols(library)
    if not symbols:
        sys.exit(f"error: no generated sqr_n_L kernels in {library} (is it the ifma build?)")
    mixes = []
    for bits in bits_list:
        digits = digits_for(bits)
        if digits not in symbols:
            sys.exit(f"error: {bits} bits needs sqr_n_{digits}, which {library.name} does not hold")
        name, address, size = symbols[digits]
        body = loop_body(library, address, size)
        counts = Counter({c: 0 for c in CLASSES})
        for mnemonic, operands in body:
            counts.update(classify(mnemonic, operands))
        mix = LoopMix(bits, digits, name, len(body), dict(counts), dict(Counter(m for m, _ in body)))
        flexible = mix.port05
        mix.bound_cycles = max(flexible / 2, counts["p0"], counts["p5"])
        mix.bound_zen4_cycles = float(counts["ifma"])
        if mca:
            mix.mca = llvm_mca(body, mcpu)
        mixes.append(mix)
    return mixes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bits", default=",".join(map(str, DEFAULT_BITS)),
                        help="comma-separated modulus widths (256..4096)")
    parser.add_argument("--library", type=Path, help="the extension module (default: the one Python imports)")
    parser.add_argument("--mca", action="store_true", help="also run llvm-mca on each loop")
    parser.add_argument("--mcpu", default="sapphirerapids", help="llvm-mca's -mcpu (default sapphirerapids)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    try:
        bits_list = [int(b) for b in args.bits.split(",") if b.strip()]
    except ValueError:
        parser.error(f"--bits: not a list of integers: {args.bits!r}")
    if not bits_list or any(not 256 <= b <= 4096 for b in bits_list):
        parser.error("--bits: every width must be in 256..4096")
    library = args.library
    if library is None:
        from modforge import _native
        library = Path(_native.__file__)
    if not library.is_file():
        parser.error(f"--library: no such file: {library}")
    mixes = analyse(library, bits_list, args.mca, args.mcpu)
    if args.json:
        print(json.dumps({"library": str(library), "loops": [asdict(m) for m in mixes]}, indent=2))
        return 0
    print(f"{library}")
    print("| bits | L | IFMA | other p0/p5 (p0 only, p5 only) | p0/p5 total | loads | stores | bound "
          "(ports 0/5) | bound (Zen 4) |" + (" llvm-mca cycles | llvm-mca busiest ports |" if args.mca else ""))
    print("|---|---|---|---|---|---|---|---|---|" + ("---|---|" if args.mca else ""))
    for m in mixes:
        c = m.counts
        other = c["p05"] + c["p0"] + c["p5"]
        row = (f"| {m.bits} | {m.digits} | {c['ifma']} | {other} ({c['p0']}, {c['p5']}) | {m.port05} "
               f"| {c['load']} | {c['store']} | {m.bound_cycles:g} cycles | {m.bound_zen4_cycles:g} cycles |")
        if args.mca:
            if m.mca is None:
                row += " (llvm-mca not found) | |"
            else:
                ports = ", ".join(f"{k.removeprefix('pressure_')} {v:g}" for k, v in m.mca.items()
                                  if k.startswith("pressure_"))
                row += f" {m.mca['cycles_per_iteration']:.1f} | {ports} |"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
