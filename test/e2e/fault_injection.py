#!/usr/bin/env python3
"""Fault injection: the compiled MLP trains with a checkpoint after every
step while one rank, chosen at random, is stopped (SIGSTOP) or killed
(SIGKILL) at a random moment: while the job starts (MPI_Init, the set-up
and its agreements), while it trains, while a checkpoint is being written,
or while it ends (the last checkpoint, --save, the last agreement,
MPI_Finalize). Every run must end by itself within a bound, with every
surviving rank naming the stopped rank (a killed one is named by its
watcher; one stopped after the others had finished, by its watcher too),
the checkpoint directory must hold a complete checkpoint or none (a fault
before the first step), and resuming from it must give, byte for byte, the
weights of an unbroken run. A fault that comes after the victim finished
is a miss: the run must then have ended normally with the unbroken run's
weights.

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
sys.path.insert(0, os.path.dirname(__file__))
import safetensors_file  # noqa: E402
from job_faults import KINDS, JobFaults  # noqa: E402
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
END_STEPS = 3  # the steps of a run faulted while it ends
RUN_LIMIT_S = 120  # a run that should end by itself
# Where the fault falls, in the order the runs cycle through.
MOMENTS = ("write", "train", "start", "end")


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


def watched(pid):
    """Whether rank process `pid` has forked its watcher (which reports a
    kill; before it, the launcher alone sees the death)."""
    with open(f"/proc/{pid}/stat") as f:
        parent = int(f.read().rsplit(")", 1)[1].split()[1])
    with open(f"/proc/{parent}/comm") as f:
        return f.read().strip() == "pprt-watch"


def rank_pids(job, exe, np, need_watchers):
    """World rank -> pid of the job's rank processes, once all are there
    (and watched, if `need_watchers`); {} if the job ended first."""
    deadline = time.monotonic() + 60
    while job.poll() is None and time.monotonic() < deadline:
        try:
            pids = {mpi_rank_of(p): p for p in ranks_of(job.pid, exe)}
            if sorted(pids) == list(range(np)) and (
                    not need_watchers or all(map(watched, pids.values()))):
                return pids
        except (OSError, ValueError):
            pass  # a process came or went
        time.sleep(0.01)
    return {}


def inject(job, exe, np, ckpt, sig, rank, moment, rng):
    """Sends `sig` to world rank `rank` at `moment`: "start", a random
    delay after launch; "train", a random delay after the first
    checkpoint; "write", as soon as a checkpoint write is seen in progress;
    "end", once the last step's checkpoint is there. Returns (pid, whether
    a write was in progress, whether the signal was delivered)."""
    tmp = os.path.join(ckpt, "checkpoint.safetensors.tmp")
    if moment == "start":
        # A kill waits for the watchers. The processes are looked up
        # again after the delay: one that forked its watcher since is the
        # watcher now.
        rank_pids(job, exe, np, sig == signal.SIGKILL)
        time.sleep(rng.uniform(0.0, 1.5))
        pids = rank_pids(job, exe, np, sig == signal.SIGKILL)
    else:
        first = 1 if moment != "end" else END_STEPS
        if not wait_for(lambda: (checkpoint_step(ckpt) or 0) >= first, 60,
                        job):
            raise Failure(f"no checkpoint appeared (exit {job.poll()})")
        if moment == "write":
            wait_for(lambda: os.path.exists(tmp), 5, job)
        elif moment == "train":
            time.sleep(rng.uniform(0.0, 0.5))
        pids = rank_pids(job, exe, np, False)
    if rank not in pids:
        return None, False, False
    writing = os.path.exists(tmp)
    try:
        os.kill(pids[rank], sig)
    except ProcessLookupError:
        return pids[rank], writing, False
    return pids[rank], writing, True


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
    if re.search(rf"^pprt: rank {rank} \(pid {pid}\) stayed stopped", err,
                 re.M) and not re.search(r"^pprt: rank \d+: ", err, re.M):
        return True  # the others had finished; its watcher ended it
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

    def base(self, config, opt, timeout=None):
        np = CONFIGS[config][1]
        return ["mpiexec", "-n", str(np), self.exe(config), "--timeout",
                str(timeout or self.args.timeout), *OPTIMIZERS[opt]]

    def run_ok(self, cmd):
        return run(cmd)

    def unbroken_weights(self, config, opt, steps, extra=()):
        """The weights of an unbroken run of `steps` steps (with flags
        `extra`)."""
        key = (config, opt, steps, tuple(extra))
        if key not in self.unbroken:
            path = os.path.join(self.workdir, f"unbroken-{len(self.unbroken)}"
                                ".safetensors")
            run(self.base(config, opt) + [*extra, "--steps", str(steps),
                                          "--save", path])
            self.unbroken[key] = path
        return self.unbroken[key]

    def fault(self, i, rng):
        # Any 8 consecutive runs cover both configurations, both signals
        # and every moment; 32 cover every combination with an optimizer.
        config = ("4x1", "2x2")[i % 2]
        moment = MOMENTS[(i // 2) % 4]
        sig = (signal.SIGSTOP, signal.SIGKILL)[(i // 2 + i // 8) % 2]
        opt = ("sgd", "adam")[(i // 16) % 2]
        np = CONFIGS[config][1]
        rank = rng.randrange(np)
        ckpt = os.path.join(self.workdir, f"ckpt-{i}")
        steps = END_STEPS if moment == "end" else 1000000
        save = os.path.join(self.workdir, f"save-{i}.safetensors")
        cmd = self.base(config, opt) + [
            "--steps", str(steps), "--checkpoint", ckpt,
            "--checkpoint-every", "1", "--save", save]
        job = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
        row = {"i": i, "config": config, "opt": opt, "rank": rank,
               "moment": moment,
               "signal": "STOP" if sig == signal.SIGSTOP else "KILL"}
        try:
            pid, row["writing"], row["hit"] = inject(
                job, self.exe(config), np, ckpt, sig, rank, moment, rng)
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
        row["err"] = err
        # Where the fault was found: in one of MPI's blocking calls, or by
        # the watcher of a rank stopped after the others had finished.
        row["unpolled"] = "did not complete within" in err
        row["watcher_ended"] = "stayed stopped" in err
        # A fault that came after the victim ended, or one the job
        # finished despite (a stop after the victim's last communication
        # that its watcher did not yet end), is a miss: the job must have
        # saved the unbroken run's weights.
        row["missed"] = not row["hung"] and job.returncode == 0
        if row["missed"]:
            row["named"] = False
            row["step"] = None
            row["intact"] = row["bitwise"] = filecmp.cmp(
                self.unbroken_weights(config, opt, steps), save,
                shallow=False) if steps == END_STEPS else False
        else:
            row["named"] = (row["hit"] and not row["hung"] and
                            job.returncode != 0 and
                            named_everywhere(err, sig, rank, pid, np))
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
            # A fault before the first step leaves no checkpoint, rightly.
            row["intact"] = row["bitwise"] = (
                row["moment"] == "start" and step is None and
                "checkpoint unreadable" not in row["err"])
            row["fresh"] = row["intact"]
            return
        rest = os.path.join(self.workdir, f"rest-{row['i']}.safetensors")
        run(self.base(config, opt) + ["--steps", str(MORE_STEPS), "--resume",
                                      ckpt, "--save", rest])
        whole = self.unbroken_weights(config, opt, row["step"] + MORE_STEPS)
        row["bitwise"] = filecmp.cmp(whole, rest, shallow=False)

    def ok(self, row):
        if row["missed"]:
            return row["bitwise"] and row["seconds"] <= self.args.bound
        return (not row["hung"] and row["named"] and row["intact"] and
                row["bitwise"] and row["seconds"] <= self.args.bound)


def summary(rows):
    def count(key, among=rows):
        return sum(1 for r in among if r.get(key))
    hits = [r for r in rows if not r["missed"]]
    stops = sum(1 for r in hits if r["signal"] == "STOP")
    moments = ", ".join(f"{m} {sum(1 for r in hits if r['moment'] == m)}"
                        for m in MOMENTS)
    slowest = max((r["seconds"] for r in rows), default=0.0)
    return (f"runs {len(rows)}, faults {len(hits)} (stops {stops}, kills "
            f"{len(hits) - stops}; {moments}; {count('writing', hits)} during "
            f"a checkpoint write), missed {len(rows) - len(hits)} "
            f"(finished, weights bit for bit {count('bitwise', [r for r in rows if r['missed']])}): "
            f"hangs {count('hung')}, named {count('named', hits)}, "
            f"checkpoint intact {count('intact', hits)} (none yet "
            f"{count('fresh', hits)}), resumed bit for bit "
            f"{count('bitwise', hits) - count('fresh', hits)}; "
            f"{count('unpolled', hits)} found in MPI's blocking calls, "
            f"{count('watcher_ended', hits)} ended by a watcher; "
            f"slowest end {slowest:.1f} s after the fault")


def job_fault_ok(row):
    return (row["ok"] and row["hit"] and not row["hung"] and
            not row["wrong"] and not row["lost"])


def run_job_faults(campaign, rng):
    """Runs --job-faults faults of the whole job; returns the failed rows
    after printing one line each and a summary."""
    faults, rows = JobFaults(campaign), []
    kinds = campaign.args.job_kinds.split(",")
    for i in range(campaign.args.job_faults):
        row = faults.fault(i, kinds[i % len(kinds)], rng)
        rows.append(row)
        good = job_fault_ok(row)
        print(f"{'ok  ' if good else 'FAIL'} job {i:3d} {row['config']} "
              f"{row['opt']:4s} {row['kind']}"
              f"{' (' + row['how'] + ')' if 'how' in row else ''}: exit "
              f"{row['rc']} after {row['seconds']:.1f} s"
              f"{', hung' if row['hung'] else ''}"
              f"{', silent wrong' if row['wrong'] else ''}"
              f"{', data lost' if row['lost'] else ''}"
              f"{', missed' if not row['hit'] else ''}", flush=True)
        if not good:
            print("  " + "\n  ".join(
                l for l in row["err"].splitlines() if l.strip()))
    if rows:
        kinds = ", ".join(f"{k} {sum(1 for r in rows if r['kind'] == k)}"
                          for k in kinds)
        print(f"job faults {len(rows)} ({kinds}): ok "
              f"{sum(1 for r in rows if job_fault_ok(r))}, hangs "
              f"{sum(1 for r in rows if r['hung'])}, silent wrong "
              f"{sum(1 for r in rows if r['wrong'])}, data lost "
              f"{sum(1 for r in rows if r['lost'])}, slowest "
              f"{max(r['seconds'] for r in rows):.1f} s")
    return [r for r in rows if not job_fault_ok(r)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--faults", type=int, default=8)
    parser.add_argument("--job-faults", type=int, default=0,
                        help="faults of the whole job and its files after "
                             "the rank faults, cycling through " +
                             ", ".join(KINDS))
    parser.add_argument("--job-kinds", default=",".join(KINDS),
                        help="the job faults to cycle through, "
                             "comma-separated (default: all)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=2.0,
                        help="the runs' --timeout")
    parser.add_argument("--bound", type=float, default=None,
                        help="seconds a run may take to end after its "
                             "fault (default: 3 timeouts + 5 s)")
    args = parser.parse_args()
    unknown = set(args.job_kinds.split(",")) - set(KINDS)
    if unknown:
        parser.error(f"unknown --job-kinds {', '.join(sorted(unknown))}; "
                     f"known: {', '.join(KINDS)}")
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
                      f"{row['opt']:4s} {row['signal']} rank {row['rank']} "
                      f"{row['moment']:5s}"
                      f"{' (writing)' if row['writing'] else ''}"
                      f"{' (missed)' if row['missed'] else ''}"
                      f"{' (MPI call)' if row['unpolled'] else ''}"
                      f"{' (watcher)' if row['watcher_ended'] else ''}: "
                      f"exit {row['rc']} after {row['seconds']:.1f} s, "
                      f"checkpoint of step {row['step']}", flush=True)
                if not good:
                    failed.append(row)
                    print("  " + "\n  ".join(
                        l for l in row["err"].splitlines() if l.strip()))
            failed += run_job_faults(campaign, rng)
        except Failure as e:
            print("FAIL:", e)
            return 1
        print(summary(campaign.rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
