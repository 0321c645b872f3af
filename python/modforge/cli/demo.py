"""``modforge demo``: the main job on built-in defaults, and a tour of the models.

The main job is what a time-lock or VDF operator does, through the same
commands they would type: create a 2048-bit puzzle of about 20 seconds on
this machine, solve it with the progress bar, evaluate the same statement as
a VDF with a Wesolowski proof and verify it, then measure our squaring speed
next to GMP's and OpenSSL's.  ``modforge demo --models`` is the tour of the
bit-exact models instead.
"""

from __future__ import annotations

import json
import random
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table


def _modforge(console: Console, *args: str) -> None:
    """Run one `modforge` command as a user would, showing it first; what it prints is what the user sees
    (no --json read behind the scenes: the command shown is the output shown)."""
    shown = " ".join(shlex.quote(a if len(a) <= 40 else a[:18] + "..." + a[-6:]) for a in args)
    console.print(f"\n[bold cyan]$ modforge {shown}[/bold cyan]", highlight=False)
    cmd = [sys.executable, "-m", "modforge.cli.main", *args]
    proc = subprocess.run(cmd, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"modforge demo: `modforge {' '.join(args)}` exited {proc.returncode}")


def run_main_job(seconds: str = "20s", bits: int = 2048) -> int:
    console = Console()
    console.print(f"[bold]modforge demo[/bold]: a {bits}-bit time-lock puzzle of about {seconds} on this machine, "
                  "solved, proved as a VDF, verified, and our speed next to GMP's and OpenSSL's.")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="modforge-demo-") as tmp:
        work = Path(tmp)
        puzzle = work / "puzzle.json"
        message = "modforge: repeated squaring, checked and proved"
        _modforge(console, "timelock", "create", "--bits", str(bits), "--duration", seconds,
                  "--message", message, "--out", str(puzzle))
        doc = json.loads(puzzle.read_text())
        payload = work / "payload.txt"
        _modforge(console, "timelock", "solve", str(puzzle), "--checkpoint-dir", str(work / "checkpoints"),
                  "--output", str(payload))
        ok = payload.read_bytes() == message.encode()
        proof = work / "proof.json"
        statement = ["--modulus", doc["n"], "--x", "hash:modforge demo", "--t", str(int(doc["t"], 0))]
        _modforge(console, "vdf", "eval", *statement, "--proof", "pietrzak", "--out", str(proof), "--progress")
        # The verifier pins the statement it expects: a proof file alone names the prover's choice of N.
        _modforge(console, "vdf", "verify", str(proof), *statement)
        # Its own tables and notices (each skipped implementation once), as `bench vdf` prints them.
        _modforge(console, "bench", "vdf", "--bits", "1024,2048", "--repeats", "3")
    console.print(f"\ndemo finished in {time.perf_counter() - started:.0f} s: "
                  f"{'payload recovered, proof verified' if ok else 'PAYLOAD MISMATCH'}")
    return 0 if ok else 1


def run_model_tour(seed: int = 2026) -> int:
    """Run every registered model on the VDF Alliance modulus; return the exit code."""
    from ..arith.registry import all_algorithms
    from ..data import known_puzzles, vdf_alliance_modulus

    console = Console()
    modulus = vdf_alliance_modulus()
    rng = random.Random(seed)
    console.print(f"[bold]modforge demo --models[/bold]: every model on the 1024-bit VDF Alliance modulus, "
                  f"checked against Python's a*b % m (seed {seed})")
    toy = known_puzzles()["lcs35_toy"]
    toy_n, toy_t = int(toy["n"]), int(toy["t"])
    algos = all_algorithms()
    rows = []
    failures = 0
    cases = 8
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("models", total=len(algos))
        for info in algos:
            model = info.build(modulus)
            started = time.perf_counter()
            ok = True
            redundant = False
            for i in range(cases):
                a, b = (modulus - 1, modulus - 1) if i == 0 else (rng.randrange(modulus), rng.randrange(modulus))
                out = model.modmul(a, b)
                ok &= out.result == a * b % modulus and out.raw < model.redundant_bound
                redundant |= out.raw != out.result
            elapsed = (time.perf_counter() - started) / cases
            # The LCS35 worked example: 2 squared 10 times modulo 253 is 71.
            toy_model = info.build(toy_n)
            x = 2
            for _ in range(toy_t):
                x = toy_model.modmul(x, x).result
            ok &= x == 71
            failures += not ok
            cost = model.cost()
            rows.append((info.name, "yes" if ok else "NO", "redundant" if redundant else "canonical",
                         f"{cost.word_products}", f"{cost.table_count}" if cost.table_count else "-",
                         f"{elapsed * 1e3:.2f}", str(x)))
            progress.advance(task)

    hybrid = next(a for a in algos if a.name == "hybrid")
    h2048 = hybrid.build((1 << 2047) | rng.getrandbits(2047) | 1, steps=3, beta=9).cost().as_dict()
    console.print(f"Intel hybrid reduction, n = 2048, 3 steps, beta = 9: stage widths {h2048['fold_widths']}, "
                  f"{h2048['table_count']} tables, P_coarse {h2048['coarse_bits']} bits, gamma {h2048['gamma']} "
                  "(paper Sec. V: 4096, 3073, 2562, 2306; 29; 2053; 5)")

    table = Table(title="summary: 1024-bit modular multiplication, every model")
    for col in ("algorithm", "oracle", "output", "products", "tables", "ms/op", "toy"):
        table.add_column(col, no_wrap=True)
    for row in rows:
        table.add_row(*row)
    console.print(table)
    console.print(f"{len(rows) - failures} of {len(rows)} models agree with the oracle on {cases} products "
                  "and give 71 on the LCS35 toy (n = 253, t = 10).")
    return 0 if failures == 0 else 1
