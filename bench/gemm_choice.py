#!/usr/bin/env python3
"""Measures, per contraction shape of the GPT example, MLIR's generated code
against the runtime's library GEMM (pprt_gemm on OpenBLAS), one thread, and
prints the table that pp-select-gemm's `gemm=auto` rule is read from
(bench/gemm_choice.md).

The shapes are the plans `pp-select-gemm{gemm=library print-plans}` reports
for the 1-stage GPT schedule after pp-factor-contractions (as in
pp-lower-to-cpu). Each shape becomes one kernel on rank-3
memrefs (batch, rows, columns; transposed operands stored transposed),
lowered twice through pp-opt: as generated code (the stage lowering: the
`pp-vectorize-contractions` pass first where pp-opt has it, then
convert-linalg-to-loops and the LLVM lowering) and, marked
`pp.gemm = "library"`, through convert-gemm-to-runtime. Both are compiled
with llc -O3 and timed by bench/gemm_choice_harness.c (median of 5 rounds).

  OPENBLAS_NUM_THREADS=1 python3 bench/gemm_choice.py --build build
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

LLVM = "/usr/lib/llvm-22/bin"
LOWER = ("convert-linalg-to-loops,lower-affine,convert-scf-to-cf,"
         "expand-strided-metadata,finalize-memref-to-llvm,convert-to-llvm,"
         "reconcile-unrealized-casts")
PLAN = re.compile(r"remark: gemm \w+: batch=(\d+) m=(\d+) n=(\d+) k=(\d+) "
                  r"trans_a=(\d) trans_b=(\d) calls=(\d+)")


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{proc.stderr}")
    return proc


def gpt_shapes(args, work):
    schedule = os.path.join(work, "gpt.mlir")
    run([f"{args.build}/bin/pp-compile", args.model, "--emit=schedule",
         "-o", schedule])
    pipeline = ("builtin.module(func.func(pp-factor-contractions),"
                "pp-select-gemm{gemm=library print-plans})")
    out = run([f"{args.build}/bin/pp-opt", schedule,
               f"--pass-pipeline={pipeline}", "-o", os.devnull]).stderr
    return collections.Counter(tuple(map(int, m)) for m in PLAN.findall(out))


def kernel(shape, library):
    """C[p] (+)= op(A[p]) op(B[p]) after a zero fill, as MLIR text."""
    batch, m, n, k, ta, tb, _ = shape
    a = (batch, k, m) if ta else (batch, m, k)
    b = (batch, n, k) if tb else (batch, k, n)
    amap = "(p, i, j, l) -> (p, l, i)" if ta else "(p, i, j, l) -> (p, i, l)"
    bmap = "(p, i, j, l) -> (p, j, l)" if tb else "(p, i, j, l) -> (p, l, j)"
    ty = lambda s: "memref<{}x{}x{}xf32>".format(*s)
    mark = ' attrs = {pp.gemm = "library"}' if library else ""
    return f"""
func.func @kernel(%a: {ty(a)}, %b: {ty(b)}, %c: {ty((batch, m, n))})
    attributes {{llvm.emit_c_interface}} {{
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : {ty((batch, m, n))})
  linalg.generic {{indexing_maps = [affine_map<{amap}>, affine_map<{bmap}>,
                                    affine_map<(p, i, j, l) -> (p, i, j)>],
                  iterator_types = ["parallel", "parallel", "parallel",
                                    "reduction"]}}
      ins(%a, %b : {ty(a)}, {ty(b)}) outs(%c : {ty((batch, m, n))}){mark} {{
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }}
  return
}}
""", a + b + (batch, m, n)


def has_pass(args, name):
    help_text = run([f"{args.build}/bin/pp-opt", "--help"]).stdout
    return f"--{name}" in help_text


def time_kernel(args, work, shape, library, vectorize):
    text, dims = kernel(shape, library)
    tag = "lib" if library else "gen"
    src = os.path.join(work, f"{tag}.mlir")
    with open(src, "w") as f:
        f.write(text)
    passes = ("convert-gemm-to-runtime," if library else
              "func.func(pp-vectorize-contractions)," if vectorize else "")
    llvm_mlir = run([f"{args.build}/bin/pp-opt", src,
                     f"--pass-pipeline=builtin.module({passes}{LOWER})"]).stdout
    ll = run([f"{LLVM}/mlir-translate", "--mlir-to-llvmir"],
             input=llvm_mlir).stdout
    obj = os.path.join(work, f"{tag}.o")
    run([f"{LLVM}/llc", "-O3", "-mcpu=native", "-relocation-model=pic",
         "-filetype=obj", "-o", obj], input=ll)
    exe = os.path.join(work, tag)
    with open(f"{args.build}/runtime/pprt-link-libraries.txt") as f:
        libraries = f.read().split()
    run(["cc", "-O2", "-o", exe, args.harness, obj,
         f"{args.build}/runtime/libpprt.a", *libraries, "-lm"])
    out = run([exe] + [str(d) for d in dims]).stdout.split()
    return float(out[0])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--model",
                        default=os.path.join(here, "..", "examples", "gpt",
                                             "gpt.mlir"))
    parser.add_argument("--harness",
                        default=os.path.join(here, "gemm_choice_harness.c"))
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    vectorize = has_pass(args, "pp-vectorize-contractions")
    print(f"generated code: "
          f"{'pp-vectorize-contractions + ' if vectorize else ''}"
          f"convert-linalg-to-loops; library: pprt_gemm (OpenBLAS), "
          f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
    print("| ops | batch | m | n | k | ta | tb | calls | MFLOP/call | "
          "generated us | library us | gen GFLOP/s | lib GFLOP/s | faster |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for shape, count in sorted(gpt_shapes(args, work).items()):
            flops = 2 * shape[0] * shape[1] * shape[2] * shape[3]
            gen = time_kernel(args, work, shape, False, vectorize)
            lib = time_kernel(args, work, shape, True, vectorize)
            print(f"| {count} | " + " | ".join(map(str, shape)) +
                  f" | {flops / 1e6:.3f} | {gen * 1e6:.1f} | {lib * 1e6:.1f} |"
                  f" {flops / gen / 1e9:.1f} | {flops / lib / 1e9:.1f} | "
                  f"{'library' if lib < gen else 'generated'} |")


if __name__ == "__main__":
    main()
