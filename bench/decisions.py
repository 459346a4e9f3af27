#!/usr/bin/env python3
"""pp's decisions against the measured best on 2 processes.

For each model (the bench GPT of examples/gpt, and with --torch the
PyTorch GPT of examples/torch-gpt exported with pp.torch.export):

1. calibrates the machine (`mpirun -np 2 pp-calibrate`) unless
   --device-file names a device file;
2. profiles the model on the 2 processes of each layout and schedule
   (pp-compile --emit=profile --ranks R --tensor-parallel T
   --data-parallel D --schedule S; auto's under 1f1b);
3. for every layout of 2 processes (T = 2, P = 2, 2 replicas) and the
   pipeline schedules 1f1b, zb-h1, interleaved-1f1b and auto: compiles it
   with the profile as --cost-file and the device file, runs it under
   mpirun -np 2 with --profile (the median step and each process's time in
   actions and updates), and simulates the compiled schedule with
   pp-simulate (the device file times the replicas' all-reduce);
4. asks pp-compile --devices 2 which layout the layout planner picks from
   the calibrated device alone.

Prints the time per batch (a step of 2 replicas trains 2 batches),
measured and simulated, and the planner's and auto's picks against the
measured best. Runs alternate configurations round by round (--rounds)
and report medians.

  python3 bench/decisions.py --build build [--torch] [--rounds 3]
"""
import argparse
import json
import os
import re
import statistics
import sys
import tempfile

from profile_vs_model import run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CONFIGS = [  # name, stages, pipeline ranks, tensor-parallel, replicas, schedule
    ("T=2", 1, 1, 2, 1, "1f1b"),
    ("2 replicas", 1, 1, 1, 2, "1f1b"),
    ("P=2 1f1b", 2, 2, 1, 1, "1f1b"),
    ("P=2 zb-h1", 2, 2, 1, 1, "zb-h1"),
    ("P=2 interleaved-1f1b", 4, 2, 1, 1, "interleaved-1f1b"),
    ("P=2 auto", 2, 2, 1, 1, "auto"),
]
TARGET = 0.05  # picks and simulation within 5%


class Model:
    """A model file, what its runs need, and its (tp-split) variants."""

    def __init__(self, name, path, run_args, tp_path=None, tp_args=None):
        self.name, self.path, self.run_args = name, path, run_args
        self.tp_path = tp_path or path
        self.tp_args = tp_args if tp_args is not None else run_args

    def file(self, tp):
        return self.tp_path if tp > 1 else self.path

    def args(self, tp):
        return self.tp_args if tp > 1 else self.run_args


def bench_gpt():
    return Model("bench GPT (examples/gpt/gpt-bench.mlir: 4 blocks, d 256, "
                 "context 128, batch 8)",
                 os.path.join(ROOT, "examples/gpt/gpt-bench.mlir"),
                 ["--corpus", os.path.join(ROOT, "examples/gpt/corpus.txt")])


def torch_gpt(tmp, microbatches):
    """examples/torch-gpt's GPT at vocabulary 512, context 128, width 256,
    4 heads, 4 blocks, 16 rows, exported whole and split for T = 2."""
    sys.path.insert(0, os.path.join(ROOT, "examples/torch-gpt"))
    import numpy as np
    import torch
    import pp.torch
    from model import GPT, loss_fn
    text = open(os.path.join(ROOT, "examples/gpt/corpus.txt"), "rb").read()
    alphabet = sorted(set(text))
    tokens = os.path.join(tmp, "tokens.bin")
    np.array([alphabet.index(c) for c in text], dtype="<u2").tofile(tokens)
    exports = {}
    for tp in (1, 2):
        torch.manual_seed(0)
        model = GPT(vocab=512, context=128, dim=256, heads=4, layers=4)
        ids = torch.zeros(16, 128, dtype=torch.int64)
        exports[tp] = pp.torch.export(
            model, (ids, ids), loss_fn, os.path.join(tmp, "gpt-tp%d.mlir" % tp),
            microbatches=microbatches, tensor_parallel=tp if tp > 1 else None)
    args = {tp: ["--tokens", tokens, "--init-weights", str(e.weights)]
            for tp, e in exports.items()}
    return Model("PyTorch GPT (examples/torch-gpt: vocabulary 512, width 256, "
                 "4 heads, 4 blocks, context 128, 16 rows)",
                 str(exports[1].mlir), args[1], str(exports[2].mlir), args[2])


def profile(a, model, tmp, stages, ranks, tp, replicas, schedule):
    """A profile of the stages on the processes the layout runs on: two
    processes on two cores contend for memory bandwidth and caches, so
    that one process alone times its stages faster than they run; and
    under the schedule measured (auto's under 1f1b), since how actions
    interleave changes what the caches hold; with the backward the
    program runs (split for zb-h1 and auto, fused else)."""
    auto = schedule == "auto"
    schedule = "1f1b" if auto else schedule
    out = os.path.join(tmp, "profile-%d-%d-%d-%d-%s%s.json"
                       % (stages, ranks, tp, replicas, schedule,
                          "-split" if auto else ""))
    if not os.path.exists(out):
        cmd = [a.pp_compile, model.file(tp), "--stages", str(stages),
               "--ranks", str(ranks), "--microbatches", str(a.microbatches),
               "--emit=profile", "--tensor-parallel", str(tp),
               "--schedule", schedule, "--split-backward=%s"
               % ("true" if schedule == "zb-h1" or auto else "false"),
               "--data-parallel", str(replicas), "--profile-steps",
               str(a.steps), "-o", out]
        cmd += ["--run-arg=" + x for x in model.args(tp)]
        run(cmd)
    return out


def layout_options(a, stages, ranks, tp, replicas, schedule):
    return [
        "--stages", str(stages), "--ranks", str(ranks), "--microbatches",
        str(a.microbatches), "--tensor-parallel", str(tp), "--data-parallel",
        str(replicas), "--schedule", schedule, "--device-file", a.device_file]


def compile_config(a, model, tmp, config):
    """The program and its schedule, and auto's pick where it chose."""
    name, stages, ranks, tp, replicas, schedule = config
    cost = profile(a, model, tmp, stages, ranks, tp, replicas, schedule)
    exe = os.path.join(tmp, re.sub(r"\W", "_", name))
    options = layout_options(a, stages, ranks, tp, replicas, schedule)
    options += ["--cost-file", cost]
    remarks = run([a.pp_compile, model.file(tp)] + options + ["-o", exe])
    run([a.pp_compile, model.file(tp)] + options +
        ["--emit=schedule", "-o", exe + ".mlir"])
    pick = re.search(r"auto: makespan \S+ s \((.+?)(?:, \d+ local moves)?\), "
                     r"peak", remarks)
    return exe, pick.group(1) if pick else None


def cost_attr(profile):
    """A profile's costs as a #pp.cost in seconds."""
    stages = profile["stages"]

    def column(key, scale=1e-3):
        return "[%s]" % ", ".join(repr(float(s[key] * scale))
                                  for s in stages)
    return ("#pp.cost<forward = %s, backward_input = %s, backward_weight = "
            "%s, comm = %r : f64, activation = %s, stash = %s, optimizer = "
            "%s, step_overhead = %r : f64>"
            % (column("forward"), column("backward_input"),
               column("backward_weight"), float(profile["transfer"]) * 1e-3,
               column("activation_memory", 1), column("stash_memory", 1),
               column("optimizer"), float(profile["step_overhead"]) * 1e-3))


def simulate(a, exe, replicas, profile=None):
    """pp-simulate's makespan (ms) and busy time per rank (ms) of the
    compiled schedule: with the costs it was compiled with, or those of
    `profile` (the run's own). The device file times the replicas'
    all-reduce; the profiled action times hold their tensor-parallel
    all-reduces already, and the profile's transfer the pipeline's sends."""
    path = exe + ".mlir"
    if profile:
        with open(path) as f:
            text = re.sub(r"#pp\.cost<[^>]*>", cost_attr(profile), f.read())
        path = exe + ".in-run.mlir"
        with open(path, "w") as f:
            f.write(text)
    device = "device-file=%s " % a.device_file if replicas > 1 else ""
    text = run([a.pp_opt, path, "--pp-simulate=%stime-unit=s" % device,
                "-o", os.devnull])
    makespan = float(re.search(r"makespan ([-+0-9.eE]+)", text).group(1))
    idle = re.search(r"idle per rank: ([^)]*)\)", text).group(1)
    busy = [1e3 * (makespan - float(x)) for x in idle.split(",")]
    return 1e3 * makespan, busy


def measure(a, model, exe, tp):
    out = exe + ".profile.json"
    run(["mpirun", "-np", "2", exe, "--steps", str(a.steps), "--profile",
         out] + model.args(tp))
    with open(out) as f:
        profile = json.load(f)
    meta = profile["meta"]
    return meta["step_time"], meta["process_busy_time"], profile


def planner_pick(a, model):
    text = run([a.pp_compile, model.path, "--devices", "2", "--microbatches",
                str(a.microbatches), "--device-file", a.device_file,
                "--emit=schedule", "-o", os.devnull])
    t, p, r = map(int, re.search(r"T = (\d+), P = (\d+), R = (\d+)",
                                 text).groups())
    return "T=2" if t == 2 else "2 replicas" if r == 2 else "P=2 1f1b"


def fmt(values):
    return ", ".join("%.4g" % v for v in values)


def study(a, model, tmp):
    print("\n## %s, %d micro-batches, SGD\n" % (model.name, a.microbatches))
    programs, auto = {}, None
    for config in a.configs:
        programs[config[0]], pick = compile_config(a, model, tmp, config)
        auto = pick or auto
    measured = {name: [] for name in programs}
    busy, in_run = {}, {}
    for _ in range(a.rounds):  # A B C ... A B C: drift hits all alike
        for config in a.configs:
            name, tp, replicas = config[0], config[3], config[4]
            step, per_process, in_run[name] = measure(a, model,
                                                      programs[name], tp)
            measured[name].append(step / replicas)
            busy.setdefault(name, []).append(per_process)
    print("| layout and schedule | measured (ms per batch) | simulated: "
          "profile before | error | simulated: the run's profile | error | "
          "busy per process, measured (ms per step) | busy per rank, "
          "simulated on the run's profile |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    got = {}
    errors = []
    for name, _, _, _, replicas, _ in a.configs:
        got[name] = statistics.median(measured[name])
        before, _ = simulate(a, programs[name], replicas)
        sim, sim_busy = simulate(a, programs[name], replicas, in_run[name])
        error = (sim / replicas - got[name]) / got[name]
        errors.append(abs(error))
        per_process = [statistics.median(b) for b in zip(*busy[name])]
        print("| %s | %.4g | %.4g | %+.1f%% | %.4g | %+.1f%% | %s | %s |"
              % (name, got[name], before / replicas,
                 100 * (before / replicas - got[name]) / got[name],
                 sim / replicas, 100 * error, fmt(per_process),
                 fmt(sim_busy)))
    print("\nsimulation error on the run's profile: largest %.1f%%, median "
          "%.1f%% (target 5%%)"
          % (100 * max(errors), 100 * statistics.median(errors)))
    if len(got) < len(CONFIGS):
        return
    best = min(got, key=got.get)
    best_pipeline = min((n for n in got if n.startswith("P=2")), key=got.get)
    planner = planner_pick(a, model)
    report = [("layout planner (pp-compile --devices 2)", planner, best),
              ("auto (picked %s)" % auto, "P=2 auto", best_pipeline)]
    print("\n| decision | pick | measured | best | best measured | off "
          "the best |")
    print("| --- | --- | --- | --- | --- | --- |")
    for what, pick, among in report:
        off = (got[pick] - got[among]) / got[among]
        print("| %s | %s | %.4g | %s | %.4g | %+.1f%% %s |"
              % (what, pick, got[pick], among, got[among], 100 * off,
                 "ok" if off <= TARGET else "over 5%"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--microbatches", type=int, default=4)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device-file", help="a device file instead of "
                    "calibrating")
    ap.add_argument("--torch", action="store_true",
                    help="also the PyTorch GPT (needs torch, torch_mlir and "
                    "pp's Python package)")
    ap.add_argument("--only", help="the configurations whose name holds "
                    "this text (the picks need all)")
    a = ap.parse_args()
    a.configs = [c for c in CONFIGS if not a.only or a.only in c[0]]
    bin_dir = os.path.join(a.build, "bin")
    a.pp_compile = os.path.join(bin_dir, "pp-compile")
    a.pp_opt = os.path.join(bin_dir, "pp-opt")
    with tempfile.TemporaryDirectory() as tmp:
        if not a.device_file:
            a.device_file = os.path.join(tmp, "machine.json")
            run(["mpirun", "-np", "2", os.path.join(bin_dir, "pp-calibrate"),
                 "-o", a.device_file])
        with open(a.device_file) as f:
            device = json.load(f)
        print("device: peak_flops %.3g, memory_bandwidth %.3g, link %.3g B/s "
              "+ %.3g s (%s)" % (device["peak_flops"],
                                 device["memory_bandwidth"],
                                 device.get("link_bandwidth", 0),
                                 device.get("link_latency", 0),
                                 device.get("name", "")))
        models = [bench_gpt()]
        if a.torch:
            models.append(torch_gpt(tmp, a.microbatches))
        for index, model in enumerate(models):
            directory = os.path.join(tmp, "model-%d" % index)
            os.mkdir(directory)
            study(a, model, directory)


if __name__ == "__main__":
    main()
