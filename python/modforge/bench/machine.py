"""What a benchmark figure depends on: CPU, flags, kernel, toolchains, commit."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

# Instruction-set extensions that decide which of our kernels can run.
FLAGS_OF_INTEREST = ("bmi2", "adx", "avx2", "avx512f", "avx512dq", "avx512bw", "avx512vl",
                     "avx512ifma", "avx512vbmi", "avx512_vbmi2")


def _first_line(argv: list[str]) -> str | None:
    if shutil.which(argv[0]) is None:
        return None
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else None


def cpuinfo() -> dict:
    """The first processor's entry of /proc/cpuinfo (empty off Linux)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    info: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        info[key.strip()] = value.strip()
    return info


def machine_info(cc: str = "cc") -> dict:
    info = cpuinfo()
    flags = set(info.get("flags", "").split())
    try:
        affinity = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    import gmpy2

    return {
        "cpu_model": info.get("model name") or platform.processor() or platform.machine(),
        "cpu_family_model_stepping": "/".join(info.get(k, "?") for k in ("cpu family", "model", "stepping"))
        if info else None,
        "cpu_mhz": info.get("cpu MHz"),
        "flags_of_interest": [f for f in FLAGS_OF_INTEREST if f in flags],
        "flags_absent": [f for f in FLAGS_OF_INTEREST if f not in flags] if flags else None,
        "logical_cpus": os.cpu_count(),
        "affinity": affinity,
        "machine": platform.machine(),
        "kernel": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {sys.version.split()[0]}",
        "rustc": _first_line(["rustc", "--version"]),
        "compiler": _first_line([*cc.split()[:1], "--version"]),
        "gmpy2": f"{gmpy2.version()} ({gmpy2.mp_version()})",
    }


def git_commit(repo: Path | None = None) -> str | None:
    """HEAD of the source tree this package runs from, when it is a git checkout."""
    root = repo or Path(__file__).resolve().parents[3]
    if shutil.which("git") is None or not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None
