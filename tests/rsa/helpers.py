"""Shared helpers of the RSA tests: keys made by ``cryptography`` (the outside oracle), cached per session."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from modforge.rsa import RSAPrivateKey, load_private_key

SIZES = (1024, 2048, 3072, 4096)

# Random messages per kernel and key size for the raw private operation.  The native kernel runs thousands
# at every size (about 6 s in all); the Python reference is 50-100x slower, so it runs fewer.
# MODFORGE_RSA_TEST_SCALE multiplies both (a long run).
_SCALE = float(os.environ.get("MODFORGE_RSA_TEST_SCALE", "1"))
_COUNTS = {"native": ((1024, 3000), (2048, 2000), (3072, 1000), (4096, 1000)),
           "python": ((1024, 120), (2048, 40), (3072, 10), (4096, 6))}
MESSAGES = {kernel: {size: max(1, int(count * _SCALE)) for size, count in counts}
            for kernel, counts in _COUNTS.items()}
# Of those, how many are also checked against GMP's m^d mod n (every one is checked by s^e == m).
POW_ORACLE = 60



def _kernels() -> list[str]:
    """Every private-key kernel this machine runs: the Python reference, and the native one once it exists."""
    from modforge.arith.base import ParameterError
    from modforge.rsa.exp import resolve_backend

    out = ["python"]
    try:
        resolve_backend("native")
        out.append("native")
    except ParameterError:
        pass
    return out


# One test, every implementation: kernel tests are parametrized over these.
KERNELS = _kernels()

HASH_CLASSES = {"sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512}


@dataclass(frozen=True)
class Pair:
    """One key as cryptography holds it (``ck``) and as we do (``key``), with its PEM."""

    ck: Any
    key: RSAPrivateKey
    pem: bytes

    @property
    def pub(self) -> Any:
        return self.ck.public_key()


def make_pair(bits: int, e: int = 65537) -> Pair:
    ck = rsa.generate_private_key(e, bits)
    pem = ck.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                           serialization.NoEncryption())
    return Pair(ck, load_private_key(pem), pem)


class KeyRing:
    """Keys made on first request and kept for the session (4096-bit generation takes seconds)."""

    def __init__(self) -> None:
        self._keys: dict[tuple[int, int], Pair] = {}

    def get(self, bits: int, e: int = 65537) -> Pair:
        if (bits, e) not in self._keys:
            self._keys[(bits, e)] = make_pair(bits, e)
        return self._keys[(bits, e)]


def h(name: str) -> Any:
    return HASH_CLASSES[name]()


def pss(name: str, salt: Any = padding.PSS.DIGEST_LENGTH) -> padding.PSS:
    return padding.PSS(mgf=padding.MGF1(h(name)), salt_length=salt)


def oaep(name: str, label: bytes | None = None) -> padding.OAEP:
    return padding.OAEP(mgf=padding.MGF1(h(name)), algorithm=h(name), label=label or None)


def rng(seed: int) -> random.Random:
    return random.Random(seed)
