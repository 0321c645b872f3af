"""Fixtures of the VDF tests (helpers live in helpers.py)."""

from __future__ import annotations

import pytest

from .helpers import Rsa, rsa


@pytest.fixture(scope="session")
def rsa512() -> Rsa:
    return rsa(512)


@pytest.fixture(scope="session")
def rsa1024() -> Rsa:
    return rsa(1024)
