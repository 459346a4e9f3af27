#!/usr/bin/env python3
"""Variable-length samples: the GPT with a token-weighted loss, trained on
the samples of a length index (--sample-lengths), sorted longest first and
right-padded to the context, on a 2-stage 1f1b pipeline of 4 micro-batches
must train exactly like one process whose context is twice as long (every
sample padded further): per-step losses and final weights within --rtol.
Padded positions must neither see nor feed the real ones, and the loss is
the mean over the step's real tokens wherever they fall: the first loss
must also equal examples/gpt/gpt_reference.py's, an independent forward
pass over each sample at its own length.

The same on a program with two shape variants (pp-compile --variant):
micro-batches 0 and 1 of 2 samples padded to 16 tokens, micro-batch 2 of 4
samples padded to 8, the model cut after block 0 at both shapes.

Bad indexes end every rank with one line naming the step, sample,
micro-batch and stage."""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GEN_GPT = os.path.join(ROOT, "examples", "gpt", "gen_gpt.py")
GPT_REFERENCE = os.path.join(ROOT, "examples", "gpt", "gpt_reference.py")
MODEL = ["--layers", "2", "--dim", "16", "--heads", "2", "--positions", "32",
         "--batch", "8", "--loss", "token-weighted"]
CORPUS = os.path.join(ROOT, "examples", "gpt", "corpus.txt")
INDEX = os.path.join(HERE, "Inputs", "sample-lengths-gpt.txt")


def run(cmd, expect_ok=True):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if expect_ok is not None and (proc.returncode == 0) != expect_ok:
        sys.exit(f"FAILED ({proc.returncode}): {' '.join(cmd)}\n"
                 f"{proc.stdout}\n{proc.stderr}")
    return proc.stdout + proc.stderr


def generate(workdir, seq, batch=8, extra=()):
    model = os.path.join(workdir, f"gpt-{seq}-{batch}.mlir")
    run([sys.executable, GEN_GPT] + MODEL +
        ["--seq", str(seq), "--batch", str(batch), "-o", model] + list(extra))
    return model


def build(args, workdir, seq, stages, microbatches):
    exe = os.path.join(workdir, f"gpt-{seq}-{stages}")
    run([args.pp_compile, generate(workdir, seq), "--stages", str(stages),
         "--microbatches", str(microbatches), "--schedule", "1f1b", "-o", exe])
    return exe


def build_variants(args, workdir):
    """2 stages, 3 micro-batches: 2 x 16 tokens twice, then 4 x 8."""
    cut = ["--stage-ends", "0"]
    exe = os.path.join(workdir, "gpt-variants")
    run([args.pp_compile, generate(workdir, 16, 6, cut), "--stages", "2",
         "--microbatches", "3", "--schedule", "1f1b",
         "--variant=" + generate(workdir, 8, 12, cut) + ":2", "-o", exe])
    return exe


def compare(name, losses, params, ref_losses, ref_params, args):
    worst = max(abs(a - b) / abs(b) for a, b in zip(losses, ref_losses))
    ok = len(losses) == args.steps == len(ref_losses)
    ok = ok and all(close(a, b, args.rtol) for a, b in zip(losses, ref_losses))
    ok = ok and params.keys() == ref_params.keys() and all(
        close(params[i][k], ref_params[i][k], args.rtol * 10)
        for i in params for k in (0, 1))
    print(f"{'PASS' if ok else 'FAIL'}: {name}: max relative loss "
          f"difference {worst:.2e} over {args.steps} steps")
    return ok


def train(exe, ranks, index, steps, expect_ok=True, extra=()):
    out = run(["mpirun", "-np", str(ranks), exe, "--steps", str(steps),
               "--lr", "0.3", "--corpus", CORPUS, "--sample-lengths", index,
               "--print-params", "--timeout", "60"] + list(extra), expect_ok)
    losses = [float(x) for x in re.findall(r"^step \d+ loss (\S+)$", out, re.M)]
    params = re.findall(r"^param (\d+) sum (\S+) sumsq (\S+)$", out, re.M)
    return out, losses, {int(i): (float(s), float(q)) for i, s, q in params}


def close(a, b, rtol):
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-12)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as workdir:
        pipeline = build(args, workdir, 16, 2, 4)
        reference = build(args, workdir, 32, 1, 1)
        variants = build_variants(args, workdir)
        _, ref_losses, ref_params = train(reference, 1, INDEX, args.steps)
        # The index cycles through three steps: the loss must fall.
        ok = len(ref_losses) == args.steps and ref_losses[-1] < ref_losses[0]
        print(f"{'PASS' if ok else 'FAIL'}: the reference's losses "
              f"{ref_losses} fall")
        failed += not ok
        _, losses, params = train(pipeline, 2, INDEX, args.steps)
        failed += not compare("2 stages, 1f1b, 4 micro-batches of 2 x 16 "
                              "against 1 process of context 32", losses,
                              params, ref_losses, ref_params, args)
        _, losses, params = train(variants, 2, INDEX, args.steps)
        failed += not compare("2 stages, 1f1b, micro-batches of 2 x 16, "
                              "2 x 16 and 4 x 8 (shape variants) against 1 "
                              "process of context 32", losses,
                              params, ref_losses, ref_params, args)

        out = run([sys.executable, GPT_REFERENCE] + MODEL +
                  ["--seq", "32", "--sample-lengths", INDEX, "--rtol",
                   str(args.rtol), "--check", reference], expect_ok=None)
        ok = re.search(r"^PASS: compiled", out, re.M) is not None
        print(f"{'PASS' if ok else 'FAIL'}: the first loss against the "
              f"unpadded plain-Python forward: {' '.join(out.split())}")
        failed += not ok

        # A sample longer than the context, and a step of the wrong size.
        for exe, text, expected in [
                (pipeline, "16 3 9 12 5 7 2 14\n3 3 3 3 3 3 17 3\n",
                 r"--sample-lengths \S+: step 1: sample 6 has 17 tokens, more "
                 r"than the micro-batch's context \(replica 0, micro-batch 0, "
                 r"stage 0\)"),
                (variants, "16 14 12 9 9 5 3 2\n",
                 r"--sample-lengths \S+: step 0: sample 4 has 9 tokens, more "
                 r"than the micro-batch's context \(replica 0, micro-batch 2, "
                 r"stage 0\)"),
                (pipeline, "1 2 3\n",
                 r"--sample-lengths \S+: step 0 has 3 samples; the program's "
                 r"global batch has 8 rows \(4 micro-batches on 1 "
                 r"replica\)")]:
            bad = os.path.join(workdir, "bad.txt")
            with open(bad, "w") as f:
                f.write(text)
            out, _, _ = train(exe, 2, bad, 1, expect_ok=False)
            found = re.search(expected, out) is not None
            print(f"{'PASS' if found else 'FAIL'}: refuses {text.splitlines()[-1]!r}")
            if not found:
                print(out)
            failed += not found
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
