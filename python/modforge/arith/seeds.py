"""The five seed documents the models cite, by the number their file names start with.

A model's ``seed`` field names a seed file and a section (``"001_dfb497c295201f64.txt Sec. VI"``); users
do not have those files, so :func:`sources` turns the numbers into the publications they are.
"""

from __future__ import annotations

import re

PUBLICATIONS = {
    "000": "Jane Street, \"Really low latency multipliers and cryptographic puzzles\" (VDF Alliance FPGA "
           "competition: the Ozturk and predictive Montgomery squarers)",
    "001": "B. Gribok, M. Langhammer, B. Pasca (Intel), \"FPGA Modular Multipliers using Hybrid Reduction "
           "Techniques\"",
    "002": "I. San, \"Low-Latency Montgomery Modular Multiplication Suitable for Verifiable Delay Functions\"",
    "003": "Jane Street, ZPrize MSM and NTT in Hardcaml",
    "004": "M. Shand, P. Bertin, J. Vuillemin (DEC PRL), \"Hardware speedups in long integer "
           "multiplication\" (PAM)",
}

_SEED_FILE = re.compile(r"\b(00[0-4])_[0-9a-f]{16}\b")


def sources(seed: str) -> list[str]:
    """The publications a ``seed`` reference names, in order, each once."""
    found: list[str] = []
    for number in _SEED_FILE.findall(seed):
        if PUBLICATIONS[number] not in found:
            found.append(PUBLICATIONS[number])
    return found
