"""``hw explore --cluster ADDRESS``: the sweep's points as tasks on an existing Dask scheduler.

Why Dask (``distributed``) rather than Ray: a sweep is a flat bag of independent Python calls of
seconds to hours, returning small dicts; Dask's scheduler and workers are two pip-installed commands
(``dask scheduler``, ``dask worker ADDRESS``) that need no cluster manager, and it reruns the tasks
of a lost worker on the others by itself.  Ray brings a much larger runtime for features a sweep
does not use.

* Each point is one task, keyed by its parameters (:func:`task_key`), so that a rerun or a second
  client asks for the same work.
* Before anything is sent every worker is asked what it lacks
  (:func:`modforge.hw.synth.worker_problem`): Yosys for
  synthesis, Amaranth for any generation.  A worker that lacks what the sweep's method needs is
  named in a warning and left out; no usable worker at all is an error.
* A worker that dies mid-sweep costs its tasks only: the scheduler sends them to the others.
* ``hw report --cluster`` sends a hierarchical report's batches of pieces the same way
  (:func:`map_batches`), to the workers that have Yosys.
* Rows come back as they finish; :mod:`modforge.hw.explore` caches each one on the client by
  the design parameters, so a stopped sweep resumes where it was.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..arith.base import ParameterError

# What each sweep method needs on a worker.
NEEDS = {"yosys": ("amaranth", "yosys"), "estimate": ("amaranth",)}


def connect(address: str, timeout: float = 15) -> Any:
    """A client of the scheduler at ``address``; an unreachable one is a ``--cluster`` error."""
    try:
        from distributed import Client
    except ImportError:
        raise ParameterError("cluster", "needs Dask: pip install 'modforge[cluster]' (dask[distributed])") from None
    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ParameterError("cluster", f"no Dask scheduler answers at {address!r} ({type(exc).__name__}: "
                                        f"{str(exc)[:200]})") from None


def usable_workers(problems: dict[str, dict[str, str]], method: str) -> tuple[list[str], dict[str, str]]:
    """(workers that can run ``method``, worker -> why not), from :func:`modforge.hw.synth.worker_problem` per worker."""
    need = NEEDS[method]
    good, bad = [], {}
    for worker, missing in sorted(problems.items()):
        lacking = [part for part in need if part in missing]
        if lacking:
            bad[worker] = "; ".join(missing[p] for p in lacking)
        else:
            good.append(worker)
    return good, bad


def task_key(point: Any, target: str, method: str) -> str:
    options = f"-{point.options_text()}" if getattr(point, "options", ()) else ""
    return f"modforge-explore-{point.arch}-{point.bits}-{point.word_bits}{options}-{target}-{method}"


def usable(client: Any, method: str, warn: Callable[[str], None], probe: Callable[[], dict[str, str]]) -> list[str]:
    """The workers that can run ``method`` (``probe`` run on each says what it lacks,
    :func:`modforge.hw.synth.worker_problem`); the others named through ``warn``; none is a ``--cluster`` error."""
    problems = client.run(probe)
    good, bad = usable_workers(problems, method)
    for worker, why in bad.items():
        warn(f"worker {worker} cannot run the hardware flow ({why}); its share goes to the others")
    for worker, missing in problems.items():
        extra = [why for part, why in missing.items() if part not in NEEDS[method]]
        if extra and worker not in bad:
            warn(f"worker {worker} lacks {'; '.join(extra)} (not needed for --method {method})")
    if not good:
        raise ParameterError("cluster", f"none of the {len(problems)} worker(s) can run the hardware flow: "
                                        + "; ".join(f"{w}: {why}" for w, why in bad.items()))
    return good


def run(client: Any, points: Iterable[Any], task: Callable[..., dict[str, Any]], target: str, method: str,
        done: Callable[[Any, dict[str, Any]], None], warn: Callable[[str], None],
        probe: Callable[[], dict[str, str]]) -> None:
    """``task(point, target, method)`` for every point on the cluster's usable workers; ``done(point, row)`` as
    each row arrives."""
    from distributed import as_completed

    points = list(points)
    if not points:
        return
    good = usable(client, method, warn, probe)
    futures = {client.submit(task, p, target, method, key=task_key(p, target, method), workers=good,
                             allow_other_workers=False, pure=False): p for p in points}
    try:
        for fut in as_completed(futures):
            done(futures[fut], fut.result())
    finally:
        for fut in futures:
            fut.release()


def map_batches(address: str, fn: Callable[[Any], dict[str, Any]], items: list[Any],
                done: Callable[[dict[str, Any]], None], probe: Callable[[], dict[str, str]],
                warn: Callable[[str], None] | None = None) -> None:
    """``fn`` over ``items`` on the workers that have Yosys (``hw report``'s batches of pieces), ``done`` per
    result as it arrives."""
    from distributed import as_completed

    client = connect(address)
    try:
        good = usable(client, "yosys", warn or (lambda msg: None), probe)
        futures = [client.submit(fn, item, workers=good, allow_other_workers=False, pure=False) for item in items]
        for fut in as_completed(futures):
            done(fut.result())
    finally:
        client.close()


__all__ = ["NEEDS", "connect", "usable_workers", "usable", "task_key", "run", "map_batches"]
