"""What ``hw gen``, ``hw sim``, ``hw report`` and ``hw explore`` share: the design options, the design they
describe, and the check of an output directory.

Both command modules (:mod:`.hw`, :mod:`.hw_report`) import this one and not each other.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..arith.base import ParameterError
from ..inttext import brief
from .main import INTEGER, MAX_MODEL_BITS, MAX_OPTION_VALUE, _parse_options, parse_int


def design_options(f):
    f = click.option("--opt", "opts", multiple=True, metavar="KEY=VALUE",
                     help="Any design parameter (see `modforge hw list`), repeatable.")(f)
    f = click.option("--dsp-bits", type=INTEGER, help="DSP tile operand width [default: 17].")(f)
    f = click.option("--word-bits", type=INTEGER, help="Digit weight d [default: 16].")(f)
    f = click.option("--cycles", type=INTEGER, help="Cycles per operation (ozturk, san-montgomery) [default: 1].")(f)
    f = click.option("--modulus", "modulus_text", help="Modulus (decimal or 0x-hex), or 'vdf-alliance' (the "
                                                       "1024-bit competition modulus) [default: a reproducible "
                                                       "modulus of --bits bits].")(f)
    f = click.option("--bits", type=INTEGER, help="Design width in bits.")(f)
    f = click.argument("arch", metavar="ARCH")(f)
    return f


# Vectors and chained squarings per simulation: the model computes each one in Python first (and a chain
# must fit the designs' 32-bit in_count); far beyond this a typo would only run for days.
MAX_SIM_COUNT = 10_000_000
# --bits below this gives designs of a digit or two; a small --modulus may still ask for one.
MIN_DESIGN_BITS = 8


def design_from_options(arch: str, bits: int | None, modulus_text: str | None, cycles: int | None, word_bits: int | None,
            dsp_bits: int | None, opts: tuple[str, ...]):
    from ..hw.flow import make_design
    from ..hw.registry import arch_info

    arch_info(arch)
    options = _parse_options(opts)
    for key, value in (("cycles", cycles), ("word_bits", word_bits), ("dsp_bits", dsp_bits)):
        if value is not None:
            if key in options and options[key] != value:
                flag = "--" + key.replace("_", "-")
                raise ParameterError("opt", f"{key}={brief(options[key])} contradicts {flag} {value}: give one")
            options[key] = value
    for key, value in options.items():
        if key.endswith("modulus") and isinstance(value, int) and not isinstance(value, bool):
            # A modulus option (msm-controller's adder_modulus, a test prime) is a value, not a size: bounded
            # by the widest model instead.
            if not 0 < value < 1 << MAX_MODEL_BITS:
                raise ParameterError(key, f"must be a positive modulus of at most {MAX_MODEL_BITS} bits")
            continue
        # Sizes far past any design's range would only exhaust memory or time before the design refused them.
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_OPTION_VALUE:
            flag = f"--{key.replace('_', '-')}" if key in ("cycles", "word_bits", "dsp_bits") else f"--opt {key}"
            raise ParameterError(key, f"{brief(value)} is far beyond any design ({flag} at most {MAX_OPTION_VALUE})")
    if bits is not None and not MIN_DESIGN_BITS <= bits <= MAX_MODEL_BITS:
        raise ParameterError("bits", f"must be between {MIN_DESIGN_BITS} and {MAX_MODEL_BITS} bits, got "
                                     f"{bits if abs(bits) < 1 << 64 else 'more'}")
    modulus = None
    if modulus_text is not None:
        if modulus_text.strip().lower() in ("vdf-alliance", "vdf_alliance"):
            from ..data import vdf_alliance_modulus

            modulus = vdf_alliance_modulus()
        else:
            modulus = parse_int(modulus_text, "modulus")
    return make_design(arch, bits=bits, modulus=modulus, options=options)


def check_out_dir(out_dir: str) -> None:
    """-o DIR before the (minutes of) generation: a name, not a file, creatable or writable."""
    import os

    if not out_dir:
        raise ParameterError("out", "empty path")
    p = Path(out_dir)
    if p.is_symlink() and not p.exists():
        raise ParameterError("out", f"{out_dir!r} is a symbolic link to nothing")
    if p.exists() and not p.is_dir():
        raise ParameterError("out", f"{out_dir!r} is not a directory")
    existing = next((q for q in (p, *p.parents) if q.exists()), Path("."))
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise ParameterError("out", f"cannot create or write {out_dir!r} (in {str(existing)!r})")
