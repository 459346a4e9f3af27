#!/usr/bin/env python3
"""Brute-force oracle for pp-partition-stages: on random small training
steps (chains of 5-12 linalg ops with residuals, biases and shared weights),
random heterogeneous devices, memory caps and stage markers, the planner's
bottleneck must equal the best of every contiguous cut, its plan must fit
the caps and cut at every marker, and an infeasible problem must be rejected
with the smallest feasible caps. With recompute=auto (a third of the cases)
every stage may also recompute (docs/Recompute.md): the best is then over
every cut and every choice of recomputing stages, and among the plans at
that bottleneck the planner's adds the least recomputation time.

The oracle computes FLOPs, bytes, activations, weights and boundaries from
the graph it generates, independently of pp's cost model (docs/CostModel.md
defines both), and checks the per-op costs pp prints against its own."""

import argparse
import concurrent.futures
import itertools
import json
import os
import random
import re
import subprocess
import sys
import tempfile

F32 = 4
REL = 1e-9


class Chain:
    """A random training step and everything the oracle knows about it."""

    def __init__(self, rng, max_markers):
        self.rows = rng.choice([2, 4, 8])
        width = rng.choice([4, 8, 16])
        self.args = [("x", (self.rows, width), False)]  # (name, shape, param)
        self.lines = []
        self.ops = []  # dicts: flops, bytes, weights, reads
        self.shapes = {"x": (self.rows, width)}
        self.definer = {}  # value -> op index
        self.markers = []  # cut positions
        prev = "x"
        count = rng.randint(5, 12)
        square = {}  # width -> a weight of shape width x width
        for i in range(count):
            kind = rng.choice(["matmul", "matmul", "relu", "exp", "bias",
                               "residual", "shared"])
            prev = self.emit(rng, kind, prev, i, square)
            if (0 < i < count - 1 and len(self.markers) < max_markers and
                    rng.random() < 0.15):
                self.lines.append(
                    f"  %cut{i} = pp.boundary %{prev} : {self.type(prev)}")
                self.markers.append(i + 1)
                self.shapes[f"cut{i}"] = self.shapes[prev]
                self.alias = getattr(self, "alias", {})
                self.alias[f"cut{i}"] = prev
                prev = f"cut{i}"
        self.result = self.resolve(prev)

    def resolve(self, value):
        return getattr(self, "alias", {}).get(value, value)

    def type(self, value):
        r, c = self.shapes[value]
        return f"tensor<{r}x{c}xf32>"

    def weight(self, shape):
        name = f"w{len(self.args)}"
        self.args.append((name, shape, True))
        self.shapes[name] = shape
        return name

    def emit(self, rng, kind, prev, i, square):
        rows, width = self.shapes[prev]
        out = f"h{i}"
        if kind == "shared" and width not in square:
            kind = "matmul"
        if kind == "residual":
            same = [v for v in self.definer if self.shapes[v] == (rows, width)
                    and v != self.resolve(prev)]
            if not same:
                kind = "exp"
        t = f"tensor<{rows}x{width}xf32>"
        elems = rows * width
        reads = [self.resolve(prev)]
        weights = []
        if kind in ("matmul", "shared"):
            if kind == "shared":
                w, n = square[width], width
            else:
                n = rng.choice([4, 8, 16, 32])
                w = self.weight((width, n))
                if n == width:
                    square[width] = w
            weights = [w]
            to = f"tensor<{rows}x{n}xf32>"
            self.lines += [
                f"  %e{i} = tensor.empty() : {to}",
                f"  %z{i} = linalg.fill ins(%zero : f32) outs(%e{i} : {to}) -> {to}",
                f"  %{out} = linalg.matmul ins(%{prev}, %{w} : {t}, "
                f"tensor<{width}x{n}xf32>) outs(%z{i} : {to}) -> {to}"]
            flops = 2 * rows * n * width
            nbytes = F32 * (rows * width + width * n + 2 * rows * n)
            self.shapes[out] = (rows, n)
        else:
            self.lines.append(f"  %e{i} = tensor.empty() : {t}")
            if kind == "relu":
                self.lines += [
                    f"  %z{i} = linalg.fill ins(%zero : f32) outs(%e{i} : {t}) -> {t}",
                    f"  %{out} = linalg.max ins(%{prev}, %z{i} : {t}, {t}) "
                    f"outs(%e{i} : {t}) -> {t}"]
                nbytes = F32 * 4 * elems
            elif kind == "exp":
                self.lines.append(f"  %{out} = linalg.exp ins(%{prev} : {t}) "
                                  f"outs(%e{i} : {t}) -> {t}")
                nbytes = F32 * 3 * elems
            elif kind == "bias":
                b = self.weight((width, 1))
                self.args[-1] = (b, (width,), True)
                weights = [b]
                self.lines += [
                    f"  %bb{i} = linalg.broadcast ins(%{b} : tensor<{width}xf32>) "
                    f"outs(%e{i} : {t}) dimensions = [0]",
                    f"  %{out} = linalg.add ins(%{prev}, %bb{i} : {t}, {t}) "
                    f"outs(%e{i} : {t}) -> {t}"]
                nbytes = F32 * 4 * elems
            else:  # residual
                other = rng.choice(same)
                reads.append(other)
                self.lines.append(
                    f"  %{out} = linalg.add ins(%{prev}, %{other} : {t}, {t}) "
                    f"outs(%e{i} : {t}) -> {t}")
                nbytes = F32 * 4 * elems
            flops = elems
            self.shapes[out] = (rows, width)
        self.definer[out] = i
        self.ops.append({"flops": flops, "bytes": nbytes, "weights": weights,
                         "reads": sorted(set(reads)), "writes": [out]})
        return out

    def mlir(self):
        params = ", ".join(
            f"%{n}: tensor<{'x'.join(map(str, s))}xf32>" +
            (" {pp.param}" if p else "") for n, s, p in self.args)
        return (f"func.func @train_step({params}) -> {self.type(self.result)} {{\n"
                f"  %zero = arith.constant 0.0 : f32\n" + "\n".join(self.lines) +
                f"\n  return %{self.result} : {self.type(self.result)}\n}}\n")

    def nbytes(self, value):
        r, c = self.shapes[value]
        return F32 * r * c

    def weight_bytes(self, weight):
        shape = dict((n, s) for n, s, _ in self.args)[weight]
        size = F32
        for d in shape:
            size *= d
        return size


class Problem:
    """A chain, its pipeline and the objective of docs/CostModel.md."""

    def __init__(self, chain, stages, ranks, schedule, microbatches, devices,
                 caps, in_flight, param_copies, recompute=False):
        self.chain, self.stages, self.ranks = chain, stages, ranks
        self.recompute = recompute
        self.schedule, self.microbatches = schedule, microbatches
        self.devices, self.caps, self.in_flight = devices, caps, in_flight
        self.param_copies = param_copies
        n = len(chain.ops)
        if schedule == "zbv":
            self.rank_of = [s if s < ranks else 2 * ranks - 1 - s
                            for s in range(stages)]
        else:
            self.rank_of = [s % ranks for s in range(stages)]
        last_use = {}
        for i, op in enumerate(chain.ops):
            for v in op["reads"]:
                last_use[v] = i
        last_use[chain.result] = n
        self.boundary = [0.0] * (n + 1)
        for v, d in chain.definer.items():
            for cut in range(d + 1, last_use.get(v, d) + 1):
                self.boundary[cut] += chain.nbytes(v)
        first, last = {}, {}
        for i, op in enumerate(chain.ops):
            for w in op["weights"]:
                first.setdefault(w, i)
                last[w] = i
        self.split = {c for w in first for c in range(first[w] + 1, last[w] + 1)}

    def forward_time(self, i, device):
        op = self.chain.ops[i]
        return max(op["flops"] / device["peak_flops"],
                   op["bytes"] / device["memory_bandwidth"])

    def op_time(self, i, device):
        return self.forward_time(i, device) * (
            3 if self.chain.ops[i]["weights"] else 2)

    def transfer(self, cut, a, b):
        da, db = self.devices[a], self.devices[b]
        return 2 * (max(da["link_latency"], db["link_latency"]) +
                    self.boundary[cut] / min(da["link_bandwidth"],
                                             db["link_bandwidth"]))

    def evaluate(self, starts, recomputed=()):
        """(per-rank time, per-rank memory) of a partition whose stages in
        `recomputed` recompute their forward: B + F, and the inputs of all
        micro-batches in flight but the one in its backward."""
        n = len(self.chain.ops)
        bounds = list(starts) + [n]
        time = [0.0] * self.ranks
        memory = [0.0] * self.ranks
        self.stage_time = [0.0] * self.stages
        for s in range(self.stages):
            r, (b, e) = self.rank_of[s], bounds[s:s + 2]
            t = sum(self.op_time(i, self.devices[r]) for i in range(b, e))
            if s in recomputed:
                t += sum(self.forward_time(i, self.devices[r])
                         for i in range(b, e))
            if s > 0 and self.rank_of[s - 1] != r:
                t += self.transfer(b, self.rank_of[s - 1], r)
            if s + 1 < self.stages and self.rank_of[s + 1] != r:
                t += self.transfer(e, r, self.rank_of[s + 1])
            time[r] += t
            self.stage_time[s] = t
            ops = self.chain.ops[b:e]
            weights = {w for op in ops for w in op["weights"]}
            acts = {v for op in ops for v in op["reads"]}
            held = self.in_flight[s] * sum(self.chain.nbytes(v) for v in acts)
            if s in recomputed:
                inputs = {v for v in acts if self.chain.definer.get(v, -1) < b}
                held = (max(self.in_flight[s] - 1, 0) *
                        sum(self.chain.nbytes(v) for v in inputs) +
                        sum(self.chain.nbytes(v) for v in acts))
            memory[r] += (self.param_copies *
                          sum(self.chain.weight_bytes(w) for w in weights) +
                          held)
        return time, memory

    def choices(self):
        """Every set of recomputing stages the planner may choose."""
        if not self.recompute:
            return [()]
        return [tuple(s for s in range(self.stages) if mask >> s & 1)
                for mask in range(1 << self.stages)]

    def recompute_time(self, starts, recomputed):
        n = len(self.chain.ops)
        bounds = list(starts) + [n]
        return sum(self.forward_time(i, self.devices[self.rank_of[s]])
                   for s in recomputed for i in range(bounds[s], bounds[s + 1]))

    def partitions(self):
        """Every contiguous partition that cuts at every marker and splits
        no weight's users (unless a marker does)."""
        n = len(self.chain.ops)
        markers = set(self.chain.markers)
        for cuts in itertools.combinations(range(1, n), self.stages - 1):
            if markers <= set(cuts) and not (set(cuts) - markers) & self.split:
                yield (0,) + cuts

    def fits(self, memory):
        return all(m <= c * (1 + 1e-12) for m, c in zip(memory, self.caps))


def in_flight_of(pp_opt, schedule, stages, ranks, microbatches):
    """The most micro-batches of each stage its rank holds, from the
    schedule pp-schedule generates."""
    spec = (f"schedule={schedule} num-stages={stages} num-ranks={ranks} "
            f"num-microbatches={microbatches}")
    out = subprocess.run([pp_opt, "-", f"--pp-schedule={spec}"],
                         input="module {}", capture_output=True, text=True,
                         check=True).stdout
    held, peak = [0] * stages, [0] * stages
    for phase, stage in re.findall(r"pp\.compute (\w+) stage (\d+)", out):
        s = int(stage)
        if phase == "forward":
            held[s] += 1
            peak[s] = max(peak[s], held[s])
        elif phase != "backward_weight":
            held[s] -= 1
    return peak


def random_device(rng):
    return {"name": "d", "peak_flops": rng.choice([1e8, 2e8, 5e8, 1e9]),
            "memory_bandwidth": rng.choice([2e8, 5e8, 1e9, 4e9]),
            "link_bandwidth": rng.choice([1e7, 1e8, 1e9]),
            "link_latency": rng.choice([0.0, 1e-6, 1e-5]),
            "memory_capacity": 1e9}


def close(a, b, rel=REL):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)


def check(args, seed):
    """Runs one random case; returns an error message or None."""
    rng = random.Random(seed)
    layout = rng.choice(["one", "one", "one", "interleaved", "zbv"])
    if layout == "one":
        schedule = rng.choice(["1f1b", "gpipe"])
        ranks = rng.randint(2, 4)
        stages = ranks
        microbatches = rng.randint(1, 6)
    else:
        schedule = "interleaved-1f1b" if layout == "interleaved" else "zbv"
        ranks = 2
        stages = 4
        microbatches = 2 * rng.randint(1, 3)
    chain = Chain(rng, stages - 1)
    n = len(chain.ops)
    in_flight = in_flight_of(args.pp_opt, schedule, stages, ranks, microbatches)
    closed_form = {"1f1b": [min(microbatches, ranks - s) for s in range(stages)],
                   "gpipe": [microbatches] * stages}.get(schedule, in_flight)
    if in_flight != closed_form:
        return f"case {seed}: {schedule} holds {in_flight}, not {closed_form}"
    devices = [random_device(rng) for _ in range(ranks)]
    param_copies = rng.choice([2, 4])
    # Its own stream, so that the cases without it stay as they were.
    recompute = random.Random(-seed).random() < 1 / 3
    base = Problem(chain, stages, ranks, schedule, microbatches, devices,
                   [float("inf")] * ranks, in_flight, param_copies)
    memories = sorted(max(base.evaluate(p)[1]) for p in base.partitions())
    uniform = rng.random() < 0.5
    if memories:
        # Caps around the memories partitions need: some bind, some cannot
        # be met.
        level = rng.choice(memories) * rng.choice([0.9, 1.0, 1.0, 1.3, 10])
        caps = [level if uniform else level * rng.choice([0.7, 1, 1.5])
                for _ in range(ranks)]
    else:
        caps = [1e9] * ranks
    for device, cap in zip(devices, caps):
        device["memory_capacity"] = cap
    problem = Problem(chain, stages, ranks, schedule, microbatches, devices,
                      caps, in_flight, param_copies, recompute)

    plans = []  # (bottleneck, cuts, recomputing stages, largest stage)
    for p in problem.partitions():
        for recomputed in problem.choices():
            time, memory = problem.evaluate(p, recomputed)
            if problem.fits(memory):
                plans.append((max(time), p, recomputed,
                              max(problem.stage_time)))
    best = min(plans, key=lambda plan: plan[0]) if plans else None

    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.mlir")
        with open(model, "w") as f:
            f.write(chain.mlir())
        device_file = os.path.join(tmp, "devices.json")
        with open(device_file, "w") as f:
            json.dump({"ranks": devices}, f)
        spec = (f"num-stages={stages} num-ranks={ranks} schedule={schedule} "
                f"num-microbatches={microbatches} device-file={device_file} "
                f"param-copies={param_copies} print-table print-costs "
                f"recompute={'auto' if recompute else 'none'}")
        run = subprocess.run([args.pp_opt, model, f"--pp-partition-stages={spec}",
                              "-o", os.devnull], capture_output=True, text=True)
    where = f"case {seed} ({schedule}, {stages} stages, {ranks} ranks, {n} ops)"
    lines = run.stdout.splitlines()
    if not lines:
        return f"{where}: no cost JSON:\n{run.stderr}\n{chain.mlir()}"
    printed = json.loads(lines[0])["ops"]
    for i, (ours, theirs) in enumerate(zip(chain.ops, printed)):
        if (ours["flops"], ours["bytes"]) != (theirs["flops"], theirs["bytes"]):
            return (f"{where}: op {i} costs {theirs['flops']} FLOPs, "
                    f"{theirs['bytes']} bytes; the oracle says {ours['flops']}, "
                    f"{ours['bytes']}")

    if set(chain.markers) & problem.split:
        return ("marker splits a weight", None if run.returncode else
                f"{where}: a marker splits a weight's users, but it passed")
    if best is None:
        if run.returncode == 0:
            return f"{where}: no partition fits, but the planner found one"
        structural = list(problem.partitions())
        if not structural:
            return ("no partition", None if "cuts at every stage marker" in
                    run.stderr else f"{where}: wrong diagnostic for no "
                    f"partition:\n{run.stderr}")
        # A stage that may recompute needs the less memory of its two
        # choices.
        factor = min(max(m / c for m, c in zip(problem.evaluate(p, r)[1], caps))
                     for p in structural for r in problem.choices()[-1:])
        if len(set(caps)) == 1:
            m = re.search(r"smallest feasible cap is (\S+) bytes", run.stderr)
            expected = factor * caps[0]
        else:
            m = re.search(r"grow by a factor of (\S+) to", run.stderr)
            expected = factor
        if not m or not abs(float(m.group(1)) - expected) <= 1e-8 * expected:
            return ("over the caps", f"{where}: expected the smallest caps "
                    f"{expected} in:\n{run.stderr}")
        return ("over the caps", None)
    if run.returncode != 0:
        return f"{where}: the planner failed:\n{run.stderr}\n{chain.mlir()}"
    starts = [int(m.group(1)) for m in
              re.finditer(r"^\d+\s+\d+\s+(\d+)-\d+\s", run.stdout, re.M)]
    m = re.search(r"bottleneck: rank \d+, (\S+) s", run.stdout)
    if len(starts) != stages or not m:
        return f"{where}: unreadable table:\n{run.stdout}"
    reported = float(m.group(1))
    # With several stages per rank the planner keeps a stage-balanced plan
    # whose estimated step, M x bottleneck + (ranks - 1) x largest stage,
    # is no longer than that of a least-bottleneck plan.
    fill = ranks - 1
    balanced = stages > ranks and not close(reported, best[0], 1e-7)
    if balanced:
        recomputed = tuple(int(m.group(1)) for m in re.finditer(
            r"^recompute: stage (\d+)", run.stdout, re.M))
        time, memory = problem.evaluate(starts, recomputed)
        estimate = max(microbatches, 1) * max(time) + fill * max(
            problem.stage_time)
        bound = max(max(microbatches, 1) * t + fill * largest
                    for t, _, _, largest in plans if t <= best[0] * (1 + 1e-9))
        if estimate > bound * (1 + 1e-7) or not problem.fits(memory):
            return (f"{where}: planner bottleneck {reported} (cuts {starts}) "
                    f"estimates {estimate}, above every least-bottleneck "
                    f"plan's {bound}\n{chain.mlir()}")
        return (f"stage-balanced, {layout} placement", None)
    if not close(reported, best[0], 1e-7):
        return (f"{where}: planner bottleneck {reported} (cuts {starts}), "
                f"brute force {best[0]} (cuts {list(best[1])})\n{chain.mlir()}")
    if tuple(starts) not in set(problem.partitions()):
        return f"{where}: cuts {starts} miss a marker or split a weight"
    recomputed = tuple(int(m.group(1)) for m in
                       re.finditer(r"^recompute: stage (\d+)", run.stdout, re.M))
    time, memory = problem.evaluate(starts, recomputed)
    if not problem.fits(memory) or not close(max(time), reported, 1e-7):
        return (f"{where}: the plan {starts} recomputing {recomputed} needs "
                f"{memory} of caps {caps} and takes {max(time)}, reported "
                f"{reported}")
    least = min(problem.recompute_time(p, r) for t, p, r, _ in plans
                if t <= best[0] * (1 + 1e-9))
    added = problem.recompute_time(starts, recomputed)
    if added > least * (1 + 1e-7) + 1e-30:
        return (f"{where}: the plan {starts} recomputing {recomputed} adds "
                f"{added}, but one at its bottleneck adds only {least}")
    free = min(max(base.evaluate(p)[0]) for p in base.partitions())
    binds = ", cap binds" if free < best[0] * (1 - 1e-9) else ""
    with_recompute = " with recompute" if recomputed else ""
    return (f"optimal, {layout} placement{binds}{with_recompute}", None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-opt", required=True)
    parser.add_argument("--cases", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    seeds = range(args.seed, args.seed + args.cases)
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda s: check(args, s), seeds))
    kinds = {}
    for result in results:
        kind, error = result if isinstance(result, tuple) else ("error", result)
        kinds[kind] = kinds.get(kind, 0) + 1
    errors = [r if isinstance(r, str) else r[1] for r in results]
    errors = [e for e in errors if e]
    for error in errors:
        print(error)
    print(", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items())))
    print(f"{args.cases} cases, {args.cases - len(errors)} passed, "
          f"{len(errors)} failed")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
