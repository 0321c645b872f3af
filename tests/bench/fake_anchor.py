"""A stand-in anchor speaking the harness line protocol (modforge/bench/harness/*.c), for tests.

    python fake_anchor.py good|wrong|crash|refuse|lowcpu|noready
"""

import sys
import time


def main() -> None:
    mode = sys.argv[1]
    print("hello" if mode == "noready" else "ready fake 1.0", flush=True)
    n = None
    for line in sys.stdin:
        cmd, *args = line.split()
        if cmd == "N":
            if mode == "refuse":
                print("error bad modulus", flush=True)
                continue
            n = int(args[0], 16)
            print("ok", flush=True)
        elif cmd == "R":
            if mode == "crash":
                sys.exit(3)
            x, k = int(args[0], 16), int(args[1])
            t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
            r = pow(x, 1 << k, n)
            wall, cpu = time.perf_counter_ns() - t0, time.thread_time_ns() - c0
            if mode == "wrong":
                r ^= 1
            if mode == "lowcpu":  # as if the work ran on a thread the CPU clock does not see
                cpu = wall // 10
            print(wall, cpu, format(r, "x"), flush=True)


if __name__ == "__main__":
    main()
