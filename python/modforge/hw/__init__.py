"""Generated, verified RTL for the VDF squarers of the seeds (see docs/hardware.md).

* :mod:`.ozturk`, :mod:`.predictive`, :mod:`.san`: one generator per architecture, each
  parameterised by one frozen value whose methods give latency and resource estimates;
* :mod:`.common`: DSP-tile products, carry-save column trees, pipeline-cut scheduling;
* :mod:`.flow`: generate, lint, build (cached) and simulate with Verilator;
* :mod:`.vectors` and :mod:`.harness`: model-made vectors and the self-checking C++ harness.

Amaranth and Verilator load only when a design is built or simulated.
"""

from .registry import ARCHITECTURES, arch_info

__all__ = ["ARCHITECTURES", "arch_info"]
