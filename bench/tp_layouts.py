#!/usr/bin/env python3
"""Two processes three ways: tensor parallelism (T = 2, one stage), a
pipeline (P = 2) and data parallelism (2 replicas of one stage).

For each layout: compiles the model (1f1b, --microbatches), runs it under
mpirun with --profile (the median step time, "meta.step_time") and for
one step with --print-memory (each process's weights, gradients and
optimizer state under --optimizer), and simulates the step with pp-simulate on the run's
own action times (its profile as pp-schedule's cost file): the predicted
step against the measured one. The profile does not time the collectives
between actions, so pp-simulate adds the replicas' gradient all-reduce
from the device's links (--device, default cpu; or --device-file), a
ring's closed form. Last, it prints what pp-plan-parallelism chooses for
the 2 devices, from the cost model alone.

Standard library only. Example:
  python3 bench/tp_layouts.py --build build \\
      --model examples/gpt/gpt-bench.mlir --corpus examples/gpt/corpus.txt
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

LAYOUTS = [  # name, stages, tensor-parallel, replicas
    ("T=2", 1, 2, 1),
    ("P=2", 2, 1, 1),
    ("2 replicas", 1, 1, 2),
]


def run(cmd):
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit("command failed: %s\n%s%s" % (" ".join(cmd), res.stdout,
                                               res.stderr))
    return res.stdout + res.stderr


def measure(args, tmp, name, stages, tp, replicas):
    exe = os.path.join(tmp, re.sub(r"\W", "_", name))
    run([args.pp_compile, args.model, "--stages", str(stages),
         "--microbatches", str(args.microbatches), "--schedule", "1f1b",
         "--tensor-parallel", str(tp), "--data-parallel", str(replicas),
         "-o", exe])
    prof = exe + ".json"
    cmd = ["mpirun", "-np", str(stages * tp * replicas), exe, "--optimizer",
           args.optimizer] + (["--corpus", args.corpus] if args.corpus else [])
    run(cmd + ["--steps", str(args.steps), "--profile", prof])
    # A profiled run prints no memory: one more step for it.
    out = run(cmd + ["--steps", "1", "--print-memory"])
    memory = re.findall(r"memory rank (\d+): weights (\d+) gradients (\d+) "
                        r"optimizer (\d+) bytes", out)
    per_rank = {int(r): sum(map(int, v)) for r, *v in memory}
    with open(prof) as f:
        return prof, json.load(f), per_rank


def device_option(args):
    if args.device_file:
        return "device-file=%s" % args.device_file
    return "device=%s" % args.device


def simulate(args, cost_file, stages, replicas, unit):
    text = run([args.pp_opt, args.model,
                "--pp-split-microbatches=num-microbatches=%d"
                % args.microbatches,
                "--pp-partition-stages=num-stages=%d" % stages,
                "--pp-derive-backward",
                "--pp-schedule=schedule=1f1b cost-file=%s" % cost_file,
                "--pp-insert-transfers=semantics=async num-replicas=%d"
                % replicas, "--pp-simulate=%s time-unit=%s"
                % (device_option(args), unit), "-o", os.devnull])
    return float(re.search(r"makespan ([-+0-9.eE]+)", text).group(1))


def plan(args):
    """pp-plan-parallelism's table for 2 devices."""
    res = subprocess.run(
        [args.pp_opt, args.model,
         "--pp-split-microbatches=num-microbatches=%d" % args.microbatches,
         "--pp-plan-parallelism=devices=2 optimizer=%s %s print-table"
         % (args.optimizer, device_option(args)), "-o", os.devnull],
        capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit("pp-plan-parallelism failed:\n" + res.stderr)
    return res.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--model", required=True)
    ap.add_argument("--corpus")
    ap.add_argument("--microbatches", type=int, default=4)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--optimizer", default="adam", choices=["sgd", "adam"])
    ap.add_argument("--device", default="cpu",
                    help="built-in device whose links time the collectives")
    ap.add_argument("--device-file", help="device file instead of --device")
    args = ap.parse_args()
    args.pp_compile = os.path.join(args.build, "bin", "pp-compile")
    args.pp_opt = os.path.join(args.build, "bin", "pp-opt")
    print("## %s on 2 processes, 1f1b, %d micro-batches, %s\n"
          % (os.path.basename(args.model), args.microbatches, args.optimizer))
    print("| layout | measured step (ms) | of it in actions (ms) | "
          "simulated step (ms) | error | static memory per process (MiB: "
          "weights + gradients + optimizer) |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for name, stages, tp, replicas in LAYOUTS:
            prof, data, memory = measure(args, tmp, name, stages, tp,
                                         replicas)
            got = data["meta"]["step_time"]
            sim = simulate(args, prof, stages, replicas,
                           data.get("time_unit", "ms"))
            mib = ", ".join("%.2f" % (memory[r] / 2**20)
                            for r in sorted(memory))
            print("| %s | %.4g | %.4g | %.4g | %+.1f%% | %s |"
                  % (name, got, data["meta"]["step_action_time"], sim,
                     100 * (sim - got) / got, mib))
    print("\npp-plan-parallelism for 2 devices (%s, %s):\n" %
          (device_option(args), args.optimizer))
    print("```\n" + plan(args) + "```")


if __name__ == "__main__":
    main()
