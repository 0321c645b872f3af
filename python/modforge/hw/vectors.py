"""Test vectors from the bit-exact models, written in the harness's vector file format.

Order: named edge cases first (0, 1, N-1, all-ones digits, maximal redundant digits, the
predictive fallbacks forced, the San carry of 2 ...), then seeded random operands, then one
chain of squarings fed back inside the design.  Every expected value comes from the model
(:mod:`modforge.arith`), every chain's final value is also checked against ``pow()`` here,
before the simulator ever runs, and every output is checked against the model's redundant
bound.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..arith.base import value_of
from ..arith.rbr import polsqr
from .common import hex_digits


@dataclass
class Expected:
    digits: tuple[int, ...]
    flags: int
    cycles: int


@dataclass
class VectorStats:
    vectors: int = 0
    edge_cases: list[str] = field(default_factory=list)
    chain: int = 0
    outputs: int = 0            # "out" lines written: the results the harness must produce
    skipped: int = 0
    flags: dict[str, int] = field(default_factory=dict)
    chain_checked_against_pow: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"vectors": self.vectors, "edge_cases": self.edge_cases, "chain": self.chain,
                "skipped_invalid": self.skipped, "flags": self.flags,
                "chain_checked_against_pow": self.chain_checked_against_pow}


class Source:
    """What the vector writer needs from one architecture; subclasses bind a design to its model."""

    has_y = False
    flag_names: tuple[str, ...] = ()

    def __init__(self, design):
        self.design = design
        self.model = design.model()
        self.D = design.digit_bits
        self.words = design.words
        self.out_words = design.out_words if hasattr(design, "out_words") else design.words
        self.modulus = design.modulus

    # -- per architecture -----------------------------------------------------------------------
    def expect(self, x: tuple[int, ...], y: tuple[int, ...] | None) -> Expected:
        raise NotImplementedError

    def edge_cases(self) -> list[tuple[str, tuple[int, ...], tuple[int, ...] | None]]:
        raise NotImplementedError

    def random_operand(self, rng: random.Random) -> tuple[int, ...]:
        raise NotImplementedError

    def chain_start(self, x: int) -> tuple[int, ...]:
        raise NotImplementedError

    def chain_value(self, digits: tuple[int, ...]) -> int:
        """The canonical residue a chain's digits stand for (out of the Montgomery domain if any)."""
        raise NotImplementedError

    def bound(self) -> int:
        raise NotImplementedError

    # -- shared ---------------------------------------------------------------------------------
    def pad(self, digits: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(digits) + (0,) * (self.out_words - len(digits))

    def max_digit(self) -> int:
        return (1 << self.D) - 1

    def chain(self, x: int, count: int) -> tuple[tuple[int, ...], list[Expected]]:
        start = self.chain_start(x)
        cur = start
        out = []
        for _ in range(count):
            e = self.expect(cur, cur if self.has_y else None)
            out.append(e)
            cur = e.digits[: self.words]
        return start, out


def _fmt_op(name: str, count: int, x: tuple[int, ...], y: tuple[int, ...] | None, D: int) -> str:
    return f"op {name} {count} {hex_digits(x, D)} {hex_digits(y, D) if y is not None else '-'}"


def _fmt_out(e: Expected, D: int) -> str:
    return f"out {e.cycles} {e.flags} {hex_digits(e.digits, D)}"


def write_vectors(source: Source, path: Path, *, vectors: int, chain: int, seed: int,
                  header: str = "", chain_x: int | None = None, param: str = "vectors",
                  overwrite: bool = True) -> VectorStats:
    """Write edge cases, ``vectors`` random operations and a ``chain`` of squarings to ``path`` (atomically;
    an existing file only with ``overwrite``; a failure is a ParameterError naming ``param``)."""
    from ..fileio import write_output

    stats = VectorStats()
    rng = random.Random(seed)
    D = source.D
    bound = source.bound()
    lines = [header.rstrip("\n")] if header else []
    lines.append(f"# seed {seed}; {vectors} random vectors after the edge cases; chain of {chain}")

    def add(name: str, x, y) -> bool:
        try:
            e = source.expect(x, y)
        except AssertionError:
            stats.skipped += 1
            return False
        if e.flags:
            key = source.flag_names[e.flags - 1] if e.flags - 1 < len(source.flag_names) else str(e.flags)
            stats.flags[key] = stats.flags.get(key, 0) + 1
        lines.append(_fmt_op(name, 1, x, y, D))
        lines.append(_fmt_out(e, D))
        stats.vectors += 1
        stats.outputs += 1
        return True

    for name, x, y in source.edge_cases():
        if add(name, x, y):
            stats.edge_cases.append(name)
    made = 0
    while made < vectors:
        x = source.random_operand(rng)
        y = source.random_operand(rng) if source.has_y else None
        if add(f"random{made}", x, y):
            made += 1
    if chain:
        x = chain_x if chain_x is not None else rng.randrange(2, source.modulus)
        start, outs = source.chain(x, chain)
        for i, e in enumerate(outs):
            if value_of(e.digits, source.design.word_bits) >= bound:
                raise AssertionError(f"chain output {i} is above the redundant bound")
            if e.flags:
                key = source.flag_names[e.flags - 1]
                stats.flags["chain_" + key] = stats.flags.get("chain_" + key, 0) + 1
        final = source.chain_value(outs[-1].digits[: source.words])
        if final != pow(x, 1 << chain, source.modulus):
            raise AssertionError(f"the model's chain of {chain} squarings disagrees with pow()")
        stats.chain_checked_against_pow = True
        lines.append(_fmt_op("chain", chain, start, start if source.has_y else None, D))
        lines += [_fmt_out(e, D) for e in outs]
        stats.outputs += len(outs)
        stats.chain = chain
    write_output(path, "\n".join(lines) + "\n", param, overwrite=overwrite)
    return stats


# -------------------------------------------------------------------------------------- Ozturk
class OzturkSource(Source):
    def expect(self, x, y):
        digits, _ = self.model.reduce(polsqr(self.design.model_params.rbr, x))
        return Expected(self.pad(digits), 0, self.design.latency())

    def bound(self) -> int:
        return self.model.redundant_bound

    def edge_cases(self):
        p = self.design
        mp = p.model_params
        d, n, w, base = p.word_bits, p.design_bits, p.words, p.base_words
        m = self.modulus
        top = self.max_digit()
        ones = (1 << d) - 1
        cases = [
            ("zero", mp.rbr.to_digits(0)), ("one", mp.rbr.to_digits(1)), ("m_minus_1", mp.rbr.to_digits(m - 1)),
            ("two_pow_n_minus_1", mp.rbr.to_digits((1 << n) - 1)),
            ("all_ones_words", (ones,) * w),
            ("maximal_redundant_digits", (top,) * w),
            ("maximal_loop_state", (top,) * (base + 1) + (0,) * (w - base - 1)),
            ("result_bound_minus_1", mp.rbr.to_digits(mp.result_bound() - 1)),
            ("alternating_max_zero", tuple(top if i % 2 else 0 for i in range(w))),
            ("alternating_zero_max", tuple(0 if i % 2 else top for i in range(w))),
            ("top_digit_only", (0,) * (w - 1) + (top,)),
            ("long_run_of_ones_low_half", mp.rbr.to_digits((1 << (n // 2)) - 1)),
        ]
        return [(name, x, None) for name, x in cases]

    def random_operand(self, rng):
        p = self.design
        kind = rng.randrange(3)
        if kind == 0:
            return p.model_params.rbr.to_digits(rng.randrange(self.modulus))
        if kind == 1:
            return tuple(rng.randrange(1 << self.D) for _ in range(self.words))
        reach = p.base_words + 1
        return tuple(rng.randrange(1 << self.D) for _ in range(reach)) + (0,) * (self.words - reach)

    def chain_start(self, x):
        return self.design.model_params.rbr.to_digits(x)

    def chain_value(self, digits):
        return self.model.canonical(value_of(digits, self.design.word_bits))[0]


# -------------------------------------------------------------------------------------- San
class SanSource(Source):
    has_y = True
    flag_names = ()

    def expect(self, x, y):
        out = self.model.monpro(tuple(x), tuple(y))
        return Expected(self.pad(out.digits), 0, self.design.latency())

    def bound(self) -> int:
        # Chained outputs stay below 4m (the model's feedback bound).
        return self.model.redundant_bound

    def edge_cases(self):
        p = self.design
        rbr = p.model_params.rbr
        k, d = p.k, p.word_bits
        m = self.modulus
        top = self.max_digit()
        wd = 1 << d
        carry2 = [0] * (k + 1)
        if k >= 3:
            carry2[k - 3], carry2[k - 2], carry2[k - 1] = 2 * wd - 1, wd - 1, wd - 1
        one = rbr.to_digits(1)
        cases = [
            ("zero_times_m_minus_1", rbr.to_digits(0), rbr.to_digits(m - 1)),
            ("one_times_one", one, one),
            ("m_minus_1_squared", rbr.to_digits(m - 1), rbr.to_digits(m - 1)),
            ("feedback_bound_squared", rbr.to_digits(4 * m - 1), rbr.to_digits(4 * m - 1)),
            ("all_ones_words", ((wd - 1),) * (k + 1), ((wd - 1),) * (k + 1)),
            ("maximal_redundant_digits", (top,) * (k + 1), (top,) * (k + 1)),
            ("low_carry_of_2", tuple(carry2), one),
            ("r_minus_1_times_one", rbr.to_digits(p.model_params.radix - 1), one),
            ("alternating_max_zero", tuple(top if i % 2 else 0 for i in range(k + 1)),
             tuple(0 if i % 2 else top for i in range(k + 1))),
        ]
        return cases

    def random_operand(self, rng):
        rbr = self.design.model_params.rbr
        if rng.randrange(2):
            return rbr.to_digits(rng.randrange(4 * self.modulus))
        return tuple(rng.randrange(1 << self.D) for _ in range(self.words))

    def chain_start(self, x):
        p = self.design.model_params
        return p.rbr.to_digits(x * p.radix % self.modulus)

    def chain_value(self, digits):
        p = self.design.model_params
        return value_of(digits, p.word_bits) * pow(p.radix, -1, self.modulus) % self.modulus


# -------------------------------------------------------------------------------------- predictive
class PredictiveSource(Source):
    flag_names = ("square_split", "lower_split", "upper_guard")

    def expect(self, x, y):
        digits, stages = self.model.square_digits(tuple(x))
        reason = stages.get("fallback_reason")
        flags = 0 if "fallback" not in stages else reason + 1
        return Expected(self.pad(digits), flags, self.design.latency(flags))

    def bound(self) -> int:
        return self.model.redundant_bound

    def _sqrt_2adic(self, c: int, bits: int) -> int:
        x = 1
        for i in range(3, bits):
            if (x * x - c) & ((1 << (i + 1)) - 1):
                x += 1 << (i - 1)
        return x & ((1 << bits) - 1)

    def forced(self, reason: str) -> tuple[int, ...] | None:
        """An operand whose squaring takes the fallback for ``reason`` (searched, deterministic)."""
        p = self.design.model_params
        rbr, w, d = p.rbr, p.words, p.word_bits
        want = self.flag_names.index(reason) + 1

        def hits(a) -> bool:
            try:
                return self.expect(a, None).flags == want
            except AssertionError:
                return False

        if reason == "square_split":
            thr = p.thresholds()["square_split"]
            for i in range(1, w):
                j = w - 1 - i
                if j < i:
                    break
                for ai in (1, 3, 5, 7):
                    for aj in range(thr // (2 * ai), min(thr // (2 * ai) + 8, 1 << (d + 1))):
                        a = [0] * w
                        a[i] += ai
                        a[j] += aj
                        if hits(tuple(a)):
                            return tuple(a)
            return None
        if reason == "lower_split":
            radix_bits = d * w
            m = self.modulus
            j0 = next(j for j in (1, 3, 5, 7) if (j * m) % 8 == 1)
            for j in range(j0, j0 + 8 * 64, 8):
                c = (j * m) % (1 << radix_bits)
                r = self._sqrt_2adic(c, radix_bits)
                roots = sorted({r, (1 << radix_bits) - r, (r + (1 << (radix_bits - 1))) % (1 << radix_bits),
                                ((1 << radix_bits) - r + (1 << (radix_bits - 1))) % (1 << radix_bits)})
                for root in roots:
                    try:
                        a = rbr.to_digits(root)
                    except Exception:
                        continue
                    if hits(a):
                        return a
            return None
        for v in (1, 2, 3, 1 << d, 5):
            a = rbr.to_digits(v)
            if hits(a):
                return a
        return None

    def edge_cases(self):
        p = self.design.model_params
        rbr, w, d = p.rbr, p.words, p.word_bits
        m = self.modulus
        top = self.max_digit()
        bound = self.bound()
        # As many maximal digits as the bound allows: the low digits at 2^(d+r)-1, the rest canonical.
        maximal = None
        for k in range(w - 1, 0, -1):
            low = value_of((top,) * k, d)
            if low < bound:
                rest = rbr.to_digits((bound - 1 - low) >> (d * k))
                if not any(rest[w - k:]):
                    maximal = (top,) * k + rest[:w - k]
                    break
        cases = [("zero", rbr.to_digits(0)), ("one", rbr.to_digits(1)), ("m_minus_1", rbr.to_digits(m - 1)),
                 ("montgomery_one", rbr.to_digits(p.radix % m)),
                 ("all_ones_words_below_bound", rbr.to_digits(min(bound - 1, (1 << (d * (w - 1))) - 1))),
                 ("output_bound_minus_1", rbr.to_digits(bound - 1))]
        if maximal is not None:
            cases.append(("maximal_redundant_digits", maximal))
        for reason in self.flag_names:
            a = self.forced(reason)
            if a is not None:
                cases.append((f"forced_fallback_{reason}", a))
        return [(name, x, None) for name, x in cases]

    def random_operand(self, rng):
        p = self.design.model_params
        rbr, w, d = p.rbr, p.words, p.word_bits
        bound = self.bound()
        if rng.randrange(2):
            return rbr.to_digits(rng.randrange(bound))
        low = tuple(rng.randrange(1 << self.D) for _ in range(w - 1))
        room = (bound - 1 - value_of(low, d)) >> (d * (w - 1))
        if room < 0:
            return rbr.to_digits(rng.randrange(bound))
        return low + (rng.randrange(room + 1),)

    def chain_start(self, x):
        return self.model.to_montgomery(x)

    def chain_value(self, digits):
        p = self.design.model_params
        v = value_of(digits, p.word_bits) * pow(p.radix, -1, self.modulus) % self.modulus
        return v


SOURCES = {"ozturk": OzturkSource, "san-montgomery": SanSource, "predictive-montgomery": PredictiveSource}


def source_for(design) -> Source:
    if design.arch not in SOURCES and hasattr(design, "vector_source"):
        return design.vector_source()          # its own (goldilocks-mul, hybrid)
    return SOURCES[design.arch](design)
