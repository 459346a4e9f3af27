#!/usr/bin/env python3
"""Which features of pp combine: every pair of them (and each alone) is a
cell with a test behind it, either an oracle (losses, and weights, within
1e-5 of the unsplit one-process reference or of pipedream-2bw's emulation)
or a refusal in one line of the user's terms. docs/Composition.md is
generated from this table (--markdown); ctest runs each cell (--cell) and
checks the document (--check-doc).

Cells whose oracle already is a ctest name it; the others run here, at the
examples' smallest sizes (the MLP, the 2-block width-16 GPT), on 2 ranks
and few steps."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MLP = os.path.join(ROOT, "examples", "mlp", "mlp.mlir")
CORPUS = os.path.join(ROOT, "examples", "gpt", "corpus.txt")

# The features, in the table's order: (key, what the user writes).
FEATURES = [
    ("tp", "`--tensor-parallel 2`"),
    ("vocab", "`--vocabulary-parallel`"),
    ("dp", "`--data-parallel 2`"),
    ("zero1", "`--zero 1`"),
    ("zero3", "`--zero 3`"),
    ("recompute", "`--recompute=all`"),
    ("slices", "`--slices 2` (seq1f1b)"),
    ("plans", "`--step-plans`"),
    ("pd2bw", "`--schedule pipedream-2bw`"),
    ("cuda", "`--target=cuda`"),
]
SHORT = {"tp": "TP", "vocab": "vocab", "dp": "replicas", "zero1": "ZeRO-1",
         "zero3": "ZeRO-3", "recompute": "recompute", "slices": "slices",
         "plans": "step plans", "pd2bw": "2BW", "cuda": "CUDA"}


def compare(*args):
    """compare_losses.py on 2 ranks, 2 micro-batches, 6 steps."""
    return ["compare_losses.py", "--ranks", "2", "--microbatches", "2",
            "--steps", "6", "--rtol", "1e-5"] + list(args)


def gpt(*args):
    return compare("--model", "{gpt}", "--corpus", CORPUS, "--lr", "0.3",
                   *args)


def mlp(*args):
    return compare("--model", MLP, *args)


# Sliced programs against the unsliced reference: the reference takes none
# of the pipelined program's options (-O2 is pp-compile's default).
def sliced(*args):
    return gpt("--schedules", "seq1f1b", "--compile-arg=--slices=2",
               "--reference-compile-arg=-O2", *args)


def pipedream(*args):
    return ["pipedream_2bw.py", "--model", MLP, "--ranks", "2",
            "--microbatches", "2", "--steps", "3"] + list(args)


def plans(*args):
    return ["step_plans.py", "--oracle-only", "--steps", "3"] + list(args)


def gpu(*args):
    """An oracle of the CUDA build against the CPU reference: needs a GPU."""
    return mlp("--compile-arg=--target=cuda", "--reference-compile-arg=-O2",
               *args)


TP = "--tensor-parallel"
VOCAB = ("--tensor-parallel", "2", "--compile-arg=--vocabulary-parallel")
ZERO1 = ("--data-parallel", "2", "--compile-arg=--zero=1")

# Refusals: the options (after the model) and the one line pp-compile
# prints.
ZERO3 = ("--data-parallel", "2", "--compile-arg=--zero=3")
ZERO3_CTEST = ("ctest", "e2e.mlp-zero3-matches-data-parallel")
BASE = ["--stages", "2", "--microbatches", "2"]
SEQ = ["--schedule", "seq1f1b", "--slices", "2"]
PLANS = ["--step-plans", "plans.txt"]


def zero3(line, *extra):
    """--zero 3 refused with `extra`: pp-compile's line after the flag."""
    return ("refused", BASE + ["--data-parallel", "2", "--zero", "3"] +
            list(extra), "pp-compile: --zero 3 cannot be combined with " +
            line)




# (row, column) -> ("ctest", name) | ("oracle", command, labels)
#                | ("refused", options, line).
CELLS = {
    ("tp", "tp"): ("ctest", "e2e.mlp-tp2-pp2"),
    ("tp", "vocab"): ("ctest", "e2e.gpt-example-tp2-pp2-vocabulary"),
    ("tp", "dp"): ("oracle", mlp(TP, "2", "--data-parallel", "2",
                                 "--schedules", "1f1b"), ()),
    ("tp", "zero1"): ("oracle", mlp(TP, "2", *ZERO1, "--schedules", "1f1b"),
                      ()),
    ("tp", "zero3"): ("oracle", mlp(TP, "2", *ZERO3, "--schedules", "1f1b"),
                      ()),
    ("tp", "recompute"): ("oracle", mlp(
        TP, "2", "--schedules", "1f1b:recompute,1f1b:split+recompute"), ()),
    ("tp", "slices"): ("oracle", sliced(TP, "2"), ()),
    ("tp", "plans"): ("oracle", plans("--replicas", "1", TP, "2"), ()),
    ("tp", "pd2bw"): ("oracle", pipedream(TP, "2"), ()),
    ("tp", "cuda"): ("oracle", gpu(TP, "2", "--schedules", "1f1b"),
                     ("gpu",)),
    ("vocab", "vocab"): ("ctest", "e2e.gpt-example-tp2-pp2-vocabulary"),
    ("vocab", "dp"): ("oracle", gpt(*VOCAB, "--data-parallel", "2",
                                    "--schedules", "1f1b"), ("slow",)),
    ("vocab", "zero1"): ("oracle", gpt(*VOCAB, *ZERO1, "--schedules",
                                       "1f1b"), ("slow",)),
    ("vocab", "zero3"): ("oracle", gpt(*VOCAB, *ZERO3, "--schedules",
                                       "1f1b"), ("slow",)),
    ("vocab", "recompute"): ("oracle", gpt(*VOCAB, "--schedules",
                                           "1f1b:recompute"), ()),
    ("vocab", "slices"): ("oracle", sliced(*VOCAB), ()),
    ("vocab", "plans"): ("oracle", plans(
        "--replicas", "1", TP, "2", "--compile-arg=--vocabulary-parallel"),
        ()),
    ("vocab", "pd2bw"): ("oracle", [
        "pipedream_2bw.py", "--model", "{gpt}", "--ranks", "2",
        "--microbatches", "2", "--steps", "3", TP, "2",
        "--compile-arg=--vocabulary-parallel"], ()),
    ("vocab", "cuda"): ("oracle", gpt(
        *VOCAB, "--schedules", "1f1b", "--compile-arg=--target=cuda",
        "--reference-compile-arg=-O2"), ("gpu",)),
    ("dp", "dp"): ("ctest", "e2e.mlp-data-parallel-2x2"),
    ("dp", "zero1"): ("ctest", "e2e.mlp-zero1-matches-data-parallel"),
    ("dp", "zero3"): ZERO3_CTEST,
    ("dp", "recompute"): ("oracle", mlp("--data-parallel", "2", "--schedules",
                                        "1f1b:recompute"), ()),
    ("dp", "slices"): ("oracle", sliced("--data-parallel", "2"), ()),
    ("dp", "plans"): ("ctest", "e2e.gpt-step-plans-match-reference"),
    ("dp", "pd2bw"): ("ctest", "e2e.mlp-pipedream-2bw-data-parallel"),
    ("dp", "cuda"): ("oracle", gpu("--data-parallel", "2", "--schedules",
                                   "1f1b"), ("gpu",)),
    ("zero1", "zero1"): ("ctest", "e2e.mlp-zero1-matches-data-parallel"),
    ("zero1", "zero3"): ZERO3_CTEST,
    ("zero1", "recompute"): ("oracle", mlp(*ZERO1, "--schedules",
                                           "1f1b:recompute"), ()),
    ("zero1", "slices"): ("oracle", sliced(*ZERO1), ()),
    ("zero1", "plans"): ("oracle", plans("--replicas", "2",
                                         "--compile-arg=--zero=1"), ()),
    ("zero1", "pd2bw"): ("oracle", pipedream("--data-parallel", "2",
                                             "--compile-arg=--zero=1"), ()),
    ("zero1", "cuda"): ("oracle", gpu(*ZERO1, "--schedules", "1f1b"),
                        ("gpu",)),
    ("zero3", "zero3"): ZERO3_CTEST,
    ("zero3", "recompute"): ("oracle", mlp(*ZERO3, "--schedules",
                                           "1f1b:recompute"), ()),
    ("zero3", "slices"): ("oracle", sliced(*ZERO3), ()),
    ("zero3", "plans"): ("oracle", plans("--replicas", "2",
                                         "--compile-arg=--zero=3"), ()),
    ("zero3", "pd2bw"): zero3("--schedule pipedream-2bw yet: ZeRO-3 gathers "
                              "one weight version per step", "--schedule",
                              "pipedream-2bw"),
    ("zero3", "cuda"): zero3("--target=cuda yet: ZeRO-3 has been checked on "
                             "the CPU runtime only", "--target=cuda"),
    ("recompute", "recompute"): ("ctest", "e2e.gpt-matches-reference"),
    ("recompute", "slices"): ("oracle", sliced(
        "--schedules", "seq1f1b:recompute"), ()),
    ("recompute", "plans"): ("oracle", plans(
        "--replicas", "1", "--compile-arg=--recompute=all"), ()),
    ("recompute", "pd2bw"): ("oracle", pipedream(
        "--compile-arg=--recompute=all"), ()),
    ("recompute", "cuda"): ("oracle", gpu("--schedules", "1f1b:recompute"),
                            ("gpu",)),
    ("slices", "slices"): ("ctest", "e2e.gpt-seq1f1b-k2"),
    ("slices", "plans"): ("refused", BASE + SEQ + PLANS, (
        "pp-compile: --step-plans cannot be combined with --slices 2 so "
        "far: the per-step plans schedule whole micro-batches")),
    ("slices", "pd2bw"): ("refused", BASE + [
        "--schedule", "pipedream-2bw", "--slices", "2"], (
        "pp-compile: --schedule pipedream-2bw does not keep sequence slices "
        "in order (a slice's backward must run before those of the earlier "
        "slices of its micro-batch); with --slices 2 use --schedule "
        "seq1f1b")),
    ("slices", "cuda"): ("oracle", ["compare_losses.py", "--ranks", "2",
                                    "--microbatches", "2", "--steps", "6",
                                    "--model", "{gpt}", "--corpus", CORPUS,
                                    "--lr", "0.3", "--schedules", "seq1f1b",
                                    "--compile-arg=--slices=2",
                                    "--compile-arg=--target=cuda",
                                    "--reference-compile-arg=-O2"],
                         ("gpu",)),
    ("plans", "plans"): ("ctest", "e2e.gpt-step-plans-match-reference"),
    ("plans", "pd2bw"): ("refused", BASE + PLANS + [
        "--schedule", "pipedream-2bw"], (
        "pp-compile: --step-plans cannot be combined with --schedule "
        "pipedream-2bw: the per-step plans run flushed steps, and "
        "pipedream-2bw's steps overlap")),
    ("plans", "cuda"): ("oracle", plans("--replicas", "1",
                                        "--compile-arg=--target=cuda"),
                        ("gpu",)),
    ("pd2bw", "pd2bw"): ("ctest", "e2e.mlp-pipedream-2bw-matches-emulation"),
    ("pd2bw", "cuda"): ("oracle", pipedream("--compile-arg=--target=cuda"),
                        ("gpu",)),
    ("cuda", "cuda"): ("ctest", "pprt.target_cuda_gpu"),
}

def cell_name(row, column):
    return f"composition.{row}-{column}"


def own_cells():
    """The cells this script runs: (name, cell)."""
    return [(cell_name(r, c), cell) for (r, c), cell in CELLS.items()
            if cell[0] != "ctest"]


def summary(cell):
    kind = cell[0]
    if kind == "ctest":
        return f"yes: `{cell[1]}`"
    if kind == "refused":
        return "no: " + cell[2][len("pp-compile: "):]
    labels = cell[2]
    return "yes" + (" (GPU)" if "gpu" in labels else "")


def markdown():
    lines = [
        "# Which features combine",
        "",
        "<!-- Generated by test/e2e/composition.py --markdown; "
        "ctest composition.doc checks it. -->",
        "",
        "Every pair of pp's parallelism and memory features on a pipeline "
        "of 2 ranks, each cell backed by a ctest (`composition.ROW-COLUMN` "
        "unless it names another): **yes** is an oracle, the program's "
        "per-step losses within 1e-5 (relative) of the unsplit one-process "
        "reference and its weights alike (pipedream-2bw: of its one-process "
        "emulation, docs/PipeDream2BW.md); **no** is pp-compile's one-line "
        "refusal, checked word for word. The diagonal is the feature alone. "
        "Oracles marked (GPU) run only where a GPU is present (label `gpu`; "
        "they exit as skipped without one); `slow` ones are left out of "
        "CI's default run.",
        "",
    ]
    keys = [k for k, _ in FEATURES]
    lines.append("| | " + " | ".join(SHORT[k] for k in keys) + " |")
    lines.append("|---" * (len(keys) + 1) + "|")
    for i, row in enumerate(keys):
        marks = []
        for j, column in enumerate(keys):
            if j < i:
                marks.append("")
                continue
            cell = CELLS[(row, column)]
            mark = "yes" if cell[0] != "refused" else "no"
            if cell[0] == "oracle" and "gpu" in cell[2]:
                mark += " (GPU)"
            marks.append(mark)
        lines.append(f"| {SHORT[row]} | " + " | ".join(marks) + " |")
    lines += ["", "Features: " + "; ".join(
        f"{SHORT[k]} = {flag}" for k, flag in FEATURES) + ".", "",
        "## The cells", ""]
    for (row, column), cell in CELLS.items():
        name = (SHORT[row] if row == column
                else f"{SHORT[row]} x {SHORT[column]}")
        test = "" if cell[0] == "ctest" else f" (`{cell_name(row, column)}`)"
        slow = (" `slow`" if cell[0] == "oracle" and "slow" in cell[2]
                else "")
        lines.append(f"- {name}: {summary(cell)}{test}{slow}")
    lines += [
        "",
        "ZeRO-3 shards the weights over the replicas (docs/DataParallel.md); "
        "its oracle against plain data parallelism is bit-exact.",
        "",
        "The ZeRO cells run one level for every stage. A level per stage "
        "(`--zero 0,3`, `--zero 1,3`, or chosen per stage by `--devices` "
        "under `--memory-cap`) is checked against plain data parallelism "
        "with and without TP by `e2e.mlp-zero3-matches-data-parallel`, "
        "`e2e.mlp-zero3-tp2-matches-data-parallel` and their GPT twins; "
        "`e2e.layout-agrees-with-program` builds `--zero 0,3` with "
        "`--devices`.",
        "",
    ]
    return "\n".join(lines)


def has_gpu():
    smi = shutil.which("nvidia-smi")
    return smi is not None and subprocess.run(
        [smi, "-L"], capture_output=True).returncode == 0


def run_cell(args, row, column):
    cell = CELLS[(row, column)]
    if cell[0] == "refused":
        options = [os.path.join(args.workdir, o) if o == "plans.txt" else o
                   for o in cell[1]]
        proc = subprocess.run(
            [args.pp_compile, os.path.join(args.workdir, "missing.mlir")] +
            options + ["-o", os.path.join(args.workdir, "train")],
            capture_output=True, text=True, timeout=120)
        out = (proc.stdout + proc.stderr).strip()
        ok = proc.returncode != 0 and out == cell[2]
        print(f"{'PASS' if ok else 'FAIL'}: {row} x {column} refused"
              f"{'' if ok else f' (exit {proc.returncode}): {out}'}")
        return 0 if ok else 1
    if cell[0] == "ctest":
        sys.exit(f"{row} x {column} is ctest {cell[1]}")
    if "gpu" in cell[2] and not has_gpu():
        print(f"skipped: {row} x {column} needs a GPU")
        return 77
    script, *rest = cell[1]
    command = [sys.executable, os.path.join(HERE, script), "--pp-compile",
               args.pp_compile] + [a.replace("{gpt}", args.gpt_model)
                                   for a in rest]
    print(" ".join(command), flush=True)
    return subprocess.run(command).returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pp-compile")
    parser.add_argument("--gpt-model",
                        help="the GPT at 2 blocks of width 16 (the e2e "
                        "tests' gpt-tp.mlir)")
    parser.add_argument("--cell", help="ROW-COLUMN: run this cell")
    parser.add_argument("--list", action="store_true",
                        help="the cells this script runs and their labels")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--check-doc", metavar="PATH")
    args = parser.parse_args()
    if args.list:
        for name, cell in own_cells():
            labels = cell[2] if cell[0] == "oracle" else ()
            print(name, ",".join(labels) or "-")
        return 0
    if args.markdown:
        print(markdown(), end="")
        return 0
    if args.check_doc:
        with open(args.check_doc) as f:
            if f.read() != markdown():
                print(f"{args.check_doc} is out of date: run "
                      "test/e2e/composition.py --markdown > "
                      "docs/Composition.md")
                return 1
        print(f"{args.check_doc} is up to date")
        return 0
    row, column = args.cell.split("-")
    with tempfile.TemporaryDirectory() as workdir:
        args.workdir = workdir
        return run_cell(args, row, column)


if __name__ == "__main__":
    sys.exit(main())
