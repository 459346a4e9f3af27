#!/usr/bin/env python3
"""A killed training job resumes bit for bit: the compiled MLP trains with
--checkpoint-every 2 until one of its ranks is killed with SIGKILL (the job
must then end by itself), resumes from the last checkpoint (--resume) for 3
more steps, and its final weights (--save) are byte for byte those of an
unbroken run of as many steps; under SGD and Adam, on 2 ranks and on 2
ranks x 2 data-parallel replicas. The resumed steps' losses match too."""

import argparse
import filecmp
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "runtime", "test"))
import safetensors_file  # noqa: E402
from pprt_tests import ranks_of as rank_processes  # noqa: E402

RUN_TIMEOUT_S = 300
MORE_STEPS = 3


class Failure(Exception):
    pass


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S)
    if proc.returncode != 0:
        raise Failure(f"FAILED ({proc.returncode}): {' '.join(cmd)}\n"
                      f"{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def losses(out):
    return {int(s): v for s, v in re.findall(r"^step (\d+) loss (\S+)$", out,
                                             re.M)}


def compile_mlp(args, workdir, replicas):
    exe = os.path.join(workdir, f"mlp_2x{replicas}")
    run([args.pp_compile, args.model, "--stages", "2", "--ranks", "2",
         "--microbatches", "4", "--schedule", "1f1b", "--data-parallel",
         str(replicas), "-o", exe])
    return exe


def ranks_of(job, exe):
    return rank_processes(job.pid, exe)


def checkpoint_step(ckpt):
    """The step of the complete checkpoint in `ckpt`, or None if none."""
    path = os.path.join(ckpt, "checkpoint.safetensors")
    if not os.path.exists(path):
        return None
    meta, _ = safetensors_file.read(path)
    return int(meta["step"])


def kill_after_checkpoint(cmd, exe, ckpt, np):
    """Starts `cmd`, SIGKILLs its last rank once a checkpoint of step >= 4
    exists (so one was overwritten), and returns once the job has ended."""
    print("+", " ".join(cmd), flush=True)
    job = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while (checkpoint_step(ckpt) or 0) < 4:
            if job.poll() is not None or time.monotonic() > deadline:
                raise Failure(f"no checkpoint of step >= 4 (exit "
                              f"{job.poll()})")
            time.sleep(0.01)
        ranks = ranks_of(job, exe)
        if len(ranks) != np:
            raise Failure(f"expected {np} ranks, found {ranks}")
        os.kill(ranks[-1], signal.SIGKILL)
        try:
            rc = job.wait(timeout=30)
        except subprocess.TimeoutExpired:
            raise Failure("the job still runs 30 s after a rank was killed")
        if rc == 0:
            raise Failure("the job exited 0 after a rank was killed")
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()


def check_resume(exe, np, opt, workdir, label):
    """The killed-and-resumed run against the unbroken one."""
    base = ["mpirun", "-np", str(np), exe, "--timeout", "30", *opt]
    ckpt = os.path.join(workdir, f"ckpt-{label}")
    kill_after_checkpoint(base + ["--steps", "100000", "--checkpoint", ckpt,
                                  "--checkpoint-every", "2"], exe, ckpt, np)
    step = checkpoint_step(ckpt)
    if step % 2 != 0:
        raise Failure(f"{label}: checkpoint of step {step}, not a multiple "
                      "of 2")
    total = step + MORE_STEPS
    whole_w = os.path.join(workdir, f"whole-{label}.safetensors")
    rest_w = os.path.join(workdir, f"rest-{label}.safetensors")
    whole = losses(run(base + ["--steps", str(total), "--save", whole_w]))
    rest = losses(run(base + ["--steps", str(MORE_STEPS), "--resume", ckpt,
                              "--save", rest_w]))
    errors = []
    if sorted(rest) != list(range(step + 1, total + 1)):
        errors.append(f"{label}: resumed steps {sorted(rest)}, expected "
                      f"{step + 1}..{total}")
    errors += [f"{label}: step {s}: resumed loss {rest[s]} != {whole.get(s)}"
               for s in rest if rest[s] != whole.get(s)]
    if not filecmp.cmp(whole_w, rest_w, shallow=False):
        errors.append(f"{label}: the resumed run's weights differ from the "
                      f"unbroken run's ({rest_w} vs {whole_w})")
    print(f"{label}: killed after the checkpoint of step {step}; resumed to "
          f"step {total}: {'ok' if not errors else 'FAILED'}")
    return errors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    errors = []
    optimizers = {"sgd": ["--lr", "0.1"],
                  "adam": ["--optimizer", "adam", "--lr", "0.01"]}
    with tempfile.TemporaryDirectory() as workdir:
        try:
            for replicas in (1, 2):
                exe = compile_mlp(args, workdir, replicas)
                for name, opt in optimizers.items():
                    errors += check_resume(exe, 2 * replicas, opt, workdir,
                                           f"{name}-2x{replicas}")
        except Failure as e:
            errors.append(str(e))
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
