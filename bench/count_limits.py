#!/usr/bin/env python3
"""Times pp at the count limits of docs/Reliability.md: each largest
schedule generated, given transfers, simulated and printed (pp-opt
--pp-schedule --pp-insert-transfers --pp-simulate), the largest declared
micro-batch count simulated, and the most stages the planner cuts a model
into (pp-schedule-pipeline and pp-compile --emit=schedule on a chain of
matmul + tanh layers, two ops per stage). One row each with the command,
wall time, CPU time (user + system, which a loaded machine does not
inflate) and peak memory (maximum resident set, as /usr/bin/time -v).

Standard library only. Example:
  python3 bench/count_limits.py --pp-opt build/bin/pp-opt \
      --pp-compile build/bin/pp-compile
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
PIPELINE = "--pp-insert-transfers --pp-simulate"
# (what, pp-opt options after the input): the limits of Limits.h.
ROWS = [
    ("4,096 stages, 1 micro-batch",
     "--pp-schedule=num-stages=4096 schedule=1f1b"),
    ("16,384 stages, 1 micro-batch",
     "--pp-schedule=num-stages=16384 schedule=1f1b"),
    ("65,536 stages and ranks, 1 micro-batch",
     "--pp-schedule=num-stages=65536 schedule=1f1b"),
    ("65,536 stages and ranks, 4 micro-batches (2^18 stage micro-batches)",
     "--pp-schedule=num-stages=65536 num-microbatches=4 schedule=1f1b"),
    ("65,536 stages on 2 ranks, 2 micro-batches",
     "--pp-schedule=num-stages=65536 num-ranks=2 num-microbatches=2 "
     "schedule=interleaved-1f1b"),
    ("2 stages, 131,072 micro-batches (2^18 stage micro-batches)",
     "--pp-schedule=num-stages=2 num-microbatches=131072 schedule=1f1b"),
    ("1 stage, 262,144 micro-batches (2^18)",
     "--pp-schedule=num-stages=1 num-microbatches=262144 schedule=1f1b"),
]
# (what, stages): models the planner cuts, one layer per stage.
PLANNED = [
    ("128 planned stages, 2 micro-batches", 128),
    ("512 planned stages (the planner's limit), 2 micro-batches", 512),
]
SPARSE = ("a parsed schedule declaring 2^20 micro-batches, simulated",
          REPO / "test/Dialect/PP/Transforms/Schedule/"
          "verify-schedule-sparse.mlir", "--pp-simulate")


def write_chain(path, layers):
    """A training step of `layers` matmul + tanh layers and a squared-error
    loss: 2 * layers + 2 ops for the planner to cut."""
    act = "tensor<4x8xf32>"
    args = ["%x: " + act, "%y: " + act + " {pp.target}"] + [
        f"%w{i}: tensor<8x8xf32> {{pp.param}}" for i in range(layers)]
    lines = [f"func.func @train_step({', '.join(args)}) -> tensor<f32> {{",
             "  %zero = arith.constant 0.0 : f32",
             f"  %e = tensor.empty() : {act}",
             f"  %z = linalg.fill ins(%zero : f32) outs(%e : {act}) -> {act}"]
    h = "%x"
    for i in range(layers):
        lines.append(f"  %m{i} = linalg.matmul ins({h}, %w{i} : {act}, "
                     f"tensor<8x8xf32>) outs(%z : {act}) -> {act}")
        lines.append(f"  %h{i} = linalg.tanh ins(%m{i} : {act}) "
                     f"outs(%e : {act}) -> {act}")
        h = f"%h{i}"
    lines += [
        f"  %d = linalg.sub ins({h}, %y : {act}, {act}) outs(%e : {act}) "
        f"-> {act}",
        f"  %sq = linalg.mul ins(%d, %d : {act}, {act}) outs(%e : {act}) "
        f"-> {act}",
        "  %es = tensor.empty() : tensor<f32>",
        "  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) "
        "-> tensor<f32>",
        f"  %sum = linalg.reduce ins(%sq : {act}) outs(%zs : tensor<f32>) "
        "dimensions = [0, 1]",
        "    (%in: f32, %acc: f32) {",
        "      %s = arith.addf %in, %acc : f32",
        "      linalg.yield %s : f32",
        "    }",
        "  return %sum : tensor<f32>",
        "}"]
    pathlib.Path(path).write_text("\n".join(lines) + "\n")


def measure(command):
    """Runs `command`; returns (wall s, CPU s, peak RSS MB, exit status)."""
    start = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    return (wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
            os.waitstatus_to_exitcode(status))


def show(command):
    """`command` as a row shows it, temporary files by name."""
    words = []
    for word in command:
        if os.path.isabs(word):
            word = pathlib.Path(word).name
        words.append(f"'{word}'" if " " in word else word)
    return " ".join(words)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pp-opt", required=True)
    parser.add_argument("--pp-compile",
                        help="also time pp-compile --emit=schedule")
    args = parser.parse_args()
    print("| count | command | wall (s) | CPU (s) | peak memory (MB) |")
    print("|---|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        empty = pathlib.Path(tmp) / "empty.mlir"
        empty.write_text("module {}\n")
        output = os.path.join(tmp, "out.mlir")
        rows = [(what, [args.pp_opt, str(empty), options] +
                 PIPELINE.split() + ["-o", output])
                for what, options in ROWS]
        what, path, options = SPARSE
        rows.append((what, [args.pp_opt, str(path), options, "-o", output]))
        for what, stages in PLANNED:
            model = os.path.join(tmp, f"chain{stages}.mlir")
            write_chain(model, stages)
            rows.append((what, [
                args.pp_opt, model,
                f"--pp-schedule-pipeline=num-stages={stages} "
                "num-microbatches=2 schedule=1f1b", "-o", output]))
            if args.pp_compile:
                rows.append((what + ", pp-compile", [
                    args.pp_compile, model, "--stages", str(stages),
                    "--microbatches", "2", "--emit=schedule", "-o", output]))
        for what, command in rows:
            wall, cpu, rss, status = measure(command)
            if status != 0:
                sys.exit(f"{what}: {show(command)} exited with {status}")
            print(f"| {what} | `{show(command)}` | {wall:.1f} | {cpu:.1f} "
                  f"| {rss:.0f} |", flush=True)


if __name__ == "__main__":
    main()
