#!/usr/bin/env python3
"""pp's training step against PyTorch eager's and torch.compile's on the
PyTorch GPT of examples/torch-gpt at three sizes, one process and one
thread each.

  PYTHONPATH=build/python_packages ~/.cache/pp-python-venv/bin/python \\
      bench/model_speed.py --pp-compile build/bin/pp-compile [--sizes 256,512]

Each size (`--sizes`: 256 = width 256, 4 blocks; 512 = width 512, 8
blocks; 768 = width 768, 12 blocks; 4, 8 and 12 heads of 64, vocabulary
512, context 128) is built under torch.manual_seed(0), exported whole with
pp.torch.export and compiled for 1 stage and 1 micro-batch; all three train
from those weights on examples/torch-gpt's token windows with SGD. A round
runs pp, eager and torch.compile one after another (A B C A B C ...), each
from the initial weights (with `--pp-compile-base`, also pp as another
build of pp-compile compiles it, and with `--blas PATH`, pp's program on
the BLAS library at PATH, PPRT_BLAS, in the same rounds); the step time of a
round is its median after `--warmup` steps, and the table has the median over rounds, the ratios to
pp and the fraction of this core's fp32 FMA peak (bench/fma_peak.c). Model
FLOPs: 3 x the forward's GEMM FLOPs (2 per multiply-add; attention over
all T x T positions; no embedding). The losses of every run must agree
with eager's to `--rtol` (exit 1 otherwise).

Needs torch, torch_mlir, numpy and pp's Python package."""

import argparse
import copy
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import torch  # noqa: E402

import torch_pipelining as tp  # noqa: E402
from model import loss_fn  # noqa: E402  (examples/torch-gpt, via tp)

# name: width, blocks, heads, batch, measured steps, warm-up steps. The
# batch keeps the 768 size's step to seconds on one core.
SIZES = {"256": (256, 4, 4, 16, 5, 2),
         "512": (512, 8, 8, 16, 3, 1),
         "768": (768, 12, 12, 8, 3, 1)}
IMPLS = ("pp", "pp-base", "pp-blas", "eager", "compile")
NAMES = {"pp": "pp, 1 stage", "pp-base": "pp, 1 stage, --pp-compile-base",
         "pp-blas": "pp, 1 stage, --blas library",
         "eager": "PyTorch eager", "compile": "torch.compile"}


def size_args(opts, name):
    dim, layers, heads, batch, steps, warmup = SIZES[name]
    return argparse.Namespace(
        vocab=opts.vocab, context=opts.context, dim=dim, heads=heads,
        layers=layers, batch=opts.batch or batch, lr=opts.lr,
        steps=(opts.steps or steps) + (opts.warmup or warmup),
        warmup=opts.warmup or warmup, pp_compile=opts.pp_compile)


def step_flops(a):
    """3 x the forward's GEMM FLOPs: the backward of C = A B is two
    products of C's size."""
    tokens = a.batch * a.context
    linear = 12 * a.dim * a.dim * a.layers + a.dim * a.vocab
    attention = 2 * a.context * a.dim * a.layers
    return 3 * 2 * tokens * (linear + attention)


class Torch:
    """Eager or torch.compile training that restarts from the initial
    weights each round (parameters copied in place: the compiled graph is
    reused, not rebuilt)."""

    def __init__(self, a, compiled):
        torch.set_num_threads(1)
        self.a = a
        self.model = tp.build_model(a)
        self.initial = {k: v.clone() for k, v in
                        self.model.state_dict().items()}
        self.forward = torch.compile(self.model) if compiled else self.model

    def run(self, tokens):
        with torch.no_grad():
            for k, v in self.model.state_dict().items():
                v.copy_(self.initial[k])
        optimizer = torch.optim.SGD(self.model.parameters(), lr=self.a.lr)
        losses, seconds = [], []
        for step in range(self.a.steps):
            ids, targets = tp.batch(self.a, tokens, step)
            start = time.perf_counter()
            optimizer.zero_grad()
            loss = loss_fn(self.forward(ids), targets)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            seconds.append(time.perf_counter() - start)
        return losses, seconds


class PP:
    """The model exported with pp.torch and compiled for 1 stage."""

    def __init__(self, a, work, compile_args, pp_compile=None, tag=""):
        import pp.torch
        self.a, self.work, self.env = a, work, None
        model = tp.build_model(a)
        ids = torch.zeros(a.batch, a.context, dtype=torch.int64)
        self.exported = pp.torch.export(
            model, (ids, ids), loss_fn, work / f"gpt{a.dim}.mlir",
            whole_batch=True)
        self.exe = work / f"pp{a.dim}{tag}"
        cmd = [pp_compile or a.pp_compile, str(self.exported.mlir),
               "--stages", "1",
               "--microbatches", "1", "-o", str(self.exe), *compile_args]
        start = time.perf_counter()
        subprocess.run(cmd, check=True)
        self.compile_seconds = time.perf_counter() - start

    def run(self, tokens):
        return tp.pp_run(self.a, self.exe, self.exported,
                         self.work / "tokens.bin", 1, env=self.env)

    def on_blas(self, library):
        """The same program on the BLAS library at `library`."""
        other = copy.copy(self)
        other.env = dict(os.environ, PPRT_BLAS=library)
        return other


def fma_peak(work):
    exe = work / "fma_peak"
    subprocess.run([os.environ.get("CC", "cc"), "-O3", "-march=native",
                    str(HERE / "fma_peak.c"), "-o", str(exe)], check=True)
    return float(subprocess.run([str(exe)], check=True, capture_output=True,
                                text=True).stdout)


def measure(opts, name, tokens, work):
    """{impl: (losses, [round medians])} and pp's compile seconds."""
    a = size_args(opts, name)
    runners = {}
    for impl in opts.impls:
        if impl == "pp":
            runners[impl] = PP(a, work, opts.compile_arg)
        elif impl == "pp-base":
            runners[impl] = PP(a, work, opts.compile_arg,
                               opts.pp_compile_base, "-base")
        elif impl == "pp-blas":
            runners[impl] = runners["pp"].on_blas(opts.blas)
        else:
            runners[impl] = Torch(a, impl == "compile")
    result = {impl: (None, []) for impl in opts.impls}
    for round_ in range(opts.rounds):
        for impl, runner in runners.items():
            losses, seconds = runner.run(tokens)
            rounds = result[impl][1]
            rounds.append(statistics.median(seconds[a.warmup:]))
            result[impl] = (losses, rounds)
            print(f"# {name} round {round_ + 1} {impl}: "
                  f"{rounds[-1] * 1e3:.1f} ms, load {tp.load_average()}",
                  flush=True)
    compile_s = runners["pp"].compile_seconds if "pp" in runners else 0.0
    return a, result, compile_s


def print_table(rows, peak, rtol):
    """One row per size and implementation; False if losses disagree."""
    print("| size | batch | run | step ms | each round (ms) | vs pp | "
          "GFLOP/s | % of FMA peak | max rel. loss diff vs eager |")
    print("|---|---:|---|---:|---|---:|---:|---:|---:|")
    ok = True
    for name, a, result, _ in rows:
        flops = step_flops(a)
        medians = {i: statistics.median(r) for i, (_, r) in result.items()}
        reference = result.get("eager", (None,))[0]
        base = medians.get("pp")
        for impl, (losses, rounds) in result.items():
            t = medians[impl]
            gflops = flops / t / 1e9
            diff = (max(abs(x - y) / abs(y) for x, y in
                        zip(losses, reference)) if reference else 0.0)
            ok = ok and diff <= rtol
            each = ", ".join(f"{r * 1e3:.0f}" for r in rounds)
            ratio = f"{t / base:.2f}" if base else ""
            print(f"| {a.dim} x {a.layers} | {a.batch} | {NAMES[impl]} | "
                  f"{t * 1e3:.1f} | {each} | {ratio} | {gflops:.1f} | "
                  f"{100 * gflops / peak:.1f}% | {diff:.1e} |")
    return ok


def argument_parser(doc):
    """A parser described by `doc`'s first paragraph, with --pp-compile."""
    parser = argparse.ArgumentParser(
        description=doc.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pp-compile",
                        default=str(ROOT / "build" / "bin" / "pp-compile"))
    return parser


def main():
    parser = argument_parser(__doc__)
    parser.add_argument("--pp-compile-base", metavar="PATH",
                        help="also pp compiled by this pp-compile (another "
                        "commit's build), in the same rounds")
    parser.add_argument("--blas", metavar="PATH",
                        help="also pp's program on this BLAS library "
                        "(PPRT_BLAS), in the same rounds")
    parser.add_argument("--sizes", default="256,512,768",
                        help="comma-separated: " + ", ".join(SIZES))
    parser.add_argument("--impls", default="pp,eager,compile",
                        help="comma-separated: " + ", ".join(IMPLS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int,
                        help="measured steps per round (default: per size)")
    parser.add_argument("--warmup", type=int,
                        help="unmeasured steps per round (default: per size)")
    parser.add_argument("--batch", type=int,
                        help="rows per step (default: per size)")
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--context", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--compile-arg", action="append", default=[],
                        metavar="ARG", help="an extra pp-compile option "
                        "(repeatable)")
    opts = parser.parse_args()
    opts.sizes = opts.sizes.split(",")
    opts.impls = [i for i in opts.impls.split(",")
                  if (i != "pp-base" or opts.pp_compile_base)
                  and (i != "pp-blas" or opts.blas)]
    if opts.pp_compile_base and "pp-base" not in opts.impls:
        opts.impls.insert(1, "pp-base")
    if "pp-blas" in opts.impls:
        if "pp" not in opts.impls:
            parser.error("--blas runs pp's program: --impls must have pp")
        opts.impls.remove("pp-blas")
    if opts.blas and "pp" in opts.impls:
        opts.impls.insert(opts.impls.index("pp") + 1, "pp-blas")
    for s in opts.sizes:
        if s not in SIZES:
            parser.error(f"unknown size '{s}' (sizes: {', '.join(SIZES)})")
    for i in opts.impls:
        if i not in IMPLS:
            parser.error(f"unknown implementation '{i}'")
    work = pathlib.Path(tempfile.mkdtemp(prefix="pp-model-speed-"))
    tokens = tp.torch_gpt.write_tokens(work / "tokens.bin")
    if int(tokens.max()) >= opts.vocab:
        sys.exit("model_speed.py: the corpus has more ids than --vocab")
    peak = fma_peak(work)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short",
                             "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    loads = [tp.load_average()]
    rows = []
    for name in opts.sizes:
        rows.append((name, *measure(opts, name, tokens, work)))
        loads.append(tp.load_average())
    peak = max(peak, fma_peak(work))
    print(f"\nmodel_speed.py, {start}, commit {commit}; one process, one "
          f"thread each; vocabulary {opts.vocab}, context {opts.context}, "
          f"SGD lr {opts.lr}; {opts.rounds} alternating rounds of "
          f"{', '.join(opts.impls)}; fp32 FMA peak "
          f"{peak:.1f} GFLOP/s; load average {' -> '.join(loads)} on "
          f"{os.cpu_count()} cores; pp-compile "
          + ", ".join(f"{c:.0f} s ({n})" for n, _, _, c in rows)
          + (f"; PPRT_BLAS={opts.blas} for pp-blas" if opts.blas else "")
          + "\n")
    if not print_table(rows, peak, opts.rtol):
        print("\nmodel_speed.py: FAIL: the losses disagree")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
