"""Zero-knowledge workloads of seed 003: MSM over BLS12-377 and the NTT over Goldilocks.

The public API is two functions, each loaded lazily with its own module so that ``import modforge.zk``
costs nothing: ``msm(points, scalars, ...)`` (``msm_api``) and ``ntt(a, inverse=False, ...)``
(``ntt_api``).  The bit-exact models sit beside them (see docs/zk.md).
"""

from __future__ import annotations

from typing import Any


def msm(*args: Any, **kwargs: Any) -> Any:
    """Multi-scalar multiplication over BLS12-377 G1; see ``modforge.zk.msm_api.msm``."""
    from .msm_api import msm as _msm

    return _msm(*args, **kwargs)


def ntt(*args: Any, **kwargs: Any) -> Any:
    """Number theoretic transform over Goldilocks; see ``modforge.zk.ntt_api.ntt``."""
    from .ntt_api import ntt as _ntt

    return _ntt(*args, **kwargs)


__all__ = ["msm", "ntt"]
