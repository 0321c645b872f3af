"""``modforge cache list|clean``: what modforge keeps on disk between runs, and removing it on request."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from ..arith.base import ParameterError
from .main import ErrorExitGroup

EXIT_PARTLY_FAILED = 1


@click.group(cls=ErrorExitGroup)
def cache() -> None:
    """What modforge keeps between runs ($XDG_CACHE_HOME/modforge): list it, clean it.

    Cleanable: timelock and vdf (the state of stopped runs: cleaning loses their progress) and tuning
    (remeasured when missing). Listed only: anchors, hw, rsa-keys, results.
    """


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n} B"


def _age(seconds: float) -> str:
    from ..timelock.durations import format_duration
    return format_duration(max(0.0, seconds))


def _areas(names: tuple[str, ...], allowed: tuple[str, ...]) -> tuple[str, ...]:
    """The areas named (``all``: every allowed one), in the order given; ParameterError for any other name."""
    unknown = [n for n in names if n not in allowed and n != "all"]
    if unknown:
        raise ParameterError("area", f"{unknown[0]!r} is not an area this command takes: choose from "
                                     f"{', '.join(allowed)} or all")
    if not names or "all" in names:
        return allowed
    return tuple(dict.fromkeys(names))


def _complete_listed(ctx, param, incomplete: str) -> list[str]:
    from ..cache import AREAS
    return [a for a in AREAS + ("all",) if a.startswith(incomplete)]


def _complete_cleanable(ctx, param, incomplete: str) -> list[str]:
    from ..cache import CLEANABLE_AREAS
    return [a for a in CLEANABLE_AREAS + ("all",) if a.startswith(incomplete)]


def _collect(areas: tuple[str, ...], allowed: tuple[str, ...], directory: str | None,
             errors: list[tuple[str, str]]):
    """(where, items): the cache's AREAS, or with --dir the runs' state in that directory."""
    from ..cache import DIR_AREA, cache_root, scan, scan_directory

    if directory is None:
        # scan's own default, not root: the areas with their own setting (hw, anchors, rsa-keys) are found
        # where that setting puts them (passing the root listed no hardware build at all).
        return cache_root(), scan(None, _areas(areas, allowed), errors)
    if areas:
        raise ParameterError("dir", "give either AREA... or --dir DIR, not both")
    path = Path(directory)
    if not path.is_dir():
        raise ParameterError("dir", f"{directory!r} is not a directory")
    try:
        return path, scan_directory(path)
    except OSError as exc:
        errors.append((DIR_AREA, exc.strerror or str(exc)))
        return path, []


def _report_unreadable(errors: list[tuple[str, str]], root: Path) -> None:
    from ..cache import DIR_AREA

    for area, reason in errors:
        where = str(root) if area == DIR_AREA else f"the {area} area"
        click.echo(f"modforge: cannot read {where}: {reason}", err=True)


@cache.command("list")
@click.argument("areas", nargs=-1, shell_complete=_complete_listed)
@click.option("--items", "every_item", is_flag=True,
              help="One line per item in every area (default: per item in timelock and vdf, per area elsewhere).")
@click.option("--dir", "directory", type=click.Path(file_okay=False),
              help="Instead of the cache: the runs' state in DIR (a --checkpoint-dir, --resume-dir, or the "
                   "PUZZLE.checkpoints beside a puzzle file).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (every item).")
def list_cmd(areas: tuple[str, ...], every_item: bool, directory: str | None, as_json: bool) -> None:
    """List what is kept in AREA... (default all): each resumable run's state, and the other areas' sizes."""
    from ..cache import AREAS

    errors: list[tuple[str, str]] = []
    root, items = _collect(areas, AREAS, directory, errors)
    _report_unreadable(errors, root)
    if as_json:
        click.echo(json.dumps({"root": str(root), "items": [i.as_dict() for i in items],
                               "bytes": sum(i.size for i in items),
                               "unreadable": [{"area": a, "error": e} for a, e in errors]}, indent=1))
    elif not items:
        click.echo(f"nothing kept under {root}")
    else:
        _print_table(root, items, every_item)
    if errors:
        raise click.exceptions.Exit(EXIT_PARTLY_FAILED)


def _print_table(root, items, every_item: bool) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ..cache import CLEANABLE_AREAS, DIR_AREA, STATE_AREAS

    now = time.time()
    rows: list[tuple[str, str, int, int, float, str]] = []
    summaries: dict[str, list] = {}
    for item in items:
        if every_item or item.area in STATE_AREAS + (DIR_AREA,):
            rows.append((item.area, item.name, len(item.paths), item.size, item.modified,
                         "; ".join(part for part in ("in use" if item.in_use else "", item.detail) if part)))
        else:
            summary = summaries.setdefault(item.area, [item.area, "", 0, 0, 0.0, 0])
            summary[2] += len(item.paths)
            summary[3] += item.size
            summary[4] = max(summary[4], item.modified)
            summary[5] += 1
    for area, _, files, size, modified, count in summaries.values():
        rows.append((area, f"({count} item{'s' * (count != 1)})", files, size, modified, ""))
    table = Table(title=escape(str(root)), title_justify="left")
    for column, justify in (("area", "left"), ("item", "left"), ("files", "right"), ("size", "right"),
                            ("age", "right"), ("state", "left")):
        table.add_column(column, justify=justify, no_wrap=column in ("area", "files", "size", "age"),
                         overflow="fold")
    for area, name, files, size, modified, state in rows:
        table.add_row(area, escape(name), str(files), _size(size), _age(now - modified), escape(state))
    console = Console()
    console.print(table)
    target = f"--dir {root}" if items[0].area == DIR_AREA else "|".join(CLEANABLE_AREAS)
    console.print(f"{len(items)} item{'s' * (len(items) != 1)}, {_size(sum(i.size for i in items))}. "
                  f"`modforge cache clean {target} --older-than 30d` removes those not changed for 30 days.",
                  highlight=False, markup=False)


@cache.command("clean")
@click.argument("areas", nargs=-1, shell_complete=_complete_cleanable)
@click.option("--dir", "directory", type=click.Path(file_okay=False),
              help="Instead of the cache: the runs' state in DIR (other files there are never touched).")
@click.option("--older-than", "older_text", help="Only items not changed for this long: 30d, 12h, 90m.")
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def clean_cmd(areas: tuple[str, ...], directory: str | None, older_text: str | None, dry_run: bool,
              as_json: bool) -> None:
    """Remove what is kept in AREA... (timelock, vdf, tuning; `all` for the three), or in --dir DIR.

    Cleaning timelock or vdf loses the progress of the runs whose state is removed: a rerun starts from
    the beginning. Runs going on are left alone. Exit 1 if something could not be removed.
    """
    from ..cache import CLEANABLE_AREAS, remove
    from ..timelock.durations import parse_duration

    if not areas and directory is None:
        raise ParameterError("area", f"name what to clean: {', '.join(CLEANABLE_AREAS)}, all, or --dir DIR")
    min_age = parse_duration(older_text, "older-than") if older_text is not None else None
    errors: list[tuple[str, str]] = []
    root, found = _collect(areas, CLEANABLE_AREAS, directory, errors)
    now = time.time()
    removed, skipped, failed = [], [], []
    for item in found:
        if min_age is not None and now - item.modified < min_age:
            continue
        if item.in_use:
            skipped.append(item)
            continue
        if dry_run:
            removed.append(item)
            continue
        try:
            if remove(item, min_age):
                removed.append(item)
            elif item.in_use:
                skipped.append(item)
        except OSError as exc:
            failed.append((item, exc.strerror or str(exc)))
    _report_unreadable(errors, root)
    verb = "would remove" if dry_run else "removed"
    if as_json:
        click.echo(json.dumps({"root": str(root), "dry_run": dry_run,
                               "removed": [i.as_dict() for i in removed],
                               "skipped_in_use": [i.as_dict() for i in skipped],
                               "failed": [dict(i.as_dict(), error=e) for i, e in failed],
                               "unreadable": [{"area": a, "error": e} for a, e in errors],
                               "bytes": sum(i.size for i in removed)}, indent=1))
    else:
        for item in removed:
            files = len(item.paths)
            click.echo(f"{verb:<12} {item.area}/{item.name} ({files} file{'s' * (files != 1)}, {_size(item.size)})"
                       + (f": {item.detail}" if item.detail else ""))
        for item in skipped:
            click.echo(f"{'in use':<12} {item.area}/{item.name}: left alone")
        for item, error in failed:
            click.echo(f"modforge: cannot remove {item.area}/{item.name}: {error}", err=True)
        click.echo(f"{verb} {len(removed)} item{'s' * (len(removed) != 1)}, "
                   f"{_size(sum(i.size for i in removed))} under {root}"
                   + (f"; {len(skipped)} in use" if skipped else ""))
    if failed or errors:
        raise click.exceptions.Exit(EXIT_PARTLY_FAILED)
