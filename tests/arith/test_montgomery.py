"""Tests for :mod:`modforge.arith.montgomery` (seeds 002 and 004).

Every model's ``monpro`` is checked against the oracle ``x*y*R^-1 mod m``
and its ``modmul`` against ``a*b mod m``: named edge operands first, then
seeded random cases (the seed is in every assertion message), then a few
hypothesis properties.  Model-specific tests pin the two findings (the
"+1" carry of seed 002's Alg. 2 and Alg. 6), the cost counts, the redundant
bounds on long chains of squarings, and the parameter errors.
"""

from __future__ import annotations

import math
import random
import statistics
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modforge.arith import montgomery as mt
from modforge.arith.base import Outcome, ParameterError, value_of
from modforge.arith.registry import AlgorithmInfo


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def odd_modulus(rng: random.Random, bits: int) -> int:
    return rng.getrandbits(bits) | (1 << (bits - 1)) | 1


def monpro_oracle(model: Any, x: int, y: int) -> int:
    m = model.modulus
    return x * y * pow(model.radix, -1, m) % m


def operand_value(model: Any, x: Any) -> int:
    if isinstance(x, (tuple, list)):
        return value_of(x, model.params.word_bits)
    return x


def check_monpro(model: Any, x: Any, y: Any, msg: str, *, in_bound: bool = True) -> Outcome:
    out = model.monpro(x, y)
    xv, yv = operand_value(model, x), operand_value(model, y)
    want = monpro_oracle(model, xv, yv)
    assert out.result == want, f"{msg}: monpro result {out.result:#x} != oracle {want:#x}"
    assert 0 <= out.result < model.modulus, msg
    assert out.raw % model.modulus == want, f"{msg}: raw {out.raw:#x} not congruent to oracle"
    if in_bound:
        assert out.raw < model.redundant_bound, f"{msg}: raw {out.raw:#x} >= bound {model.redundant_bound:#x}"
    if out.digits is not None:
        assert value_of(out.digits, out.digit_weight_bits) == out.raw, msg
        assert all(0 <= dgt < (1 << out.digit_bits) for dgt in out.digits), msg
    return out


def check_modmul(model: Any, a: int, b: int, msg: str) -> Outcome:
    out = model.modmul(a, b)
    m = model.modulus
    assert out.result == a * b % m, f"{msg}: modmul {out.result:#x} != {a * b % m:#x}"
    assert 0 <= out.raw < model.redundant_bound, f"{msg}: raw {out.raw:#x} >= bound"
    assert out.raw % m == out.result, msg
    return out


# Each entry: builder(modulus) -> model, operand domain, (random cases <= 512 bits, cases 1024..4096 bits).
CONFIGS: dict[str, tuple[Callable[[int], Any], str, tuple[int, int]]] = {
    "montgomery": (lambda m: mt.Montgomery(mt.MontgomeryParams(m)), "canonical", (3000, 60)),
    "cios-w64": (lambda m: mt.MontgomeryCIOS(mt.CIOSParams(m, word_bits=64)), "canonical", (1200, 16)),
    "cios-w32": (lambda m: mt.MontgomeryCIOS(mt.CIOSParams(m, word_bits=32)), "canonical", (700, 6)),
    "cios-w16": (lambda m: mt.MontgomeryCIOS(mt.CIOSParams(m, word_bits=16)), "canonical", (900, 4)),
    "reduced-d16": (lambda m: mt.ReducedMontgomery(mt.ReducedParams(m, word_bits=16)), "canonical", (2000, 8)),
    "reduced-d32": (lambda m: mt.ReducedMontgomery(mt.ReducedParams(m, word_bits=32)), "canonical", (500, 4)),
    "ozturk-d16": (lambda m: mt.OzturkMontgomery(mt.OzturkMontParams(m, word_bits=16)), "rbr", (900, 3)),
    "ozturk-d32": (lambda m: mt.OzturkMontgomery(mt.OzturkMontParams(m, word_bits=32)), "rbr", (800, 4)),
    "ozturk-d64": (lambda m: mt.OzturkMontgomery(mt.OzturkMontParams(m, word_bits=64)), "rbr", (1200, 5)),
    "dec-mpu": (lambda m: mt.DecMpu(mt.DecMpuParams(m)), "dec", (2000, 4)),
    "dec-mpu-plain": (lambda m: mt.DecMpu(mt.DecMpuParams(m, carry_save=False)), "dec", (800, 2)),
}


def fixed_moduli() -> dict[str, int]:
    return {
        "253 (seed 000 example)": 253,
        "2^64-59": 2**64 - 59,
        "2^127-1": 2**127 - 1,
        "2^128+1 (top bit only)": 2**128 + 1,
        "all-ones 256": 2**256 - 1,
        "random 521": odd_modulus(random.Random(521), 521),
        "2^1024-105": 2**1024 - 105,
    }


def edge_operands(model: Any, domain: str) -> dict[str, Any]:
    m = model.modulus
    bits = m.bit_length()
    top = 1 << (bits - 1)
    ops: dict[str, Any] = {
        "0": 0, "1": 1, "2": 2, "m-1": m - 1, "m-2": m - 2, "(m-1)/2": (m - 1) // 2,
        "2^(b-1) (top bit)": top, "2^(b-1)+1": top + 1, "2^(b-1)-1 (run of ones)": top - 1,
        "R mod m": model.radix % m,
    }
    for w in (16, 64):
        for j in sorted({1, bits // (2 * w), bits // w} - {0}):
            ops[f"all-ones {j} words of {w}"] = (1 << (w * j)) - 1
        alternating = sum(((1 << w) - 1) << (2 * w * i) for i in range(bits // (2 * w) + 1))
        ops[f"alternating {w}-bit words"] = alternating % m
    if domain == "dec":
        ops.update({"m": m, "m+1": m + 1, "2m-2": 2 * m - 2, "2m-1 (maximal)": 2 * m - 1})
    if domain == "rbr":
        rbr = model.params.rbr
        ops.update({"m": m, "2m": 2 * m, "4m-1 (feedback bound - 1)": 4 * m - 1,
                    "maximal digits (all 2^(d+1)-1)": rbr.max_digits,
                    "maximal low digits, top 0": rbr.max_digits[:-1] + (0,),
                    "canonical digits of m-1": rbr.to_digits(m - 1)})
    return {name: v for name, v in ops.items() if _in_domain(model, domain, v)}


def _in_domain(model: Any, domain: str, v: Any) -> bool:
    if isinstance(v, tuple):
        return True
    if domain == "canonical":
        return 0 <= v < model.modulus
    if domain == "dec":
        return 0 <= v < 2 * model.modulus
    return 0 <= v < model.params.rbr.value_bound


CORE_PARTNERS = ("0", "1", "m-1", "2^(b-1) (top bit)", "2m-1 (maximal)", "4m-1 (feedback bound - 1)",
                 "maximal digits (all 2^(d+1)-1)")


def edge_pairs(ops: dict[str, Any], bits: int) -> list[tuple[str, Any, str, Any]]:
    """All pairs for moduli up to 300 bits; beyond, each operand against the core partners."""
    partners = ops if bits <= 300 else {n: v for n, v in ops.items() if n in CORE_PARTNERS}
    pairs = [(xn, x, yn, y) for xn, x in ops.items() for yn, y in partners.items()]
    if bits > 300:
        pairs += [(yn, y, xn, x) for xn, x in ops.items() for yn, y in partners.items()]
    return pairs


def is_in_bound(model: Any, domain: str, x: Any, y: Any) -> bool:
    if domain != "rbr":
        return True
    bound = model.params.redundant_bound
    return operand_value(model, x) < bound and operand_value(model, y) < bound


# --------------------------------------------------------------------------
# generic: named edges, then seeded random
# --------------------------------------------------------------------------
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_monpro_named_edges(config: str) -> None:
    build, domain, _ = CONFIGS[config]
    for mod_name, m in fixed_moduli().items():
        if config.endswith("d16") and m.bit_length() > 600:
            continue  # slow in Python; the 1024-bit case runs in the random tests
        model = build(m)
        for xn, x, yn, y in edge_pairs(edge_operands(model, domain), m.bit_length()):
            msg = f"{config} modulus={mod_name} x={xn} y={yn}"
            check_monpro(model, x, y, msg, in_bound=is_in_bound(model, domain, x, y))


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_modmul_named_edges(config: str) -> None:
    build, _, _ = CONFIGS[config]
    for mod_name, m in fixed_moduli().items():
        if config.endswith("d16") and m.bit_length() > 600:
            continue
        model = build(m)
        ops = edge_operands(model, "canonical")
        ops.update({name: a for name, (a, _) in mt._zero_low_half_cases(model).items()})
        for an, a, bn, b in edge_pairs(ops, m.bit_length()):
            check_modmul(model, a, b, f"{config} modulus={mod_name} a={an} b={bn}")


def random_operand(rng: random.Random, model: Any, domain: str) -> Any:
    m = model.modulus
    if domain == "canonical":
        return rng.randrange(m)
    if domain == "dec":
        return rng.randrange(2 * m)
    pick = rng.random()
    if pick < 0.6:
        return rng.randrange(model.params.redundant_bound)
    if pick < 0.8:
        return model.params.rbr.to_digits(rng.randrange(m))
    # arbitrary RBR digits, any value (beyond the feedback bound)
    return tuple(rng.randrange(1 << model.params.rbr.digit_bits) for _ in range(model.params.rbr.words))


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_random_cases(config: str) -> None:
    build, domain, (n_small, n_large) = CONFIGS[config]
    seed = 20240000 + sum(map(ord, config))
    rng = random.Random(seed)
    for case in range(n_small + n_large):
        bits = rng.randint(64, 512) if case < n_small else rng.randint(1024, 4096 if n_large > 3 else 2048)
        m = odd_modulus(rng, bits)
        model = build(m)
        x, y = random_operand(rng, model, domain), random_operand(rng, model, domain)
        msg = f"{config} seed={seed} case={case} bits={bits} m={m:#x}"
        check_monpro(model, x, y, msg, in_bound=is_in_bound(model, domain, x, y))
        a, b = rng.randrange(m), rng.randrange(m)
        check_modmul(model, a, b, msg + f" a={a:#x} b={b:#x}")


# --------------------------------------------------------------------------
# the worked example of seed 000: n = 253, t = 10 gives 71
# --------------------------------------------------------------------------
SEED_000_CHAIN = [4, 16, 3, 9, 81, 236, 36, 31, 202, 71]  # 2^(2^i) mod 253, i = 1..10


def _squarer(model: Any) -> tuple[Callable[[Any], Outcome], Callable[[Outcome], Any], Any]:
    if isinstance(model, mt.OzturkMontgomery):
        return model.square, (lambda o: o.digits), model.to_digits(model.to_montgomery(2))
    return (lambda x: model.monpro(x, x)), (lambda o: o.raw), model.to_montgomery(2)


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_seed_000_repeated_squaring(config: str) -> None:
    model = CONFIGS[config][0](253)
    square, feed, x = _squarer(model)
    for step, want in enumerate(SEED_000_CHAIN, start=1):
        out = square(x)
        x = feed(out)
        assert out.raw < model.redundant_bound, f"{config} step {step}"
        assert model.from_montgomery(x).result == want, f"{config} step {step}: want {want}"
    assert model.from_montgomery(x).result == 71


# --------------------------------------------------------------------------
# 1. textbook
# --------------------------------------------------------------------------
def test_textbook_final_subtraction_counted() -> None:
    rng = random.Random(11)
    m = odd_modulus(rng, 200)
    model = mt.Montgomery(mt.MontgomeryParams(m))
    taken = 0
    for case in range(400):
        out = model.monpro(rng.randrange(m), rng.randrange(m))
        z = out.stages["Z_before_subtraction"]
        assert out.events["final_subtraction"] == int(z >= m), f"seed=11 case={case}"
        taken += out.events["final_subtraction"]
    assert 0 < taken < 400


def test_textbook_design_width() -> None:
    m = odd_modulus(random.Random(5), 100)
    model = mt.Montgomery(mt.MontgomeryParams(m, bits=128))
    assert model.radix == 2**128
    check_monpro(model, m - 1, m - 2, "bits=128")
    assert model.cost().word_products == 3 * 2 * 2  # 3 s^2, s = 2 words of 64 bits


# --------------------------------------------------------------------------
# 2. CIOS: 2 s^2 + s word products, counted inside the model
# --------------------------------------------------------------------------
@pytest.mark.parametrize("w", [16, 32, 64])
def test_cios_word_products_counted(w: int) -> None:
    rng = random.Random(w)
    for bits in (64, 65, 255, 1024):
        m = odd_modulus(rng, bits)
        model = mt.MontgomeryCIOS(mt.CIOSParams(m, word_bits=w))
        s = math.ceil(bits / w)
        out = model.monpro(rng.randrange(m), rng.randrange(m))
        assert out.events["word_products"] == 2 * s * s + s == model.cost().word_products, (w, bits)


def test_cios_costs_for_1024_bits() -> None:
    m = 2**1024 - 105
    assert mt.CIOSParams(m, word_bits=64).cost().word_products == 2 * 16**2 + 16 == 528
    assert mt.CIOSParams(m, word_bits=32).cost().word_products == 2080
    assert mt.CIOSParams(m, word_bits=16).cost().word_products == 8256


# --------------------------------------------------------------------------
# 3. reduced Montgomery: the "+1" finding and the product counts
# --------------------------------------------------------------------------
def test_reduced_plus_one_fails_when_t0_is_zero() -> None:
    for bits, d in ((64, 16), (127, 16), (256, 32), (1024, 16)):
        m = odd_modulus(random.Random(bits), bits)
        model = mt.ReducedMontgomery(mt.ReducedParams(m, word_bits=d))
        radix = model.radix
        top = 1 << (bits - 1)
        cases = {"x = 0": (0, m - 1), "x = y = 0": (0, 0)}
        # Nonzero products that are multiples of R: T0 = 0 but T1 != 0.
        for shift in range(bits - 1, 0, -1):
            y = 1 << shift
            if (top * y) % radix == 0 and y < m:
                cases[f"x = 2^{bits - 1}, y = 2^{shift}"] = (top, y)
                break
        cases["x = y = 2^(b-1)"] = (top, top)
        seen_nonzero = False
        for name, (x, y) in cases.items():
            t = x * y
            if t % radix:
                continue
            msg = f"bits={bits} d={d} {name}"
            out = check_monpro(model, x, y, msg)
            assert out.stages["T0"] == 0 and out.stages["carry"] == 0 and out.events["t0_zero"] == 1, msg
            literal = model.monpro_as_printed(x, y)
            assert literal != out.result, f"{msg}: the printed +1 should be off by one here"
            assert literal == (out.result + 1) % m, msg
            seen_nonzero |= t != 0
        assert seen_nonzero, f"bits={bits}: no nonzero multiple of R found"


def test_reduced_plus_one_agrees_when_t0_nonzero() -> None:
    seed = 77
    rng = random.Random(seed)
    for case in range(300):
        m = odd_modulus(rng, rng.randint(64, 400))
        model = mt.ReducedMontgomery(mt.ReducedParams(m, word_bits=16))
        x, y = rng.randrange(1, m), rng.randrange(1, m)
        out = model.monpro(x, y)
        assert out.stages["T0"] != 0 and out.stages["carry"] == 1, f"seed={seed} case={case}"
        assert model.monpro_as_printed(x, y) == out.result, f"seed={seed} case={case}"


def test_reduced_word_products_for_1024_bits_d16() -> None:
    params = mt.ReducedParams(2**1024 - 105, word_bits=16)
    counts = params.product_counts()
    assert params.s == 64
    assert list(counts.values()) == [4096, 2080, 2143]  # s^2, s(s+1)/2, s^2 - (s-1)(s-2)/2
    cost = params.cost()
    assert cost.word_products == 8319
    assert cost.extra["textbook_word_products"] == 12288
    assert cost.extra["word_products_if_S_computed_whole"] == 10272
    model = mt.ReducedMontgomery(params)
    out = model.monpro(12345, 2**1000 + 17)
    assert out.events["word_products"] == 8319


@pytest.mark.parametrize("d", [8, 16, 32, 64])
def test_reduced_counted_products_match_cost(d: int) -> None:
    rng = random.Random(d)
    for bits in (17, 64, 100, 300):
        m = odd_modulus(rng, bits)
        model = mt.ReducedMontgomery(mt.ReducedParams(m, word_bits=d))
        out = model.monpro(rng.randrange(m), rng.randrange(m))
        assert out.events["word_products"] == model.cost().word_products, (d, bits)


# --------------------------------------------------------------------------
# 4. Ozturk RBR Montgomery: true carry, HLS "+1", feedback bound, costs
# --------------------------------------------------------------------------
def _oz(m: int, d: int = 16, **kw: Any) -> mt.OzturkMontgomery:
    return mt.OzturkMontgomery(mt.OzturkMontParams(m, word_bits=d, **kw))


def test_ozturk_hls_plus_one_wrong_for_zero() -> None:
    m = odd_modulus(random.Random(3), 256)
    model = _oz(m)
    out = check_monpro(model, 0, m - 1, "x = 0")
    assert out.stages["carry"] == 0 and out.events["hls_carry_wrong"] == 1
    hls = value_of(model.monpro_hls(0, m - 1), 16)
    assert hls == 1 and out.raw == 0  # the HLS code returns 1 for 0 * y


def test_ozturk_hls_plus_one_wrong_for_overflowing_low_digits() -> None:
    """Low digits whose redundant sum exceeds R: carry 2, the HLS code is off by one."""
    for d in (16, 32, 64):
        m = odd_modulus(random.Random(d), 512)
        model = _oz(m, d)
        k = model.params.k
        w = 1 << d
        x = [0] * (k + 1)
        x[k - 3], x[k - 2], x[k - 1] = 2 * w - 1, w - 1, w - 1  # t[k-1] becomes exactly 2^d
        out = check_monpro(model, tuple(x), 1, f"d={d}", in_bound=False)
        assert out.stages["t_low"] > model.radix, d
        assert out.stages["carry"] >= 2 and out.events["hls_carry_wrong"] == 1, d
        hls = value_of(model.monpro_hls(tuple(x), 1), d)
        assert hls == out.raw - (out.stages["carry"] - 1), d
        assert hls % m != out.result, d


def test_ozturk_maximal_digits() -> None:
    for d in (16, 32, 64):
        m = odd_modulus(random.Random(100 + d), 300)
        model = _oz(m, d)
        mx = model.params.rbr.max_digits
        out = check_monpro(model, mx, mx, f"d={d} maximal digits", in_bound=False)
        assert out.events["input_beyond_bound"] == 1
        assert out.events["hls_dropped_digits"] == 1  # the k+1-digit HLS output would lose the top
        assert out.raw < model.params.output_bound(model.params.rbr.value_bound, model.params.rbr.value_bound)
        assert model.square(mx).raw == out.raw


def test_ozturk_hls_matches_model_exactly_when_carry_is_one() -> None:
    """Scaled-down seed parameters (d = 8) make carry != 1 frequent: HLS right iff carry == 1."""
    seed = 808
    rng = random.Random(seed)
    m = odd_modulus(rng, 128)
    model = _oz(m, 8)
    x = model.to_digits(model.to_montgomery(rng.randrange(m)))
    wrong = 0
    for step in range(400):
        out = model.monpro(x, x)
        hls = value_of(model.monpro_hls(x, x), 8)
        ok = out.stages["carry"] == 1 and out.events["hls_dropped_digits"] == 0
        assert (hls == out.raw) == ok, f"seed={seed} step={step}"
        assert out.raw < model.redundant_bound, f"seed={seed} step={step}"
        assert out.result == monpro_oracle(model, value_of(x, 8), value_of(x, 8)), f"seed={seed} step={step}"
        wrong += out.events["hls_carry_wrong"]
        x = out.digits
    assert wrong > 10, f"seed={seed}: only {wrong} wrong carries in 400 squarings at d=8"


def test_ozturk_hls_plus_one_wrong_in_a_chain_at_seed_parameters() -> None:
    """d = 16, n = 256: about one squaring in 1000-3000 has a low carry of 2, where the HLS code adds 1."""
    seed = 16256
    rng = random.Random(seed)
    m = odd_modulus(rng, 256) | (0b111 << 253)
    model = _oz(m, 16)
    a = rng.randrange(m)
    x = model.to_digits(model.to_montgomery(a))
    wrong_steps = []
    for step in range(3000):
        out = model.monpro(x, x)
        if out.events["hls_carry_wrong"]:
            wrong_steps.append(step)
            hls = value_of(model.monpro_hls(x, x), 16)
            assert hls != out.raw and hls % m != out.result, f"seed={seed} step={step}"
        x = out.digits
    assert model.from_montgomery(x).result == pow(a, 2**3000, m), f"seed={seed}: chain result"
    assert 1 <= len(wrong_steps) <= 10, f"seed={seed}: HLS carry wrong at steps {wrong_steps}"


@pytest.mark.parametrize("d,bits,steps", [(16, 128, 400), (16, 256, 300), (32, 512, 400), (64, 1024, 300),
                                          (64, 200, 1500)])
def test_ozturk_chained_squarings_feedback(d: int, bits: int, steps: int) -> None:
    seed = d * 1000 + bits
    rng = random.Random(seed)
    m = odd_modulus(rng, bits) | (0b111 << (bits - 3))  # top bits set: the worst case for the bound
    model = _oz(m, d)
    x = model.to_digits(model.to_montgomery(rng.randrange(m)))
    for step in range(steps):
        xv = value_of(x, d)
        out = model.square(x)
        msg = f"seed={seed} d={d} bits={bits} step={step}"
        assert out.raw < 4 * m == model.redundant_bound, msg
        assert out.result == xv * xv * pow(model.radix, -1, m) % m, msg
        assert len(out.digits) == model.params.k + 1 and out.events["hls_dropped_digits"] == 0, msg
        x = out.digits


def test_ozturk_seed_sizing_cannot_feed_back() -> None:
    """k = n/d with a full-width modulus: outputs reach R and grow without bound when fed back."""
    m = 2**256 - 189
    with pytest.raises(ParameterError, match=r"^digits: 16 digits of 16 bits \(R = 2\^256\) leave no room"):
        mt.OzturkMontParams(m, word_bits=16, digits=16)
    model = _oz(m, 16, digits=16, feedback=False)
    assert model.params.k == 16
    x = model.to_digits(m - 1)
    sizes = []
    for _ in range(4):
        out = model.square(x)
        assert out.result == monpro_oracle(model, value_of(x, 16), value_of(x, 16))
        sizes.append(out.raw)
        x = out.digits
    assert sizes[0] > m and sizes == sorted(sizes) and sizes[-1] > 10 * model.radix  # diverges
    assert out.events["hls_dropped_digits"] == 1
    # the default sizing adds the digit that makes feedback safe
    assert mt.OzturkMontParams(m, word_bits=16).k == 17
    assert mt.OzturkMontParams(2**1024 - 105, word_bits=16).k == 65
    assert mt.OzturkMontParams(2**1020 + 1, word_bits=16).k == 64  # 1021 bits, m < R/8: the seed's k
    assert mt.OzturkMontParams(2**1021 - 1, word_bits=16).k == 65  # just below R/8: Qmax > 2R tips it


def test_ozturk_square_equals_monpro() -> None:
    seed = 4242
    rng = random.Random(seed)
    for case in range(60):
        d = rng.choice((16, 32, 64))
        m = odd_modulus(rng, rng.randint(64, 400))
        model = _oz(m, d)
        x = random_operand(rng, model, "rbr")
        assert model.square(x).raw == model.monpro(x, x).raw, f"seed={seed} case={case}"


def test_ozturk_costs() -> None:
    seed_sizing = mt.OzturkMontParams(2**1024 - 105, word_bits=16, digits=64, feedback=False)
    counts = seed_sizing.product_counts()
    assert counts == {"t": 65 * 65, "q": 2080, "res_hls": 2205, "res_with_top_carry": 2266, "res_full": 4096}
    cost = seed_sizing.cost()
    assert cost.word_products == 4225 + 2080 + 2266 == 8571
    assert cost.extra["word_products_hls"] == 8510
    assert cost.extra["word_products_full_low_evaluation"] == 10401
    assert seed_sizing.cost(square=True).word_products == 65 * 66 // 2 + 2080 + 2266
    safe = mt.OzturkMontParams(2**1024 - 105, word_bits=16)
    assert safe.cost().word_products == 66 * 66 + 65 * 66 // 2 + 2334 == 8835


def test_ozturk_events_sum_over_modmul() -> None:
    m = odd_modulus(random.Random(9), 300)
    model = _oz(m, 32)
    out = model.modmul(5, 7)
    assert sum(v for key, v in out.events.items() if key.startswith("low_carry_")) == 2
    assert out.digits is not None and out.digit_bits == 33 and out.digit_weight_bits == 32
    assert out.stages["a_mont (Python a*R mod m)"] == 5 * model.radix % m


# --------------------------------------------------------------------------
# 5. DEC PAM modular product unit
# --------------------------------------------------------------------------
@pytest.mark.parametrize("bits,steps", [(8, 3000), (64, 5000), (128, 3000), (254, 2000), (512, 800), (1024, 150)])
def test_dec_chained_squarings_stay_below_2m(bits: int, steps: int) -> None:
    seed = 5000 + bits
    rng = random.Random(seed)
    m = 253 if bits == 8 else odd_modulus(rng, bits) | (0b11 << (bits - 2))
    model = mt.DecMpu(mt.DecMpuParams(m))
    binv = pow(model.radix, -1, m)
    x = 2 * m - 1
    for step in range(steps):
        out = model.monpro(x, x)
        msg = f"seed={seed} bits={bits} step={step}"
        assert out.raw < 2 * m == model.redundant_bound, msg
        assert out.result == x * x * binv % m, msg
        assert out.events["bound_violation"] == 0, msg
        x = out.raw


def test_dec_maximal_inputs() -> None:
    for bits in (8, 64, 254, 255, 256, 1024):
        m = 253 if bits == 8 else 2**bits - 1 - 2 * (bits % 7)
        for extra in (2, 3, 6):
            model = mt.DecMpu(mt.DecMpuParams(m, extra_bits=extra))
            out = check_monpro(model, 2 * m - 1, 2 * m - 1, f"bits={bits} extra={extra}")
            assert out.raw < 2 * m
            # the derivation: P < (A*B + (beta-1)*M)/beta
            assert out.raw * model.radix <= (2 * m - 1) ** 2 + (model.radix - 1) * m


def test_dec_bound_fails_when_beta_below_4m() -> None:
    seed = 6100
    rng = random.Random(seed)
    m = odd_modulus(rng, 64) | (0b111 << 61)  # beta = 2^65 < 4m
    model = mt.DecMpu(mt.DecMpuParams(m, extra_bits=1))
    assert not model.params.bound_holds and model.radix < 4 * m
    assert mt.DecMpuParams(m, extra_bits=2).bound_holds
    found = None
    for case in range(2000):
        x, y = rng.randrange(m, 2 * m), rng.randrange(m, 2 * m)
        out = check_monpro(model, x, y, f"seed={seed} case={case}")
        if out.raw >= 2 * m:
            assert out.events["bound_violation"] == 1
            found = (case, out.raw)
            break
    assert found is not None, f"seed={seed}: no output >= 2m found with beta < 4m"
    assert model.redundant_bound > 2 * m


def test_dec_pam_1990_configuration() -> None:
    m = odd_modulus(random.Random(254), 254)
    params = mt.DecMpuParams.pam_1990(m)
    assert params.extra_bits == 6 and params.iterations == 260 and params.beta == 2**260
    assert params.bound_holds and params.beta >= 64 * m  # 6 extra bits: far more room than the 2 needed
    model = mt.DecMpu(params)
    check_monpro(model, 2 * m - 1, 2 * m - 1, "PAM 1990")
    assert model.cost().extra["cycles_per_product"] == 260
    with pytest.raises(ParameterError, match=r"^modulus: is 255 bits wide, wider than the design's 254 bits"):
        mt.DecMpuParams.pam_1990(2**254 + 1)


def test_carry_completion_worst_case_and_statistics() -> None:
    for width in (1, 8, 64, 256):
        value, cycles = mt.carry_completion((1 << width) - 1, 1)  # the carry ripples through all ones
        assert value == 1 << width and cycles == width + 1
    assert mt.carry_completion(12345, 0) == (12345, 0)
    seed = 6300
    rng = random.Random(seed)
    for bits in (64, 256, 512):
        m = odd_modulus(rng, bits)
        model = mt.DecMpu(mt.DecMpuParams(m))
        cycles = []
        x = rng.randrange(2 * m)
        for _ in range(300):
            out = model.monpro(x, x)
            cycles.append(out.events["carry_completion_cycles"])
            x = out.raw
        mean, worst = statistics.mean(cycles), max(cycles)
        # "average few cycles": about log2(width), far below the full width
        assert 2 < mean < math.log2(bits) + 4, f"seed={seed} bits={bits} mean={mean}"
        assert worst <= model.params.datapath_bits + 1, f"seed={seed} bits={bits}"
        assert worst < bits // 2, f"seed={seed} bits={bits} worst={worst}"


def test_dec_cost() -> None:
    cost = mt.DecMpu(mt.DecMpuParams(2**255 - 19)).cost()
    assert cost.adder_tree_inputs == 3 and cost.extra["iterations"] == 257 and cost.word_products == 0


# --------------------------------------------------------------------------
# hypothesis properties
# --------------------------------------------------------------------------
odd_moduli = st.integers(min_value=3, max_value=2**700).map(lambda v: v | 1).filter(lambda v: v >= 3)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(m=odd_moduli, data=st.data())
def test_property_canonical_models_agree(m: int, data: st.DataObject) -> None:
    x = data.draw(st.integers(0, m - 1))
    y = data.draw(st.integers(0, m - 1))
    w = data.draw(st.sampled_from([8, 16, 32, 64]))
    results = {
        "montgomery": mt.Montgomery(mt.MontgomeryParams(m, word_bits=w)),
        "cios": mt.MontgomeryCIOS(mt.CIOSParams(m, word_bits=w)),
        "reduced": mt.ReducedMontgomery(mt.ReducedParams(m, word_bits=w)),
    }
    for name, model in results.items():
        check_monpro(model, x, y, f"{name} w={w} m={m:#x}")
        assert model.modmul(x, y).result == x * y % m


@settings(derandomize=True, max_examples=120, deadline=None)
@given(bits=st.integers(3, 300), d=st.sampled_from([16, 32, 64]), data=st.data())
def test_property_ozturk_any_digits(bits: int, d: int, data: st.DataObject) -> None:
    m = data.draw(st.integers(2 ** (bits - 1), 2**bits - 1)) | 1
    model = _oz(m, d)
    rbr = model.params.rbr
    digit = st.integers(0, rbr.digit_max)
    x = tuple(data.draw(st.lists(digit, min_size=rbr.words, max_size=rbr.words)))
    y = tuple(data.draw(st.lists(digit, min_size=rbr.words, max_size=rbr.words)))
    out = check_monpro(model, x, y, f"d={d} m={m:#x}", in_bound=is_in_bound(model, "rbr", x, y))
    # The carry of the redundant low parts is decided by their top digits alone (asserted in the model too).
    assert out.stages["carry"] in (0, 1, 2, 3, 4)


@settings(derandomize=True, max_examples=100, deadline=None)
@given(m=st.integers(3, 2**300).map(lambda v: v | 1), data=st.data())
def test_property_dec_carry_save_equals_recurrence(m: int, data: st.DataObject) -> None:
    x = data.draw(st.integers(0, 2 * m - 1))
    y = data.draw(st.integers(0, 2 * m - 1))
    extra = data.draw(st.integers(2, 7))
    model = mt.DecMpu(mt.DecMpuParams(m, extra_bits=extra))
    cs, plain = model.monpro_carry_save(x, y), model.monpro_plain(x, y)
    assert cs.raw == plain.raw and cs.stages["Q"] == plain.stages["Q"]
    assert cs.raw < 2 * m and cs.result == monpro_oracle(model, x, y)


# --------------------------------------------------------------------------
# parameter errors
# --------------------------------------------------------------------------
EVEN = 2**100


@pytest.mark.parametrize("make", [
    lambda: mt.MontgomeryParams(EVEN), lambda: mt.CIOSParams(EVEN), lambda: mt.ReducedParams(EVEN),
    lambda: mt.OzturkMontParams(EVEN), lambda: mt.DecMpuParams(EVEN),
])
def test_even_modulus_rejected(make: Callable[[], Any]) -> None:
    with pytest.raises(ParameterError, match=r"^modulus: must be odd for Montgomery reduction") as info:
        make()
    assert info.value.param == "modulus"


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_operand_out_of_range(config: str) -> None:
    build, domain, _ = CONFIGS[config]
    m = 2**127 - 1
    model = build(m)
    with pytest.raises(ParameterError, match=r"^a: operand out of range: need 0 <= a < modulus"):
        model.modmul(m, 1)
    with pytest.raises(ParameterError, match=r"^b: operand out of range: need 0 <= b < modulus, got a negative"):
        model.modmul(1, -1)
    if domain == "canonical":
        with pytest.raises(ParameterError, match=r"^x: operand out of range: need 0 <= x < modulus"):
            model.monpro(m, 1)
    elif domain == "dec":
        with pytest.raises(ParameterError, match=r"^y: operand out of range: need 0 <= y < 2\*modulus"):
            model.monpro(1, 2 * m)
    else:
        rbr = model.params.rbr
        with pytest.raises(ParameterError, match=r"^x: operand out of range: need 0 <= x < the value bound"):
            model.monpro(rbr.value_bound, 1)
        with pytest.raises(ParameterError, match=rf"^y: needs {rbr.words} digits, got {rbr.words - 1}"):
            model.monpro(1, rbr.max_digits[:-1])
        bad = list(rbr.max_digits)
        bad[2] += 1
        with pytest.raises(ParameterError, match=r"^x: digit 2 = \d+ is outside \[0, 2\^\d+\)"):
            model.monpro(tuple(bad), 1)


def test_word_size_that_cannot_hold_the_carries() -> None:
    m4096 = odd_modulus(random.Random(4096), 4096)
    with pytest.raises(ParameterError, match=r"^word_bits: 8-bit words cannot hold the carries of a 514-word"):
        mt.OzturkMontParams(m4096, word_bits=8)
    with pytest.raises(ParameterError, match=r"^word_bits: 4-bit words cannot hold the carries of a 256-word "
                                             r"reduced Montgomery product"):
        mt.ReducedParams(odd_modulus(random.Random(1), 1024), word_bits=4)
    with pytest.raises(ParameterError, match=r"^word_bits: must be at least 4, got 2"):
        mt.OzturkMontParams(253, word_bits=2)
    with pytest.raises(ParameterError, match=r"^word_bits: must be positive, got 0"):
        mt.CIOSParams(253, word_bits=0)


def test_modulus_wider_than_the_design() -> None:
    m = 2**64 + 13
    cases = [
        (lambda: mt.MontgomeryParams(m, bits=64), "64"),
        (lambda: mt.CIOSParams(m, word_bits=32, words=2), "64"),
        (lambda: mt.ReducedParams(m, word_bits=16, words=4), "64"),
        (lambda: mt.OzturkMontParams(m, word_bits=16, digits=4, feedback=False), "64"),
        (lambda: mt.DecMpuParams(m, bits=64), "64"),
    ]
    for make, width in cases:
        with pytest.raises(ParameterError, match=rf"^modulus: is 65 bits wide, wider than the design's {width} bits"):
            make()


def test_other_parameter_errors() -> None:
    with pytest.raises(ParameterError, match=r"^extra_bits: must be at least 1 so that every bit"):
        mt.DecMpuParams(253, extra_bits=0)
    with pytest.raises(ParameterError, match=r"^modulus: must be an integer, got float"):
        mt.MontgomeryParams(253.0)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r"^modulus: must be at least 3, got 1"):
        mt.CIOSParams(1)


# --------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------
def test_registry_entries() -> None:
    names = [info.name for info in mt.ALGORITHMS]
    assert names == ["montgomery", "montgomery-cios", "montgomery-reduced", "montgomery-ozturk", "dec-mpu"]
    m = 2**127 - 1
    for info in mt.ALGORITHMS:
        assert isinstance(info, AlgorithmInfo) and info.odd_modulus_only and info.family == "montgomery"
        model = info.build(m)
        assert model.modulus == m and model.cost().word_products >= 0
        assert info.edge_cases is not None
        for name, (a, b) in info.edge_cases(model).items():
            check_modmul(model, a, b, f"{info.name} edge {name}")
    assert mt.ALGORITHMS[1].build(m, word_bits=16).params.word_bits == 16
    assert mt.ALGORITHMS[3].build(m, word_bits=64).params.k == 3  # R = 2^128 < 8m needs a third digit
