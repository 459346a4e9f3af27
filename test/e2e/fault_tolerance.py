#!/usr/bin/env python3
"""A failing or silent peer never hangs a compiled pipeline: a rank that is
killed, or stopped (alive but silent), makes the job exit non-zero, and a
silent one is reported by a receive timeout naming stage and micro-batch,
in which every rank that reports names the stopped rank (not its own
neighbour in the chain of waits)."""

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time


def rank_pids(name):
    out = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True)
    return sorted(int(p) for p in out.stdout.split())


def mpi_rank_of(pid):
    """The MPI rank of a process, from the launcher's environment."""
    with open(f"/proc/{pid}/environ", "rb") as f:
        for entry in f.read().split(b"\0"):
            for key in (b"PMI_RANK=", b"OMPI_COMM_WORLD_RANK="):
                if entry.startswith(key):
                    return int(entry[len(key):])
    return None


def run_with_fault(exe, ranks, sig, timeout_s):
    job = subprocess.Popen(
        ["mpirun", "-np", str(ranks), exe, "--steps", "100000000",
         "--timeout", str(timeout_s)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    name = os.path.basename(exe)
    deadline = time.time() + 20
    while len(rank_pids(name)) < ranks and time.time() < deadline:
        time.sleep(0.1)
    pids = rank_pids(name)
    if len(pids) < ranks:
        job.kill()
        sys.exit(f"only {len(pids)} of {ranks} ranks started")
    time.sleep(1.0)  # let it train a while
    victim = pids[1]
    victim_rank = mpi_rank_of(victim)
    os.kill(victim, sig)
    start = time.time()
    try:
        _, err = job.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        job.kill()
        for pid in rank_pids(name):
            os.kill(pid, signal.SIGKILL)
        return None, time.time() - start, "hung", victim_rank
    for pid in rank_pids(name):  # a stopped rank may outlive the job
        os.kill(pid, signal.SIGKILL)
    return job.returncode, time.time() - start, err, victim_rank


def names_silent_rank(err, rank):
    """Whether every timeout report names `rank` as the silent one."""
    reports = [l for l in err.splitlines() if "timed out after" in l]
    return bool(reports) and all(
        f"rank {rank} stopped answering" in l and "micro-batch" in l
        for l in reports)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    failed = passed = 0
    with tempfile.TemporaryDirectory() as workdir:
        exe = os.path.join(workdir, "pptrain")
        subprocess.run([args.pp_compile, args.model, "--stages", "4",
                        "--microbatches", "4", "-o", exe], check=True)
        for what, sig in (("killed", signal.SIGKILL), ("silent", signal.SIGSTOP)):
            rc, seconds, err, rank = run_with_fault(exe, 4, sig, timeout_s=3)
            ok = rc not in (None, 0) and seconds < 30
            if what == "silent":
                ok = ok and rank is not None and names_silent_rank(err, rank)
            print(f"{'PASS' if ok else 'FAIL'}: one rank {what}: exit code {rc} "
                  f"after {seconds:.1f} s")
            if err and what == "silent":
                print("  " + "\n  ".join(l for l in err.splitlines() if "pprt" in l))
            passed, failed = passed + ok, failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
