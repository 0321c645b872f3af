"""Printing a ``bench vdf`` document: one rich table per width, or JSON."""

from __future__ import annotations

import json
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table


# Ratios keep three decimals; ns figures one.
RATIO_KEYS = ("rel_range", "ratio_vs_best_anchor", "paired_ratio_vs_best_anchor", "paired_ratio_range",
              "cpu_over_wall")


def _round(value: Any, digits: int = 1) -> Any:
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: _round(v, 3 if k in RATIO_KEYS else digits) for k, v in value.items()}
    if isinstance(value, list):
        return [_round(v, digits) for v in value]
    return value


def to_json(doc: dict) -> str:
    """Medians and spreads to 0.1 ns, ratios to 3 decimals."""
    out = dict(doc)
    out["results"] = [
        {k: _round(v, 3 if k in RATIO_KEYS else 1) for k, v in row.items()} for row in doc["results"]]
    return json.dumps(out, indent=1)


def _clock(doc: dict) -> str:
    return "thread CPU time" if doc["params"].get("clock", "cpu") == "cpu" else "wall time"


def _load(doc: dict) -> str:
    load = doc.get("load_average") or {}
    if load.get("start") is None:
        return ""
    return f"; load average {load['start']} -> {load['end']}"


def _ns(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def print_tables(doc: dict, console: Console | None = None) -> None:
    console = console or Console()
    m = doc["machine"]
    console.print(f"[bold]modforge bench vdf[/bold]  {doc['date']}  commit {(doc.get('commit') or '?')[:12]}")
    console.print(f"{m['cpu_model']} ({m.get('cpu_family_model_stepping')}), {m['logical_cpus']} logical CPUs, "
                  f"flags: {' '.join(m['flags_of_interest']) or '-'}; {m['kernel']}; "
                  + (f"pinned to CPU {doc['pinned_cpu']}" if doc.get("pinned_cpu") is not None else "not pinned")
                  + _load(doc))
    p = doc["params"]
    console.print(f"{p['repeats']} round-robin repeats, ~{p['seconds']} s per run; ns by {_clock(doc)}; every "
                  "result checked against gmpy2; ours in bold; speed-up = best anchor's median / this median; "
                  "paired = median over rounds of the anchor's run / this run in the same round")
    for w in doc["widths"]:
        bits = w["bits"]
        rows = sorted((r for r in doc["results"] if r["bits"] == bits), key=lambda r: r["ns_per_sqr_median"])
        ref = w.get("best_anchor")
        # Narrow enough for 80 columns: a light box, a long name folds onto a second line rather than being
        # cut, and the paired ratio's range sits under it.
        table = Table(title=f"{bits} bits ({w['modulus_source']}): ns per modular squaring, "
                            f"speed-up vs {ref or 'n/a'}", title_justify="left", box=box.SIMPLE_HEAD)
        table.add_column("implementation", overflow="fold")
        table.add_column("median", justify="right")
        table.add_column("min - max", justify="right")
        table.add_column("IQR", justify="right")
        table.add_column("speed-up", justify="right")
        table.add_column("paired (range)", justify="right")
        for r in rows:
            s = r["spread"]
            ratio = r.get("ratio_vs_best_anchor")
            iqr = (s["q3"] - s["q1"]) / r["ns_per_sqr_median"] * 100
            style = "bold" if r["kind"] == "ours" else None
            table.add_row(r["impl"], _ns(r["ns_per_sqr_median"]), f"{_ns(s['min'])} - {_ns(s['max'])}",
                          f"{iqr:.1f}%", f"{ratio:.2f}x" if ratio is not None else "-", _paired_stacked(r), style=style)
        console.print(table)
    print_notices(doc, console)


def _paired(row: dict) -> str:
    """The paired speed-up and its range over the rounds, or '-'."""
    paired, span = row.get("paired_ratio_vs_best_anchor"), row.get("paired_ratio_range")
    if paired is None or not span:
        return "-"
    return f"{paired:.2f}x ({span[0]:.2f}-{span[1]:.2f})"


def _paired_stacked(row: dict) -> str:
    """:func:`_paired` on two lines (the terminal table's column stays narrow)."""
    text = _paired(row)
    return text.replace(" (", "\n(") if text != "-" else text


def print_notices(doc: dict, console: Console) -> None:
    for s in doc["skipped"]:
        where = f" at {s['bits']} bits" if "bits" in s else ""
        console.print(f"[yellow]skipped[/yellow] {s['impl']}{where}: {s['why']}", highlight=False)
    for w in doc.get("warnings", []):
        console.print(f"[yellow]warning[/yellow] {w['impl']} at {w['bits']} bits: {w['why']}", highlight=False)
    for e in doc["errors"]:
        console.print(f"[bold red]WRONG RESULT[/bold red] {e['why']}", highlight=False)


def to_markdown(doc: dict) -> str:
    """The figures as Markdown tables (for docs/benchmarks.md)."""
    m = doc["machine"]
    p = doc["params"]
    lines = [f"Measured {doc['date']} at commit `{(doc.get('commit') or '?')[:12]}` on {m['cpu_model']} "
             f"(family/model/stepping {m.get('cpu_family_model_stepping')}, {m['logical_cpus']} logical CPUs, "
             f"{', '.join(m['flags_of_interest']) or 'no flags of interest'}), {m['kernel']}, {m['python']}, "
             f"{m.get('compiler') or 'no C compiler'}; pinned to CPU {doc.get('pinned_cpu')}; "
             f"{p['repeats']} round-robin repeats of ~{p['seconds']} s per implementation and width{_load(doc)}; "
             f"ns by {_clock(doc)}.", ""]
    other = "wall" if p.get("clock", "cpu") == "cpu" else "cpu"
    for w in doc["widths"]:
        bits = w["bits"]
        rows = sorted((r for r in doc["results"] if r["bits"] == bits), key=lambda r: r["ns_per_sqr_median"])
        lines += [f"**{bits} bits** ({w['modulus_source']}); speed-up relative to {w.get('best_anchor') or 'n/a'}", "",
                  f"| implementation | kind | median ns/sqr | min - max | IQR | speed-up | paired (range) "
                  f"| median {other} |",
                  "|---|---|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            s = r["spread"]
            ratio = r.get("ratio_vs_best_anchor")
            iqr = (s["q3"] - s["q1"]) / r["ns_per_sqr_median"] * 100
            name = f"**{r['impl']}**" if r["kind"] == "ours" else r["impl"]
            lines.append(f"| {name} | {r['kind']} | {_ns(r['ns_per_sqr_median'])} | {_ns(s['min'])} - {_ns(s['max'])} "
                         f"| {iqr:.1f}% | {f'{ratio:.2f}x' if ratio is not None else '-'} | {_paired(r)} "
                         f"| {_ns(r[f'{other}_ns_per_sqr_median'])} |")
        lines.append("")
    for s in doc["skipped"]:
        where = f" at {s['bits']} bits" if "bits" in s else ""
        lines.append(f"* skipped {s['impl']}{where}: {s['why']}")
    for w in doc.get("warnings", []):
        lines.append(f"* warning: {w['impl']} at {w['bits']} bits: {w['why']}")
    return "\n".join(lines).rstrip() + "\n"
