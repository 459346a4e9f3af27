#!/usr/bin/env python3
"""A failing or silent peer never hangs a compiled pipeline, and pp names
it: a rank that is stopped (alive but silent) is named by every other rank
about one --timeout after it stopped, also while they wait in a
checkpoint's agreement or a data-parallel all-reduce, reduce-scatter or
all-gather (ZeRO-1), which names its replica; a rank that is killed is named by its watcher."""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "runtime", "test"))
from pprt_tests import mpi_rank_of, ranks_of  # noqa: E402

TIMEOUT_S = 3


def run_with_fault(exe, ranks, sig, victim_rank, extra, workdir):
    """Trains, sends `sig` to world rank `victim_rank` once the steps run,
    and returns (exit code or None if it hung, seconds from the fault to
    the end, stderr, victim pid)."""
    out_path = os.path.join(workdir, "steps.out")
    with open(out_path, "w") as out:
        job = subprocess.Popen(
            ["mpirun", "-np", str(ranks), exe, "--steps", "100000000",
             "--timeout", str(TIMEOUT_S), *extra],
            stdout=out, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and job.poll() is None:
            with open(out_path) as f:
                if "step 5 loss" in f.read():
                    break
            time.sleep(0.1)
        pids = {mpi_rank_of(p): p for p in ranks_of(job.pid, exe)}
        if len(pids) < ranks:
            sys.exit(f"only {len(pids)} of {ranks} ranks train")
        victim = pids[victim_rank]
        os.kill(victim, sig)
        start = time.time()
        try:
            _, err = job.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            return None, time.time() - start, "hung", victim
        return job.returncode, time.time() - start, err, victim
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()


def names_silent_rank(err, rank, ranks, who):
    """Whether every other rank names `rank` (as `who` says) as the one that
    stopped answering, and no line blames another."""
    blamed = set(re.findall(r"rank (\d+)(?: \([^)]*\))? stopped answering",
                            err))
    namers = set(int(r) for r in re.findall(
        rf"^pprt: rank (\d+): rank {rank}{re.escape(who)} stopped answering",
        err, re.M))
    return blamed == {str(rank)} and namers == set(range(ranks)) - {rank}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    failed = passed = 0
    with tempfile.TemporaryDirectory() as workdir:
        pipeline = os.path.join(workdir, "pptrain")
        replicas = os.path.join(workdir, "pptrain-2x2")
        subprocess.run([args.pp_compile, args.model, "--stages", "4",
                        "--microbatches", "4", "-o", pipeline], check=True)
        subprocess.run([args.pp_compile, args.model, "--stages", "2",
                        "--microbatches", "4", "--data-parallel", "2",
                        "-o", replicas], check=True)
        ckpt = ["--checkpoint", os.path.join(workdir, "ckpt"),
                "--checkpoint-every", "1"]
        # (what, program, signal, victim, options, how the victim is named)
        cases = (
            ("killed", pipeline, signal.SIGKILL, 1, [], ""),
            ("silent", pipeline, signal.SIGSTOP, 1, [], ""),
            ("silent while checkpointing", pipeline, signal.SIGSTOP, 2, ckpt,
             ""),
            ("silent replica", replicas, signal.SIGSTOP, 2, [],
             " (replica 1, pipeline rank 0)"),
            ("silent replica under ZeRO-1", replicas, signal.SIGSTOP, 2,
             ["--zero", "1", "--optimizer", "adam"],
             " (replica 1, pipeline rank 0)"),
        )
        for what, exe, sig, victim, extra, who in cases:
            rc, seconds, err, pid = run_with_fault(exe, 4, sig, victim, extra,
                                                  workdir)
            if sig == signal.SIGKILL:
                ok = rc not in (None, 0) and seconds < 10 and (
                    f"pprt: rank {victim} (pid {pid}) was killed by signal 9"
                    in err)
            else:
                # One timeout, half a timeout for ranks asked late, and the
                # time to end the job.
                ok = (rc not in (None, 0) and seconds < 1.5 * TIMEOUT_S + 1.5
                      and names_silent_rank(err, victim, 4, who))
            print(f"{'PASS' if ok else 'FAIL'}: rank {victim} {what}: exit "
                  f"code {rc} {seconds:.1f} s after the fault")
            print("  " + "\n  ".join(l for l in err.splitlines()
                                     if "pprt" in l))
            passed, failed = passed + ok, failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
