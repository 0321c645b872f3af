"""Fixtures of the RSA tests (helpers live in helpers.py)."""

from __future__ import annotations

import pytest

from .helpers import KeyRing, Pair


@pytest.fixture(scope="session")
def keyring() -> KeyRing:
    return KeyRing()


@pytest.fixture(scope="session")
def k1024(keyring: KeyRing) -> Pair:
    return keyring.get(1024)


@pytest.fixture(scope="session")
def k2048(keyring: KeyRing) -> Pair:
    return keyring.get(2048)
