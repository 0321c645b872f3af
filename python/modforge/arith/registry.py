"""The list of algorithms, as the CLI and the generic tests see them.

Each model module declares ``ALGORITHMS``: a list of :class:`AlgorithmInfo`.
This module collects them, importing the model modules only when asked, so
``import modforge.arith`` stays cheap.  A new model registers by adding its
module to ``_MODULES``; it does not copy a test file, because the generic
oracle tests in ``tests/arith/test_oracle.py`` run every registered model.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from .base import ModMulModel, ParameterError

# Model modules, in the order `modforge algos` lists their families.
_MODULES = (
    "modforge.arith.karatsuba",
    "modforge.arith.montgomery",
    "modforge.arith.rbr_models",
    "modforge.arith.ozturk",
    "modforge.arith.predictive",
    "modforge.arith.barrett",
    "modforge.arith.hybrid",
)


@dataclass(frozen=True)
class AlgorithmInfo:
    """One algorithm as users pick it: ``modforge modmul --algo NAME``.

    ``build(modulus, **options)`` returns a model (see
    :class:`modforge.arith.base.ModMulModel`).  ``kind`` is ``"modmul"`` for a
    modular multiplier, ``"multiplier"`` for a plain integer multiplier whose
    ``result`` is reduced by the Python oracle (the CLI says so).
    ``cost_formula`` states the cost model in words and symbols, ``options``
    the keyword options ``build`` accepts (name -> one-line help), and
    ``heavy`` marks models whose Python form is slow at large widths (word
    size 16 or bit-serial), so generic tests spend their random cases mostly
    on small widths for them.  ``edge_cases(model)`` may add named operand
    pairs to the generic edge list.
    """

    name: str
    family: str
    seed: str
    summary: str
    cost_formula: str
    build: Callable[..., ModMulModel]
    kind: str = "modmul"
    options: dict[str, str] = field(default_factory=dict)
    heavy: bool = False
    odd_modulus_only: bool = False
    edge_cases: Callable[[Any], dict[str, tuple[int, int]]] | None = None


def all_algorithms() -> list[AlgorithmInfo]:
    out: list[AlgorithmInfo] = []
    for module_name in _MODULES:
        module = importlib.import_module(module_name)
        out.extend(module.ALGORITHMS)
    return out


def get(name: str) -> AlgorithmInfo:
    algos = {a.name: a for a in all_algorithms()}
    try:
        return algos[name]
    except KeyError:
        raise ParameterError("algo", f"unknown algorithm {name!r}; choose one of: {', '.join(sorted(algos))}") from None
