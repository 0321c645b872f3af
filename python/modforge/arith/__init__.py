"""Bit-exact models of the seed algorithms, in plain Python integers.

One module per algorithm family; :mod:`modforge.arith.registry` lists them.
"""

from .base import Cost, Outcome, ParameterError

__all__ = ["Cost", "Outcome", "ParameterError"]
