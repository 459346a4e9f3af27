#!/usr/bin/env python3
"""What rendezvous transfers (NCCL: a send waits for its receive) cost each
built-in schedule, by pp-simulate.

For every multi-rank schedule in pp-opt's registry, on p ranks with m
micro-batches (v = 2 chunks per rank for the looped and V placements),
F = W = 1, B = 1.5 per stage and each given transfer time, prints the
makespan of:
  async order       pp-insert-transfers{semantics=async} (each receive right
                    before its consumer), simulated with sends that never
                    block;
  rendezvous order  pp-insert-transfers (the default: exchange groups no
                    rendezvous run deadlocks on), simulated both ways;
and whether the rendezvous order moved any transfer (beyond grouping).
The async order deadlocks under rendezvous for every schedule but GPipe.

Standard library only. Example:
  python3 bench/rendezvous_table.py --pp-opt build/bin/pp-opt
"""

import argparse
import re
import subprocess

MULTI_CHUNK = {"interleaved-1f1b", "looped-bfs", "zbv", "v-half", "v-min",
               "dualpipev", "hanayo", "interleaved-zb"}
SKIP = {"exact", "auto"}


def pp_opt_run(pp_opt, passes):
    out = subprocess.run([pp_opt, "-"] + passes, input="module {}\n",
                         capture_output=True, text=True)
    return out.returncode, out.stdout, out.stderr


def registry(pp_opt):
    _, _, err = pp_opt_run(pp_opt, ["--pp-schedule=schedule=__list__ "
                                    "num-stages=2 num-microbatches=2"])
    names = re.search(r"expected one of: (.*)", err).group(1).split(",")
    return [n.strip() for n in names if n.strip() not in SKIP]


def makespan(pp_opt, schedule, order, semantics):
    rc, _, err = pp_opt_run(pp_opt, [
        "--pp-schedule=" + schedule, "--pp-insert-transfers=semantics=" + order,
        "--pp-simulate=semantics=" + semantics, "-o", "/dev/null"])
    if rc != 0:
        return "deadlock" if "deadlock" in err else "error"
    return "%g" % float(re.search(r"makespan ([0-9.eE+-]+)", err).group(1))


def reordered(pp_opt, schedule):
    def ir(order):
        _, out, _ = pp_opt_run(pp_opt, ["--pp-schedule=" + schedule,
                                        "--pp-insert-transfers=semantics=" +
                                        order])
        return out.replace(" grouped", "")
    return "yes" if ir("async") != ir("rendezvous") else "no"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-opt", default="build/bin/pp-opt")
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--comm", default="0,0.1")
    args = parser.parse_args()
    header = ("schedule", "async order, async", "async order, rendezvous",
              "rendezvous order, async", "rendezvous order, rendezvous",
              "moved")
    for comm in args.comm.split(","):
        print("\np=%d, m=%d, F=W=1, B=1.5, transfer %s" %
              (args.ranks, args.microbatches, comm))
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for name in registry(args.pp_opt):
            chunks = 2 if name in MULTI_CHUNK else 1
            schedule = ("schedule=%s num-stages=%d num-ranks=%d "
                        "num-microbatches=%d backward-input-cost=1.5 "
                        "comm-cost=%s" % (name, chunks * args.ranks,
                                          args.ranks, args.microbatches, comm))
            cells = [makespan(args.pp_opt, schedule, order, semantics)
                     for order in ("async", "rendezvous")
                     for semantics in ("async", "rendezvous")]
            print("| %s | %s | %s |" % (name, " | ".join(cells),
                                        reordered(args.pp_opt, schedule)))


if __name__ == "__main__":
    main()
