#!/usr/bin/env python3
"""GFLOP/s of pp-vectorize-contractions kernels against OpenBLAS sgemm.

For every GPT matmul shape in the three layouts the backward produces
(A B, A^T B, A B^T), this writes the contraction as the linalg.generic pp
emits, lowers it with pp-opt (pp-vectorize-contractions, then the CPU
lowering), optimises it with LLVM -O3 for the host CPU, links it with a C
harness that also times cblas_sgemm (one thread) on the same operands and
checks both against a naive product, and prints a table.

  python3 bench/contraction_speed.py --build build [--vector-bits 512]
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

LLVM = "/usr/lib/llvm-22/bin"
# (name, M, N, K): the small GPT (examples/gpt) first, then the bench GPT's
# sizes (d_model 256, context 128).
SHAPES = [
    ("gpt qkv/out", 256, 32, 32),
    ("gpt mlp up", 256, 128, 32),
    ("gpt mlp down", 256, 32, 128),
    ("gpt head", 256, 28, 32),
    ("gpt dW mlp", 32, 128, 256),
    ("bench qkv", 2048, 256, 256),
    ("bench mlp up", 2048, 1024, 256),
    ("bench mlp down", 2048, 256, 1024),
]
LAYOUTS = {
    # maps of A, B over (m, n, k); C is (m, n)
    "AB": ("(m, k)", "(k, n)"),
    "AtB": ("(k, m)", "(k, n)"),
    "ABt": ("(m, k)", "(n, k)"),
}


def kernel(name, m, n, k, layout):
    a, b = LAYOUTS[layout]
    shape = {"m": m, "n": n, "k": k}
    dims = lambda s: "x".join(str(shape[d.strip()]) for d in s[1:-1].split(","))
    return f"""
func.func @{name}(%a: memref<{dims(a)}xf32>, %b: memref<{dims(b)}xf32>,
                  %c: memref<{m}x{n}xf32>) {{
  linalg.generic {{indexing_maps = [affine_map<(m, n, k) -> {a}>,
                                   affine_map<(m, n, k) -> {b}>,
                                   affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%a, %b : memref<{dims(a)}xf32>, memref<{dims(b)}xf32>)
      outs(%c : memref<{m}x{n}xf32>) {{
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }}
  return
}}
"""


HARNESS = r"""
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
%(decls)s
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
/* Best of 5 runs of `reps` calls, in GFLOP/s. */
#define TIME(expr, flops, out)                                              \
  do {                                                                      \
    long reps = (long)(2e8 / (flops)) + 1;                                  \
    double best = 1e30;                                                     \
    for (int r = 0; r < 5; ++r) {                                           \
      double t0 = now();                                                    \
      for (long i = 0; i < reps; ++i)                                       \
        expr;                                                               \
      double t = (now() - t0) / reps;                                       \
      best = t < best ? t : best;                                           \
    }                                                                       \
    out = (flops) / best * 1e-9;                                            \
  } while (0)
static float *fill(long count) {
  float *p = malloc(count * sizeof(float));
  for (long i = 0; i < count; ++i)
    p[i] = (float)((i * 7919) %% 13) / 13.0f - 0.5f;
  return p;
}
static int run(const char *label, const char *layout, int m, int n, int k,
               void (*fn)(float *, float *, float *), int ta, int tb) {
  float *a = fill((long)m * k), *b = fill((long)k * n);
  float *c = calloc((long)m * n, sizeof(float));
  float *ref = calloc((long)m * n, sizeof(float));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p)
        s += (double)(ta ? a[p * m + i] : a[i * k + p]) *
             (tb ? b[j * k + p] : b[p * n + j]);
      ref[i * n + j] = (float)s;
    }
  fn(a, b, c);
  double err = 0;
  for (long i = 0; i < (long)m * n; ++i)
    err = fmax(err, fabs(c[i] - ref[i]) / (1 + fabs(ref[i])));
  double flops = 2.0 * m * n * k, pp, blas;
  TIME(fn(a, b, c), flops, pp);
  TIME(cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                   tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a,
                   ta ? m : k, b, tb ? k : n, 0.0f, c, n),
       flops, blas);
  printf("| %%-15s | %%-3s | %%4d x %%4d x %%4d | %%6.1f | %%6.1f | %%.1e |\n",
         label, layout, m, n, k, pp, blas, err);
  free(a), free(b), free(c), free(ref);
  return err < 1e-4 ? 0 : 1;
}
int main(void) {
  openblas_set_num_threads(1);
  int bad = 0;
  printf("| shape           | lay | M x N x K          | pp GF/s | sgemm GF/s | max rel err |\n");
  printf("|---|---|---|---|---|---|\n");
%(calls)s
  return bad;
}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--vector-bits", type=int, default=512)
    parser.add_argument("--options", default="",
                        help="extra pp-vectorize-contractions options")
    parser.add_argument("--small", action="store_true",
                        help="only the small GPT's shapes")
    args = parser.parse_args()
    shapes = [s for s in SHAPES if not args.small or s[0].startswith("gpt")]
    root = pathlib.Path(__file__).resolve().parent.parent
    build = (root / args.build).resolve()
    work = pathlib.Path(tempfile.mkdtemp(prefix="pp-contraction-speed-"))
    funcs, decls, calls = [], [], []
    for i, (label, m, n, k) in enumerate(shapes):
        for layout in LAYOUTS:
            name = f"k{i}_{layout}"
            funcs.append(kernel(name, m, n, k, layout))
            decls.append(f"void {name}(float *, float *, float *);")
            ta, tb = int(layout == "AtB"), int(layout == "ABt")
            calls.append(f'  bad |= run("{label}", "{layout}", {m}, {n}, '
                         f'{k}, {name}, {ta}, {tb});')
    (work / "k.mlir").write_text("\n".join(funcs))
    passes = (f"pp-vectorize-contractions{{vector-bits={args.vector_bits} "
              f"{args.options}}},convert-linalg-to-loops,lower-affine,"
              "convert-scf-to-cf,expand-strided-metadata,"
              "finalize-memref-to-llvm,"
              "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
              "convert-to-llvm,reconcile-unrealized-casts")
    triple = "x86_64-unknown-linux-gnu"
    steps = [
        [build / "bin/pp-opt", work / "k.mlir",
         f"--pass-pipeline=builtin.module({passes})", "-o", work / "k.llvm.mlir"],
        [f"{LLVM}/mlir-translate", "--mlir-to-llvmir", work / "k.llvm.mlir",
         "-o", work / "k.ll"],
        [f"{LLVM}/opt", "-O3", "-mcpu=native", f"-mtriple={triple}",
         work / "k.ll", "-o", work / "k.bc"],
        [f"{LLVM}/llc", "-O3", "-mcpu=native", f"-mtriple={triple}",
         "-filetype=obj", "-relocation-model=pic", work / "k.bc", "-o",
         work / "k.o"],
    ]
    for step in steps:
        subprocess.run([str(s) for s in step], check=True)
    (work / "h.c").write_text(HARNESS % {"decls": "\n".join(decls),
                                         "calls": "\n".join(calls)})
    subprocess.run(["cc", "-O2", "-I/usr/include/x86_64-linux-gnu/openblas-pthread",
                    "-L/usr/lib/x86_64-linux-gnu/openblas-pthread",
                    work / "h.c", work / "k.o", "-lopenblas", "-lm", "-o",
                    work / "h"], check=True)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    return subprocess.run([work / "h"], env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
