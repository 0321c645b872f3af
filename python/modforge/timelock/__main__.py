"""``python -m modforge.timelock overhead [--backend NAME] [BITS ...]``: the error check's cost (docs/timelock.md)."""

import sys

from .check import main_overhead

if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] != ["overhead"]:
        sys.exit("usage: python -m modforge.timelock overhead [--backend NAME] [BITS ...]")
    args = args[1:]
    backend = "auto"
    if args[:1] == ["--backend"] and len(args) >= 2:
        backend, args = args[1], args[2:]
    main_overhead([int(a) for a in args], backend)
