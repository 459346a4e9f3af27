#!/usr/bin/env python3
"""Fault injection: the compiled MLP trains with a checkpoint after every
step while one rank, chosen at random, is stopped (SIGSTOP) or killed
(SIGKILL) at a random moment, half of the time while a checkpoint is being
written. Every run must end by itself within a bound, with every surviving
rank naming the stopped rank (a killed one is named by its watcher), the
checkpoint directory must hold a complete checkpoint, and resuming from it
must give, byte for byte, the weights of an unbroken run.

Configurations: 4 pipeline ranks (1f1b) and 2 stages x 2 data-parallel
replicas, SGD and Adam. The faults, victims and moments come from --seed;
--faults sets how many runs. Prints one line per run and a summary."""

import argparse
import filecmp
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "runtime", "test"))
import safetensors_file  # noqa: E402
from pprt_tests import mpi_rank_of, ranks_of  # noqa: E402

CONFIGS = {
    # name: (pp-compile flags, processes)
    "4x1": (["--stages", "4", "--microbatches", "4", "--schedule", "1f1b"], 4),
    "2x2": (["--stages", "2", "--ranks", "2", "--microbatches", "4",
             "--schedule", "1f1b", "--data-parallel", "2"], 4),
}
OPTIMIZERS = {"sgd": ["--lr", "0.1"],
              "adam": ["--optimizer", "adam", "--lr", "0.01"]}
MORE_STEPS = 2
RUN_LIMIT_S = 120  # a run that should end by itself


class Failure(Exception):
    pass


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          timeout=RUN_LIMIT_S)
    if proc.returncode != 0:
        raise Failure(f"FAILED ({proc.returncode}): {' '.join(cmd)}\n"
                      f"{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def checkpoint_step(ckpt):
    """The step of the checkpoint in `ckpt`; None if there is none; raises
    if it is not a complete safetensors file."""
    path = os.path.join(ckpt, "checkpoint.safetensors")
    if not os.path.exists(path):
        return None
    meta, _ = safetensors_file.read(path)
    return int(meta["step"])


def wait_for(cond, limit_s, job):
    deadline = time.monotonic() + limit_s
    while not cond():
        if job.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def inject(job, exe, np, ckpt, sig, rank, during_write, rng):
    """Waits for training, then sends `sig` to world rank `rank`: at once
    when a checkpoint write is seen in progress (`during_write`), else after
    a random delay. Returns (pid, whether a write was in progress)."""
    if not wait_for(lambda: checkpoint_step(ckpt) is not None, 60, job):
        raise Failure(f"no checkpoint appeared (exit {job.poll()})")
    tmp = os.path.join(ckpt, "checkpoint.safetensors.tmp")
    if during_write:
        wait_for(lambda: os.path.exists(tmp), 5, job)
    else:
        time.sleep(rng.uniform(0.0, 0.5))
    pids = {mpi_rank_of(p): p for p in ranks_of(job.pid, exe)}
    if sorted(pids) != list(range(np)):
        raise Failure(f"expected ranks 0..{np - 1}, found {pids}")
    writing = os.path.exists(tmp)
    os.kill(pids[rank], sig)
    return pids[rank], writing


def named_everywhere(err, sig, rank, pid, np):
    """Whether the right rank is named: by every other rank for a stop, by
    the watcher for a kill; and no line blames another rank."""
    blamed = set(int(r) for r in
                 re.findall(r"rank (\d+)(?: \([^)]*\))? stopped answering",
                            err))
    if blamed - {rank}:
        return False
    if sig == signal.SIGKILL:
        return f"pprt: rank {rank} (pid {pid}) was killed by signal 9" in err
    namers = set(int(r) for r in re.findall(
        rf"^pprt: rank (\d+): rank {rank}(?: \([^)]*\))? stopped answering",
        err, re.M))
    return namers == set(range(np)) - {rank}


class Campaign:
    def __init__(self, args, workdir):
        self.args = args
        self.workdir = workdir
        self.exes = {}
        self.unbroken = {}  # (config, optimizer, steps) -> weights file
        self.rows = []

    def exe(self, config):
        if config not in self.exes:
            path = os.path.join(self.workdir, f"mlp-{config}")
            run([self.args.pp_compile, self.args.model, *CONFIGS[config][0],
                 "-o", path])
            self.exes[config] = path
        return self.exes[config]

    def base(self, config, opt):
        np = CONFIGS[config][1]
        return ["mpiexec", "-n", str(np), self.exe(config), "--timeout",
                str(self.args.timeout), *OPTIMIZERS[opt]]

    def unbroken_weights(self, config, opt, steps):
        key = (config, opt, steps)
        if key not in self.unbroken:
            path = os.path.join(self.workdir,
                                f"unbroken-{config}-{opt}-{steps}.safetensors")
            run(self.base(config, opt) + ["--steps", str(steps), "--save",
                                          path])
            self.unbroken[key] = path
        return self.unbroken[key]

    def fault(self, i, rng):
        config = ("4x1", "2x2")[i % 2]
        opt = ("sgd", "adam")[(i // 2) % 2]
        sig = (signal.SIGSTOP, signal.SIGKILL)[(i // 4) % 2]
        np = CONFIGS[config][1]
        rank = rng.randrange(np)
        during_write = rng.random() < 0.5
        ckpt = os.path.join(self.workdir, f"ckpt-{i}")
        cmd = self.base(config, opt) + [
            "--steps", "1000000", "--checkpoint", ckpt,
            "--checkpoint-every", "1"]
        job = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
        row = {"i": i, "config": config, "opt": opt, "rank": rank,
               "signal": "STOP" if sig == signal.SIGSTOP else "KILL"}
        try:
            pid, row["writing"] = inject(job, self.exe(config), np, ckpt,
                                         sig, rank, during_write, rng)
            start = time.monotonic()
            try:
                _, err = job.communicate(timeout=self.args.bound)
                row["seconds"] = time.monotonic() - start
                row["hung"] = False
            except subprocess.TimeoutExpired:
                row["hung"] = True
                row["seconds"] = time.monotonic() - start
                os.killpg(job.pid, signal.SIGKILL)
                _, err = job.communicate()
        finally:
            if job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)
                job.wait()
        row["rc"] = job.returncode
        row["named"] = (not row["hung"] and job.returncode != 0 and
                        named_everywhere(err, sig, rank, pid, np))
        row["err"] = err
        self.check_checkpoint(row, config, opt, ckpt)
        self.rows.append(row)
        return row

    def check_checkpoint(self, row, config, opt, ckpt):
        try:
            step = checkpoint_step(ckpt)
            row["step"] = step
            row["intact"] = step is not None
        except Exception as e:  # a torn file
            row["step"], row["intact"] = None, False
            row["err"] += f"\ncheckpoint unreadable: {e}"
        row["bitwise"] = False
        if not row["intact"]:
            return
        rest = os.path.join(self.workdir, f"rest-{row['i']}.safetensors")
        run(self.base(config, opt) + ["--steps", str(MORE_STEPS), "--resume",
                                      ckpt, "--save", rest])
        whole = self.unbroken_weights(config, opt, row["step"] + MORE_STEPS)
        row["bitwise"] = filecmp.cmp(whole, rest, shallow=False)

    def ok(self, row):
        return (not row["hung"] and row["named"] and row["intact"] and
                row["bitwise"] and row["seconds"] <= self.args.bound)


def summary(rows):
    def count(key):
        return sum(1 for r in rows if r[key])
    stops = sum(1 for r in rows if r["signal"] == "STOP")
    slowest = max((r["seconds"] for r in rows), default=0.0)
    return (f"runs {len(rows)} (stops {stops}, kills {len(rows) - stops}; "
            f"{count('writing')} during a checkpoint write): "
            f"hangs {count('hung')}, named {count('named')}, "
            f"intact {count('intact')}, bit for bit {count('bitwise')}; "
            f"slowest end {slowest:.1f} s after the fault")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--faults", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=2.0,
                        help="the runs' --timeout")
    parser.add_argument("--bound", type=float, default=None,
                        help="seconds a run may take to end after its "
                             "fault (default: 3 timeouts + 5 s)")
    args = parser.parse_args()
    if args.bound is None:
        args.bound = 3 * args.timeout + 5
    rng = random.Random(args.seed)
    failed = []
    with tempfile.TemporaryDirectory() as workdir:
        campaign = Campaign(args, workdir)
        try:
            for i in range(args.faults):
                row = campaign.fault(i, rng)
                good = campaign.ok(row)
                print(f"{'ok  ' if good else 'FAIL'} {i:3d} {row['config']} "
                      f"{row['opt']:4s} {row['signal']} rank {row['rank']}"
                      f"{' (writing)' if row['writing'] else ''}: "
                      f"exit {row['rc']} after {row['seconds']:.1f} s, "
                      f"checkpoint of step {row['step']}", flush=True)
                if not good:
                    failed.append(row)
                    print("  " + "\n  ".join(
                        l for l in row["err"].splitlines() if l.strip()))
        except Failure as e:
            print("FAIL:", e)
            return 1
        print(summary(campaign.rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
