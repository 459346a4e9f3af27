#!/usr/bin/env python3
"""ZeRO-3 (pp-compile --zero 3): each replica keeps only its block of every
weight buffer between steps, the schedule gathers a stage's whole weights
before its first compute, and the optimizer step updates the block. With 2
replicas every sum is a + b as under plain data parallelism, so the model
as 2 stages x 2 replicas (1f1b, 4 processes) trains to the same losses and
byte-equal --save files as plain --data-parallel 2, with SGD and Adam; an
Adam checkpoint written under ZeRO-3 is byte-equal to the plain one (whole
weights and moments), and resuming from it under ZeRO-3 gives the weights
of the uninterrupted plain run; with --sequential-replicas 2 (each
process plays 2 replicas in turn) the SGD run matches too. --print-memory's weight bytes per rank are
the replica's blocks and its gathered peak the whole weights, as
pp-simulate says for replica 0's ranks. With --tensor-parallel T the
pipeline ranks are T processes each (2 x T x 2 processes), the replicas
sharding each process's local block of a split weight. With --closed-form,
the model as 1
stage x 2 replicas with every layer widened from 32 to 33 (odd buffer
lengths, padded blocks) also trains bit-equal and holds exactly
4 ceil(n / 2) and 4 (n - ceil(n / 2)) weight bytes per buffer of n values.
With --zero-gather=param (each stage function gathers each weight around
its reads of it) the runs match plain data parallelism as well (with
--tensor-parallel T too), and without tensor parallelism the
gathered peak of each rank is the most weight bytes one of its stage
functions holds at once between its pprt_param_acquire and
pprt_param_release calls (read from the program's LLVM-dialect MLIR),
less than the stage's whole weights, and what pp-simulate's closed form
says for replica 0's ranks from the schedule, which records
zero_gather = param. With a ZeRO stage per stage (--zero 0,3
--zero-gather=param: stage 0 plain, stage 1 ZeRO-3 gathered per param;
--zero 1,3) the 2-stage runs match plain data parallelism too (with
--tensor-parallel T as well), and --print-memory per rank is what
pp-simulate says (for tensor-parallel index 0). A
contradicting run-time --zero, and --check-gradients, stop the run with
one line."""

import argparse
import math
import os
import re
import sys
import tempfile

from zero_memory import losses, memory, param_sizes, run, simulated

REPLICAS = 2
STEPS = 6


class Case:
    def __init__(self, args, workdir, model, stages, label, tp=1,
                 gather_params=False):
        self.args, self.workdir, self.label = args, workdir, label
        self.tp = tp
        self.procs = stages * REPLICAS * tp
        self.data = ["--corpus", args.corpus] if args.corpus else []
        common = [model, "--stages", str(stages), "--microbatches", "4",
                  "--schedule", "1f1b" if stages > 1 else "gpipe",
                  "--data-parallel", str(REPLICAS), "--tensor-parallel",
                  str(tp)]
        self.exes, self.schedules = {}, {}
        for zero in (0, 3):
            self.exes[zero] = self.path(f"zero{zero}")
            run([args.pp_compile] + common +
                ["--zero", str(zero), "-o", self.exes[zero]])
        self.schedule = self.path("zero3.mlir")
        run([args.pp_compile] + common +
            ["--zero", "3", "--emit", "schedule", "-o", self.schedule])
        if gather_params:
            self.compile_param_gathers(common)
        if gather_params and stages == 2 and args.mixed_levels:
            self.compile_mixed(common)

    def compile_param_gathers(self, common):
        """ZeRO-3 gathered per param, as the key "param"."""
        args = self.args
        param = common + ["--zero", "3", "--zero-gather=param"]
        self.exes["param"] = self.path("param")
        run([args.pp_compile] + param + ["-o", self.exes["param"]])
        self.param_mlir = run([args.pp_compile] + param +
                              ["--emit", "mlir", "-o", "-"]).stdout
        self.param_schedule = self.path("param.mlir")
        run([args.pp_compile] + param +
            ["--emit", "schedule", "-o", self.param_schedule])

    def compile_mixed(self, common):
        """A ZeRO stage per stage: 0 and 3 gathered per param, 1 and 3."""
        for key, zero in (("mixed-0-3-param", ["--zero", "0,3",
                                         "--zero-gather=param"]),
                          ("mixed-1-3", ["--zero", "1,3"])):
            self.exes[key] = self.path(key)
            run([self.args.pp_compile] + common + zero +
                ["-o", self.exes[key]])
            self.schedules[key] = self.path(key + ".mlir")
            run([self.args.pp_compile] + common + zero +
                ["--emit", "schedule", "-o", self.schedules[key]])

    def path(self, name):
        return os.path.join(self.workdir, f"{self.label}-{name}")

    def mpirun(self, zero, extra, ok=True):
        return run(["mpirun", "-np", str(self.procs), self.exes[zero]] +
                   self.data + extra, ok)

    def train(self, zero, name, extra):
        path = self.path(name + ".safetensors")
        out = self.mpirun(zero, ["--steps", str(STEPS), "--save", path,
                                 "--print-memory"] + extra).stdout
        with open(path, "rb") as f:
            return out, f.read()

    def checkpoint(self, zero, name, extra):
        """The checkpoint directory and file bytes of a 3-step run."""
        ckpt = self.path(name)
        self.mpirun(zero, ["--steps", "3", "--checkpoint", ckpt] + extra)
        with open(os.path.join(ckpt, "checkpoint.safetensors"), "rb") as f:
            return ckpt, f.read()


def check_training(case, optimizer, zero_exe=3):
    mixed = str(zero_exe).startswith("mixed-")
    tag = " ".join([case.label, optimizer[1]] + optimizer[4:] +
                   ([f"zero {zero_exe[6:]}"] if mixed else
                    [f"gathered per {zero_exe}"] if zero_exe != 3 else []))
    plain, w_plain = case.train(0, "plain", optimizer)
    zero, w_zero = case.train(zero_exe, f"zero{zero_exe}", optimizer)
    if losses(plain) != losses(zero) or len(losses(plain)) != STEPS:
        sys.exit(f"{tag}: the losses differ\nplain:\n{plain}\nzero:\n{zero}")
    if w_plain != w_zero:
        sys.exit(f"{tag}: the saved weights differ")
    print(f"{tag}: identical losses and weights")
    return plain, zero, w_plain


def check_mixed_memory(case, optimizer, out, key):
    """--print-memory of replica 0's ranks under a ZeRO stage per stage:
    what pp-simulate says, the gathered peak where a rank's stage is ZeRO-3
    and none elsewhere; pp-simulate counts pipeline ranks (the processes
    of tensor-parallel index 0)."""
    tag = f"{case.label} {optimizer} zero {key[6:]}"
    got = memory(out, True)
    schedule = case.schedules[key]
    model = simulated(case.args.pp_opt, schedule, optimizer)
    gathered = simulated(case.args.pp_opt, schedule, optimizer, True)
    for world in range(0, case.procs // REPLICAS, case.tp):
        rank = world // case.tp
        want = gathered.get(rank, model.get(rank, ()) + (0,))
        if got.get(world) != want:
            sys.exit(f"{tag}: rank {world} holds {got.get(world)} bytes, "
                     f"pp-simulate says {want}")
    print(f"{tag}: bytes per rank {[got[r] for r in range(case.procs)]} "
          f"(pp-simulate agrees)")


def check_memory(case, optimizer, plain, zero, sizes):
    """Blocks resident, whole weights gathered: against plain data
    parallelism, pp-simulate and (given `sizes`) the closed form."""
    tag = f"{case.label} {optimizer}"
    mem_plain, mem_zero = memory(plain, True), memory(zero, True)
    if len(mem_plain) != case.procs or len(mem_zero) != case.procs:
        sys.exit(f"{tag}: expected {case.procs} memory lines\n{zero}")
    ranks = case.procs // REPLICAS
    model = simulated(case.args.pp_opt, case.schedule, optimizer, True)
    for rank in range(ranks):
        whole = mem_plain[rank][0]
        blocks = (mem_zero[rank][0], mem_zero[rank + ranks][0])
        if sum(blocks) != whole or blocks[0] < blocks[1]:
            sys.exit(f"{tag}: pipeline rank {rank} keeps weight blocks "
                     f"{blocks}, not the two parts of {whole} bytes")
        for world in (rank, rank + ranks):
            # Whole gradients; ZeRO-1's blocks of Adam's moments.
            got, base = mem_zero[world], mem_plain[world]
            moments = base[2] if optimizer == "sgd" else 2 * got[0]
            if got[3] != whole or got[1] != base[1] or got[2] != moments:
                sys.exit(f"{tag}: rank {world} holds {got}, plain {base}")
        # pp-simulate counts pipeline ranks (tensor-parallel index 0).
        if rank % case.tp == 0 and \
                model.get(rank // case.tp) != mem_zero[rank]:
            sys.exit(f"{tag}: rank {rank} holds {mem_zero[rank]} bytes, "
                     f"pp-simulate says {model.get(rank // case.tp)}")
    if sizes:
        for replica in range(REPLICAS):
            want = sum(4 * max(0, min(math.ceil(n / REPLICAS),
                                      n - replica * math.ceil(n / REPLICAS)))
                       for n in sizes)
            if mem_zero[replica][0] != want:
                sys.exit(f"{tag}: replica {replica} keeps "
                         f"{mem_zero[replica][0]} weight bytes, not "
                         f"{want}")
    print(f"{tag}: (weights, gradients, optimizer, gathered) bytes per rank "
          f"{[mem_zero[r] for r in range(case.procs)]} (pp-simulate agrees "
          f"on replica 0)")


def constants(body):
    return dict(re.findall(r"(%\d+) = llvm\.mlir\.constant\((-?\d+) : i32\)",
                           body))


def call_args(body, callee):
    """The operands of each call of `callee` in `body`, in order."""
    return [args.split(", ") for args in
            re.findall(rf"llvm\.call @{callee}\(([^)]*)\)", body)]


def param_gather_peaks(mlir):
    """{stage: bytes}: the most weight bytes one stage function of the
    stage holds at once between its pprt_param_acquire and
    pprt_param_release calls (the params' stages and f32 shapes from
    pp_define_program's pprt_define_buffer calls)."""
    funcs = dict(re.findall(r"llvm\.func @(\w+)\([^\n]*\{\n(.*?)\n  \}\n",
                            mlir, re.S))
    define = funcs["pp_define_program"]
    value = constants(define)
    dims = dict(re.findall(r"(%\d+) = llvm\.mlir\.addressof @pp_dims_(\w+)",
                           define))
    params = {}  # buffer id: (stage, bytes)
    for args in call_args(define, "pprt_define_buffer"):
        buffer, kind, stage = (int(value[a]) for a in args[1:4])
        if kind == 0:
            shape = [int(d) for d in dims[args[7]].split("_")]
            params[buffer] = (stage, 4 * math.prod(shape))
    peaks = {}
    for body in funcs.values():
        value, held, peak = constants(body), set(), 0
        for call, ctx, arg in re.findall(
                r"llvm\.call @pprt_param_(acquire|release)\((%\w+), (%\w+)\)",
                body):
            (held.add if call == "acquire" else held.remove)(int(value[arg]))
            peak = max(peak, sum(params[b][1] for b in held))
            stage = params[int(value[arg])][0]
            peaks[stage] = max(peaks.get(stage, 0), peak)
    return peaks


def check_param_gathers(case, optimizer, zero):
    """Gathered per param: the blocks, gradients and optimizer state of the
    stage gathers, and the closed form's gathered peak."""
    tag = f"{case.label} {optimizer[1]} gathered per param"
    _, param, _ = check_training(case, optimizer, "param")
    mem_stage, mem_param = memory(zero, True), memory(param, True)
    ranks = case.procs // REPLICAS
    peaks = param_gather_peaks(case.param_mlir)
    model = simulated(case.args.pp_opt, case.param_schedule, optimizer[1],
                      True)
    for world, got in mem_param.items():
        whole = mem_stage[world][3]
        want = peaks[world % ranks]
        if got[:3] != mem_stage[world][:3] or got[3] != want or want >= whole:
            sys.exit(f"{tag}: rank {world} holds {got}, gathering per stage "
                     f"{mem_stage[world]}; expected a gathered peak of "
                     f"{want} bytes, below the stage's {whole}")
        # pp-simulate's closed form, from the schedule's stage functions.
        if world < ranks and model.get(world) != got:
            sys.exit(f"{tag}: rank {world} holds {got} bytes, pp-simulate "
                     f"of the schedule gathered per param says "
                     f"{model.get(world)}")
    print(f"{tag}: gathered peak per rank "
          f"{[mem_param[r][3] for r in range(case.procs)]} bytes (pp-simulate "
          f"agrees on replica 0), the stage's whole weights "
          f"{[mem_stage[r][3] for r in range(ranks)]}")


def check_checkpoint(case, optimizer, w_plain):
    tag = f"{case.label} {optimizer[1]}"
    ckpt, zero = case.checkpoint(3, "ckpt-zero3", optimizer)
    _, plain = case.checkpoint(0, "ckpt-plain", optimizer)
    if zero != plain:
        sys.exit(f"{tag}: the ZeRO-3 checkpoint differs from the plain one")
    _, resumed = case.train(3, "resumed",
                            optimizer + ["--resume", ckpt, "--steps", "3"])
    if resumed != w_plain:
        sys.exit(f"{tag}: resumed under ZeRO-3, the weights differ")
    print(f"{tag}: the checkpoint equals the plain one; resumed, the "
          f"weights of {STEPS} plain steps")


def check_refusals(case):
    proc = case.mpirun(3, ["--steps", "1", "--zero", "0"], ok=False)
    want = ("--zero 0 contradicts the program, compiled with --zero 3 for "
            "stage 0 (its schedule reduce-scatters its gradients and "
            "all-gathers its weights before its first compute); leave --zero "
            "out or recompile")
    if proc.returncode == 0 or want not in proc.stderr:
        sys.exit(f"--zero 0 on a ZeRO-3 program: expected '{want}'\n"
                 f"{proc.stderr}")
    proc = case.mpirun(0, ["--steps", "1", "--zero", "3"], ok=False)
    want = ("pprt: rank 0: --zero 3 needs a program compiled with --zero 3, "
            "whose schedule gathers each stage's weights before its first "
            "compute; recompile")
    if proc.returncode == 0 or want not in proc.stderr:
        sys.exit(f"--zero 3 on a plain program: expected '{want}'\n"
                 f"{proc.stderr}")
    proc = case.mpirun(3, ["--check-gradients"], ok=False)
    want = ("pprt: --check-gradients cannot be combined with --zero 3 yet: "
            "it perturbs whole weights that ZeRO-3 releases after each step")
    if proc.returncode == 0 or want not in proc.stderr:
        sys.exit(f"--check-gradients under ZeRO-3: expected '{want}'\n"
                 f"{proc.stderr}")
    print("contradicting --zero and --check-gradients: refused")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--pp-opt", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--corpus", help="the program's --corpus")
    parser.add_argument("--sgd-lr", default="0.1")
    parser.add_argument("--tensor-parallel", type=int, default=1,
                        help="T processes per pipeline rank (2 x T x 2 "
                             "processes)")
    parser.add_argument("--closed-form", action="store_true",
                        help="also 1 stage x 2 replicas of the model with "
                             "its 32-wide layers 33 wide")
    parser.add_argument("--mixed-levels", default=True,
                        action=argparse.BooleanOptionalAction,
                        help="also the ZeRO levels per stage 0,3 (per "
                             "param) and 1,3")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        tp = args.tensor_parallel
        case = Case(args, workdir, args.model, 2,
                    "2x2" if tp == 1 else f"T{tp}x2x2", tp,
                    gather_params=True)
        for optimizer in (["--optimizer", "sgd", "--lr", args.sgd_lr],
                          ["--optimizer", "adam", "--lr", "0.01"]):
            plain, zero, w_plain = check_training(case, optimizer)
            for key in ("mixed-0-3-param", "mixed-1-3"):
                if args.mixed_levels:
                    _, mixed, _ = check_training(case, optimizer, key)
                    check_mixed_memory(case, optimizer[1], mixed, key)
            check_memory(case, optimizer[1], plain, zero, None)
            if tp == 1:
                check_param_gathers(case, optimizer, zero)
            else:
                check_training(case, optimizer, "param")
            if optimizer[1] == "adam":
                check_checkpoint(case, optimizer, w_plain)
        # Each process plays 2 replicas in turn: the first pass gathers,
        # the last updates the block and frees the whole weights.
        sgd = ["--optimizer", "sgd", "--lr", args.sgd_lr,
               "--sequential-replicas", "2"]
        check_training(case, sgd)
        check_training(case, sgd, "param")
        if tp == 1:
            check_refusals(case)
        if args.closed_form:
            with open(args.model) as f:
                odd = re.sub(r"(?<=[<x])32(?=x)", "33", f.read())
            sizes = param_sizes(odd)
            if sum(n % REPLICAS for n in sizes) == 0:
                sys.exit("the widened model has no odd-sized param")
            odd_path = os.path.join(workdir, "odd.mlir")
            with open(odd_path, "w") as f:
                f.write(odd)
            case = Case(args, workdir, odd_path, 1, "odd-1x2")
            adam = ["--optimizer", "adam", "--lr", "0.01"]
            plain, zero, _ = check_training(case, adam)
            check_memory(case, "adam", plain, zero, sizes)
    print("zero3: ok")


if __name__ == "__main__":
    main()
