#!/usr/bin/env python3
"""GFLOP/s of a GPT's attention products in pp against OpenBLAS sgemm.

The attention products are the contractions batched over (batch, head):
`Q K^T`, scores x V and their gradients. This takes them from the model as
pp's pipeline sees them (the 1-stage schedule after pp-lower-to-cpu's
tensor passes up to pp-select-gemm: pp-collapse-one-hot, pp-approximate-math,
pp-factor-contractions, pp-fuse-elementwise), each distinct op once, as a
function of its operands (a zero-filled init stays a fill inside). Every
function goes through pp-lower-to-cpu as pp-compile runs it (the host's
vector width; once per `--pp` column, by default gemm=auto and
gemm=generated) without the passes that need a schedule and, as the
reference, with scalar loops (no GEMM calls, no vectorizers). A C harness
runs them on the same operands, fails if pp differs from the scalar loops
by more than 1e-4 relative, and times pp and OpenBLAS's cblas_sgemm over
the same GEMMs, one call per head (`pp-select-gemm{print-plans}`'s batch,
M, N, K and transposes; the runtime's choice of OpenBLAS kernels), one
thread, CPU time (the best of `--rounds` rounds of at least 20 ms, pp and
OpenBLAS alternating). Where torch is installed, `torch.bmm` on the same
batch, sizes and transposes (a transposed operand as a transposed view,
as PyTorch's own attention passes it) is timed the same way after them,
one thread: the rate pp's products should reach.

  OPENBLAS_NUM_THREADS=1 python3 bench/attention_speed.py --build build \\
      [--models bench,small,torch,torch-small] [--pp 'pp=gemm=library']

`bench` and `small` are examples/gpt's GPTs; `torch` and `torch-small`
export examples/torch-gpt's model (one block; width 256, 4 heads, context
128, batch 16, and the example's own size) with pp.torch: they need torch,
torch_mlir and build/python_packages on PYTHONPATH.
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LLVM = "/usr/lib/llvm-22/bin"
TENSOR_PASSES = ("func.func(pp-collapse-one-hot,math-expand-ops{ops=fpowi},"
                 "pp-copy-repeated-results,pp-approximate-math,"
                 "pp-factor-contractions,pp-fuse-elementwise)")
PLAN = re.compile(r"remark: gemm \w+: batch=(\d+) m=(\d+) n=(\d+) k=(\d+) "
                  r"trans_a=(\d) trans_b=(\d) calls=(\d+)")
MAP = re.compile(r"affine_map<\(([^)]*)\) -> \(([^)]*)\)>")
SSA = re.compile(r"%[\w.$-]+")


def run(cmd, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True,
                          text=True, **kw)
    if proc.returncode:
        sys.exit(f"FAILED: {' '.join(map(str, cmd))}\n{proc.stderr[:3000]}")
    return proc


# examples/torch-gpt's model, one block: vocabulary, context, width, heads,
# rows. `torch` is the size of the PyTorch GPT step benchmarks, `torch-small`
# the example's own.
TORCH_MODELS = {"torch": (512, 128, 256, 4, 16),
                "torch-small": (32, 16, 32, 2, 16)}


def model_path(name, work):
    if name == "bench":
        return os.path.join(ROOT, "examples", "gpt", "gpt-bench.mlir")
    if name == "small":
        return os.path.join(ROOT, "examples", "gpt", "gpt.mlir")
    if name not in TORCH_MODELS:
        sys.exit(f"attention_speed.py: unknown model '{name}'")
    sys.path.insert(0, os.path.join(ROOT, "examples", "torch-gpt"))
    import torch
    import pp.torch
    from model import GPT, loss_fn
    torch.manual_seed(0)
    vocab, context, dim, heads, rows = TORCH_MODELS[name]
    model = GPT(vocab=vocab, context=context, dim=dim, heads=heads, layers=1)
    ids = torch.zeros(rows, context, dtype=torch.int64)
    path = os.path.join(work, f"{name}.mlir")
    pp.torch.export(model, (ids, ids), loss_fn, path, whole_batch=True)
    return path


def functions(text):
    """The lines of each function the schedule runs (the module also holds
    the split backward's functions, unused by a 1-stage 1f1b schedule)."""
    used = set(re.findall(r"pp\.compute [^@\n]*@([\w.$-]+)", text))
    funcs, current = [], None
    for line in text.splitlines():
        m = re.match(r"\s*func\.func (?:private )?@([\w.$-]+)", line)
        if m:
            current = [] if m.group(1) in used else None
            if current is not None:
                funcs.append(current)
        if current is not None:
            current.append(line)
    return funcs


def ops(lines):
    """(first line index, lines) of every linalg op with a result."""
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"(\s*)%\S+ = linalg\.\w+", line)
        if not m or "linalg.yield" in line or "linalg.index" in line:
            i += 1
            continue
        if line.rstrip().endswith("{") and "linalg.generic" in line:
            end = i + 1
            while not re.match(re.escape(m.group(1)) + r"\} -> ", lines[end]):
                end += 1
            yield i, lines[i:end + 1]
            i = end + 1
        else:
            yield i, [line]
            i += 1


def operands(head):
    """(inputs, input types, init, init type) of an op's first line."""
    ins = re.search(r"ins\(([^:]*) : ([^)]*)\)", head)
    outs = re.search(r"outs\(([^:]*) : ([^)]*)\)", head)
    split = lambda s: [x.strip() for x in re.split(r",\s*(?![^<]*>)", s)]
    return (split(ins.group(1)), split(ins.group(2)), outs.group(1).strip(),
            outs.group(2).strip())


def is_attention(op):
    """A GEMM batched over a loop that both inputs and the output index:
    attention's products (the projections read the weights without the
    batch and the activations without the head; the batched dot products
    of the softmax gradient have no M or N)."""
    head = op[0]
    if "linalg.batch_matmul" in head:
        return True
    if "linalg.generic" not in head or '"reduction"' not in head:
        return False
    maps = [set(r.strip() for r in res.split(","))
            for _, res in MAP.findall(head)]
    inputs = maps[:-1]
    if len(inputs) < 2:
        return False
    body = "\n".join(op[1:])
    args = re.match(r"\s*\^bb0\(([^)]*)\)", op[1]).group(1)
    names = [a.split(":")[0].strip() for a in args.split(",")]
    read = [m for m, name in zip(inputs, names)
            if re.search(re.escape(name) + r"\b", body.split("\n", 1)[1])]
    return (len(read) == 2 and bool(read[0] & read[1] & maps[-1]) and
            bool(read[0] - read[1]) and bool(read[1] - read[0]))


def definition(lines, name):
    for line in lines:
        if re.match(r"\s*" + re.escape(name) + r" = ", line):
            return line.strip()
    return None


def kernel(lines, op, fname):
    """`op` as a function of its operands; None if an operand is no
    tensor."""
    inputs, types, init, init_type = operands(op[0])
    if not all(t.startswith("tensor<") for t in types + [init_type]):
        return None
    args = list(zip(inputs, types))
    prologue = []
    fill = definition(lines, init)
    zero = fill and "linalg.fill" in fill and re.search(
        r"ins\((%\S+) : f32\)", fill)
    const = zero and definition(lines, zero.group(1))
    if const and re.search(r"arith.constant (0\.0+e\+00|0\.0) : f32", const):
        empty = re.search(r"outs\((%\S+) :", fill).group(1)
        prologue += [const, definition(lines, empty), fill]
    else:
        args.append((init, init_type))
    body = "\n".join(op)
    defined = set(SSA.findall(" ".join(l.split("=")[0] for l in op)))
    defined |= set(SSA.findall(op[1])) if len(op) > 1 else set()
    used = [n for n in dict.fromkeys(SSA.findall(body))
            if n not in defined and n not in dict(args)]
    for name in used:
        if name in (inputs + [init]):
            continue
        line = definition(lines, name)
        if not line or "arith.constant" not in line:
            return None
        prologue.insert(0, line)
    result = re.match(r"\s*(%\S+) =", op[0]).group(1)
    signature = ", ".join(f"{n}: {t}" for n, t in args)
    text = "\n".join(
        [f"func.func @{fname}({signature}) -> {init_type} "
         "attributes {llvm.emit_c_interface} {"] +
        ["  " + l for l in dict.fromkeys(prologue)] +
        [re.sub(r' attrs =  \{pp.gemm = "library"\}', "",
                l.replace('{pp.gemm = "library"} ', "")) for l in op] +
        [f"  return {result} : {init_type}", "}"])
    return text, [t for _, t in args], init_type


def normalized(text):
    names = {}
    return SSA.sub(lambda m: names.setdefault(m.group(0), f"%v{len(names)}"),
                   text.split("\n", 1)[1])


def attention_kernels(args, model, work):
    schedule = os.path.join(work, "schedule.mlir")
    run([f"{args.build}/bin/pp-compile", model, "--emit=schedule", "-o",
         schedule])
    text = run([f"{args.build}/bin/pp-opt", schedule, "--mlir-print-local-scope",
                f"--pass-pipeline=builtin.module({TENSOR_PASSES})"]).stdout
    found = collections.OrderedDict()
    for lines in functions(text):
        for _, op in ops(lines):
            if not is_attention(op):
                continue
            k = kernel(lines, op, "KERNEL")
            if k:
                key = normalized(k[0])
                found.setdefault(key, [k, 0])[1] += 1
    return list(found.values())


def shape(t):
    return [int(d) for d in re.match(r"tensor<([\dx]+)xf32>", t)
            .group(1).split("x")]


HARNESS = r"""
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "backends/cpu/blas_kernels.h"

typedef struct { float *alloc, *data; int64_t offset, rest[8]; } memref;
static memref make(int rank, const int64_t *shape, int fill) {
  memref m = {0};
  int64_t n = 1;
  for (int i = rank - 1; i >= 0; --i) {
    m.rest[i] = shape[i];
    m.rest[rank + i] = n;
    n *= shape[i];
  }
  m.alloc = m.data = aligned_alloc(64, ((n * 4 + 63) / 64) * 64);
  for (int64_t i = 0; i < n; ++i)
    m.data[i] = fill ? (float)(((i + fill) * 7919) %% 1000) / 1000.0f - 0.5f
                     : 0;
  return m;
}
static double cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
/* One round: repeats for at least 20 ms of CPU time; seconds per call. */
#define ROUND(expr, out)                                                    \
  do {                                                                      \
    long reps_ = 0;                                                         \
    double start_ = cpu(), spent_;                                          \
    do {                                                                    \
      expr;                                                                 \
      ++reps_;                                                              \
    } while ((spent_ = cpu() - start_) < 0.02);                             \
    out = spent_ / reps_;                                                   \
  } while (0)
static void blas(int batch, int m, int n, int k, int ta, int tb, float *a,
                 float *b, float *c) {
  for (int p = 0; p < batch; ++p)
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f,
                a + (long)p * m * k, ta ? m : k, b + (long)p * k * n,
                tb ? k : n, 0.0f, c + (long)p * m * n, n);
}
%(decls)s
#define ROUNDS %(rounds)d
int main(void) {
  const char *kernels = pprt_choose_blas_kernels();
  openblas_set_num_threads(1);
  fprintf(stderr, "OpenBLAS kernels: %%s\n", kernels);
  int bad = 0;
%(calls)s
  return bad;
}
"""

CALL = r"""
  {
    %(allocs)s
    memref out = make(%(rank)d, (int64_t[]){%(oshape)s}, 0);
    memref ref = make(%(rank)d, (int64_t[]){%(oshape)s}, 0);
    _mlir_ciface_%(name)s_ref(%(args)s, &ref);
    int b = %(batch)d, m = %(m)d, n = %(n)d, k = %(k)d;
    float *a = malloc(4L * b * m * k), *bb = malloc(4L * b * k * n),
          *c = malloc(4L * b * m * n);
    for (long i = 0; i < (long)b * m * k; ++i) a[i] = (i %% 17) / 17.0f;
    for (long i = 0; i < (long)b * k * n; ++i) bb[i] = (i %% 13) / 13.0f;
    double best[%(variants)d + 1], err[%(variants)d], t;
    void (*fn[%(variants)d])(%(decl)s) = {%(fns)s};
    for (int v = 0; v < %(variants)d; ++v) {
      fn[v](%(args)s, &out);
      err[v] = 0;
      for (long i = 0; i < %(count)dL; ++i)
        err[v] = fmax(err[v], fabs(out.data[i] - ref.data[i]) /
                                  (1 + fabs(ref.data[i])));
      bad |= !(err[v] < 1e-4);
    }
    for (int v = 0; v <= %(variants)d; ++v)
      best[v] = 1e30;
    for (int r = 0; r < ROUNDS; ++r) {
      for (int v = 0; v < %(variants)d; ++v) {
        ROUND(fn[v](%(args)s, &out), t);
        best[v] = t < best[v] ? t : best[v];
      }
      ROUND(blas(b, m, n, k, %(ta)d, %(tb)d, a, bb, c), t);
      best[%(variants)d] = t < best[%(variants)d] ? t : best[%(variants)d];
    }
    printf("%(name)s");
    for (int v = 0; v < %(variants)d; ++v)
      printf(" %%.9f %%.2e", best[v], err[v]);
    printf(" %%.9f\n", best[%(variants)d]);
  }
"""


def pipeline(args, options):
    """pp-lower-to-cpu{options} as a list of passes, without the passes that
    need a schedule (the kernels are plain functions)."""
    dump = subprocess.run(
        [f"{args.build}/bin/pp-opt", "--dump-pass-pipeline",
         f"--pass-pipeline=builtin.module(pp-lower-to-cpu{{{options}}})"],
        input="module {}", capture_output=True, text=True).stderr
    text = dump.split("\n", 1)[1].split("\n<stdin>")[0]
    for name in ("convert-pp-to-runtime", "pp-drop-unused-stage-functions"):
        text, found = re.subn(rf"  {name}(\{{[^}}]*\}})?,\n", "", text)
        if not found:
            sys.exit(f"attention_speed.py: no {name} in pp-lower-to-cpu")
    return " ".join(text.split())


def lower(args, src, dst, options):
    run([f"{args.build}/bin/pp-opt", src,
         f"--pass-pipeline={pipeline(args, options)}",
         "-o", dst + ".llvm.mlir"])
    ll = run([f"{LLVM}/mlir-translate", "--mlir-to-llvmir",
              dst + ".llvm.mlir"]).stdout
    run([f"{LLVM}/llc", "-O3", "-mcpu=native", "-relocation-model=pic",
         "-filetype=obj", "-o", dst + ".o"], input=ll)
    return dst + ".o"


def measure(args, name, work):
    """Rows (ops, GEMM plan, body, [(pp seconds, max error) per variant],
    OpenBLAS seconds) of model `name`'s attention products, and whether
    every variant matched the scalar loops."""
    kernels = attention_kernels(args, model_path(name, work), work)
    if not kernels:
        sys.exit(f"attention_speed.py: {name}: no attention products found")
    stem = name.replace("-", "_")
    modules = collections.defaultdict(list)
    rows = []
    for i, ((text, arg_types, out_type), count) in enumerate(kernels):
        fname = f"{stem}{i}"
        for suffix in ["_ref"] + [f"_v{v}" for v in range(len(args.pp))]:
            modules[suffix].append(text.replace("@KERNEL", f"@{fname}{suffix}"))
        scaled = len(re.findall(r"arith\.mulf", text)) > 1
        rows.append((fname, count, arg_types, out_type,
                     "a*b*s" if scaled else "a*b"))
    src = {}
    for suffix, texts in modules.items():
        src[suffix] = os.path.join(work, f"{stem}{suffix}.mlir")
        with open(src[suffix], "w") as f:
            f.write("\n".join(texts))
    plans = [tuple(map(int, p)) for p in PLAN.findall(run(
        [f"{args.build}/bin/pp-opt", src["_ref"], "-o", os.devnull,
         "--pass-pipeline=builtin.module(pp-select-gemm{gemm=library "
         "print-plans})"]).stderr)]
    if len(plans) != len(rows):
        sys.exit(f"attention_speed.py: {len(rows)} kernels, {len(plans)} "
                 "GEMM plans")
    decls, calls = [], []
    for (fname, count, arg_types, out_type, _), plan in zip(rows, plans):
        batch, m, n, k, ta, tb, ncalls = plan
        decl = ", ".join(["memref *"] * (len(arg_types) + 1))
        for suffix in modules:
            decls.append(f"void _mlir_ciface_{fname}{suffix}({decl});")
        oshape = shape(out_type)
        calls.append(CALL % dict(
            allocs="\n    ".join(
                f"memref in{j} = make({len(shape(t))}, (int64_t[]){{"
                f"{', '.join(map(str, shape(t)))}}}, {j + 1});"
                for j, t in enumerate(arg_types)),
            rank=len(oshape), oshape=", ".join(map(str, oshape)), name=fname,
            args=", ".join(f"&in{j}" for j in range(len(arg_types))),
            count=element_count(oshape), batch=batch * ncalls, m=m, n=n, k=k,
            ta=ta, tb=tb, variants=len(args.pp), decl=decl,
            fns=", ".join(f"_mlir_ciface_{fname}_v{v}"
                          for v in range(len(args.pp)))))
    reference = (f"vector-bits={args.vector_bits} gemm=generated "
                 "vectorize-contractions=false vectorize-elementwise=false "
                 "factor-contractions=false fuse-elementwise=false")
    objs = [lower(args, src["_ref"], os.path.join(work, stem + "_ref"),
                  reference)]
    for v, (_, options) in enumerate(args.pp):
        objs.append(lower(args, src[f"_v{v}"],
                          os.path.join(work, f"{stem}_v{v}"),
                          f"vector-bits={args.vector_bits} {options}"))
    harness = os.path.join(work, f"{stem}_h.c")
    with open(harness, "w") as f:
        f.write(HARNESS % {"decls": "\n".join(decls), "calls": "".join(calls),
                           "rounds": args.rounds})
    with open(f"{args.build}/runtime/pprt-link-libraries.txt") as f:
        libraries = f.read().split()
    exe = os.path.join(work, f"{stem}_h")
    run(["cc", "-O2", f"-I{ROOT}/runtime/lib",
         "-I/usr/include/x86_64-linux-gnu/openblas-pthread", harness, *objs,
         "-o", exe, f"{args.build}/runtime/libpprt.a", *libraries, "-lm"])
    proc = subprocess.run([exe], capture_output=True, text=True)
    sys.stderr.write(proc.stderr)
    times = {l.split()[0]: list(map(float, l.split()[1:]))
             for l in proc.stdout.splitlines()}
    table = []
    for (fname, count, _, _, body), plan in zip(rows, plans):
        t = times[fname]
        variants = [(t[2 * v], t[2 * v + 1]) for v in range(len(args.pp))]
        table.append((count, plan, body, variants, t[-1]))
    if proc.returncode:
        print(f"attention_speed.py: {name}: pp differs from the scalar loops "
              "by more than 1e-4 relative", file=sys.stderr)
    return table, proc.returncode == 0


def torch_bmm_seconds(plan, rounds):
    """torch.bmm's best CPU seconds over `rounds` rounds of at least 20 ms
    on `plan`'s products, one thread; None without torch."""
    try:
        import torch
    except ImportError:
        return None
    import time
    torch.set_num_threads(1)
    batch, m, n, k, ta, tb, ncalls = plan
    batch *= ncalls
    a = torch.rand(batch, *((k, m) if ta else (m, k))) - 0.5
    b = torch.rand(batch, *((n, k) if tb else (k, n))) - 0.5
    a, b = (a.mT if ta else a), (b.mT if tb else b)
    c = torch.empty(batch, m, n)
    reps, best = 1, float("inf")
    for _ in range(rounds):
        while True:
            start = time.process_time()
            for _ in range(reps):
                torch.bmm(a, b, out=c)
            seconds = time.process_time() - start
            if seconds >= 0.02:
                break
            reps *= 2
        best = min(best, seconds / reps)
    return best


def element_count(sizes):
    result = 1
    for size in sizes:
        result *= size
    return result


def layout(ta, tb):
    return {(0, 0): "A B", (1, 0): "A^T B", (0, 1): "A B^T",
            (1, 1): "A^T B^T"}[(ta, tb)]


def host_vector_bits():
    """The vector width pp-compile targets on this host (getVectorBits)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(re.search(r"^flags\s*:(.*)$", f.read(), re.M)
                        .group(1).split())
    except (OSError, AttributeError):
        return 128
    return 512 if "avx512f" in flags else 256 if "avx" in flags else 128


def variant(text):
    label, _, options = text.partition("=")
    return label, options


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--models", default="bench,small")
    parser.add_argument("--vector-bits", type=int, default=host_vector_bits(),
                        help="pp-compile's choice for this host by default")
    parser.add_argument("--pp", type=variant, action="append",
                        metavar="LABEL=OPTIONS",
                        help="a pp column: pp-lower-to-cpu options (default: "
                        "'pp=' and 'pp generated=gemm=generated')")
    parser.add_argument("--rounds", type=int, default=7,
                        help="timing rounds of at least 20 ms each")
    parser.add_argument("--keep", metavar="DIR",
                        help="build in DIR and keep the files")
    args = parser.parse_args()
    args.pp = args.pp or [("pp", ""), ("pp generated", "gemm=generated")]
    args.build = os.path.abspath(args.build)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    labels = [label for label, _ in args.pp]
    print("| model | ops | batch x M x N x K | layout | body | " +
          " | ".join(f"{l} GFLOP/s" for l in labels) + " | OpenBLAS GFLOP/s | " +
          "torch.bmm GFLOP/s | " +
          " | ".join(f"OpenBLAS / {l}" for l in labels) + " | " +
          " | ".join(f"torch.bmm / {l}" for l in labels) + " |")
    print("|---|---:|---|---|---|" + "---:|" * (3 * len(labels) + 2))
    ok = True
    with tempfile.TemporaryDirectory() as work:
        if args.keep:
            work = args.keep
            os.makedirs(work, exist_ok=True)
        for name in args.models.split(","):
            table, matched = measure(args, name, work)
            ok &= matched
            for count, plan, body, variants, blas in table:
                batch, m, n, k, ta, tb, ncalls = plan
                flops = 2.0 * batch * ncalls * m * n * k
                speeds = [flops / t / 1e9 for t, _ in variants]
                bmm = torch_bmm_seconds(plan, args.rounds)
                print(f"| {name} | {count} | {batch * ncalls} x {m} x {n} x "
                      f"{k} | {layout(ta, tb)} | {body} | " +
                      " | ".join(f"{g:.1f}" for g in speeds) +
                      f" | {flops / blas / 1e9:.1f} | " +
                      (f"{flops / bmm / 1e9:.1f}" if bmm else "-") + " | " +
                      " | ".join(f"{t / blas:.2f}" for t, _ in variants) +
                      " | " + " | ".join(f"{t / bmm:.2f}" if bmm else "-"
                                         for t, _ in variants) +
                      " |", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
