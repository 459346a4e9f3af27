#!/usr/bin/env python3
"""pp's training step against PyTorch eager's on one model of each zoo
family, one thread each.

  PYTHONPATH=build/python_packages python3 bench/zoo_speed.py [--quick]

Each model of python/tests/zoo (its first case, `vit-conv` for the ViTs),
built under torch.manual_seed(0) at the zoo's widths with `--rows` rows
per batch, is exported with pp.torch for one micro-batch and compiled for
1 stage (`pp.compile`'s defaults, `-O2`); pp trains it with SGD on the
runtime's synthetic data (`--classes V` ids for token models), and eager
PyTorch runs the same step (forward, the loss, backward, SGD) on random
data of the same shapes. The table has the fastest step after warm-up
of each (the minimum: on a shared machine the median measures the other
processes' time slices as much as the step) and pp's over eager's.
`--quick` takes the zoo's own batches and fewer steps."""

import argparse
import os
import pathlib
import sys
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

ROOT = pathlib.Path(__file__).resolve().parents[1]
ZOO = ROOT / "python" / "tests" / "zoo"
sys.path.insert(0, str(ZOO))

# One case per family; the first, where this names none.
CHOSEN = {"vit": "vit-conv"}


def cases(names):
    """(family, case) for each family file of the zoo (or those `names`)."""
    import importlib
    families = sorted(p.stem for p in ZOO.glob("*.py") if p.stem != "harness"
                      and not p.stem.startswith("test_"))
    for family in families:
        all_cases = importlib.import_module(family).CASES
        case = next((c for c in all_cases if c.name == CHOSEN.get(family)),
                    all_cases[0])
        if not names or case.name in names or family in names:
            yield family, case


def shapes(case, rows):
    """The case's input and target shapes with `rows` rows."""
    return [(rows,) + tuple(s[1:]) for s in list(case.inputs) +
            list(case.targets)]


def random_batch(case, rows):
    import torch
    batch = []
    for shape in shapes(case, rows):
        if case.vocab:
            batch.append(torch.randint(0, case.vocab, shape))
        else:
            batch.append(torch.rand(shape) * 2 - 1)
    return batch


def eager_ms(case, rows, warmup, steps):
    """The fastest ms of eager PyTorch's step (forward, loss, backward,
    SGD)."""
    import torch
    torch.manual_seed(0)
    model = case.make()
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=case.lr)
    batch = random_batch(case, rows)
    inputs, targets = batch[:len(case.inputs)], batch[len(case.inputs):]
    times = []
    for _ in range(warmup + steps):
        start = time.perf_counter()
        optimizer.zero_grad()
        case.loss(model(*inputs), *targets).backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
    return 1e3 * min(times[warmup:])


def pp_ms(case, rows, warmup, steps, workdir):
    """The fastest ms of pp's step on 1 stage, 1 micro-batch, and the
    compile's seconds."""
    import torch
    import warnings
    import pp
    import pp.torch
    torch.manual_seed(0)
    model = case.make()
    example = [torch.zeros(s, dtype=torch.int64 if case.vocab else
                           torch.float32) for s in shapes(case, rows)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # batch norm's running statistics
        exported = pp.torch.export(model, example, case.loss,
                                   workdir / f"{case.name}.mlir",
                                   num_targets=len(case.targets),
                                   microbatches=1)
    start = time.perf_counter()
    program = pp.compile(exported.mlir, stages=1, microbatches=1,
                         output=str(workdir / f"train-{case.name}"))
    compile_s = time.perf_counter() - start
    extra = ["--classes", str(case.vocab)] if case.vocab else []
    run = pp.run(program, steps=warmup + steps, lr=case.lr,
                 init_weights=exported.weights, extra_args=extra)
    if None in run.losses:
        raise RuntimeError(f"{case.name}: pp's loss is not finite: "
                           f"{run.losses}")
    return 1e3 * min(run.step_times[warmup:]), compile_s


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="the zoo's batches, 1 warm-up step and 5 timed")
    parser.add_argument("--rows", type=int, default=64,
                        help="rows per batch (without --quick)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--models", default="",
                        help="comma-separated families or case names")
    args = parser.parse_args()
    if args.quick:
        args.warmup, args.steps = 1, 5
    import torch
    torch.set_num_threads(1)
    names = [n for n in args.models.split(",") if n]
    rows = []
    with tempfile.TemporaryDirectory(prefix="pp-zoo-speed-") as tmp:
        for family, case in cases(names):
            batch = case.inputs[0][0] if args.quick else args.rows
            p, compile_s = pp_ms(case, batch, args.warmup, args.steps,
                                 pathlib.Path(tmp))
            e = eager_ms(case, batch, args.warmup, args.steps)
            rows.append((case.name, batch, p, e))
            print(f"# {case.name}: pp {p:.3f} ms (compile {compile_s:.0f} s), "
                  f"eager {e:.3f} ms", flush=True)
    print(f"1 thread each; 1 stage, 1 micro-batch; fastest of {args.steps} "
          f"steps after {args.warmup}")
    print("| model | rows | pp ms/step | eager ms/step | pp / eager |")
    print("|---|---:|---:|---:|---:|")
    for name, batch, p, e in rows:
        print(f"| {name} | {batch} | {p:.3f} | {e:.3f} | {p / e:.3g} |")


if __name__ == "__main__":
    main()
