"""``python -m modforge.timelock overhead [--backend NAME] [BITS ...]``: the error check's cost (docs/timelock.md).

This report takes a modulus from :mod:`.create` and times it with :mod:`.check`, so it lives here, above both
(``create`` calibrates with ``check``; ``check`` imports nothing of ``create``).
"""

import sys

from .check import measure_overhead, open_ring
from .create import generate_modulus


def main_overhead(widths: list[int], backend: str = "auto") -> None:
    """Print the check's predicted and measured overhead at each width (``python -m modforge.timelock overhead``)."""
    for bits in widths or [1024, 2048]:
        n = generate_modulus(bits)[0]
        r = measure_overhead(open_ring(n, backend))
        print(f"{bits:5d} bits {r['backend']:>6}: L={r['block']} B={r['blocks']} mul={r['mul_cost']:.2f} sq, "
              f"predicted {100 * r['predicted_overhead']:.3f}%, attributed {100 * r['attributed_overhead']:.3f}%, "
              f"A/B {100 * r['ab_overhead']:+.3f}% (CPU: plain {r['plain_cpu_seconds']:.3f}s, "
              f"checked {r['checked_cpu_seconds']:.3f}s)", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] != ["overhead"]:
        sys.exit("usage: python -m modforge.timelock overhead [--backend NAME] [BITS ...]")
    args = args[1:]
    backend = "auto"
    if args[:1] == ["--backend"] and len(args) >= 2:
        backend, args = args[1], args[2:]
    main_overhead([int(a) for a in args], backend)
