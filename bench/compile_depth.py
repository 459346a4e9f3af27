#!/usr/bin/env python3
"""Times pp-compile against model depth: GPTs of 2, 4, 8, 16 and 32 blocks
at width 128, on 1 and 4 stages (1f1b, 8 micro-batches), and prints wall
time, CPU time and the compiler's peak memory per build, with the growth
per doubling of depth.

Models: `torch`, examples/torch-gpt's model.py exported with pp.torch
(vocabulary 32, context 16, 2 heads, 16 rows; needs torch, torch_mlir and
pp's Python package on PYTHONPATH), and `gen`, examples/gpt/gen_gpt.py's
hand-written GPT (small preset's context, heads and batch). Builds run one
at a time, each configuration once per round, rounds interleaved, and the
table shows medians, so a shared machine's load spreads over all rows.
Peak memory is the compiler's maximum resident set (/usr/bin/time).

  PYTHONPATH=build/python_packages ~/.cache/pp-python-venv/bin/python \\
      bench/compile_depth.py --pp-compile build/bin/pp-compile
  python3 bench/compile_depth.py --pp-compile build/bin/pp-compile \\
      --models gen --blocks 2 4 8 --rounds 3 --extra=--outline-loop-nests=false
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WIDTH = 128


def export_torch(blocks, path):
    """examples/torch-gpt's GPT with `blocks` blocks, exported to `path`."""
    sys.path.insert(0, os.path.join(ROOT, "examples", "torch-gpt"))
    import torch
    import pp.torch
    from model import GPT, loss_fn
    torch.manual_seed(0)
    model = GPT(vocab=32, context=16, dim=WIDTH, heads=2, layers=blocks)
    ids = torch.zeros(16, 16, dtype=torch.int64)
    pp.torch.export(model, (ids, ids), loss_fn, path, whole_batch=True)


def generate_gen(blocks, path):
    subprocess.run([sys.executable,
                    os.path.join(ROOT, "examples", "gpt", "gen_gpt.py"),
                    "--layers", str(blocks), "--dim", str(WIDTH),
                    "-o", path], check=True)


MODELS = {"torch": export_torch, "gen": generate_gen}


def compile_once(pp_compile, model, stages, out, extra):
    """(wall s, CPU s, peak MB) of one pp-compile to an executable."""
    cmd = ["/usr/bin/time", "-f", "%e %U %S %M", pp_compile, model,
           "--stages", str(stages), "--microbatches", "8", "--schedule",
           "1f1b", "-o", out] + extra
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"compile_depth.py: {' '.join(cmd)} failed:\n"
                 f"{result.stderr}")
    wall, user, system, kb = result.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user) + float(system), int(kb) / 1024


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--models", nargs="+", default=["torch", "gen"],
                        choices=sorted(MODELS))
    parser.add_argument("--blocks", nargs="+", type=int,
                        default=[2, 4, 8, 16, 32])
    parser.add_argument("--stages", nargs="+", type=int, default=[1, 4])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--extra", action="append", default=[],
                        help="a flag added to every pp-compile")
    parser.add_argument("--models-dir",
                        help="keep the models here and reuse those already "
                        "there (<model><blocks>.mlir; default: a new "
                        "temporary directory)")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="pp-compile-depth-")
    models = args.models_dir or work
    os.makedirs(models, exist_ok=True)
    configs = []
    for model in args.models:
        for blocks in args.blocks:
            path = os.path.join(models, f"{model}{blocks}.mlir")
            if not os.path.exists(path):
                MODELS[model](blocks, path)
            configs += [(model, stages, blocks, path)
                        for stages in args.stages]
    runs = {config[:3]: [] for config in configs}
    loads = [load_average()]
    for _ in range(args.rounds):
        for model, stages, blocks, path in configs:
            out = os.path.join(work, "program")
            runs[(model, stages, blocks)].append(
                compile_once(args.pp_compile, path, stages, out, args.extra))
            print(f"# {model} stages={stages} blocks={blocks}: "
                  f"{runs[(model, stages, blocks)][-1]}", file=sys.stderr)
        loads.append(load_average())
    print(f"load average {' -> '.join(loads)} (one value a round)")
    print("| model | stages | blocks | wall s | CPU s | peak MB | "
          "CPU x per doubling |")
    print("|---|---|---|---|---|---|---|")
    previous = {}
    for (model, stages, blocks), samples in runs.items():
        wall, cpu, peak = (statistics.median(s[i] for s in samples)
                           for i in range(3))
        before = previous.get((model, stages))
        growth = (f"{cpu / before[1]:.2f}" if before and
                  blocks == 2 * before[0] else "")
        previous[(model, stages)] = (blocks, cpu)
        print(f"| {model} | {stages} | {blocks} | {wall:.1f} | {cpu:.1f} | "
              f"{peak:.0f} | {growth} |")


if __name__ == "__main__":
    main()
