"""``ntt-cluster``: seed 003's cluster of NTT cores under one controller (the design lives beside the core
it is built from, in :mod:`modforge.hw.ntt_core`; this module is the registry's entry point)."""

from __future__ import annotations

from .ntt_core import CLUSTER_ARCH as ARCH
from .ntt_core import NttClusterDesign
from .ntt_core import cluster_from_options as design_from_options

__all__ = ["ARCH", "NttClusterDesign", "design_from_options"]
