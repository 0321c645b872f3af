"""Creating a puzzle: key generation, calibration, the trapdoor, encryption.

The creator knows ``phi(N) = (p-1)(q-1)`` and so computes
``w = x^(2^t mod phi(N)) mod N`` with two short exponentiations, while a solver
without the factors must do ``t`` sequential squarings.  The primes live only
in memory (Python cannot wipe integers; they are dropped as soon as the key is
computed) unless the caller asks for a trapdoor file.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import gmpy2

from ..arith.base import ParameterError, require_seconds
from ..engine.tuning import cpu_name
from ..fileio import check_output_path, commit_staged, discard_staged, output_errors, stage_file
from ..inttext import brief
from .puzzle import MAX_PAYLOAD, MAX_T, PuzzleFile, SquaringTask, seal, trapdoor_document, trapdoor_solution

MIN_BITS = 256
MAX_BITS = 16384


# The odd primes below 2^16: one gcd with their product drops most composite candidates before a costlier test.
_SMALL_ODD_PRIMES = int(gmpy2.primorial(1 << 16)) // 2
# Miller-Rabin rounds with random bases after the strong BPSW test: what GMP's mpz_probab_prime_p(n, 30),
# which this search replaced, does after its BPSW test.
RANDOM_BASE_ROUNDS = 6


def _random_prime(bits: int) -> int:
    """A random prime of exactly ``bits`` bits with its top two bits set (so p*q has full width).

    Each test is its own gmpy2 call (a gcd, one Miller-Rabin round, the strong Lucas test), at most about a
    second at 8192 bits, so Ctrl-C and SIGTERM, whose handlers Python runs only between calls, stop the
    search within about that: ``gmpy2.next_prime`` searched in one call, which ran 18 s to two minutes for an
    8192-bit prime (a 16384-bit puzzle) with the signal waiting.  Candidates are drawn afresh each time, so
    every prime of the range is equally likely (a search upward from a random start favours those after
    long gaps)."""
    while True:
        c = gmpy2.mpz(secrets.randbits(bits) | (3 << (bits - 2)) | 1)
        if gmpy2.gcd(c, _SMALL_ODD_PRIMES) != 1 or not gmpy2.is_strong_prp(c, 2):
            continue
        # Base 2 passed: the strong Lucas (Selfridge) test completes the strong BPSW test, then random bases.
        if gmpy2.is_strong_selfridge_prp(c) and all(gmpy2.is_strong_prp(c, 3 + secrets.randbelow(int(c) - 4))
                                                     for _ in range(RANDOM_BASE_ROUNDS)):
            return int(c)


def generate_modulus(bits: int) -> tuple[int, int, int]:
    """(N, p, q) with N = p*q exactly ``bits`` bits, p != q random primes of about bits/2 bits."""
    if not MIN_BITS <= bits <= MAX_BITS:
        raise ParameterError("bits", f"must be between {MIN_BITS} and {MAX_BITS}, got {brief(bits)}")
    while True:
        p = _random_prime((bits + 1) // 2)
        q = _random_prime(bits // 2)
        n = p * q
        if p != q and n.bit_length() == bits:
            return n, p, q


def calibrate(n: int, backend: str = "auto", seconds: float = 0.5) -> dict[str, Any]:
    """Measure squarings per second of ``ModRing(n, backend).sqr_n`` on this machine."""
    from .check import measure_rate, open_ring

    ring = open_ring(n, backend)
    rate, k, s = measure_rate(ring, 3, seconds)
    return {"backend": ring.backend, "cpu": cpu_name(), "squarings_per_second": round(rate),
            "ns_per_squaring": round(1e9 / rate, 1), "sample_squarings": k, "sample_seconds": round(s, 4)}


def _second_name(path: Path) -> Path | None:
    """A hard link to ``path`` under a hidden name beside it, or None where links are not possible (the
    replacement then goes ahead without a way back, as a plain rename would)."""
    for _ in range(100):
        candidate = path.with_name(f".{path.name}.previous-{secrets.token_hex(4)}")
        try:
            os.link(path, candidate)
            return candidate
        except FileExistsError:
            continue
        except OSError:
            return None
    return None


def _restore(previous: Path | None, path: Path) -> None:
    """Put the file kept by :func:`_second_name` back in place (best effort: it stays under its second name
    if that fails, so nothing is lost)."""
    if previous is not None:
        try:
            os.replace(previous, path)
        except OSError:
            pass


@dataclass
class Created:
    puzzle: PuzzleFile
    path: Path
    trapdoor_path: Path | None
    estimated_seconds: float
    calibration: dict[str, Any]
    keygen_seconds: float
    trapdoor_seconds: float


def create_puzzle(bits: int, payload: bytes, out: str | Path, *, t: int | None = None,
                  duration: float | None = None, random_base: bool = False,
                  keep_trapdoor: str | Path | None = None, backend: str = "auto",
                  calibration_seconds: float | None = None, overwrite: bool = False) -> Created:
    """Create and write a puzzle that takes ``duration`` seconds (or exactly ``t`` squarings) to solve here.

    Every path is checked before the key is generated; existing files are replaced only with
    ``overwrite`` (a puzzle whose trapdoor was not kept cannot be made again).
    """
    if (t is None) == (duration is None):
        raise ParameterError("duration", "give exactly one of a duration or t")
    if t is not None and not 1 <= t <= MAX_T:
        raise ParameterError("t", f"must be between 1 and 2^64 - 1, got {brief(t)}")
    if duration is not None:
        duration = require_seconds("duration", duration)
    if len(payload) > MAX_PAYLOAD:
        raise ParameterError("message", f"payload is {len(payload)} bytes; at most {MAX_PAYLOAD} are supported")
    out = check_output_path(out, "out", overwrite)
    trapdoor_path = None
    if keep_trapdoor is not None:
        if os.fspath(keep_trapdoor) and Path(keep_trapdoor).resolve() == out.resolve():
            raise ParameterError("keep-trapdoor", "must not be the puzzle file itself")
        trapdoor_path = check_output_path(keep_trapdoor, "keep-trapdoor", overwrite)

    t0 = time.perf_counter()
    n, p, q = generate_modulus(bits)
    keygen_seconds = time.perf_counter() - t0

    cal = calibrate(n, backend, calibration_seconds if calibration_seconds is not None
                    else (0.5 if duration is not None else 0.1))
    if t is None:
        t = max(1, int(cal["squarings_per_second"] * duration))
        if t > MAX_T:
            raise ParameterError("duration", f"{duration:.3g} s is more than 2^64 - 1 squarings on this machine")
    cal["target_seconds"] = duration
    x = 2
    if random_base:
        while True:
            x = 2 + secrets.randbelow(n - 3)
            if gmpy2.gcd(x, n) == 1:
                break
    task = SquaringTask(n, x, t)

    t0 = time.perf_counter()
    phi = (p - 1) * (q - 1)
    w = int(gmpy2.powmod(x, gmpy2.powmod(2, t, phi), n))   # not constant-time: see docs/timelock.md
    if w != trapdoor_solution(task, p, q):                    # independent CRT route: guards key generation
        raise RuntimeError("trapdoor computations disagree (phi route vs CRT route)")
    trapdoor_seconds = time.perf_counter() - t0

    created = datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    puzzle = seal(n, x, t, w, payload, created, cal)
    del w
    # Both files are staged (written and synced beside their targets) before either is put in place, so
    # that a full disk or a failed write replaces nothing, not even an old trapdoor under --force.  Then
    # the trapdoor first, so that a puzzle never exists without the trapdoor asked for; if the puzzle
    # cannot be put in place, a trapdoor this call created is removed again (no orphaned secret).
    staged_trapdoor = None
    if trapdoor_path is not None:
        doc = trapdoor_document(puzzle, p, q)
        doc["created"] = created
        with output_errors(trapdoor_path, "keep-trapdoor"):
            staged_trapdoor = stage_file(trapdoor_path, (json.dumps(doc, indent=1) + "\n").encode(), mode=0o600)
    del p, q, phi
    try:
        with output_errors(out, "out"):
            staged_puzzle = stage_file(out, puzzle.to_json())
    except BaseException:
        if staged_trapdoor is not None:
            discard_staged(staged_trapdoor)
        raise
    trapdoor_new = False
    previous = None         # a second name for a trapdoor --force replaces, until its puzzle is replaced too
    try:
        if staged_trapdoor is not None:
            trapdoor_new = not trapdoor_path.exists()
            if not trapdoor_new:
                previous = _second_name(trapdoor_path)
            # Without overwrite, a file that appeared since the check is not replaced either.
            with output_errors(trapdoor_path, "keep-trapdoor"):
                commit_staged(staged_trapdoor, trapdoor_path, exclusive=not overwrite)
    except BaseException:
        discard_staged(staged_puzzle)
        _restore(previous, trapdoor_path)
        raise
    try:
        with output_errors(out, "out"):
            commit_staged(staged_puzzle, out, exclusive=not overwrite)
    except BaseException:
        if trapdoor_new:
            try:
                trapdoor_path.unlink()
            except OSError:
                pass
        # The old puzzle is still there: so is its trapdoor again (a kill -9 here leaves it under the
        # second name, ".NAME.previous-*", beside the new one).
        _restore(previous, trapdoor_path)
        raise
    if previous is not None:
        discard_staged(previous)
    puzzle = PuzzleFile(header=puzzle.header, ciphertext=puzzle.ciphertext, path=out)
    return Created(puzzle=puzzle, path=out, trapdoor_path=trapdoor_path,
                   estimated_seconds=t / cal["squarings_per_second"], calibration=cal,
                   keygen_seconds=keygen_seconds, trapdoor_seconds=trapdoor_seconds)
