"""A proof helper process: ``python -m modforge.vdf.worker`` (started by :class:`modforge.vdf.parallel.ProofPool`).

Reads pickled ``(kind, args)`` messages on stdin - first ``("init", (modulus,
backend))``, then kernel calls - and answers each with a pickled
``("ok", result)`` or ``("error", traceback)`` on stdout.  Exits at end of input.
Only its parent talks to it, through a private pipe.
"""

from __future__ import annotations

import pickle
import signal
import sys
import traceback


def main() -> int:
    inp = sys.stdin.buffer
    out = sys.stdout.buffer
    sys.stdout = sys.stderr          # nothing else may write into the result pipe
    # Ctrl-C reaches the whole process group: the parent decides (it closes our stdin), we stay quiet.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ring = None
    from ..engine import ModRing
    from .parallel import KERNELS

    while True:
        try:
            kind, args = pickle.load(inp)
        except EOFError:
            return 0
        try:
            if kind == "init":
                ring = ModRing(args[0], backend=args[1])
                result = None
            else:
                result = KERNELS[kind](ring, *args)
            reply = ("ok", result)
        except BaseException:  # noqa: BLE001 - reported to the parent
            reply = ("error", traceback.format_exc())
        pickle.dump(reply, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()


if __name__ == "__main__":
    sys.exit(main())
