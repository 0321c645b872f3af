"""Batch signing: many files, one key, every core.

Inputs are files and directories (a directory contributes its regular files,
not recursively, skipping hidden files and existing ``*.sig`` files).  Each
signature goes next to its input as ``<name>.sig``, or into ``out_dir``, and
is written atomically by the process that made it.

The work runs in a pool of ``jobs`` processes (default: every core this
process may use).  Processes, not threads: the exponentiation loop holds the
GIL whichever kernel runs it.  The pool starts with ``spawn``, so no worker
inherits a forked copy of the caller's threads or locks; each receives the
key once, through its initializer.  ``jobs=1`` signs in this process.

Ctrl-C or SIGTERM cancels the files not yet started and lets the ones in hand finish; the pool's parent
checks for the signal between its calls into the pool (``modforge.interrupts``).
"""

from __future__ import annotations

import os
import signal
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..arith.base import ParameterError
from ..interrupts import DeferredInterrupts, completed
from .errors import RSAError
from .exp import DEFAULT_BLIND_BITS, resolve_backend
from .files import read_message, write_output
from .keys import RSAPrivateKey
from .schemes import SaltLength, check_sign_options, effective_hash_name, sign

SIG_SUFFIX = ".sig"
Progress = Callable[[int, int], None]   # (files done, files in all)


@dataclass(frozen=True)
class BatchItem:
    source: Path
    target: Path


@dataclass(frozen=True)
class BatchResult:
    source: Path
    target: Path
    ok: bool
    error: str | None = None
    fault: bool = False          # the private-key result failed its public-exponent check


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def collect_inputs(paths: Sequence[str | Path]) -> list[Path]:
    """Expand directories into their files; keep the given order, drop duplicates."""
    if not paths:
        raise ParameterError("batch", "no input given")
    out: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.iterdir()
                           if p.is_file() and not p.name.startswith(".") and not p.name.endswith(SIG_SUFFIX))
            if not found:
                raise ParameterError("batch", f"no input files in directory {str(path)!r}")
        elif path.is_file():
            found = [path]
        else:
            raise ParameterError("batch", f"{str(path)!r} is not a file or directory")
        for p in found:
            key = p.resolve()
            if key not in seen:
                seen.add(key)
                out.append(p)
    return out


def plan(inputs: Sequence[Path], out_dir: str | Path | None = None,
         protected: dict[str, str | Path | None] | None = None, overwrite: bool = True) -> list[BatchItem]:
    """Where each signature goes, every target checked before any work: two inputs may not share one, a
    target must be a regular file or new (not a link, a directory or a device) and none of the files the
    command reads (``protected``: option name -> path, such as the key: ``k.sig`` as a key and ``k`` as an
    input would otherwise replace the key with a signature); with ``overwrite=False`` it must not exist."""
    from ..fileio import check_output_path, same_file

    if out_dir is not None:
        out_dir = Path(out_dir)
        if not out_dir.is_dir():
            raise ParameterError("out_dir", f"{str(out_dir)!r} is not a directory")
    items: list[BatchItem] = []
    targets: dict[Path, Path] = {}
    sources = {source.resolve(): source for source in inputs}
    for source in inputs:
        target = (out_dir / (source.name + SIG_SUFFIX)) if out_dir is not None else \
            source.with_name(source.name + SIG_SUFFIX)
        resolved = target.resolve()
        if resolved in targets:
            raise ParameterError("out_dir", f"{str(targets[resolved])!r} and {str(source)!r} would both write "
                                            f"{str(target)!r}")
        if resolved in sources:
            # Signing it would rewrite another input before (or after) it is read: a.sig among the inputs.
            raise ParameterError("batch", f"{str(target)!r}, the signature of {str(source)!r}, is also an input; "
                                          f"leave the .sig files out")
        check_output_path(target, "batch")
        for name, path in (protected or {}).items():
            if path is not None and same_file(target, path):
                raise ParameterError("batch", f"{str(target)!r}, the signature of {str(source)!r}, is the file "
                                              f"given as --{name}")
        check_output_path(target, "batch", overwrite=overwrite)
        targets[resolved] = source
        items.append(BatchItem(source, target))
    return items


# Worker state, set once per process by _init.
_WORKER: dict = {}


def _init(key: RSAPrivateKey, options: dict) -> None:
    _WORKER["key"] = key
    _WORKER["options"] = options


def _init_worker(key: RSAPrivateKey, options: dict) -> None:
    # A terminal's Ctrl-C reaches the whole process group: the parent decides (it cancels the queue and
    # lets the files in hand finish), so a worker does not die half way through one.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _init(key, options)


def _sign_one(source: Path, target: Path) -> tuple[bool, str | None, bool]:
    key, options = _WORKER["key"], dict(_WORKER["options"])
    overwrite = options.pop("overwrite", True)
    try:
        message = read_message(source, options["scheme"], options["hash_name"])
        write_output(target, sign(key, message, **options), "out", overwrite=overwrite)
    except ParameterError as exc:
        return False, str(exc), False
    except RSAError as exc:
        return False, str(exc), True
    except (OSError, MemoryError) as exc:      # one file's trouble does not stop the others
        return False, f"{type(exc).__name__}: {exc}", False
    return True, None, False


def sign_batch(key: RSAPrivateKey, items: Sequence[BatchItem], scheme: str, hash_name: str | None = None, *,
               salt_length: SaltLength = None, backend: str = "auto", blind_bits: int = DEFAULT_BLIND_BITS,
               jobs: int | None = None, progress: Progress | None = None,
               mgf1_hash: str | None = None, overwrite: bool = True) -> list[BatchResult]:
    """Sign every item (results in input order); a failed item does not stop the others.  With
    ``overwrite=False`` a signature file that appeared since :func:`plan` is not replaced."""
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ParameterError("jobs", f"must be at least 1, got {jobs}")
    # Bad options fail here, once, not in every worker.
    check_sign_options(key, scheme, hash_name, salt_length, mgf1_hash)
    hash_name = effective_hash_name(key, scheme, hash_name)
    options = {"scheme": scheme, "hash_name": hash_name, "salt_length": salt_length, "backend": backend,
               "blind_bits": blind_bits, "mgf1_hash": mgf1_hash, "overwrite": overwrite}
    resolve_backend(backend)

    total = len(items)
    results: list[BatchResult | None] = [None] * total
    done = 0
    if progress:
        progress(0, total)

    def record(i: int, outcome: tuple[bool, str | None, bool]) -> None:
        nonlocal done
        ok, error, fault = outcome
        results[i] = BatchResult(items[i].source, items[i].target, ok, error, fault)
        done += 1
        if progress:
            progress(done, total)

    jobs = min(jobs, max(total, 1))
    if jobs == 1:
        _init(key, options)
        try:
            for i, item in enumerate(items):
                record(i, _sign_one(item.source, item.target))
        finally:
            _WORKER.clear()
        return [r for r in results if r is not None]

    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    # Ctrl-C / SIGTERM are checked between the pool's calls, never raised inside them (a lock they hold
    # would stay held and the shutdown below would wait for ever): ``modforge.interrupts``.
    with DeferredInterrupts() as interrupts:
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                                   initargs=(key, options))
        pending: dict[Future, int] = {}
        try:
            for i, item in enumerate(items):
                interrupts.check()
                pending[pool.submit(_sign_one, item.source, item.target)] = i
            for fut in completed(list(pending)):
                record(pending.pop(fut), fut.result())
        except BaseException as exc:
            # The queued files are cancelled; the ones being signed finish (milliseconds each, written
            # atomically), so no worker is killed half way through a file.
            pool.shutdown(wait=True, cancel_futures=True)
            if interrupts.requested is not None and not isinstance(exc, KeyboardInterrupt):
                # A SIGTERM to the whole process group also ended the workers: still an interrupt.
                raise KeyboardInterrupt from exc
            raise
        pool.shutdown(wait=True)
    return [r for r in results if r is not None]
