"""Every malformed or forged proof is rejected, with the reason that fits."""

from __future__ import annotations

import copy
import json

import gmpy2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modforge.vdf import Proof, challenge_prime, round_challenge, run, verify
from modforge.vdf.formats import read_proof

from .helpers import rsa

T = 1001          # odd, so Pietrzak's odd-T step is on the path


@pytest.fixture(scope="module")
def honest():
    key = rsa(512)
    g = key.group
    x = g.hash_to_group(b"forgeries")
    out = {}
    for ptype in ("wesolowski", "pietrzak"):
        proof = run(g, x, T, ptype, backend="gmp", workers=0).proof
        assert verify(proof).valid
        out[ptype] = proof
    return key, out


def rejected(doc_or_proof, *fragments: str) -> str:
    verdict = verify(doc_or_proof)
    assert not verdict.valid, "a forgery was accepted"
    for fragment in fragments:
        assert fragment in verdict.reason, f"reason {verdict.reason!r} lacks {fragment!r}"
    return verdict.reason


def doc(honest, ptype: str) -> dict:
    return copy.deepcopy(honest[1][ptype].to_document())


def g_of(honest):
    return honest[0].group


# ------------------------------------------------------------------------------------- wrong statement / proof

@pytest.mark.parametrize("ptype", ["wesolowski", "pietrzak"])
def test_wrong_y(honest, ptype: str) -> None:
    p = honest[1][ptype]
    g = g_of(honest)
    for y in (g.canon(p.y * 4), g.canon(p.y * p.x * p.x), 1):
        rejected(Proof(ptype, p.modulus, p.x, p.t, y, pi=p.pi, mu=p.mu), "does not hold")


@pytest.mark.parametrize("ptype", ["wesolowski", "pietrzak"])
@pytest.mark.parametrize("dt", [-1, 1, 1000, -999])
def test_wrong_t(honest, ptype: str, dt: int) -> None:
    d = doc(honest, ptype)
    d["t"] = T + dt
    reason = rejected(d)
    if ptype == "wesolowski" or (T + dt - 1).bit_length() == (T - 1).bit_length():
        assert "does not hold" in reason
    else:
        assert "midpoints" in reason


def test_wrong_x(honest) -> None:
    g = g_of(honest)
    for ptype, p in honest[1].items():
        rejected(Proof(ptype, p.modulus, g.canon(p.x * 4), p.t, p.y, pi=p.pi, mu=p.mu), "does not hold")


def test_other_modulus(honest) -> None:
    other = rsa(512, seed=1)
    for ptype, p in honest[1].items():
        rejected(Proof(ptype, other.n, p.x, p.t, p.y, pi=p.pi, mu=p.mu))


def test_altered_pi(honest) -> None:
    p = honest[1]["wesolowski"]
    g = g_of(honest)
    for pi in (g.canon(p.pi * 4), g.canon(p.pi + 1), 1, g.half):
        if g.element_problem(pi) is None:
            rejected(Proof("wesolowski", p.modulus, p.x, p.t, p.y, pi=pi), "does not hold")


@pytest.mark.parametrize("i", range(10))
def test_altered_mu(honest, i: int) -> None:
    p = honest[1]["pietrzak"]
    g = g_of(honest)
    mu = list(p.mu)
    mu[i] = g.canon(mu[i] * 4)          # still a square: only the equations can tell
    rejected(Proof("pietrzak", p.modulus, p.x, p.t, p.y, mu=tuple(mu)), "does not hold")


def test_swapped_or_dropped_mu(honest) -> None:
    p = honest[1]["pietrzak"]
    mu = list(p.mu)
    rejected(Proof("pietrzak", p.modulus, p.x, p.t, p.y, mu=tuple([mu[1], mu[0], *mu[2:]])), "does not hold")
    rejected(Proof("pietrzak", p.modulus, p.x, p.t, p.y, mu=tuple(mu[:-1])), "midpoints", "needs exactly 10")
    rejected(Proof("pietrzak", p.modulus, p.x, p.t, p.y, mu=tuple(mu + [mu[0]])), "midpoints")


def test_proof_for_one_type_is_no_proof_for_the_other(honest) -> None:
    d = doc(honest, "wesolowski")
    d["type"] = "pietrzak"
    rejected(d, "missing field 'proof.mu'")
    d = doc(honest, "pietrzak")
    d["type"] = "wesolowski"
    rejected(d, "missing field 'proof.pi'")


# ------------------------------------------------------------------------------------- the +-1 and order-2 attacks

def test_minus_y_is_not_canonical(honest) -> None:
    n = honest[0].n
    for ptype, p in honest[1].items():
        rejected(Proof(ptype, p.modulus, p.x, p.t, n - p.y, pi=p.pi, mu=p.mu), "y ", "canonical signed form")
    p = honest[1]["wesolowski"]
    # In Z_N^* (-pi)^l * x^r = -y for odd l: the classic sign forgery.  Here neither value is canonical.
    rejected(Proof("wesolowski", p.modulus, p.x, p.t, n - p.y, pi=n - p.pi), "canonical signed form")
    rejected(Proof("wesolowski", p.modulus, p.x, p.t, p.y, pi=n - p.pi), "pi ", "canonical signed form")
    q = honest[1]["pietrzak"]
    rejected(Proof("pietrzak", q.modulus, q.x, q.t, q.y, mu=(n - q.mu[0], *q.mu[1:])), "mu[0] ", "canonical")


def test_order_two_element_times_y_and_pi(honest) -> None:
    """With the factors one can build w of order 2; (w*y, w*pi) satisfies the equation but is no square."""
    key, proofs = honest
    g = key.group
    w = key.order_two()
    p = proofs["wesolowski"]
    y2, pi2 = g.canon(w * p.y), g.canon(w * p.pi)
    # The algebra alone would accept it (l is recomputed for the new y, so prove it for that l):
    l = challenge_prime(g, p.x, y2, p.t)
    pi_forged = g.canon(w * pow(p.x, (1 << p.t) // l, key.n))
    assert g.canon(pow(pi_forged, l, key.n) * pow(p.x, pow(2, p.t, l), key.n)) == y2
    rejected(Proof("wesolowski", p.modulus, p.x, p.t, y2, pi=pi_forged), "y ", "Jacobi")
    rejected(Proof("wesolowski", p.modulus, p.x, p.t, y2, pi=pi2), "Jacobi")
    # w times pi alone breaks the equation (l odd); -1 is the identity of the group.
    rejected(Proof("wesolowski", p.modulus, p.x, p.t, p.y, pi=pi2), "does not hold")


def test_order_two_attack_on_pietrzak(honest) -> None:
    """Claim w*y with mu_0 -> w*mu_0: when r_0 is odd every round equation holds; membership stops it."""
    key, _ = honest
    g = key.group
    w = key.order_two()
    n = key.n
    t = 8
    for seed in range(40):
        x = g.hash_to_group(f"order two {seed}".encode())
        honest_proof = run(g, x, t, "pietrzak", backend="gmp", workers=0).proof
        y_f = g.canon(w * honest_proof.y)
        mu0 = g.canon(w * honest_proof.mu[0])
        r0 = round_challenge(g, x, y_f, t, 0, x, t, y_f, mu0)
        if r0 % 2 == 0:
            continue
        # Continue honestly from the (true) claim x_1 = x^r0 * mu0 -> y_1 = mu0^r0 * y_f.
        x1 = g.canon(pow(x, r0, n) * mu0)
        rest = run(g, x1, t // 2, "pietrzak", backend="gmp", workers=0).proof
        # The sub-proof's challenges hash a different statement, so recompute the rounds by hand:
        mus = [mu0]
        xi, yi, T = x1, g.canon(pow(mu0, r0, n) * y_f), t // 2
        assert yi == rest.y
        i = 1
        while T > 1:
            mu = g.canon(pow(xi, 1 << (T // 2), n))
            r = round_challenge(g, x, y_f, t, i, xi, T, yi, mu)
            xi, yi = g.canon(pow(xi, r, n) * mu), g.canon(pow(mu, r, n) * yi)
            mus.append(mu)
            T //= 2
            i += 1
        assert g.canon(xi * xi) == yi                       # every equation of the forgery holds
        forged = Proof("pietrzak", g.modulus, x, t, y_f, mu=tuple(mus))
        rejected(forged, "y ", "Jacobi")
        return
    pytest.fail("no odd r_0 in 40 tries")


# ------------------------------------------------------------------------------------- non-members

@pytest.mark.parametrize("field", ["x", "y", "pi", "mu0"])
@pytest.mark.parametrize("value, fragment", [("zero", "is zero"), ("N", "is not reduced"), ("max", "is not reduced"),
                                             ("p", "shares a factor"), ("N-1", "canonical")])
def test_elements_out_of_the_group(honest, field: str, value: str, fragment: str) -> None:
    key = honest[0]
    g = key.group
    v = {"zero": 0, "N": key.n, "max": (1 << (8 * g.nbytes)) - 1, "p": key.p, "N-1": key.n - 1}[value]
    ptype = "pietrzak" if field == "mu0" else "wesolowski"
    d = doc(honest, ptype)
    if field == "pi":
        d["proof"]["pi"] = g.to_hex(v)
    elif field == "mu0":
        d["proof"]["mu"][0] = g.to_hex(v)
    else:
        d[field] = g.to_hex(v)
    if field == "x" and value == "N-1":
        fragment = "is N - 1, the identity"          # -1 is in the class of 1: refused as the identity first
    rejected(d, fragment)


# ------------------------------------------------------------------------------------- malformed documents

@pytest.mark.parametrize("field", ["x", "y", "modulus", "pi", "mu3"])
@pytest.mark.parametrize("edit, fragment", [
    (lambda s: s[:-2], "truncated"), (lambda s: "0x00" + s[2:], "oversized"), (lambda s: s[:-1], "truncated"),
    (lambda s: s + "0", "oversized"), (lambda s: s[:-1] + "g", "not lowercase hex"),
    (lambda s: "0x" + s[2:].upper(), "not lowercase hex"), (lambda s: s[:-1] + " ", "not lowercase hex"),
    (lambda s: s[2:], "must start with 0x"), (lambda s: "0X" + s[2:], "must start with 0x"),
    (lambda s: int(s, 16), "must be a hex string"), (lambda s: None, "must be a hex string"),
])
def test_bad_encodings(honest, field: str, edit, fragment: str) -> None:
    ptype = "pietrzak" if field == "mu3" else "wesolowski"
    d = doc(honest, ptype)
    holder, key = {"pi": (d["proof"], "pi"), "mu3": (d["proof"].get("mu"), 3)}.get(field, (d, field))
    before = holder[key]
    holder[key] = edit(before)
    assert holder[key] != before
    name = {"mu3": "proof.mu[3]", "pi": "proof.pi"}.get(field, field)
    rejected(d, fragment, f"'{name}'")


@pytest.mark.parametrize("field", ["format", "version", "type", "modulus", "bits", "x", "t", "y", "proof"])
def test_missing_field(honest, field: str) -> None:
    d = doc(honest, "wesolowski")
    del d[field]
    rejected(d, f"missing field '{field}'")


def test_missing_and_extra_proof_fields(honest) -> None:
    d = doc(honest, "wesolowski")
    d["proof"] = {}
    rejected(d, "missing field 'proof.pi'")
    d = doc(honest, "pietrzak")
    d["proof"]["pi"] = d["proof"]["mu"][0]
    rejected(d, "unexpected field 'proof.pi'")
    d = doc(honest, "wesolowski")
    d["comment"] = "hi"
    rejected(d, "unexpected field 'comment'")
    d = doc(honest, "pietrzak")
    d["proof"]["mu"] = d["proof"]["mu"][0]
    rejected(d, "'proof.mu' must be a JSON list")
    d = doc(honest, "wesolowski")
    d["proof"] = [d["proof"]["pi"]]
    rejected(d, "field 'proof' must be a JSON object")
    rejected([], "must be a JSON object")


@pytest.mark.parametrize("version, fragment", [(2, "unknown version 2"), (0, "unknown version 0"),
                                               ("1", "must be a JSON integer"), (1.0, "must be a JSON integer"),
                                               (True, "must be a JSON integer")])
def test_unknown_version(honest, version, fragment: str) -> None:
    d = doc(honest, "wesolowski")
    d["version"] = version
    rejected(d, fragment)


@pytest.mark.parametrize("ptype", ["rsa", "Wesolowski", "", None, 1])
def test_wrong_type(honest, ptype) -> None:
    d = doc(honest, "wesolowski")
    d["type"] = ptype
    rejected(d, "unknown proof type")


def test_wrong_format_name(honest) -> None:
    d = doc(honest, "wesolowski")
    d["format"] = "modforge-vdf-checkpoints"
    rejected(d, "format is 'modforge-vdf-checkpoints'")


@pytest.mark.parametrize("t, fragment", [(0, "'t'"), (-5, "'t'"), (1.5, "'t'"), ("1001", "'t'"), (True, "'t'"),
                                         (1 << 64, "'t'"), (None, "'t'")])
def test_bad_t(honest, t, fragment: str) -> None:
    d = doc(honest, "wesolowski")
    d["t"] = t
    rejected(d, fragment)


def test_bits_disagreeing_with_modulus(honest) -> None:
    d = doc(honest, "wesolowski")
    d["bits"] = 511                                   # same byte width, one bit less
    rejected(d, "has 512 bits but field 'bits' says 511")
    d["bits"] = 520
    rejected(d, "field 'modulus' is truncated")
    d["bits"] = "512"
    rejected(d, "'bits' must be a positive JSON integer")


def test_broken_modulus(honest) -> None:
    d = doc(honest, "wesolowski")
    g = g_of(honest)
    d["modulus"] = g.to_hex(int(gmpy2.next_prime(honest[0].n)))
    rejected(d, "modulus is prime")
    d["modulus"] = g.to_hex(honest[0].n + 1)
    rejected(d, "modulus must be odd")


def test_duplicate_keys_and_non_json_numbers_in_files(honest, tmp_path) -> None:
    from modforge.vdf import Reject

    text = json.dumps(doc(honest, "wesolowski"))
    dup = text[:-1] + ', "t": 5}'
    path = tmp_path / "dup.json"
    path.write_text(dup)
    with pytest.raises(Reject, match="duplicate field 't'"):
        read_proof(path)
    path.write_text(text.replace(f'"t": {T}', '"t": NaN'))
    with pytest.raises(Reject, match="not a JSON number"):
        read_proof(path)


# ------------------------------------------------------------------------------------- fuzzing

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8)
PATHS = [("format",), ("version",), ("type",), ("modulus",), ("bits",), ("x",), ("t",), ("y",), ("proof",),
         ("proof", "pi"), ("proof", "mu"), ("proof", "mu", 0), ("proof", "mu", 9)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ptype=st.sampled_from(["wesolowski", "pietrzak"]), path=st.sampled_from(PATHS), value=JSON_VALUES)
def test_any_replaced_field_is_rejected_without_crashing(honest, ptype: str, path: tuple, value) -> None:
    d = doc(honest, ptype)
    holder = d
    for key in path[:-1]:
        if not isinstance(holder, (dict, list)) or (isinstance(holder, dict) and key not in holder):
            return
        holder = holder[key]
    if isinstance(holder, dict) or (isinstance(holder, list) and path[-1] < len(holder)):
        if isinstance(holder, dict) and path[-1] not in holder:
            pass                                   # adds a field the type does not have
        elif holder[path[-1]] == value and type(holder[path[-1]]) is type(value):
            return
        holder[path[-1]] = value
    else:
        return
    verdict = verify(d)
    assert not verdict.valid and verdict.reason and "\n" not in verdict.reason


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ptype=st.sampled_from(["wesolowski", "pietrzak"]), data=st.data())
def test_any_flipped_hex_digit_is_rejected(honest, ptype: str, data) -> None:
    d = doc(honest, ptype)
    fields = [(d, "x"), (d, "y"), (d, "modulus")]
    fields += [(d["proof"], "pi")] if ptype == "wesolowski" else [(d["proof"]["mu"], i) for i in range(10)]
    holder, key = data.draw(st.sampled_from(fields))
    s = holder[key]
    pos = data.draw(st.integers(2, len(s) - 1))
    new = data.draw(st.sampled_from("0123456789abcdef").filter(lambda c: c != s[pos]))
    holder[key] = s[:pos] + new + s[pos + 1:]
    verdict = verify(d)
    assert not verdict.valid, f"flipping {key} at {pos} was accepted"


@pytest.mark.parametrize("mu", [5, "0x05", None.__class__, b"\x05"])
def test_a_proof_object_whose_mu_is_no_list_is_rejected_not_raised(honest, mu) -> None:
    import dataclasses

    rejected(dataclasses.replace(honest[1]["pietrzak"], mu=mu), "proof.mu must be a list of group elements")


def test_gmpy2_integers_are_integers(honest) -> None:
    """The API takes gmpy2.mpz wherever it takes int (README's own pattern: Group.canon(gmpy2.powmod(...)))."""
    import dataclasses

    from modforge.engine import ModRing
    from modforge.vdf import Group

    key, proofs = honest
    n = key.group.modulus
    g = Group(gmpy2.mpz(n))
    assert type(g.modulus) is int and g == key.group
    assert type(g.canon(gmpy2.powmod(3, 5, n))) is int
    ring = ModRing(gmpy2.mpz(n), backend="auto")
    assert ring.sqr(gmpy2.mpz(3)) == 9 and ring.sqr_n(gmpy2.mpz(3), gmpy2.mpz(2)) == 81
    assert ring.multiexp([gmpy2.mpz(3)], [gmpy2.mpz(5)]) == 243
    w = proofs["wesolowski"]
    assert verify(dataclasses.replace(w, x=gmpy2.mpz(w.x), y=gmpy2.mpz(w.y), pi=gmpy2.mpz(w.pi))).valid
    p = proofs["pietrzak"]
    assert verify(dataclasses.replace(p, mu=[gmpy2.mpz(m) for m in p.mu])).valid
    assert run(g, gmpy2.mpz(w.x), gmpy2.mpz(T), "wesolowski", backend="gmp", workers=0).proof == w


@pytest.mark.parametrize("workers", [-1, 1.5, "2"])
def test_the_api_refuses_bad_worker_counts(honest, workers) -> None:
    from modforge.arith.base import ParameterError

    g = honest[0].group
    with pytest.raises(ParameterError, match="workers"):
        run(g, g.hash_to_group(b"w"), 100, "wesolowski", workers=workers)


def test_fixed_width_integers_are_refused_not_half_used(honest) -> None:
    """numpy's integers have __index__ but wrap silently and lack int's methods: a proof carrying one is
    rejected with a reason (never an AttributeError from deep inside)."""
    import dataclasses

    np = pytest.importorskip("numpy")
    w = honest[1]["wesolowski"]
    rejected(dataclasses.replace(w, x=np.int64(w.x % (1 << 62))), "x is not an integer (int64)")
    rejected(dataclasses.replace(w, t=np.int64(T)), "t: must be an integer, got int64")


# -- the API's own inputs: dicts and Proof objects built in Python ------------------------------------------
@pytest.mark.parametrize("where", ["top", "proof"])
@pytest.mark.parametrize("key", [1, 2.5, None, (1, 2), b"y"])
@pytest.mark.parametrize("with_str_key", [True, False])
def test_a_dict_with_a_non_string_key_is_invalid_not_a_crash(honest, where: str, key, with_str_key: bool) -> None:
    """verify() never raises for a bad proof: sorting the unexpected keys raised TypeError when they mixed
    types (and a lone one was reported as if it were a string: "unexpected field '1'")."""
    for ptype in ("wesolowski", "pietrzak"):
        d = doc(honest, ptype)
        holder = d if where == "top" else d["proof"]
        if with_str_key:
            holder["comment"] = 1
        holder[key] = 1
        reason = rejected(d, "key that is not a string", repr(key))
        assert ("field 'proof'" in reason) == (where == "proof") and "\n" not in reason


@pytest.mark.parametrize("mu", [lambda mus: {m: 0 for m in mus}, lambda mus: set(mus),
                                lambda mus: iter(mus), lambda mus: (m for m in mus)])
def test_a_proof_object_whose_mu_is_no_sequence_is_rejected(honest, mu) -> None:
    """A dict of the right midpoints as keys was accepted (its keys iterated); a set has no order."""
    import dataclasses

    p = honest[1]["pietrzak"]
    rejected(dataclasses.replace(p, mu=mu(p.mu)), "proof.mu must be a list of group elements")
    assert verify(dataclasses.replace(p, mu=list(p.mu))).valid       # a list is a sequence too


def test_a_proof_object_carrying_both_bodies_is_rejected(honest) -> None:
    """The other type's field was ignored: a Proof is held to what a document may hold."""
    import dataclasses

    w, p = honest[1]["wesolowski"], honest[1]["pietrzak"]
    rejected(dataclasses.replace(w, mu=p.mu), "unexpected field 'proof.mu'")
    rejected(dataclasses.replace(p, pi=w.pi), "unexpected field 'proof.pi'")
    rejected(dataclasses.replace(w, mu=()), "unexpected field 'proof.mu'")


# -- the identity as input (issue 31 item 4: x = y = pi = 1 at t = 2^40 was "valid") -------------------------
@pytest.mark.parametrize("ptype", ["wesolowski", "pietrzak"])
@pytest.mark.parametrize("t", [T, 1 << 40])
def test_a_proof_for_the_identity_is_rejected(honest, ptype: str, t: int) -> None:
    from modforge.vdf.plan import pietrzak_lengths

    key, proofs = honest
    doc = proofs[ptype].to_document()
    doc.update(x="0x" + "00" * (len(doc["x"]) // 2 - 2) + "01", y="0x" + "00" * (len(doc["y"]) // 2 - 2) + "01", t=t)
    one = doc["x"]
    if ptype == "wesolowski":
        doc["proof"]["pi"] = one
    else:
        doc["proof"]["mu"] = [one] * len(pietrzak_lengths(t))
    rejected(doc, "x is 1, the identity of the group")


def test_the_api_refuses_the_identity_as_input(honest) -> None:
    from modforge.arith.base import ParameterError

    key, _ = honest
    for x in (1, key.group.modulus - 1):
        with pytest.raises(ParameterError, match="the identity of the group"):
            run(key.group, x, T, "wesolowski", backend="gmp", workers=0)
