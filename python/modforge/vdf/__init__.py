"""Verifiable delay functions over an RSA group: evaluation, Wesolowski and Pietrzak proofs, verification.

The function is ``y = |x^(2^t) mod N|`` in ``QR+_N``, the signed quadratic
residues (:mod:`modforge.vdf.group`):

* **Group.** Elements are the classes ``{x, N-x}`` of ``Z_N^*``, written as
  ``|x| = min(x, N-x)``; every operation is followed by the absolute value.
  ``-1`` becomes the identity, so the known element of order 2 cannot turn a
  proof for ``y`` into one for ``-y``.  Membership, checked for every input,
  output and proof element: ``0 < x <= (N-1)/2`` and ``gcd(x, N) = 1``; outputs
  of squaring (``y``, Pietrzak's ``mu_i``) must also have Jacobi symbol ``+1``
  when ``N = 1 mod 4`` (exact membership in ``QR+_N`` for a Blum modulus).
* **Inputs.** ``Group.hash_to_group(seed)``: SHAKE-256 of a domain tag, ``N``
  and the seed, expanded to twice the modulus width, reduced, squared, made
  absolute.
* **Fiat-Shamir** (:mod:`modforge.vdf.fiat_shamir`): Wesolowski's prime ``l``
  (256 bits, first SHAKE-256 candidate passing strong BPSW) and Pietrzak's
  128-bit ``r_i`` hash ``N, x, y, t``, the proof type and a versioned tag (and,
  for ``r_i``, the round's claim and midpoint).
* **Proofs from checkpoints** (:mod:`modforge.vdf.plan`): the evaluation keeps
  the powers ``x^(2^p)`` each proof needs, within a memory budget; neither
  proof repeats the evaluation, and the proof work runs on every core.
* **Files** (:mod:`modforge.vdf.formats`): versioned JSON, fixed-width hex
  elements, strict parsing, atomic writes.

Nothing here is constant-time: the VDF's inputs and outputs are public.
"""

from .api import ProofFailed, Run, Verdict, make_plans, prove, run, verify
from .evaluation import Evaluation, evaluate, evaluate_with_oracle
from .fiat_shamir import PROOF_TYPES, challenge_prime, hash_to_prime, round_challenge
from .formats import Proof, read_checkpoints, read_proof, write_checkpoints, write_proof
from .group import Group, Reject
from .plan import CostModel, PietrzakPlan, WesolowskiPlan, pietrzak_rounds

__all__ = [
    "PROOF_TYPES", "CostModel", "Evaluation", "Group", "PietrzakPlan", "Proof", "ProofFailed", "Reject", "Run",
    "Verdict", "WesolowskiPlan", "challenge_prime", "evaluate", "evaluate_with_oracle", "hash_to_prime",
    "make_plans", "pietrzak_rounds", "prove", "read_checkpoints", "read_proof", "round_challenge", "run",
    "verify", "write_checkpoints", "write_proof",
]
