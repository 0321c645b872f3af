"""``sim:pam``: the two CRT exponentiations of an RSA private operation on the simulated pam-mpu.

Seed 004, Sec. 3.1 and 3.4: the host converts into and out of the CRT representation, and two
modular product units (one per prime) exponentiate with Square and MultB only, their results
staying redundant (below ``2p``) until the host's final reduction.  Here one Verilated unit
(:mod:`modforge.hw.pam`, built once per width and cached) plays both units in turn; the host
side is Python:

* per prime ``p``: ``WriteM`` the modulus; ``B = beta mod p`` (the Montgomery one) and
  ``CopyBA``; ``B = (c mod p) beta mod p``; then, for every exponent bit from the top,
  ``Square`` and, where the bit is 1, ``MultB`` - straight-line driving code, as the seed's
  fastest host program; finally ``B = 1``, ``MultB`` (out of the Montgomery domain) and
  ``ReadP`` once per word; the host reduces the redundant word string modulo ``p``.
* The command stream of a whole exponentiation goes to the simulator in one write; only the
  ``ReadP`` words and a cycle count come back.

The kernel's signature is :data:`modforge.rsa.exp.Kernel`; :func:`last_report` says what the last
call cost in cycles and what that would take at the seed's clock (38 ns, Table 1's fastest MPU).
This path is for checking the hardware, not for keys that matter: its operation sequence
depends on the exponent bits (as the 1990 unit's did).
"""

from __future__ import annotations

import atexit
import subprocess
import threading
import time
from typing import Any

from ..arith.base import ParameterError
from ..arith.pam import Cmd, words_of
from .errors import HardwareError

SEED_CLOCK_NS = 38.0          # seed 004, Table 1: "2 mod-prod-units @ 38ns"
SEED_RSA512_BITS_PER_S = 226_000

_LOCK = threading.Lock()
_UNITS: dict[int, "SimulatedUnit"] = {}
_LAST: dict[str, Any] = {}


class SimulatedUnit:
    """The Verilated pam-mpu of one width, its harness running in serve mode."""

    def __init__(self, bits: int):
        from .flow import ensure_built, make_design

        self.design = make_design("pam-mpu", bits=bits)
        self.params = self.design.model_params
        self.build = ensure_built(self.design)
        self.proc: subprocess.Popen | None = None
        self.counters = (0, 0, 0)       # the serve harness's running totals at the last sync

    def _process(self) -> subprocess.Popen:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([str(self.build.exe), "--serve"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, bufsize=1)
            self.counters = (0, 0, 0)
        return self.proc

    def run(self, commands: list[tuple[int, int]]) -> tuple[list[int], int, int, int]:
        """Run a command stream; returns (ReadP words, edges, products, busy edges of the products)."""
        proc = self._process()
        reads = sum(1 for op, _ in commands if op == Cmd.READ_P)
        text = "".join(f"{int(op)} {data:x}\n" for op, data in commands) + "sync\n"
        try:
            proc.stdin.write(text)
            proc.stdin.flush()
            lines = [proc.stdout.readline().strip() for _ in range(reads + 1)]
        except OSError as exc:
            raise HardwareError(f"the simulated pam-mpu died: {exc}") from None
        if any(not ln or ln.startswith("error") for ln in lines):
            raise HardwareError(f"the simulated pam-mpu failed: {' | '.join(lines)[-500:]} "
                                f"(exit {proc.poll()})")
        totals = tuple(int(v) for v in lines[-1].split())
        edges, products, busy = (now - before for now, before in zip(totals, self.counters))
        self.counters = totals
        return [int(w, 16) for w in lines[:-1]], edges, products, busy

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=10)
        self.proc = None


@atexit.register
def _close_all() -> None:
    for unit in _UNITS.values():
        try:
            unit.close()
        except Exception:
            if unit.proc is not None:
                unit.proc.kill()


def _unit(bits: int) -> SimulatedUnit:
    unit = _UNITS.get(bits)
    if unit is None:
        unit = _UNITS[bits] = SimulatedUnit(bits)
    return unit


def exponentiation_program(params, base: int, exponent: int, exp_bits: int, prime: int) -> list[tuple[int, int]]:
    """The straight-line command stream of ``base^exponent mod prime`` (see the module docstring)."""
    beta = params.beta
    words = params.words
    cmds = [(Cmd.WRITE_M, w) for w in words_of(prime, words)]
    cmds += [(Cmd.WRITE_B, w) for w in words_of(beta % prime, words)] + [(Cmd.COPY_BA, 0)]
    cmds += [(Cmd.WRITE_B, w) for w in words_of(base % prime * beta % prime, words)]
    for i in range(exp_bits - 1, -1, -1):
        cmds.append((Cmd.SQUARE, 0))
        if (exponent >> i) & 1:
            cmds.append((Cmd.MULT_B, 0))
    cmds += [(Cmd.WRITE_B, w) for w in words_of(1, words)] + [(Cmd.MULT_B, 0)]
    cmds += [(Cmd.READ_P, 0)] * words
    return cmds


def _half(unit: SimulatedUnit, base: int, exponent: int, exp_bits: int, prime: int) -> tuple[int, dict[str, int]]:
    prog = exponentiation_program(unit.params, base, exponent, exp_bits, prime)
    words, edges, products, busy = unit.run(prog)
    redundant = sum(w << (32 * i) for i, w in enumerate(words))
    if redundant > prime:       # monpro(A, 1) with A < 2p is at most p: anything else is a hardware fault
        raise HardwareError(f"the simulated pam-mpu returned {redundant.bit_length()} bits, above the bound p")
    return redundant % prime, {"commands": len(prog), "edges": edges, "products": products, "busy_edges": busy}


def sim_pam_halves(c: int, p: int, dp: int, q: int, dq: int, exp_bits: int) -> tuple[int, int]:
    """The RSA kernel (``modforge.rsa.exp``): ``(c^dp mod p, c^dq mod q)`` on the simulated unit."""
    bits = max(p.bit_length(), q.bit_length())
    if bits > 4096 or p % 2 == 0 or q % 2 == 0:
        raise ParameterError("key", "sim:pam takes odd primes of at most 4096 bits")
    t0 = time.perf_counter()
    with _LOCK:
        unit = _unit(bits)
        c0 = time.perf_counter()
        xp, rp = _half(unit, c, dp, exp_bits, p)
        xq, rq = _half(unit, c, dq, exp_bits, q)
        sim_s = time.perf_counter() - c0
    # The seed's two units run the halves in parallel: the operation takes the longer one.
    parallel = max(rp["edges"], rq["edges"])
    seconds = parallel * SEED_CLOCK_NS * 1e-9
    _LAST.clear()
    _LAST.update({
        "backend": "sim:pam", "design": unit.design.describe(), "exp_bits": exp_bits,
        "halves": {"p": rp, "q": rq}, "cycles": rp["edges"] + rq["edges"], "parallel_cycles": parallel,
        "busy_per_product": round((rp["busy_edges"] + rq["busy_edges"]) / max(rp["products"] + rq["products"], 1), 3),
        "clock_ns": SEED_CLOCK_NS, "clock_source": "seed 004 Table 1: 2 mod-prod-units @ 38ns",
        "projected_seconds": seconds,
        "projected_bits_per_s": round((p * q).bit_length() / seconds) if seconds else None,
        "simulation_seconds": round(sim_s, 3), "seconds": round(time.perf_counter() - t0, 3),
        "note": "projected = simulated cycles x the seed's stated clock, two units in parallel, host time not "
                "counted; not a timing result of this RTL",
    })
    return xp, xq


def last_report() -> dict[str, Any]:
    """What the last :func:`sim_pam_halves` call cost (empty before the first)."""
    return dict(_LAST)


__all__ = ["sim_pam_halves", "last_report", "exponentiation_program", "SimulatedUnit", "SEED_CLOCK_NS",
           "SEED_RSA512_BITS_PER_S"]


def seed_comparison(bits: int = 256, samples: int = 2000, seed: int = 4) -> dict[str, Any]:
    """RSA throughput of this unit (``2 bits``-bit keys) at the seed's clock, derived from its cycle model,
    beside Table 1's RSA-512 figure.

    A ``2 bits``-bit private operation is two ``bits``-bit exponentiations run on two units in parallel
    (seed 004, Sec. 3.1); an unblinded ``bits``-bit exponent averages ``bits`` Squares and ``bits / 2``
    MultBs, plus one MultB to leave the Montgomery domain.  The cycles per product are the model's average over ``samples``
    random products (the carry completion is data-dependent); the host's CRT and I/O are not counted.
    """
    import random

    from ..arith.pam import PamParams, product

    p = PamParams(bits)
    rng = random.Random(seed)
    busy = 0
    for _ in range(samples):
        m = rng.randrange(1 << (bits - 1), 1 << bits) | 1
        busy += product(p, rng.randrange(2 * m), rng.randrange(2 * m), m).busy
    per_product = busy / samples
    products = bits + bits // 2 + 1
    seconds = products * per_product * SEED_CLOCK_NS * 1e-9
    return {"design": f"pam-mpu {bits} bits, beta = 2^{p.iterations}", "key_bits": 2 * bits,
            "cycles_per_product": round(per_product, 2),
            "products_per_exponentiation": products, "clock_ns": SEED_CLOCK_NS,
            "projected_ms_per_block": round(seconds * 1e3, 3), "projected_bits_per_s": round(2 * bits / seconds),
            "published_key_bits": 512, "published_bits_per_s": SEED_RSA512_BITS_PER_S,
            "published": "seed 004 Table 1: 226,000 baud, 2 mod-prod-units @ 38ns + 1 two-bit/cycle register "
                         "multiplier for CRT, 508-bit keys, B^3 precomputed (about 20 % fewer products), "
                         "an average of 160 internal cycles per modular product (Sec. 3)",
            "note": "ours: projected from simulated cycle counts at the seed's clock, not a timing result; "
                    "published, not measured here"}
