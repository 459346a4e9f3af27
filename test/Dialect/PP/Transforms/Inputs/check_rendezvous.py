#!/usr/bin/env python3
"""Checks that pp-insert-transfers orders every schedule it is given so that
the ranks cannot deadlock with rendezvous transfers (NCCL).

For every schedule in the generator registry (read from pp-opt's 'unknown
schedule' diagnostic, so a new generator is covered without editing this
file) and a grid of rank counts, chunks and micro-batch counts, with unit
costs and with random heterogeneous F/B/W and transfer costs, runs
  pp-schedule | pp-insert-transfers | pp-verify-schedule{semantics=rendezvous}
  | pp-simulate{semantics=rendezvous}
and the same for each compute-only PyTorch dump given with --csv. With unit
costs the ordered schedule also goes through pp-schedule-v1 JSON and back
(its exchange groups in the optional "grouped" field) and must verify under
rendezvous again, unless the schedule has overlapped pairs or two weight
versions (pipedream-2bw), which the JSON cannot express. A problem
the generator itself refuses (such as interleaved-1f1b's multiple-of-p rule)
is skipped; every other failure is printed and makes the script fail.

Usage: check_rendezvous.py PP_OPT PP_TRANSLATE [--csv FILE ...]
"""

import argparse
import random
import re
import subprocess
import sys

MULTI_CHUNK = {"interleaved-1f1b", "looped-bfs", "zbv", "v-half", "v-min",
               "dualpipev", "hanayo", "interleaved-zb"}
# (ranks, micro-batches) per chunk count; the exact search gets small ones.
GRID = [(2, 2), (2, 6), (3, 5), (4, 4), (4, 8), (4, 12), (8, 16)]
EXACT_GRID = [(2, 2), (2, 3), (3, 3)]
REFUSAL = re.compile(r"error: .*(needs|at least|multiple|must be|exceeds)")


def registry(pp_opt):
    out = subprocess.run([pp_opt, "--pp-schedule=schedule=__list__ "
                          "num-stages=2 num-microbatches=2", "-o", "/dev/null"],
                         input="module {}\n", capture_output=True, text=True)
    match = re.search(r"expected one of: (.*)", out.stderr)
    if not match:
        sys.exit("cannot read the schedule registry: " + out.stderr)
    return [name.strip() for name in match.group(1).split(",")]


def costs(rng, stages):
    def values():
        return ",".join("%.2f" % rng.uniform(0.5, 2) for _ in range(stages))
    return (" forward-cost=%s backward-input-cost=%s backward-weight-cost=%s "
            "comm-cost=%.2f" % (values(), values(), values(),
                                rng.uniform(0, 0.3)))


def check(pp_opt, source, schedule_args):
    passes = ["--pp-insert-transfers=semantics=rendezvous",
              "--pp-verify-schedule=semantics=rendezvous",
              "--pp-simulate=semantics=rendezvous"]
    if schedule_args:
        passes.insert(0, "--pp-schedule=" + schedule_args)
    out = subprocess.run([pp_opt] + passes + ["-o", "/dev/null"],
                         input=source, capture_output=True, text=True)
    if out.returncode == 0:
        return "ok"
    first = next((l for l in out.stderr.splitlines() if "error:" in l),
                 out.stderr.strip())
    if schedule_args and "deadlock" not in first and REFUSAL.search(first):
        return "refused"
    return first


def json_round_trip(pp_opt, pp_translate, schedule_args):
    """Verifies the ordered schedule under rendezvous after a JSON round
    trip; "ok", "no json" (what the JSON cannot express) or the first
    error."""
    def run(tool, *args, source=None):
        return subprocess.run([tool, *args], input=source, capture_output=True,
                              text=True)
    ordered = run(pp_opt, "--pp-schedule=" + schedule_args,
                  "--pp-insert-transfers=semantics=rendezvous",
                  source="module {}\n")
    exported = run(pp_translate, "--pp-schedule-to-json", source=ordered.stdout)
    if exported.returncode != 0:
        inexpressible = ("overlapped" in exported.stderr or
                         "weight versions" in exported.stderr)
        return "no json" if inexpressible else exported.stderr.strip()
    imported = run(pp_translate, "--import-pp-schedule-json",
                   source=exported.stdout)
    verified = run(pp_opt, "--pp-verify-schedule=semantics=rendezvous", "-o",
                   "/dev/null", source=imported.stdout)
    if imported.returncode == 0 and verified.returncode == 0:
        return "ok"
    return (imported.stderr + verified.stderr).strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("pp_opt")
    parser.add_argument("pp_translate")
    parser.add_argument("--csv", nargs="*", default=[])
    args = parser.parse_args()
    rng = random.Random(7)
    failures, verified = [], {}
    for name in registry(args.pp_opt):
        chunks = 2 if name in MULTI_CHUNK else 1
        for ranks, mbs in EXACT_GRID if name == "exact" else GRID:
            for cost in ["", costs(rng, chunks * ranks)]:
                options = ("schedule=%s num-stages=%d num-ranks=%d "
                           "num-microbatches=%d%s" %
                           (name, chunks * ranks, ranks, mbs, cost))
                verdict = check(args.pp_opt, "module {}\n", options)
                if verdict == "ok" and not cost:
                    trip = json_round_trip(args.pp_opt, args.pp_translate,
                                           options)
                    if trip not in ("ok", "no json"):
                        verdict = "after a JSON round trip: " + trip
                if verdict == "ok":
                    verified[name] = verified.get(name, 0) + 1
                elif verdict != "refused":
                    failures.append("%s: %s" % (options, verdict))
        print("%s: %d problems verified under rendezvous" %
              (name, verified.get(name, 0)))
    for path in args.csv:
        imported = subprocess.run([args.pp_translate, "--import-pytorch-csv",
                                   path], capture_output=True, text=True)
        verdict = (check(args.pp_opt, imported.stdout, None)
                   if imported.returncode == 0 else imported.stderr.strip())
        print("%s: %s" % (path.rsplit("/", 1)[-1], verdict))
        if verdict != "ok":
            failures.append("%s: %s" % (path, verdict))
    for failure in failures:
        print("FAIL " + failure)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
