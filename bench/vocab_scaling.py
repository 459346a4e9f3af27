#!/usr/bin/env python3
"""How a GPT training step grows with the vocabulary under pp and under
PyTorch eager, one thread each.

  PYTHONPATH=build/python_packages python3 bench/vocab_scaling.py

The PyTorch GPT of examples/torch-gpt (token and position embeddings, a
cross-entropy over the vocabulary) is exported with pp.torch at each
vocabulary size and compiled for 1 stage and 1 micro-batch; pp trains it
on synthetic token ids (--classes V) and eager PyTorch runs the same step
(forward, backward, SGD) on random ids. For each size the table has the
median step time after warm-up and the peak resident memory of the
process (pp: the training program, measured by /usr/bin/time; eager: the
Python process), and the growth of both from the smallest vocabulary.
`--gathers false` compiles the embedding and cross-entropy gathers as
one-hot sums over the vocabulary (pp-collapse-one-hot off), as before."""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "torch-gpt"))

EAGER = r"""
import json, resource, statistics, sys, time, torch
sys.path.insert(0, sys.argv[1])
from model import GPT, loss_fn
torch.set_num_threads(1)
a = json.loads(sys.argv[2])
torch.manual_seed(0)
model = GPT(vocab=a["vocab"], context=a["context"], dim=a["dim"],
            heads=a["heads"], layers=a["layers"])
opt = torch.optim.SGD(model.parameters(), lr=0.01)
ids = torch.randint(0, a["vocab"], (a["batch"], a["context"]))
times = []
for _ in range(a["warmup"] + a["steps"]):
    start = time.perf_counter()
    opt.zero_grad()
    loss = loss_fn(model(ids), ids)
    loss.backward()
    opt.step()
    times.append(time.perf_counter() - start)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"ms": 1e3 * statistics.median(times[a["warmup"]:]),
                  "mb": peak}))
"""


def eager_step(args, vocab):
    spec = dict(vars(args), vocab=vocab)
    out = subprocess.run([sys.executable, "-c", EAGER,
                          str(ROOT / "examples" / "torch-gpt"),
                          json.dumps(spec)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.splitlines()[-1])


def pp_step(args, vocab, workdir):
    import torch
    import pp
    import pp.torch
    from model import GPT, loss_fn
    torch.manual_seed(0)
    model = GPT(vocab=vocab, context=args.context, dim=args.dim,
                heads=args.heads, layers=args.layers)
    ids = torch.zeros(args.batch, args.context, dtype=torch.int64)
    path = workdir / f"gpt-{vocab}.mlir"
    exported = pp.torch.export(model, (ids, ids.clone()), loss_fn, path,
                               whole_batch=True)
    start = time.perf_counter()
    program = pp.compile(exported.mlir, stages=1, microbatches=1,
                         gathers=args.gathers == "true",
                         output=str(workdir / f"train-{vocab}"))
    compile_s = time.perf_counter() - start
    metrics = workdir / f"metrics-{vocab}.jsonl"
    out = subprocess.run(
        ["/usr/bin/time", "-f", "peak-kb %M", str(program.path),
         "--steps", str(args.warmup + args.steps), "--lr", "0.01",
         "--classes", str(vocab), "--init-weights", str(exported.weights),
         "--metrics", str(metrics)],
        check=True, capture_output=True, text=True)
    times = [json.loads(line)["seconds"]
             for line in metrics.read_text().splitlines()]
    peak = next(int(line.split()[1]) for line in out.stderr.splitlines()
                if line.startswith("peak-kb"))
    return {"ms": 1e3 * statistics.median(times[args.warmup:]),
            "mb": peak / 1024, "compile_s": compile_s}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocabs", default="256,2048,8192,32768")
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--context", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--gathers", choices=("true", "false"),
                        default="true")
    args = parser.parse_args()
    vocabs = [int(v) for v in args.vocabs.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="pp-vocab-") as tmp:
        for vocab in vocabs:
            p = pp_step(args, vocab, pathlib.Path(tmp))
            e = eager_step(args, vocab)
            rows.append((vocab, p, e))
            print(f"# vocab {vocab}: pp {p['ms']:.1f} ms {p['mb']:.0f} MB "
                  f"(compile {p['compile_s']:.0f} s), eager {e['ms']:.1f} ms "
                  f"{e['mb']:.0f} MB", flush=True)
    print(f"GPT width {args.dim}, {args.layers} blocks, {args.heads} heads, "
          f"context {args.context}, batch {args.batch}; 1 thread; median of "
          f"{args.steps} steps after {args.warmup}; gathers={args.gathers}")
    print("| vocabulary | pp ms | pp growth | pp peak MB | eager ms | "
          "eager growth | eager peak MB | growth ratio |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    base_p, base_e = rows[0][1]["ms"], rows[0][2]["ms"]
    for vocab, p, e in rows:
        gp, ge = p["ms"] / base_p, e["ms"] / base_e
        print(f"| {vocab} | {p['ms']:.1f} | {gp:.2f}x | {p['mb']:.0f} | "
              f"{e['ms']:.1f} | {ge:.2f}x | {e['mb']:.0f} | {gp / ge:.2f} |")


if __name__ == "__main__":
    main()
