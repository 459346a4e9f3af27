#!/usr/bin/env python3
"""Single-thread sgemm rate of each BLAS library pp's runtime can load
(PPRT_BLAS, docs/Runtime.md) on the GEMM shapes of the PyTorch GPT's step
(bench/model_speed.py at width 256), side by side, with torch's matmul as
a reference.

  ~/.cache/pp-python-venv/bin/python bench/blas_choice.py \\
      [--blas NAME=PATH ...] [--stats PREFIX.0] [--rounds 3]

Every library runs as the CPU backend runs it (bench/sgemm_time.c built
with the runtime's blas_library.c, PPRT_BLAS set per run), so a batched
shape takes the path the runtime takes: one cblas_sgemm_batch_strided call
where the library has one, one cblas_sgemm per product otherwise.
Candidates: the linked OpenBLAS, MKL (libmkl_rt from PyPI's `mkl` in this
Python's prefix), BLIS (Debian's libblis4-serial or -openmp) where found
(not with `--only-named`), and every `--blas NAME=PATH`. Shapes: a
PPRT_GEMM_STATS file of the step (`--stats`), or the width-256 step's
shapes below. A round times every shape on every library (and torch) one
after another; each cell is the median over rounds of sgemm_time's best
trial. The last row is the GEMM milliseconds of one step (calls x time)."""

import argparse
import glob
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import compute_speed  # noqa: E402

# (batch, m, n, k, trans_a, trans_b): calls per step of the width-256 step
# (PPRT_GEMM_STATS of one step, bench/step_breakdown.py), at 8c556ea.
STEP_SHAPES = {
    (1, 256, 1024, 2048, 1, 0): 4, (1, 1024, 256, 2048, 1, 0): 4,
    (1, 2048, 256, 1024, 0, 0): 4, (1, 2048, 256, 1024, 0, 1): 4,
    (1, 2048, 1024, 256, 0, 0): 4, (1, 2048, 1024, 256, 0, 1): 4,
    (1, 768, 256, 2048, 1, 0): 4, (1, 2048, 256, 768, 0, 0): 4,
    (1, 2048, 768, 256, 0, 1): 4, (1, 256, 256, 2048, 1, 0): 4,
    (1, 2048, 256, 256, 0, 0): 4, (1, 2048, 256, 256, 0, 1): 4,
    (1, 512, 256, 2048, 1, 0): 1, (1, 2048, 256, 512, 0, 0): 1,
    (1, 2048, 512, 256, 0, 1): 1, (64, 64, 128, 128, 1, 0): 4,
    (64, 128, 64, 128, 0, 0): 4, (64, 128, 64, 128, 0, 1): 4,
    (64, 128, 64, 128, 1, 0): 4, (64, 128, 128, 64, 0, 0): 4,
    (64, 128, 128, 64, 0, 1): 4,
}


def found_libraries():
    """NAME=PATH of the libraries installed where users get them."""
    found = {"OpenBLAS": ""}
    for name, pattern in (
            ("MKL", os.path.join(sys.prefix, "lib", "libmkl_rt.so*")),
            ("BLIS", "/usr/lib/x86_64-linux-gnu/blis-*/libblis.so*"),
            ("BLIS", os.path.expanduser(
                "~/.cache/pp-blas/root/usr/lib/x86_64-linux-gnu/blis-*/"
                "libblis.so*"))):
        paths = sorted(glob.glob(pattern))
        if paths and name not in found:
            found[name] = paths[0]
    return found


def read_stats(path):
    """{shape: calls} of a PPRT_GEMM_STATS file."""
    shapes = {}
    for line in pathlib.Path(path).read_text().splitlines():
        _, ab, c, ta, tb, batch, m, n, k, calls, _ = line.split()
        shapes[tuple(map(int, (batch, m, n, k, ta, tb)))] = int(calls)
    return shapes


def build_timer(work):
    return compute_speed.build_c(
        argparse.Namespace(workdir=str(work)), "sgemm_time.c",
        ["-O2"] + compute_speed.blas_kernels_flags()
        + compute_speed.blas_flags())


def blas_seconds(exe, path, shape):
    env = dict(os.environ, PPRT_BLAS=path)
    out = subprocess.run([str(exe), *map(str, shape)], env=env,
                         capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"blas_choice.py: PPRT_BLAS={path}: {out.stderr.strip()}")
    return float(out.stdout)


def torch_seconds(shape):
    """torch.matmul's best seconds per product batch, as sgemm_time's: 7
    trials of at least 50 ms."""
    import torch
    torch.set_num_threads(1)
    batch, m, n, k, ta, tb = shape
    a = torch.rand(batch, *((k, m) if ta else (m, k))) - 0.5
    b = torch.rand(batch, *((n, k) if tb else (k, n))) - 0.5
    a, b = (a.mT if ta else a), (b.mT if tb else b)
    c = torch.empty(batch, m, n)
    torch.matmul(a, b, out=c)
    reps = 1
    while True:
        start = time.perf_counter()
        for _ in range(reps):
            torch.matmul(a, b, out=c)
        if time.perf_counter() - start >= 0.05:
            break
        reps *= 2
    trials = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(reps):
            torch.matmul(a, b, out=c)
        trials.append((time.perf_counter() - start) / reps)
    return min(trials)


def has_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


def measure(exe, libraries, shapes, rounds):
    """{(library, shape): [seconds per round]}, libraries alternating."""
    times = {}
    for round_ in range(rounds):
        for shape in shapes:
            for name, path in libraries.items():
                seconds = (torch_seconds(shape) if path is None else
                           blas_seconds(exe, path, shape))
                times.setdefault((name, shape), []).append(seconds)
        print(f"# round {round_ + 1} done, load {load_average()}",
              flush=True)
    return times


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def print_table(libraries, shapes, times):
    names = list(libraries)
    print("| batch x M x N x K | ta | tb | calls | "
          + " | ".join(f"{n} GFLOP/s" for n in names) + " | fastest |")
    print("|---|---:|---:|---:|" + "---:|" * len(names) + "---|")
    step_ms = dict.fromkeys(names, 0.0)
    for shape, calls in shapes.items():
        batch, m, n, k, ta, tb = shape
        flops = 2 * batch * m * n * k
        median = {name: statistics.median(times[name, shape])
                  for name in names}
        for name in names:
            step_ms[name] += calls * median[name] * 1e3
        rates = " | ".join(f"{flops / median[name] / 1e9:.1f}"
                           for name in names)
        print(f"| {batch} x {m} x {n} x {k} | {ta} | {tb} | {calls} | "
              f"{rates} | {min(names, key=median.get)} |")
    print("| GEMM ms per step | | | | "
          + " | ".join(f"{step_ms[name]:.1f}" for name in names)
          + f" | {min(names, key=step_ms.get)} |")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blas", action="append", default=[],
                        metavar="NAME=PATH", help="another library to time "
                        "(repeatable)")
    parser.add_argument("--stats", metavar="FILE",
                        help="a PPRT_GEMM_STATS file: its shapes and calls")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--only-named", action="store_true",
                        help="the linked OpenBLAS and the --blas libraries "
                        "only, not the ones found installed")
    opts = parser.parse_args()
    libraries = {"OpenBLAS": ""} if opts.only_named else found_libraries()
    for spec in opts.blas:
        name, sep, path = spec.partition("=")
        if not sep or not os.path.exists(path):
            parser.error(f"--blas {spec}: want NAME=PATH of a library")
        libraries[name] = path
    if not opts.no_torch and has_torch():
        libraries["torch"] = None
    shapes = read_stats(opts.stats) if opts.stats else STEP_SHAPES
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short",
                             "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = load_average()
    with tempfile.TemporaryDirectory(prefix="pp-blas-choice-") as work:
        exe = build_timer(work)
        times = measure(exe, libraries, shapes, opts.rounds)
    print(f"\nblas_choice.py, {start}, commit {commit}; one thread; "
          f"{opts.rounds} alternating rounds; load average {load} -> "
          f"{load_average()} on {os.cpu_count()} cores")
    for name, path in libraries.items():
        print(f"- {name}: "
              f"{'torch.matmul' if path is None else path or 'linked'}")
    print()
    print_table(libraries, shapes, times)
    return 0


if __name__ == "__main__":
    sys.exit(main())
