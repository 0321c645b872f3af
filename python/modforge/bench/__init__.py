"""Benchmarks: our engine measured side by side with outside anchors.

``modforge bench vdf`` (see :mod:`modforge.cli.bench`) times repeated modular
squaring - the whole cost of a VDF evaluation or a time-lock solve - for every
engine backend this machine runs and, in the same run, for the anchors:

* GMP built from source for this CPU (``mpz_powm`` with exponent ``2^k``, and
  the ``mpz_mul`` + ``mpz_mod`` loop), compiled at bench time into a cache
  directory outside the source tree (:mod:`modforge.bench.anchors`);
* OpenSSL's ``BN_mod_mul_montgomery`` through the system libcrypto;
* gmpy2, whose wheel carries a portable ("fat") GMP, for reference.

Layers: :mod:`.anchors` finds or builds the outside programs, :mod:`.impls`
gives ours and theirs one ``run(x, k) -> (ns, result)`` face, :mod:`.vdf`
measures (round-robin, pinned to one core, every result checked against
gmpy2) and computes the statistics, :mod:`.report` prints them.
"""

from .vdf import VdfBenchParams, run_vdf_bench

__all__ = ["VdfBenchParams", "run_vdf_bench"]
