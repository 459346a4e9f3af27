#!/usr/bin/env python3
"""Compute speed of pp's stage code against numpy, PyTorch eager and
torch.compile on the same GPT training step, one thread each.

  python3 bench/compute_speed.py --pp-compile build/bin/pp-compile

For each GPT size (examples/gpt/gpt.mlir, examples/gpt/gpt-bench.mlir) it
trains from the runtime's initial weights on the runtime's corpus batches
with SGD: pp with 1 stage, and 2 and 4 stages on 2 and 4 ranks (mpirun,
1f1b); numpy (bench/gpt_numpy.py, hand-written backward); PyTorch eager and
torch.compile (bench/gpt_torch.py). It prints the median step time after
warm-up, GFLOP/s (model FLOPs: 3 x the forward's contraction FLOPs) and the
fraction of this core's fp32 peak (bench/fma_peak.c), the per-step losses
of every implementation (exit 1 unless they agree to --rtol), and each
contraction shape's speed in pp (a one-contraction training step compiled
by pp-compile) and in OpenBLAS sgemm (bench/sgemm_time.c).

Needs numpy and torch: runs scripts/setup-torch.sh (a virtual environment
from PyPI) and restarts itself in it when they are missing."""

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GPT_DIR = os.path.join(ROOT, "examples", "gpt")
sys.path.insert(0, GPT_DIR)
sys.path.insert(0, HERE)


def ensure_environment(need_torch):
    """Imports numpy (and torch), or re-executes in the virtual environment
    scripts/setup-torch.sh makes in ~/.cache/pp-bench-venv."""
    try:
        import numpy  # noqa: F401
        if need_torch:
            import torch  # noqa: F401
        return
    except ImportError:
        if os.environ.get("PP_BENCH_REEXEC"):
            raise
    venv = os.path.expanduser("~/.cache/pp-bench-venv")
    subprocess.run(["bash", os.path.join(HERE, "..", "scripts",
                                         "setup-torch.sh")],
                   check=True, env=dict(os.environ, PP_TORCH_VENV=venv))
    python = os.path.join(venv, "bin", "python")
    os.environ["PP_BENCH_REEXEC"] = "1"
    os.execv(python, [python] + sys.argv)


import gen_gpt  # noqa: E402

IMPLS = ("pp", "numpy", "torch-eager", "torch-compile")
SIZES = {
    # name: model file, SGD learning rate, warm-up steps, measured steps
    "small": ("gpt.mlir", 0.3, 3, 10),
    "bench": ("gpt-bench.mlir", 0.1, 1, 3),
}

# The GPT's contractions (gen_gpt.py): loops, operand and result indices,
# and how many a forward pass has (L = layers).
CONTRACTIONS = [
    ("embedding", "btdv", "btv", "vd", "btd", lambda L: 1),
    ("q/k/v", "bhted", "btd", "dhe", "bhte", lambda L: 3 * L),
    ("scores", "bhtue", "bhte", "bhue", "bhtu", lambda L: L),
    ("probs x v", "bhteu", "bhtu", "bhue", "bhte", lambda L: L),
    ("attn out", "btdhe", "bhte", "ehd", "btd", lambda L: L),
    ("mlp fc", "btfd", "btd", "df", "btf", lambda L: L),
    ("mlp proj", "btdf", "btf", "fd", "btd", lambda L: L),
    ("lm head", "btvd", "btd", "dv", "btv", lambda L: 1),
]


def model_options(size, corpus):
    args = argparse.Namespace(preset=size, corpus=corpus, seed=1,
                              **{n: None for n in gen_gpt.SIZE_OPTIONS})
    return gen_gpt.resolve_model_options(args)


def prod(sizes, letters):
    return math.prod(sizes[c] for c in letters)


def step_flops(args):
    """3 x the forward's contraction FLOPs (2 per multiply-add): the
    backward of C = A B is two products of the same size."""
    sizes = gen_gpt.loop_sizes(args)
    return 3 * sum(2 * prod(sizes, loops) * count(args.layers)
                   for _, loops, _, _, _, count in CONTRACTIONS)


def run(cmd, timeout=1800, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout, **kw)
    if proc.returncode != 0:
        sys.exit(f"compute_speed.py: FAILED ({proc.returncode}): "
                 f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


class PP:
    """Compiles and runs pp programs. `modes` are the --gemm values to
    compile with (None: pp-compile's default, without the option)."""

    def __init__(self, opts, workdir):
        self.exe = opts.pp_compile
        self.workdir = workdir
        help_text = run([self.exe, "--help"])
        self.modes = opts.gemm.split(",") if opts.gemm else [None]
        self.extra_args = opts.compile_arg
        if opts.gemm and not re.search(r"^\s*--gemm\b", help_text, re.M):
            sys.exit("compute_speed.py: --gemm given, but pp-compile has no "
                     "--gemm option")

    @staticmethod
    def label(mode):
        return f" gemm={mode}" if mode else ""

    def compile(self, model, name, stages=1, microbatches=1, mode=None):
        exe = os.path.join(self.workdir, name + (f"_{mode}" if mode else ""))
        cmd = [self.exe, model, "--stages", str(stages), "--microbatches",
               str(microbatches), "--schedule",
               "1f1b" if stages > 1 else "gpipe", "-o", exe]
        if mode:
            cmd.append(f"--gemm={mode}")
        cmd += self.extra_args
        t0 = time.perf_counter()
        run(cmd)
        return exe, time.perf_counter() - t0

    def train(self, exe, ranks, warmup, steps, extra):
        """(per-step losses, the profile's meta) of a --profile run."""
        profile = exe + ".json"
        out = run(["mpirun", "-np", str(ranks), exe, "--warmup", str(warmup),
                   "--steps", str(steps), "--profile", profile,
                   "--timeout", "600"] + extra)
        losses = [float(x) for x in
                  re.findall(r"^step \d+ loss (\S+)$", out, re.M)]
        if len(losses) != warmup + steps:
            sys.exit(f"compute_speed.py: unexpected output of {exe}:\n{out}")
        with open(profile) as f:
            return losses, json.load(f)["meta"]


def time_steps(step, warmup, steps):
    """(losses, median measured step seconds, first step seconds)."""
    losses, times = [], []
    for _ in range(warmup + steps):
        t0 = time.perf_counter()
        losses.append(step())
        times.append(time.perf_counter() - t0)
    return losses, statistics.median(times[warmup:]), times[0]


def run_size(size, opts, pp):
    """Runs every implementation on GPT `size`; returns (whether the losses
    agree, a function printing the tables given the peak GFLOP/s)."""
    import numpy as np
    import gpt_numpy
    model_file, lr, warmup, steps = SIZES[size]
    warmup = opts.warmup if opts.warmup is not None else warmup
    steps = opts.steps if opts.steps is not None else steps
    args = model_options(size, opts.corpus)
    model = os.path.join(GPT_DIR, model_file)
    with open(model) as f:
        if gen_gpt.options_text(args) not in f.read(400):
            sys.exit(f"compute_speed.py: {model} was not generated with "
                     f"{gen_gpt.options_text(args)}")
    flops = step_flops(args)
    total = warmup + steps
    corpus = gpt_numpy.Corpus(opts.corpus)
    gpt_numpy.check_first_batch(corpus, args)
    batches = [corpus.batch(args.seed, s, args.batch, args.seq)
               for s in range(total)]
    weights = gpt_numpy.init_weights(args)
    nparams = sum(w.size for w in weights.values())
    title = (f"GPT {size}: {gen_gpt.options_text(args)}, {nparams} weights,"
             f" {flops / 1e9:.3f} GFLOP a step; SGD lr {lr}, {warmup} "
             f"warm-up + {steps} measured steps")
    print(f"\n{title}")
    rows, losses = [], {}

    def row(name, seconds, note=""):
        rows.append((name, seconds, note))
        print(f"  {name}: {seconds * 1e3:.2f} ms/step {note}")

    if "pp" in opts.impls:
        data = ["--lr", str(lr), "--corpus", opts.corpus, "--seed",
                str(args.seed)]
        for mode, stages in [(m, s) for m in pp.modes for s in opts.stages]:
            mb = 1 if stages == 1 else 2 * stages
            exe, ctime = pp.compile(model, f"{size}_{stages}", stages, mb,
                                    mode)
            name = f"pp{pp.label(mode)} {stages} stage"
            if stages > 1:
                name += f"s ({stages} ranks, 1f1b, {mb} micro-batches)"
            ls, meta = pp.train(exe, stages, warmup, steps, data)
            losses[name] = ls
            row(name, meta["step_time"] / 1e3, f"(compile {ctime:.1f} s)")
    if "numpy" in opts.impls:
        w = {n: a.copy() for n, a in weights.items()}
        gpt = gpt_numpy.GPT(args)
        it = iter(batches)
        ls, t, _ = time_steps(lambda: gpt.step(w, *next(it), lr), warmup,
                              steps)
        losses["numpy"] = ls
        row("numpy", t)
    for impl in ("torch-eager", "torch-compile"):
        if impl not in opts.impls:
            continue
        import torch
        import gpt_torch
        torch.set_num_threads(1)
        trainer = gpt_torch.Trainer(weights, args, impl == "torch-compile")
        it = iter(batches)
        ls, t, first = time_steps(lambda: trainer.step(*next(it), lr),
                                  warmup, steps)
        losses[impl] = ls
        row(impl, t, f"(first step {first:.1f} s)" if "compile" in impl
            else "")
    contractions = ([] if opts.no_contractions else
                    time_contractions(args, opts, pp))

    def report(peak):
        print(f"\n## {title}")
        print_table(f"GPT {size}", rows, flops, peak)
        ok = print_losses(losses, opts.rtol)
        if contractions:
            print_contractions(contractions, peak)
        return ok
    return report


def print_table(title, rows, flops, peak):
    print(f"\n| {title} | step (ms) | GFLOP/s | % of peak | |")
    print("|---|---:|---:|---:|---|")
    for name, seconds, note in rows:
        gflops = flops / seconds / 1e9
        print(f"| {name} | {seconds * 1e3:.2f} | {gflops:.2f} | "
              f"{100 * gflops / peak:.1f}% | {note} |")


def print_losses(losses, rtol):
    """Prints each implementation's losses; False unless all agree with
    the first to `rtol` (relative)."""
    if not losses:
        return True
    names = list(losses)
    base = losses[names[0]]
    print(f"\n| step | " + " | ".join(names) + " |")
    print("|---:|" + "---:|" * len(names))
    for s in range(len(base)):
        print(f"| {s + 1} | " + " | ".join(f"{losses[n][s]:.7f}"
                                          for n in names) + " |")
    ok = True
    print()
    for n in names[1:]:
        worst = max(abs(a - b) / abs(b) for a, b in zip(losses[n], base))
        agree = worst <= rtol
        ok = ok and agree
        print(f"{'agree' if agree else 'DISAGREE'}: {n} vs {names[0]}: max "
              f"relative loss difference {worst:.1e} (rtol {rtol:g})")
    return ok


def gemm_dims(sizes, loops, a, b, out):
    """(batch, M, N, K) of a contraction as a row-major GEMM."""
    batch = [c for c in loops if c in a and c in b and c in out]
    m = [c for c in loops if c in a and c in out and c not in b]
    n = [c for c in loops if c in b and c in out and c not in a]
    k = [c for c in loops if c in a and c in b and c not in out]
    return tuple(prod(sizes, x) for x in (batch, m, n, k))


def contraction_model(sizes, loops, a, b, out):
    """A training step of one contraction of two weights: the loss is the
    product's dot with a target, so the backward computes both operand
    gradients, the GPT's transposed products of the same shape."""
    m = gen_gpt.Model(sizes)
    c = m.contract("c", loops, ("%a", a), ("%b", b), out)
    loss = m.sum("loss", out, [(c, out), ("%t", out)], "",
                 lambda x, y: ([f"%p = arith.mulf {x}, {y} : f32"], "%p"))
    head = [f"func.func @train_step(%t: {m.type(out)} {{pp.target}}, "
            f"%a: {m.type(a)} {{pp.param}}, %b: {m.type(b)} {{pp.param}}) "
            "-> tensor<f32> {",
            "  %cst_zero = arith.constant 0.0 : f32"]
    return "\n".join(head + m.lines + [f"  return {loss} : tensor<f32>",
                                        "}"]) + "\n"


def sgemm_seconds(tool, batch, m, n, k):
    """OpenBLAS time of C = A B and of its two backward products."""
    forms = [(m, n, k, 0, 0), (m, k, n, 0, 1), (k, n, m, 1, 0)]
    return sum(float(run([tool, str(batch), str(x), str(y), str(z), str(ta),
                          str(tb)])) for x, y, z, ta, tb in forms)


def time_contractions(args, opts, pp):
    """(name, count, GEMM dims, FLOPs, pp seconds by --gemm mode, OpenBLAS
    seconds) of each contraction's forward and backward products."""
    sizes = gen_gpt.loop_sizes(args)
    tool = build_c(opts, "sgemm_time.c", ["-O2"] + blas_kernels_flags() +
                   blas_flags())
    print(f"  OpenBLAS kernels: {run([tool, '--kernels']).strip()}")
    result = []
    for name, loops, a, b, out, count in CONTRACTIONS:
        dims = gemm_dims(sizes, loops, a, b, out)
        flops = 3 * 2 * math.prod(dims)
        n = count(args.layers)
        blas = sgemm_seconds(tool, *dims)
        path = os.path.join(pp.workdir, f"contract_{args.preset}_{loops}")
        with open(path + ".mlir", "w") as f:
            f.write(contraction_model(sizes, loops, a, b, out))
        pps = {}
        for mode in pp.modes:
            exe, _ = pp.compile(path + ".mlir", os.path.basename(path),
                                mode=mode)
            _, meta = pp.train(exe, 1, 1, opts.contraction_steps, [])
            pps[mode] = meta["step_action_time"] / 1e3
        speeds = ", ".join(f"pp{pp.label(m)} {flops / t / 1e9:.2f}"
                           for m, t in pps.items())
        print(f"  {name}: {speeds}, OpenBLAS {flops / blas / 1e9:.2f} "
              "GFLOP/s")
        result.append((name, n, dims, flops, pps, blas))
    return result


def print_contractions(contractions, peak):
    """GFLOP/s and % of peak of pp (each --gemm mode) and OpenBLAS per
    contraction, and over the step (total FLOPs / total time)."""
    columns = [f"pp{PP.label(m)}" for m in contractions[0][4]] + ["OpenBLAS"]
    print("\n| contraction (x per step) | batch x M x N x K | GFLOP/step | " +
          " | ".join(f"{c} GFLOP/s | {c} % peak" for c in columns) + " |")
    print("|---|---|---:|" + "---:|---:|" * len(columns))
    total_flops, total_secs = 0.0, [0.0] * len(columns)

    def cells(flops, secs):
        return " | ".join(f"{flops / t / 1e9:.2f} | "
                          f"{100 * flops / t / 1e9 / peak:.1f}%" for t in secs)
    for name, n, dims, flops, pps, blas in contractions:
        secs = list(pps.values()) + [blas]
        total_flops += n * flops
        total_secs = [a + n * t for a, t in zip(total_secs, secs)]
        print(f"| {name} (x{n}) | {' x '.join(map(str, dims))} | "
              f"{n * flops / 1e9:.3f} | {cells(flops, secs)} |")
    print(f"| all, weighted by FLOPs | | {total_flops / 1e9:.3f} | "
          f"{cells(total_flops, total_secs)} |")


def blas_flags():
    for inc in ("/usr/include/x86_64-linux-gnu/openblas-pthread",
                "/usr/include/openblas", "/usr/include"):
        if os.path.exists(os.path.join(inc, "cblas.h")):
            return [f"-I{inc}", "-lopenblas", "-ldl"]
    sys.exit("compute_speed.py: no cblas.h (apt-get install libopenblas-dev)")


def blas_kernels_flags():
    """Compiles in the runtime's choice of OpenBLAS kernels and of the BLAS
    library (PPRT_BLAS), so that sgemm_time.c's GEMMs run as pp's library
    GEMMs do."""
    cpu = os.path.join(HERE, "..", "runtime", "lib", "backends", "cpu")
    return [f"-I{os.path.join(HERE, '..', 'runtime', 'lib')}",
            os.path.join(cpu, "blas_kernels.c"),
            os.path.join(cpu, "blas_library.c")]


def build_c(opts, source, flags):
    exe = os.path.join(opts.workdir, os.path.splitext(source)[0])
    cc = os.environ.get("CC", "cc")
    run([cc, os.path.join(HERE, source), "-o", exe] + flags)
    return exe


def describe(opts):
    """--dry-run and --emit-contraction (standard library only)."""
    for size in opts.sizes:
        args = model_options(size, opts.corpus)
        sizes = gen_gpt.loop_sizes(args)
        if opts.emit_contraction:
            for name, loops, a, b, out, _ in CONTRACTIONS:
                if name == opts.emit_contraction:
                    sys.stdout.write(contraction_model(sizes, loops, a, b,
                                                       out))
                    return 0
            sys.exit(f"compute_speed.py: no contraction "
                     f"'{opts.emit_contraction}'")
        print(f"GPT {size}: {gen_gpt.options_text(args)}: "
              f"{step_flops(args)} FLOP a step")
        for name, loops, a, b, out, count in CONTRACTIONS:
            dims = gemm_dims(sizes, loops, a, b, out)
            print(f"  {name} x{count(args.layers)}: "
                  f"{' x '.join(map(str, dims))}")
    return 0


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pp-compile",
                        default=os.path.join(ROOT, "build", "bin",
                                             "pp-compile"))
    parser.add_argument("--sizes", default="small,bench",
                        help="comma-separated: small, bench")
    parser.add_argument("--impls", default=",".join(IMPLS),
                        help="comma-separated: " + ", ".join(IMPLS))
    parser.add_argument("--stages", default="1,2,4",
                        help="pp stage counts (as many ranks each)")
    parser.add_argument("--compile-arg", action="append", default=[],
                        metavar="ARG",
                        help="an extra pp-compile option for every pp build "
                        "(repeatable), e.g. --compile-arg=--vectorize-elementwise")
    parser.add_argument("--gemm", metavar="MODES",
                        help="comma-separated pp-compile --gemm values "
                        "(generated, library, auto) to run pp with each; "
                        "default: pp-compile's default, without --gemm")
    parser.add_argument("--warmup", type=int,
                        help="unmeasured steps (default: per size)")
    parser.add_argument("--steps", type=int,
                        help="measured steps (default: per size)")
    parser.add_argument("--contraction-steps", type=int, default=3)
    parser.add_argument("--no-contractions", action="store_true",
                        help="skip the per-contraction table")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--dry-run", action="store_true",
                        help="print each size's FLOPs and contraction "
                        "shapes, run nothing")
    parser.add_argument("--emit-contraction", metavar="NAME",
                        help="print the one-contraction training step of "
                        "contraction NAME of the first --sizes, run nothing")
    parser.add_argument("--corpus", default=os.path.join(GPT_DIR,
                                                         "corpus.txt"))
    opts = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    opts.sizes = opts.sizes.split(",")
    opts.impls = opts.impls.split(",")
    opts.stages = [int(s) for s in opts.stages.split(",")]
    for s in opts.sizes:
        if s not in SIZES:
            parser.error(f"unknown size '{s}'")
    for i in opts.impls:
        if i not in IMPLS:
            parser.error(f"unknown implementation '{i}'")
    if opts.dry_run or opts.emit_contraction:
        return describe(opts)
    ensure_environment(any(i.startswith("torch") for i in opts.impls))
    if not shutil.which("mpirun"):
        sys.exit("compute_speed.py: mpirun not found")

    with tempfile.TemporaryDirectory() as workdir:
        opts.workdir = workdir
        peak_exe = build_c(opts, "fma_peak.c", ["-O3", "-march=native"])
        peak = float(run([peak_exe]))
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                                 "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        start = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())
        load = os.getloadavg()[0]
        pp = PP(opts, workdir)
        reports = [run_size(size, opts, pp) for size in opts.sizes]
        end_peak = float(run([peak_exe]))
        print(f"\n# compute_speed.py, {start}, commit {commit}, one thread "
              f"each; fp32 FMA peak of this core {max(peak, end_peak):.1f} "
              f"GFLOP/s (bench/fma_peak.c, the better of {peak:.1f} at the "
              f"start and {end_peak:.1f} at the end); load average "
              f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, "
              f"on {os.cpu_count()} cores")
        ok = all([report(max(peak, end_peak)) for report in reports])
    if not ok:
        print("\ncompute_speed.py: FAIL: the implementations' losses "
              "disagree")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
