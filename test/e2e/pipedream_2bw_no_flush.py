#!/usr/bin/env python3
"""pipedream-2bw runs its steps without a flush: on the pp-compiled MLP
(4 ranks, 8 micro-batches), each rank's transport trace
(PPRT_TRANSPORT_TRACE) shows rank 0 sending step 2's first activation
before it receives step 1's last gradient, where a drained step receives
all of them first. With --steps 1 the run is the flushed 1F1B order: every
rank issues the transfers of `1f1b` in the same order, and the losses
agree. Over 3 steps every rank issues each transfer 3 times, so no action
is lost or repeated across the step boundaries; that run forces MPI's
rendezvous protocol (UCX_RNDV_THRESH=0: a send completes only once it is
received), where waiting for rank 0's carried send at the step's end
would hang. --sequential-replicas 2,
which runs each step drained, trains like 2 data-parallel processes, which
do not drain (2 ranks, 4 micro-batches, 4 steps). The host-staged
transport (the CUDA backend's, under the guarded backend), whose send
handles outlive a step like MPI's, trains 6 steps like the CPU backend."""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from weights import run  # noqa: E402

RANKS, MICROBATCHES = 4, 8


def compile_mlp(args, workdir, schedule):
    exe = os.path.join(workdir, f"mlp_{schedule}")
    run([args.pp_compile, args.model, "--stages", str(RANKS), "--ranks",
         str(RANKS), "--microbatches", str(MICROBATCHES), "--schedule",
         schedule, "-o", exe])
    return exe


def traced_run(exe, workdir, steps, rendezvous=False):
    """The run's output and each rank's transfers ("send|recv peer tag"),
    in order; a receive started in an exchange group counts as one."""
    prefix = os.path.join(workdir, f"{os.path.basename(exe)}_{steps}")
    env = dict(os.environ, PPRT_TRANSPORT_TRACE=prefix)
    if rendezvous:
        env["UCX_RNDV_THRESH"] = "0"
    try:
        proc = subprocess.run(["mpirun", "-np", str(RANKS), exe, "--steps",
                               str(steps), "--timeout", "60"],
                              capture_output=True, text=True, env=env,
                              timeout=120)
    except subprocess.TimeoutExpired:
        sys.exit(f"FAILED: {exe} --steps {steps} hung (rendezvous sends: "
                 f"{rendezvous})")
    if proc.returncode != 0:
        sys.exit(f"FAILED: {exe} --steps {steps}\n{proc.stdout}\n"
                 f"{proc.stderr}")
    traces = []
    for rank in range(RANKS):
        with open(f"{prefix}.{rank}") as f:
            traces.append([" ".join(line.split()[:3]).replace("irecv", "recv")
                           for line in f if not line.startswith("group_")])
    return proc.stdout, traces


def check_sequential_replicas(args, workdir):
    exe = {}
    for replicas in (1, 2):
        exe[replicas] = os.path.join(workdir, f"mlp_dp{replicas}")
        run([args.pp_compile, args.model, "--stages", "2", "--microbatches",
             "4", "--schedule", "pipedream-2bw", "--data-parallel",
             str(replicas), "-o", exe[replicas]])
    flags = ["--steps", "4", "--lr", "0.1", "--timeout", "60"]
    played = run(["mpirun", "-np", "2", exe[1], "--sequential-replicas", "2",
                  *flags])
    parallel = run(["mpirun", "-np", "4", exe[2], *flags])
    check(played == parallel and "step 4 loss" in played,
          f"--sequential-replicas 2:\n{played}\n2 processes:\n{parallel}")


def check_staged(exe):
    flags = ["--steps", "6", "--timeout", "60"]
    cpu = run(["mpirun", "-np", str(RANKS), exe, *flags])
    staged = run(["mpirun", "-np", str(RANKS), exe, *flags, "--backend",
                  "guarded-staged"])
    check(cpu == staged and "step 6 loss" in cpu,
          f"guarded-staged:\n{staged}\ncpu:\n{cpu}")


def check(ok, what):
    if not ok:
        sys.exit(f"FAILED: {what}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        sync = compile_mlp(args, workdir, "1f1b")
        twobw = compile_mlp(args, workdir, "pipedream-2bw")
        sync_out, sync_trace = traced_run(sync, workdir, 1)
        one_out, one_trace = traced_run(twobw, workdir, 1)
        check(one_out == sync_out, f"--steps 1 losses differ from 1f1b's:\n"
              f"{one_out}\nagainst\n{sync_out}")
        for rank in range(RANKS):
            check(one_trace[rank] == sync_trace[rank],
                  f"--steps 1: rank {rank} issued {one_trace[rank]}, 1f1b "
                  f"{sync_trace[rank]}")
        _, three = traced_run(twobw, workdir, 3, rendezvous=True)
        for rank in range(RANKS):
            check(sorted(three[rank]) == sorted(one_trace[rank] * 3),
                  f"--steps 3: rank {rank} did not issue each transfer of "
                  f"a step 3 times: {three[rank]}")
        # Rank 0: its first send is micro-batch 0's activation, its last
        # receive micro-batch 7's gradient.
        first_send, last_recv = one_trace[0][0], one_trace[0][-1]
        check(first_send.startswith("send") and last_recv.startswith("recv"),
              f"rank 0's step starts {first_send}, ends {last_recv}")
        second_send = [i for i, t in enumerate(three[0])
                       if t == first_send][1]
        step1_end = three[0].index(last_recv)
        check(second_send < step1_end,
              f"rank 0 drains: step 2's first activation (#{second_send}) "
              f"goes after step 1's last gradient (#{step1_end})")
        check_sequential_replicas(args, workdir)
        check_staged(twobw)
        print(f"no drain: rank 0 sends step 2's first activation as "
              f"transfer #{second_send}, before step 1's last gradient "
              f"(#{step1_end}); --steps 1 is 1f1b's order")


if __name__ == "__main__":
    main()
