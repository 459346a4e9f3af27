#!/usr/bin/env python3
"""Where one training step's time goes, by op class: pp's 1-stage program
(sampled with Linux `perf`) beside PyTorch eager (torch.profiler), on the
PyTorch GPT of bench/model_speed.py, one thread each.

  PYTHONPATH=build/python_packages ~/.cache/pp-python-venv/bin/python \\
      bench/step_breakdown.py --pp-compile build/bin/pp-compile --sizes 256,512

pp: the program runs under `perf record --call-graph dwarf` twice, for 2
steps and for 2 + `--steps`; the difference of the two runs' samples, per
`--steps`, is a step after warm-up (the first steps touch every buffer for
the first time: page faults that later steps do not take). Samples whose
stack holds no `pp_run_step` (start-up, loading the weights) are left
out. A sample's class comes from its stack: OpenBLAS
(`cblas_sgemm` below it) is a GEMM; the runtime's optimizer and gradient
sums by their functions; libc's memmove/memcpy and memset are copies and
fills, by the stage function that calls them; a stage function's outlined
loop nest (`<stage function>_nest<N>`, docs/StageCode.md) by what its code
does, read from the same compile's `--emit=mlir` (a nest that stores many
scalars per vector load, or shuffles each vector it loads, is a transposing
copy; one with a vector reduction
reduces rows: softmax, layer norm, the loss; one that loads integer ids
gathers or scatters; one with erf's polynomial is GELU; the rest are
elementwise). GEMMs by shape come from
the runtime's `PPRT_GEMM_STATS` (docs/Runtime.md), in a separate run
without perf.

PyTorch: one step after `--warmup` under torch.profiler; each op's self
CPU time, classed by its aten name, in the forward, backward and optimizer
(`record_function` ranges).

Times are CPU time per step in ms (samples x period / steps), so a loaded
machine inflates both sides alike only as far as caches and memory are
shared; read the shares."""

import argparse
import collections
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import torch  # noqa: E402

import model_speed  # noqa: E402
import torch_pipelining as tp  # noqa: E402
from model import loss_fn  # noqa: E402

WARMUP_STEPS = 2
CLASSES = ["GEMM (OpenBLAS)", "attention softmax and masks",
           "layer norm and loss reductions", "GELU",
           "other elementwise", "transposing copies", "copies (memcpy)",
           "fills (memset)", "gathers and scatter-adds",
           "optimizer and gradient sums", "kernel and runtime"]


def nest_bodies(mlir):
    """{nest function name: its LLVM-dialect body}."""
    return {m.group(1): m.group(2) for m in re.finditer(
        r"llvm\.func internal @(\w+_nest\d+)\((.*?)\n  }\n", mlir, re.S)}


def stage_functions(mlir):
    """The names of the functions the program defines (stage functions,
    their actions and nests)."""
    return set(re.findall(r"llvm\.func (?:internal )?@(\w+)\(.*\{$", mlir,
                          re.M))


def nest_class(body):
    """An outlined nest's op class, from what its code does."""
    loads = len(re.findall(r"llvm\.load ", body))
    stores = len(re.findall(r"llvm\.store ", body))
    if re.search(r"llvm\.load [^\n]*-> i(32|64)\b", body):
        return "gathers and scatter-adds"
    # Scalar stores of vector loads, or vectors transposed by shuffles.
    if stores >= 8 * max(loads, 1) or len(re.findall(
            r"llvm\.shufflevector", body)) >= 4 * max(loads, 1):
        return "transposing copies"
    if re.search(r"vector\.reduce\.fmax|llvm\.intr\.maxnum", body) or (
            "0xFF800000" in body or "-Inf" in body or "0xFF80" in body):
        return "attention softmax and masks"
    if re.search(r"vector\.reduce", body):
        return "layer norm and loss reductions"
    # erf: the rational polynomial's last coefficient (pp-approximate-math),
    # or upstream's polynomials picked by selects.
    if "-0.0142647391" in body or len(re.findall(
            r"llvm\.select", body)) >= 4 and len(
            re.findall(r"llvm\.intr\.fma", body)) >= 8:
        return "GELU"
    return "other elementwise"


def sample_class(frames, nests, program):
    """(class, phase) of one perf sample; frames are (symbol, dso), leaf
    first. None for samples outside the training step. LLVM emits no
    unwind tables for stage code, so a stack may end at its first stage
    function: one in `program` is inside the step too."""
    symbols = [s for s, _ in frames]
    if "pp_run_step" not in symbols and not program.intersection(symbols):
        return None
    phase = next((p for s in symbols for p in ("forward", "backward")
                  if re.search(f"_{p}(_action|_nest\\d+)?$", s)), "step")
    leaf, dso = frames[0]
    if "cblas_sgemm" in symbols or "libopenblas" in dso:
        return "GEMM (OpenBLAS)", phase
    if any(s.startswith("pprt_optimizer") or s.startswith("cpu_sgd") or
           s.startswith("cpu_adam") or s.startswith("cpu_accumulate")
           for s in symbols):
        return "optimizer and gradient sums", phase
    nest = next((s for s in symbols if s in nests), None)
    if nest:
        return nests[nest], phase
    if re.match(r"__mem(move|cpy)", leaf):
        return "copies (memcpy)", phase
    if leaf.startswith("__memset"):
        return "fills (memset)", phase
    return "kernel and runtime", phase


def perf_samples(script):
    """Each sample's frames [(symbol, dso)], from `perf script` text."""
    frames = []
    for line in script.splitlines():
        if not line.strip():
            if frames:
                yield frames
            frames = []
            continue
        if not line.startswith(("\t", " ")):
            continue
        m = re.match(r"\s*[0-9a-f]+ (.*?)(?:\+0x[0-9a-f]+)? \((.*)\)$", line)
        if m:
            frames.append((m.group(1), m.group(2)))
    if frames:
        yield frames


def pp_breakdown(a, runner, steps, frequency, work):
    """{(class, phase): ms per step} of pp's program, and the GEMM stats."""
    mlir = work / f"pp{a.dim}.ll.mlir"
    subprocess.run([a.pp_compile, str(runner.exported.mlir), "--stages", "1",
                    "--microbatches", "1", "--emit=mlir", "-o", str(mlir)],
                   check=True)
    text = mlir.read_text()
    nests = {n: nest_class(b) for n, b in nest_bodies(text).items()}
    program = stage_functions(text)
    def command(n):
        return [str(runner.exe), "--steps", str(n), "--lr", repr(a.lr),
                "--seed", "1", "--init-weights", str(runner.exported.weights),
                "--tokens", str(work / "tokens.bin")]

    def samples(n):
        data = work / f"perf{a.dim}.data"
        subprocess.run(["perf", "record", "-q", "-F", str(frequency),
                        "--call-graph", "dwarf,32768", "-o", str(data), "--"]
                       + command(n), check=True, capture_output=True)
        script = subprocess.run(["perf", "script", "-i", str(data), "-F",
                                 "ip,sym,dso"], check=True,
                                capture_output=True, text=True).stdout
        data.unlink()
        counts = collections.Counter()
        for frames in perf_samples(script):
            key = sample_class(frames, nests, program)
            if key:
                counts[key] += 1
        return counts

    warm = samples(WARMUP_STEPS)
    ms = collections.Counter()
    for key, n in samples(WARMUP_STEPS + steps).items():
        ms[key] = max(n - warm[key], 0) * 1e3 / frequency / steps
    return ms, gemm_stats(command, steps, work / f"gemm{a.dim}")


def gemm_stats(command, steps, prefix):
    """(batch, m, n, k, ta, tb, calls, ms) per step of each GEMM shape after
    warm-up: the runtime's PPRT_GEMM_STATS of two runs, subtracted."""
    def run(n):
        subprocess.run(command(n), check=True, capture_output=True,
                       env=dict(os.environ, PPRT_GEMM_STATS=str(prefix)))
        shapes = {}
        for line in pathlib.Path(f"{prefix}.0").read_text().splitlines():
            f = line.split()
            shapes[tuple(map(int, f[3:9]))] = (int(f[9]), float(f[10]))
        return shapes
    warm = run(WARMUP_STEPS)
    gemms = []
    for (ta, tb, batch, m, n, k), (calls, seconds) in run(
            WARMUP_STEPS + steps).items():
        calls0, seconds0 = warm.get((ta, tb, batch, m, n, k), (0, 0.0))
        gemms.append((batch, m, n, k, ta, tb, (calls - calls0) // steps,
                      (seconds - seconds0) * 1e3 / steps))
    return gemms


TORCH_CLASSES = [
    ("GEMM (OpenBLAS)", r"aten::(mm|addmm|bmm|baddbmm|linear|matmul)$"),
    ("attention softmax and masks",
     r"aten::(_?softmax|_softmax_backward_data|masked_fill_?|where|eq|"
     r"tril|_safe_softmax)$"),
    ("layer norm and loss reductions",
     r"aten::(native_layer_norm|native_layer_norm_backward|_log_softmax|"
     r"_log_softmax_backward_data|nll_loss.*|sum|mean|layer_norm|"
     r"cross_entropy_loss|log_softmax)$"),
    ("GELU", r"aten::gelu(_backward)?$"),
    ("gathers and scatter-adds",
     r"aten::(embedding.*|index_select|index_add_?|index|gather|scatter.*|"
     r"arange)$"),
    ("copies (memcpy)",
     r"aten::(copy_|clone|contiguous|_to_copy|to|reshape|_reshape_alias|"
     r"_unsafe_view)$"),
    ("fills (memset)", r"aten::(fill_|zero_|zeros|zeros_like|empty.*|ones)$"),
]


def torch_class(name, phase):
    if phase == "optimizer":
        return "optimizer and gradient sums"
    for cls, pattern in TORCH_CLASSES:
        if re.match(pattern, name):
            return cls
    if name.startswith("aten::"):
        return "other elementwise"
    return "kernel and runtime"


def torch_breakdown(a, warmup, steps, tokens):
    """{(class, phase): ms per step} of eager steps' self times, scaled by
    the process's CPU time over its wall time during them: the profiler
    measures wall time, which on a loaded machine holds waits for a core."""
    from torch.profiler import ProfilerActivity, profile, record_function
    torch.set_num_threads(1)
    model = tp.build_model(a)
    optimizer = torch.optim.SGD(model.parameters(), lr=a.lr)

    def step(i):
        ids, targets = tp.batch(a, tokens, i)
        optimizer.zero_grad()
        with record_function("pp.forward"):
            loss = loss_fn(model(ids), targets)
        with record_function("pp.backward"):
            loss.backward()
        with record_function("pp.optimizer"):
            optimizer.step()
    for i in range(warmup):
        step(i)
    wall, cpu = time.perf_counter(), time.process_time()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for i in range(warmup, warmup + steps):
            step(i)
    scale = (time.process_time() - cpu) / (time.perf_counter() - wall)
    events = prof.events()
    ranges = [(e.name.split(".")[1], e.time_range.start, e.time_range.end)
              for e in events if e.name.startswith("pp.")]
    ms = collections.Counter()
    for e in events:
        if e.name.startswith("pp."):
            continue
        phase = next((p for p, s, t in ranges
                      if s <= e.time_range.start <= t), "backward")
        ms[torch_class(e.name, phase), phase] += (
            e.self_cpu_time_total / 1e3 * scale / steps)
    return ms


def print_breakdown(name, a, pp_ms, torch_ms, gemms):
    print(f"\n### width {a.dim}, {a.layers} blocks, batch {a.batch}, "
          f"context {a.context}: CPU ms per step\n")
    phases = ("forward", "backward", "step")
    print("| class | pp forward | pp backward | pp other | pp total | "
          "pp % | eager forward | eager backward | eager optimizer | "
          "eager total | eager % |")
    print("|---|" + "---:|" * 10)
    pp_total = sum(pp_ms.values())
    torch_total = sum(torch_ms.values())
    for cls in CLASSES:
        p = [pp_ms.get((cls, ph), 0.0) for ph in phases]
        t = [torch_ms.get((cls, ph), 0.0) for ph in
             ("forward", "backward", "optimizer")]
        print(f"| {cls} | " + " | ".join(f"{x:.1f}" for x in p) +
              f" | {sum(p):.1f} | {100 * sum(p) / pp_total:.0f}% | " +
              " | ".join(f"{x:.1f}" for x in t) +
              f" | {sum(t):.1f} | {100 * sum(t) / torch_total:.0f}% |")
    print(f"| all | | | | {pp_total:.1f} | | | | | {torch_total:.1f} | |")
    print(f"\npp's library GEMMs by shape (PPRT_GEMM_STATS; row-major, "
          f"ta/tb: transposed operand):\n")
    print("| batch x M x N x K | ta | tb | calls per step | ms per step | "
          "GFLOP/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for batch, m, n, k, ta, tb, calls, ms in sorted(
            gemms, key=lambda g: -g[7]):
        gflops = 2 * batch * m * n * k * calls / ms / 1e6
        print(f"| {batch} x {m} x {n} x {k} | {ta} | {tb} | {calls} | "
              f"{ms:.1f} | {gflops:.1f} |")


def main():
    parser = model_speed.argument_parser(__doc__)
    parser.add_argument("--sizes", default="256,512",
                        help="comma-separated: " + ", ".join(
                            model_speed.SIZES))
    parser.add_argument("--steps", type=int, default=4,
                        help="pp steps measured after 2 warm-up steps")
    parser.add_argument("--warmup", type=int, default=2,
                        help="eager steps before the profiled one")
    parser.add_argument("--torch-steps", type=int, default=2,
                        help="eager steps under torch.profiler")
    parser.add_argument("--frequency", type=int, default=499,
                        help="perf samples per second")
    parser.add_argument("--compile-arg", action="append", default=[],
                        metavar="ARG")
    opts = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="pp-step-breakdown-"))
    tokens = tp.torch_gpt.write_tokens(work / "tokens.bin")
    for name in opts.sizes.split(","):
        # model_speed.py's defaults: vocabulary 512, context 128, lr 0.05.
        a = model_speed.size_args(argparse.Namespace(
            vocab=512, context=128, batch=None, lr=0.05, steps=opts.steps,
            warmup=0, pp_compile=opts.pp_compile), name)
        runner = model_speed.PP(a, work, opts.compile_arg)
        load = tp.load_average()
        pp_ms, gemms = pp_breakdown(a, runner, opts.steps, opts.frequency,
                                    work)
        torch_ms = torch_breakdown(a, opts.warmup, opts.torch_steps, tokens)
        print(f"\n# load average {load} -> {tp.load_average()}")
        print_breakdown(name, a, pp_ms, torch_ms, gemms)


if __name__ == "__main__":
    main()
