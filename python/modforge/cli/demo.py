"""``modforge demo``: a short tour of the models on built-in defaults."""

from __future__ import annotations

import random
import time

from rich.console import Console
from rich.progress import Progress
from rich.table import Table


def run_demo(seed: int = 2026) -> int:
    """Run every registered model on the VDF Alliance modulus; return the exit code."""
    from ..arith.registry import all_algorithms
    from ..data import known_puzzles, vdf_alliance_modulus

    console = Console()
    modulus = vdf_alliance_modulus()
    rng = random.Random(seed)
    console.print(f"[bold]modforge demo[/bold]: every model on the 1024-bit VDF Alliance modulus, "
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
            toy_ok = x == 71
            ok &= toy_ok
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
