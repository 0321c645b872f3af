"""Evaluation against pow(x, 2^t, N), both proofs round trip, kernels against naive products."""

from __future__ import annotations

import pytest

from modforge.engine import ModRing, available_backends
from modforge.vdf import (CostModel, PietrzakPlan, Proof, WesolowskiPlan, challenge_prime, evaluate,
                          evaluate_with_oracle, make_plans, pietrzak_rounds, prove, run, verify)
from modforge.vdf.parallel import ProofPool, fold, multiexp
from modforge.vdf.plan import pietrzak_lengths
from modforge.vdf.wesolowski import quotient_blocks

from ..support import peak_python_memory
from .helpers import oracle, rsa, seeded

TS = [1, 2, 3, 4, 5, 7, 8, 16, 17, 31, 64, 100, 255, 256, 1000, 10**4 + 7]
TYPES = ["wesolowski", "pietrzak"]


@pytest.mark.parametrize("t", TS)
@pytest.mark.parametrize("ptype", TYPES)
def test_round_trip_512(rsa512, ptype: str, t: int) -> None:
    g = rsa512.group
    x = g.hash_to_group(f"round trip {t}".encode())
    r = run(g, x, t, ptype, backend="gmp", workers=0)
    assert r.evaluation.y == oracle(g, x, t)
    assert r.proof is not None and r.proof.type == ptype and r.proof.y == r.evaluation.y
    verdict = verify(r.proof)
    assert verdict.valid, verdict.reason
    assert verify(r.proof.to_document()).valid
    if ptype == "pietrzak":
        assert len(r.proof.mu) == pietrzak_rounds(t) == (t - 1).bit_length()


@pytest.mark.parametrize("bits", [768, 1024, 1536, 2048])
@pytest.mark.parametrize("ptype", TYPES)
def test_round_trip_wider_moduli(ptype: str, bits: int) -> None:
    g = rsa(bits).group
    t = 10**4 + 7 if bits in (1024, 2048) else 999
    x = g.hash_to_group(b"wide")
    r = run(g, x, t, ptype, backend="gmp", workers=0)
    assert r.evaluation.y == oracle(g, x, t)
    assert verify(r.proof).valid


@pytest.mark.parametrize("backend", available_backends())
def test_every_backend_gives_the_same_proof(rsa512, backend: str) -> None:
    g = rsa512.group
    x = g.hash_to_group(b"backends")
    ref = run(g, x, 300, "wesolowski", backend="gmp", workers=0).proof
    assert run(g, x, 300, "wesolowski", backend=backend, workers=0).proof == ref
    assert verify(ref, backend=backend).valid


def test_numeric_input_not_from_hash(rsa512) -> None:
    # x = 2 need not be a square; y and the proofs still are what they must be.
    g = rsa512.group
    for ptype in TYPES:
        r = run(g, 2, 77, ptype, backend="gmp", workers=0)
        assert r.evaluation.y == oracle(g, 2, 77) and verify(r.proof).valid


@pytest.mark.parametrize("memory", [1 << 12, 1 << 16, 1 << 20, 1 << 26])
def test_plans_under_every_memory_budget(rsa512, memory: int) -> None:
    """Few checkpoints (large kappa, shallow Pietrzak depth) and many give the same valid proofs."""
    g = rsa512.group
    x = g.hash_to_group(b"memory")
    t = 5000
    wes, pie = make_plans(g, t, TYPES, memory=memory)
    ev = evaluate(g, x, t, ModRing(g.modulus, "gmp"), wesolowski=wes, pietrzak=pie)
    assert len(ev.values) * (g.nbytes + 160) <= max(memory, 2 * (g.nbytes + 160))
    for ptype in TYPES:
        assert verify(prove(ev, ptype)).valid


@pytest.mark.parametrize("kappa", [1, 3, 8, 64, 1000, 5000, 8192])
def test_wesolowski_any_kappa_and_window(rsa512, kappa: int) -> None:
    g = rsa512.group
    x = g.hash_to_group(b"kappa")
    t = 5000
    for window in (1, 5):
        ev = evaluate(g, x, t, ModRing(g.modulus, "gmp"), wesolowski=WesolowskiPlan(t, kappa, window))
        pi = prove(ev, "wesolowski", cost=CostModel()).pi
        l = challenge_prime(g, x, ev.y, t)
        assert pi == g.canon(pow(x, (1 << t) // l, g.modulus))


@pytest.mark.parametrize("t", [1, 2, 5, 100, 1023, 1024, 1025])
def test_pietrzak_every_depth(rsa512, t: int) -> None:
    g = rsa512.group
    x = g.hash_to_group(b"depth")
    ring = ModRing(g.modulus, "gmp")
    proofs = set()
    for depth in range(pietrzak_rounds(t) + 1):
        ev = evaluate(g, x, t, ring, pietrzak=PietrzakPlan(t, depth))
        assert max(ev.values, default=0) <= t + pietrzak_rounds(t)
        proofs.add(prove(ev, "pietrzak"))
    assert len(proofs) == 1                        # stored or direct midpoints: the same proof
    # The same proof at every depth could be the same wrong proof: it must also hold, for the true y.
    proof = proofs.pop()
    assert proof.y == oracle(g, x, t)
    verdict = verify(proof)
    assert verdict.valid, verdict.reason


@pytest.mark.parametrize("ptype", TYPES)
def test_helper_processes_give_the_same_proof(rsa512, ptype: str) -> None:
    g = rsa512.group
    x = g.hash_to_group(b"parallel")
    t = 1 << 12
    ring = ModRing(g.modulus, "gmp")
    plan = {"wesolowski": WesolowskiPlan(t, 16, 4), "pietrzak": PietrzakPlan(t, 9)}[ptype]
    ev = evaluate(g, x, t, ring, **{ptype: plan})
    alone = prove(ev, ptype, ring=ring, workers=0)
    with ProofPool(ring, workers=1) as pool:
        assert pool.parts == 2
        assert prove(ev, ptype, pool=pool) == alone
    assert verify(alone).valid


@pytest.mark.parametrize("backend", ["gmp"] + [b for b in ("ifma", "adx", "portable") if b in available_backends()])
def test_run_starts_helpers_only_where_the_proof_uses_them(rsa512, backend: str) -> None:
    """A native ring multiplies a Wesolowski proof out in its own threads: no helper process, two parts.
    Pietrzak, and Wesolowski on a Python-side ring, get the helper."""
    g = rsa512.group
    ring = ModRing(g.modulus, backend)
    native = ring.has_native_multiexp
    for ptype in TYPES:
        result = run(g, 5, 1 << 12, ptype, backend=backend, workers=1, cost=CostModel())
        assert verify(result.proof).valid
        helper = not (native and ptype == "wesolowski")
        assert result.processes == (2 if helper else 1), (backend, ptype)
        assert result.workers == 1
        assert result.plans[ptype]["parts"] == 2
    with ProofPool(ring, 0, threads=3) as pool:
        assert (pool.workers, pool.parts) == (0, 3)


@pytest.mark.parametrize("whole", [True, False])
def test_quotient_blocks_reassemble_floor_2t_over_l(monkeypatch, whole: bool) -> None:
    """Both ways of cutting q = floor(2^t / l): whole by GMP (byte-aligned kappa) and the streaming recurrence."""
    from modforge.vdf import wesolowski as wes

    if not whole:
        monkeypatch.setattr(wes, "WHOLE_QUOTIENT_MAX_T", 0)
    l = challenge_prime(rsa(512).group, 2, 4, 1)
    for t in (1, 7, 255, 256, 257, 1000, 4096):
        for kappa in (1, 8, 255, 256, 1000, 5000):
            count = -(-t // kappa)
            blocks = quotient_blocks(t, kappa, l, count)
            assert all(0 <= d < 1 << kappa for d in blocks)
            assert sum(d << (kappa * c) for c, d in enumerate(blocks)) == (1 << t) // l


@pytest.mark.parametrize("backend, workers", [("gmp", 0), ("gmp", 1)]
                         + [(b, 0) for b in ("ifma", "portable") if b in available_backends()])
@pytest.mark.parametrize("kappa, width", [(64, 1), (64, 7), (100, 33), (1000, 999), (5000, 64)])
def test_wesolowski_by_bit_ranges_holds_little_and_gives_the_same_pi(rsa512, monkeypatch, backend, workers,
                                                                     kappa, width) -> None:
    """Above the digit budget the prover walks the blocks by bit ranges (Horner over ranges, the accumulator
    one more base): the same pi as the oracle, with ranges that do and do not divide kappa."""
    from modforge.vdf import wesolowski as wes

    monkeypatch.setattr(wes, "MIN_RANGE_BITS", 1)
    g = rsa512.group
    x, t = g.hash_to_group(b"ranges"), 5000
    ring = ModRing(g.modulus, backend)
    plan = WesolowskiPlan(t, kappa, 4)
    ev = evaluate(g, x, t, ring, wesolowski=plan)
    calls = []
    real = wes.quotient_ranges
    monkeypatch.setattr(wes, "quotient_ranges", lambda *a, **k: calls.append(a) or real(*a, **k))
    with ProofPool(ring, workers=workers) as pool:
        pi = wes.prove(ev, pool, CostModel(), budget_bits=plan.checkpoints * width)
    l = challenge_prime(g, x, ev.y, t)
    assert pi == g.canon(pow(x, (1 << t) // l, g.modulus))
    assert calls and calls[0][-1] == min(width, kappa)


def test_wesolowski_at_t_2_29_holds_a_bounded_quotient(rsa512) -> None:
    """t = 2^29 from trapdoor checkpoints: the blocks would be 64 MiB; by ranges the prover holds 32 MiB."""
    g = rsa512.group
    x = g.hash_to_group(b"2^29")
    t = 1 << 29
    plan = WesolowskiPlan(t, 1 << 19, 8)                     # 1024 checkpoints of 2^19 bits
    ev = evaluate_with_oracle(g, x, t, lambda p: rsa512.power(x, p), wesolowski=plan)
    proof, peak = peak_python_memory(lambda: prove(ev, "wesolowski"))
    assert verify(proof).valid
    assert peak < 48 << 20, f"peak {peak >> 20} MiB"


def test_multiexp_and_fold_against_naive_products(rsa512) -> None:
    n = rsa512.n
    ring = ModRing(n, "gmp")
    rng = seeded("kernels")
    for count in (0, 1, 2, 7, 50):
        bases = [rng.randrange(1, n) for _ in range(count)]
        exps = [rng.choice([0, 1, (1 << 40) - 1, rng.getrandbits(40)]) for _ in range(count)]
        naive = 1
        for b, e in zip(bases, exps):
            naive = naive * pow(b, e, n) % n
        for window in (1, 3, 8, 13):
            got = multiexp(ring, bases, exps, 40, window)
            assert (1 if got is None else got) == naive
    for levels in range(4):
        values = [rng.randrange(1, n) for _ in range(1 << levels)]
        rs = [rng.getrandbits(128) for _ in range(levels)]
        naive = 1
        for b, v in enumerate(values):
            e = 1
            for j, r in enumerate(rs):
                if not b >> j & 1:
                    e *= r
            naive = naive * pow(v, e, n) % n
        assert fold(ring, values, rs) == naive


@pytest.mark.parametrize("t", [1 << 40, (1 << 40) - 1, 10**12 + 39])
def test_pietrzak_prover_and_verifier_at_t_2_40(rsa512, t: int) -> None:
    """The prover's stored rounds and direct rounds at t ~ 2^40, the powers supplied by the trapdoor."""
    g = rsa512.group
    x = g.hash_to_group(b"2^40")
    plan = PietrzakPlan(t, 6)
    ev = evaluate_with_oracle(g, x, t, lambda p: rsa512.power(x, p), pietrzak=plan)
    assert ev.y == g.canon(rsa512.power(x, t))
    lam = rsa512.lam
    proof = prove(ev, "pietrzak", direct=lambda v, h: pow(v, pow(2, h, lam), g.modulus))
    assert len(proof.mu) == pietrzak_rounds(t) == len(pietrzak_lengths(t)) <= 41
    v = verify(proof)
    assert v.valid, v.reason
    assert v.seconds < 1.0
    bad = Proof("pietrzak", g.modulus, x, t - 1, ev.y, mu=proof.mu)
    assert not verify(bad).valid


def test_wesolowski_at_t_2_40_by_trapdoor(rsa512) -> None:
    """The verifier at t = 2^40 (a trapdoor computes pi = x^(floor(2^t/l) mod lambda))."""
    g = rsa512.group
    x = g.hash_to_group(b"2^40")
    t = 1 << 40
    y = g.canon(rsa512.power(x, t))
    l = challenge_prime(g, x, y, t)
    lam = rsa512.lam
    q_mod = ((pow(2, t, l * lam) - pow(2, t, l)) // l) % lam      # floor(2^t / l) mod lambda
    pi = g.canon(pow(x, q_mod, g.modulus))
    v = verify(Proof("wesolowski", g.modulus, x, t, y, pi=pi))
    assert v.valid, v.reason
    assert not verify(Proof("wesolowski", g.modulus, x, t + 1, y, pi=pi)).valid


def test_wesolowski_prover_at_t_2_20_from_trapdoor_checkpoints(rsa512) -> None:
    g = rsa512.group
    x = g.hash_to_group(b"2^20")
    t = 1 << 20
    plan = WesolowskiPlan(t, 1 << 10, 8)
    ev = evaluate_with_oracle(g, x, t, lambda p: rsa512.power(x, p), wesolowski=plan)
    assert verify(prove(ev, "wesolowski")).valid


@pytest.mark.parametrize("backend", [b for b in available_backends() if b != "python"])
def test_evaluation_stores_exactly_the_planned_powers(backend: str) -> None:
    """Evenly spaced checkpoints go through sqr_n_trace (native: one call per chunk), the rest through
    sqr_n: every stored value, on every backend, is |x^(2^p)| by pow."""
    g = rsa(512).group
    x, t = 3, 5000
    ring = ModRing(g.modulus, backend)
    wes, pie = WesolowskiPlan(t, 64, 4), PietrzakPlan(t, 3)
    ev = evaluate(g, x, t, ring, wesolowski=wes, pietrzak=pie, chunk=1000)
    n = g.modulus
    assert set(ev.values) == set(wes.positions()) | set(pie.positions())
    for p, v in ev.values.items():
        assert v == g.canon(pow(x, 1 << p, n)), f"{backend}: position {p}"
    assert ev.y == g.canon(pow(x, 1 << t, n))
