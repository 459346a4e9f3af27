#!/usr/bin/env python3
"""Profiled costs against the analytic cost model and against measured steps.

1. Profiles the model's stages (pp-compile --emit=profile: all stages on one
   process, B and W timed apart) and prints the analytic cost model's
   per-stage F, B, W (pp-partition-stages print-table) next to them: the
   error of the raw estimate and, since the model's device is a data-sheet
   peak, of the estimate scaled by one constant (sum measured / sum model).
2. For each schedule, simulates the step with the profile
   (pp-schedule{cost-file=...} + pp-simulate) and runs the compiled program
   under mpirun with --profile, whose "meta.step_time" is the measured
   median step time; prints both and the error.

Standard library only. Example:
  python3 bench/profile_vs_model.py --build build \\
      --model examples/gpt/gpt.mlir --corpus examples/gpt/corpus.txt \\
      --stages 4 --microbatches 8 --schedules gpipe,1f1b
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def run(cmd, **kw):
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if res.returncode != 0:
        sys.exit("command failed: %s\n%s%s" % (" ".join(cmd), res.stdout,
                                               res.stderr))
    return res.stdout + res.stderr


def profile(args, tmp, stages):
    out = os.path.join(tmp, "profile-%d.json" % stages)
    cmd = args.prefix + [
           args.pp_compile, args.model, "--stages", str(stages),
           "--microbatches", str(args.microbatches), "--emit=profile",
           "--profile-steps", str(args.steps), "-o", out]
    if args.corpus:
        cmd.append("--run-arg=--corpus=" + args.corpus)
    cmd.append("--run-arg=--profile-clock=" + args.clock)
    run(cmd)
    with open(out) as f:
        return out, json.load(f)


def model_table(args, stages):
    """Per-stage [F, B, W] in ms and activation bytes from the planner's
    table; None if the build's planner has no table."""
    text = subprocess.run(
        [args.pp_opt, args.model,
         "--pp-split-microbatches=num-microbatches=%d" % args.microbatches,
         "--pp-partition-stages=num-stages=%d num-microbatches=%d "
         "print-table" % (stages, args.microbatches), "-o", os.devnull],
        capture_output=True, text=True)
    rows = {}
    for line in text.stdout.splitlines():
        cols = line.split()
        if len(cols) >= 9 and cols[0].isdigit() and cols[1].isdigit():
            rows[int(cols[0])] = ([float(c) * 1e3 for c in cols[4:7]],
                                  float(cols[8]))
    if text.returncode != 0 or len(rows) != stages:
        return None
    return [rows[s] for s in range(stages)]


def compare_model(prof, model):
    keys = ["forward", "backward_input", "backward_weight"]
    measured = [[st[k] for k in keys] for st in prof["stages"]]
    print("\n## Analytic model vs profile (ms per micro-batch)\n")
    if model is None:
        print("the cost model's table (pp-partition-stages print-table) is "
              "not available in this build")
        return
    times = [t for t, _ in model]
    scale = sum(map(sum, measured)) / sum(map(sum, times))
    print("scale (measured / model, all stages and phases): %.3g\n" % scale)
    print("| stage | phase | model | measured | raw error | scaled error |")
    print("| --- | --- | --- | --- | --- | --- |")
    errors, trivial = [], []
    for s, (m, p) in enumerate(zip(times, measured)):
        for name, est, got in zip("FBW", m, p):
            raw = (est - got) / got if got > 0 else float("inf")
            scaled = (est * scale - got) / got if got > 0 else float("inf")
            # A phase with (almost) nothing to compute, such as the first
            # stage's B (no input gradient), has no meaningful relative error.
            if got < 0.05 * p[0]:
                trivial.append("%d/%s" % (s, name))
            else:
                errors.append(abs(scaled))
            print("| %d | %s | %.4g | %.4g | %+.0f%% | %+.0f%% |"
                  % (s, name, est, got, 100 * raw, 100 * scaled))
    errors.sort()
    print("\n|scaled error| over %d phases: median %.0f%%, max %.0f%%"
          % (len(errors), 100 * errors[len(errors) // 2], 100 * errors[-1]))
    if trivial:
        print("left out (measured under 5%% of the stage's F): %s"
              % ", ".join(trivial))
    print("\n| stage | model activation bytes | profiled activation_memory "
          "| profiled stash_memory |")
    print("| --- | --- | --- | --- |")
    for s, ((_, acts), st) in enumerate(zip(model, prof["stages"])):
        print("| %d | %.0f | %.0f | %.0f |" % (s, acts, st["activation_memory"],
                                            st["stash_memory"]))


def simulate(args, cost_file, stages, schedule, extra=""):
    text = run([args.pp_opt, args.model,
                "--pp-split-microbatches=num-microbatches=%d"
                % args.microbatches,
                "--pp-partition-stages=num-stages=%d" % stages,
                "--pp-derive-backward",
                "--pp-schedule=schedule=%s cost-file=%s%s" % (schedule,
                                                              cost_file,
                                                              extra),
                "--pp-insert-transfers=semantics=async", "--pp-simulate",
                "-o", os.devnull])
    return float(re.search(r"makespan ([-+0-9.eE]+)", text).group(1))


def measure(args, tmp, stages, schedule):
    exe = os.path.join(tmp, "train-%s-%d" % (schedule, stages))
    run([args.pp_compile, args.model, "--stages", str(stages),
         "--microbatches", str(args.microbatches), "--schedule", schedule,
         "-o", exe])
    out = os.path.join(tmp, "run-%s-%d.json" % (schedule, stages))
    cmd = args.prefix + ["mpirun", "-np", str(stages), exe, "--steps",
           str(args.steps), "--profile", out, "--profile-clock", args.clock]
    if args.corpus:
        cmd += ["--corpus", args.corpus]
    run(cmd)
    with open(out) as f:
        return out, json.load(f)


def compare_steps(args, tmp, stages, cost_file):
    print("\n## Simulated vs measured step time, %d stages on %d ranks, "
          "%d micro-batches (ms)\n" % (stages, stages, args.microbatches))
    print("| schedule | measured | simulated: profile | error | profile + "
          "in-run transfer | error | in-run profile | error | in-run "
          "transfer | rank 0 busy |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for schedule in args.schedules.split(","):
        sim = simulate(args, cost_file, stages, schedule)
        run_file, run_prof = measure(args, tmp, stages, schedule)
        got = run_prof["meta"]["step_time"]
        # The same run's own action times: what the ranks computed at while
        # sharing the cores.
        in_run = simulate(args, run_file, stages, schedule)
        transfer = run_prof["transfer"]
        with_comm = simulate(args, cost_file, stages, schedule,
                             " comm-cost=%g" % transfer)
        row = [schedule, "%.4g" % got]
        for sim_time in (sim, with_comm, in_run):
            row += ["%.4g" % sim_time, "%+.1f%%" % (100 * (sim_time - got) / got)]
        busy = run_prof["meta"]["step_action_time"]
        print("| " + " | ".join(row + ["%.3g" % transfer, "%.4g" % busy]) +
              " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--model", default="examples/gpt/gpt.mlir")
    ap.add_argument("--corpus", default="examples/gpt/corpus.txt")
    ap.add_argument("--stages", default="4",
                    help="comma-separated stage counts (one rank each)")
    ap.add_argument("--microbatches", type=int, default=8)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--schedules", default="gpipe,1f1b")
    ap.add_argument("--clock", default="cpu", choices=["cpu", "wall"],
                    help="clock the profiles time stage calls with")
    ap.add_argument("--nice", type=int, default=0,
                    help="run the profiled and measured programs under "
                    "`nice -n N` (negative, as root: ahead of other work on "
                    "a shared machine)")
    args = ap.parse_args()
    args.prefix = ["nice", "-n", str(args.nice)] if args.nice else []
    args.pp_compile = os.path.join(args.build, "bin", "pp-compile")
    args.pp_opt = os.path.join(args.build, "bin", "pp-opt")
    print("model %s, %d micro-batches, %d measured steps, %d cores, "
          "load average %.1f, action clock %s, nice %d"
          % (args.model, args.microbatches, args.steps, os.cpu_count(),
             os.getloadavg()[0], args.clock, args.nice))
    with tempfile.TemporaryDirectory() as tmp:
        for stages in map(int, args.stages.split(",")):
            print("\n# %d stages" % stages)
            cost_file, prof = profile(args, tmp, stages)
            print("\nprofile (one process): " + json.dumps(prof["stages"]))
            compare_model(prof, model_table(args, stages))
            compare_steps(args, tmp, stages, cost_file)


if __name__ == "__main__":
    main()
