#!/usr/bin/env python3
"""Runs bench/recv_latency.c on 2 ranks: raw MPI vs pprt ping-pong latency,
and the CPU time of a rank waiting 300 ms for its peer."""
import argparse
import os
import shutil
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", default="build",
                        help="build directory holding runtime/pprt-recv-latency")
    parser.add_argument("--mpiexec", default=shutil.which("mpiexec") or "mpiexec")
    parser.add_argument("--iters", type=int, default=200,
                        help="round trips per round")
    parser.add_argument("--rounds", type=int, default=10,
                        help="alternating raw/pprt rounds; medians are printed")
    args = parser.parse_args()
    exe = os.path.join(args.build, "runtime", "pprt-recv-latency")
    env = dict(os.environ, PPRT_LATENCY_ITERS=str(args.iters),
               PPRT_LATENCY_ROUNDS=str(args.rounds))
    proc = subprocess.run(["timeout", "300", args.mpiexec, "-n", "2", exe,
                           "--steps", "1"], capture_output=True, text=True,
                          env=env)
    if proc.returncode != 0:
        sys.exit(f"recv_latency failed ({proc.returncode}):\n{proc.stderr}")
    print("Half round trip (us) of a ping-pong between 2 ranks, median of "
          f"{args.rounds} rounds x {args.iters} round trips")
    for line in proc.stdout.splitlines():
        if line.startswith(("|", "wait:")):
            print(line)


if __name__ == "__main__":
    main()
