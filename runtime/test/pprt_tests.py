#!/usr/bin/env python3
"""End-to-end tests of the pprt runtime, driving the toy pipeline program."""
import argparse
import glob
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

STEP_RE = re.compile(r"^step (\d+) loss (\S+)$")
PARAM_RE = re.compile(r"^param (\d+) sum (\S+) sumsq (\S+)$")
# `timeout` around every job, so that a runtime bug can never hang CI.
JOB_LIMIT_S = 60


class Failure(Exception):
    pass


class Skip(Exception):
    """The test cannot run here (ctest SKIP_RETURN_CODE 77)."""


def check(cond, msg, proc=None):
    if cond:
        return
    if proc is not None:
        msg += f"\n--- exit {proc.returncode}\n--- stdout\n{proc.stdout}" \
               f"\n--- stderr\n{proc.stderr}"
    raise Failure(msg)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PPRT_TOY_", "PPRT_TIMEOUT"))}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def mpirun(args, np, prog, *prog_args, env=None):
    cmd = ["timeout", str(JOB_LIMIT_S), args.mpiexec, args.np_flag, str(np),
           prog, *prog_args]
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True,
                          env=env or clean_env())


def parse_run(proc):
    """Returns ([losses], {index: (sum, sumsq)}) of a successful run."""
    check(proc.returncode == 0, "run failed", proc)
    losses, params = [], {}
    for line in proc.stdout.splitlines():
        if m := STEP_RE.match(line):
            check(int(m[1]) == len(losses) + 1, f"bad step line {line!r}", proc)
            losses.append(float(m[2]))
        elif m := PARAM_RE.match(line):
            params[int(m[1])] = (float(m[2]), float(m[3]))
        else:
            raise Failure(f"unexpected output line {line!r}")
    return losses, params


def close(a, b, rel=1e-5, abs_tol=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + abs_tol


def compare_runs(pipe, ref, steps):
    losses, params = parse_run(pipe)
    ref_losses, ref_params = parse_run(ref)
    check(len(losses) == steps, f"expected {steps} step lines", pipe)
    check(losses[-1] < losses[0], f"loss does not fall: {losses}", pipe)
    for i, (a, b) in enumerate(zip(losses, ref_losses)):
        check(close(a, b, abs_tol=0.0),
              f"step {i + 1}: pipeline loss {a} != reference {b}")
    check(sorted(params) == [2, 3], f"expected params 2 and 3: {params}")
    check(params.keys() == ref_params.keys(), "param sets differ")
    for k in params:
        for a, b in zip(params[k], ref_params[k]):
            check(close(a, b), f"param {k}: {params[k]} != {ref_params[k]}")
    print("losses:", losses)


def test_compare(args):
    """2-rank pipeline with 2 micro-batches == 1 rank, whole batch."""
    flags = ["--steps", "5", "--lr", "0.2", "--print-params"]
    compare_runs(mpirun(args, 2, args.toy, *flags),
                 mpirun(args, 1, args.ref, *flags), 5)


def test_data_parallel(args):
    """2 replicas of the 2-rank pipeline == 2 replicas of the reference."""
    flags = ["--steps", "5", "--lr", "0.2", "--print-params"]
    compare_runs(mpirun(args, 4, args.toy, *flags),
                 mpirun(args, 2, args.ref, *flags), 5)


def test_sequential_replicas(args):
    """2 replicas of the 2-rank pipeline == 1 process of the reference
    playing both replicas in turn, under SGD and Adam."""
    for opt in (["--lr", "0.2"], ["--optimizer", "adam", "--lr", "0.05"]):
        flags = ["--steps", "5", "--print-params", *opt]
        compare_runs(mpirun(args, 4, args.toy, *flags,
                            env=clean_env(PPRT_TOY_REPLICAS=2)),
                     mpirun(args, 1, args.ref, "--sequential-replicas", "2",
                            *flags), 5)
    # One process replica less, played in sequence, is the same again.
    flags = ["--steps", "5", "--print-params", "--lr", "0.2"]
    compare_runs(mpirun(args, 2, args.ref, "--sequential-replicas", "2",
                        *flags),
                 mpirun(args, 1, args.ref, "--sequential-replicas", "4",
                        *flags), 5)


def test_adam(args):
    """Adam: the 2-rank pipeline == the reference, and differs from SGD."""
    flags = ["--steps", "5", "--optimizer", "adam", "--lr", "0.05",
             "--beta1", "0.8", "--beta2", "0.99", "--eps", "1e-6",
             "--print-params"]
    compare_runs(mpirun(args, 2, args.toy, *flags),
                 mpirun(args, 1, args.ref, *flags), 5)
    adam, _ = parse_run(mpirun(args, 1, args.ref, *flags))
    sgd, _ = parse_run(mpirun(args, 1, args.ref, "--steps", "5", "--lr",
                              "0.05"))
    check(adam[1:] != sgd[1:], f"--optimizer adam ignored: {adam}")


def test_reduce_errors(args):
    """Misplaced all-reduces abort the job clearly; skipping one lets the
    replicas drift apart, which --print-params reports."""
    cases = {
        "twice": "the gradients of stage 0 are reduced twice in step 1",
        "late": "gradient buffer 2 of stage 0 is being all-reduced",
        "skip": "the data-parallel replicas hold different values of param",
    }
    for case, message in cases.items():
        proc = mpirun(args, 4, args.toy, "--steps", "2", "--print-params",
                      env=clean_env(PPRT_TOY_REDUCE=case))
        check(proc.returncode not in (0, 124), f"{case}: did not fail", proc)
        check(message in proc.stderr, f"{case}: no {message!r}", proc)


def test_user_data(args):
    """A linked pprt_user_load_data replaces the built-in generator."""
    flags = ["--steps", "5", "--lr", "0.2"]
    losses, _ = parse_run(mpirun(args, 2, args.user, *flags))
    builtin, _ = parse_run(mpirun(args, 2, args.toy, *flags))
    check(len(losses) == 5 and losses[-1] < losses[0],
          f"zero-target loss does not fall: {losses}")
    check(all(a != b for a, b in zip(losses, builtin)),
          f"hook ignored: {losses} vs built-in {builtin}")
    print("losses:", losses)


def test_timeout(args):
    """A sender that never sends makes the receiver abort the whole job."""
    start = time.monotonic()
    proc = mpirun(args, 2, args.toy, "--steps", "5", "--timeout", "1",
                  env=clean_env(PPRT_TOY_STALL_STEP=2))
    elapsed = time.monotonic() - start
    check(proc.returncode not in (0, 124), "job did not fail by itself", proc)
    check(elapsed < 10, f"took {elapsed:.1f} s to fail", proc)
    # Rank 0 hangs outside any receive, so it does not answer rank 1's
    # question either and is named as the silent rank.
    check("rank 1: rank 0 stopped answering: timed out after 1.0 s"
          in proc.stderr, "no timeout message from rank 1 naming rank 0", proc)
    check("stage 1 micro-batch 0 from rank 0 (waits: 1 -> 0)" in proc.stderr,
          "timeout message lacks the stage/micro-batch or the waits", proc)
    check(proc.stderr.count("timed out after") == 1,
          "expected exactly one timeout line", proc)
    check(proc.stdout.startswith("step 1 loss"), "step 1 did not run", proc)
    print(f"failed after {elapsed:.1f} s as expected")


def children_of(pid):
    """All descendants of `pid`, read from /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name may contain spaces; fields resume after ')'.
        parents.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(
            int(entry))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def exe_of(pid):
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def comm_of(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def ranks_of(job_pid, exe):
    """The rank processes of program `exe` that job `job_pid` started: not
    their watchers (which run the same program, named pprt-watch)."""
    real = os.path.realpath(exe)
    return [p for p in children_of(job_pid)
            if exe_of(p) == real and comm_of(p) != "pprt-watch"]


def mpi_rank_of(pid):
    """The MPI rank of a process, from the launcher's environment."""
    with open(f"/proc/{pid}/environ", "rb") as f:
        for entry in f.read().split(b"\0"):
            for key in (b"PMI_RANK=", b"OMPI_COMM_WORLD_RANK="):
                if entry.startswith(key):
                    return int(entry[len(key):])
    return None


def wait_for_file_text(path, text, limit_s):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        with open(path) as f:
            if text in f.read():
                return True
        time.sleep(0.1)
    return False


def start_toy(args, out_path, sleep_ms, *flags):
    """Starts the toy on 2 ranks, `sleep_ms` a step, in a session of its
    own (end_job kills it whole), its output to `out_path`."""
    cmd = ["timeout", str(JOB_LIMIT_S), args.mpiexec, args.np_flag, "2",
           args.toy, *flags]
    print("+", " ".join(cmd), flush=True)
    with open(out_path, "w") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                env=clean_env(PPRT_TOY_SLEEP_MS=sleep_ms),
                                start_new_session=True)


def end_job(job):
    """Kills what is left of a job started in a session of its own."""
    if job.poll() is None:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()


def test_kill(args):
    """kill -9 of one rank ends the whole job with a failure, and a line
    names the rank that was killed."""
    out_path = os.path.join(args.work, "kill.out")
    job = start_toy(args, out_path, 50, "--steps", "100000")
    try:
        check(wait_for_file_text(out_path, "step 2 loss", 20),
              "training did not start")
        time.sleep(1)  # let both ranks settle into steady training
        ranks = ranks_of(job.pid, args.toy)
        check(len(ranks) == 2, f"expected 2 toy processes, found {ranks}")
        victim = ranks[-1]
        rank = mpi_rank_of(victim)
        os.kill(victim, signal.SIGKILL)
        killed_at = time.monotonic()
        rc = job.wait(timeout=30)
        print(f"job exited {rc} {time.monotonic() - killed_at:.1f} s "
              f"after the kill")
        check(rc != 0, "job succeeded after a rank was killed")
        with open(out_path) as f:
            out = f.read()
        named = f"pprt: rank {rank} (pid {victim}) was killed by signal 9"
        check(named in out, f"no line {named!r}:\n{out}")
    except subprocess.TimeoutExpired:
        raise Failure("job still running 30 s after a rank was killed")
    finally:
        end_job(job)


def test_unpolled(args):
    """A rank stopped before MPI_Init is named by the others once MPI_Init
    has waited --timeout (MPI cannot poll it); ranks left stopped with no
    rank waiting for them are ended by their watchers after 2 timeouts +
    2 s; a stopped watcher is continued by its rank as it exits."""
    start = time.monotonic()
    stopped = ["sh", "-c", f"kill -STOP $$; exec {args.toy} --timeout 2"]
    cmd = ["timeout", str(JOB_LIMIT_S), args.mpiexec, args.np_flag, "1",
           args.toy, "--timeout", "2", ":", args.np_flag, "1", *stopped]
    print("+", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          env=clean_env())
    elapsed = time.monotonic() - start
    check(proc.returncode not in (0, 124), "job did not fail by itself", proc)
    check(elapsed < 15, f"took {elapsed:.1f} s to fail", proc)
    named = re.search(r"^pprt: rank 0: rank 1 \(pid \d+\) stopped "
                      r"answering: MPI_Init did not complete within "
                      r"(\d+\.\d) s$", proc.stderr, re.M)
    check(named, "no line naming rank 1", proc)
    # The time it really waited: the timeout, and little more.
    check(2.0 <= float(named.group(1)) < 3.0, "wrong time", proc)
    print(f"MPI_Init: failed after {elapsed:.1f} s as expected")

    # Both ranks stopped: no rank waits for either, only the watchers.
    out_path = os.path.join(args.work, "unpolled.out")
    job = start_toy(args, out_path, 50, "--steps", "100000", "--timeout", "1")
    try:
        check(wait_for_file_text(out_path, "step 2 loss", 20),
              "training did not start")
        victims = {mpi_rank_of(p): p for p in ranks_of(job.pid, args.toy)}
        check(len(victims) == 2, f"expected 2 toy processes, found {victims}")
        for pid in victims.values():
            os.kill(pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        rc = job.wait(timeout=30)
        elapsed = time.monotonic() - stopped_at
        with open(out_path) as f:
            out = f.read()
        check(rc not in (0, 124), f"job exited {rc}:\n{out}")
        check(3.5 < elapsed < 10, f"ended {elapsed:.1f} s after the stop")
        lines = [f"pprt: rank {r} (pid {p}) stayed stopped by signal 19 "
                 f"(Stopped (signal)) for 4.0 s; its watcher ends it"
                 for r, p in victims.items()]
        check(any(l in out for l in lines), f"no line {lines[0]!r}:\n{out}")
        print(f"stopped ranks: ended {elapsed:.1f} s after the stop")
    except subprocess.TimeoutExpired:
        raise Failure("job still running 30 s after its ranks were stopped")
    finally:
        end_job(job)

    # A stopped watcher: its rank continues it as it exits.
    job = start_toy(args, out_path, 20, "--steps", "30", "--timeout", "2")
    try:
        check(wait_for_file_text(out_path, "step 2 loss", 20),
              "training did not start")
        rank = ranks_of(job.pid, args.toy)[0]
        with open(f"/proc/{rank}/stat") as f:
            watcher = int(f.read().rsplit(")", 1)[1].split()[1])
        os.kill(watcher, signal.SIGSTOP)
        rc = job.wait(timeout=30)
        with open(out_path) as f:
            out = f.read()
        check(rc == 0, f"job exited {rc}:\n{out}")
        line = (f"pprt: the watcher (pid {watcher}) of the rank with pid "
                f"{rank} is stopped; continuing it so that the job can end")
        check(line in out, f"no line {line!r}:\n{out}")
        print("stopped watcher: continued by its rank")
    except subprocess.TimeoutExpired:
        raise Failure("job still running 30 s after a watcher was stopped")
    finally:
        end_job(job)


def signal_all(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def wait_for_lines(path, count, limit_s):
    """Whether file `path` has `count` lines within `limit_s` seconds."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                if sum(1 for _ in f) >= count:
                    return True
        time.sleep(0.02)
    return False


def pause(job, metrics, pause_s, stop, readers_pause):
    """One fault of suspended_run."""
    if readers_pause:
        # Rank 0 has printed more than the pipes to the reader hold
        # (about 5,300 lines here), or stopped printing for a second.
        stalled_since, lines = time.monotonic(), 0
        while lines < 8000 and time.monotonic() - stalled_since < 1.0:
            time.sleep(0.05)
            with open(metrics) as f:
                now = sum(1 for _ in f)
            if now != lines:
                stalled_since, lines = time.monotonic(), now
        # Then `pause_s` more, or with `readers_pause == "through end"`
        # until every step is done and `pause_s` more: the ranks end their
        # run and wait in MPI_Finalize on the launcher, which waits on the
        # reader.
        check(lines >= 8000, "rank 0 stopped printing while unread")
        if readers_pause == "through end":
            check(wait_for_lines(metrics, 16000, 60), "the run did not end")
            time.sleep(pause_s)
        else:
            wait_for_lines(metrics, 16000 - 4000, pause_s)
        return
    pids = stop(job)
    signal_all(pids, signal.SIGSTOP)
    if pause_s is not None:
        time.sleep(pause_s)
        signal_all(pids[1:], signal.SIGCONT)
        time.sleep(0.2)
        signal_all(pids[:1], signal.SIGCONT)


def suspended_run(args, flags, env, pause_s, stop, readers_pause=False,
                  stops=1):
    """Runs the toy on 2 ranks with --metrics; once 5 steps are done,
    `stop(job)` returns the pids to stop for `pause_s` seconds (None:
    never continued; else the first is continued 0.2 s after the others,
    as on a cluster whose hosts resume at different moments), or, with
    `readers_pause`, standard output is not read for `pause_s`; `stops`
    times, 0.5 s apart. Returns (exit status,
    stdout, stderr, seconds from the last fault to the end)."""
    metrics = os.path.join(args.work, "suspend.metrics")
    if os.path.exists(metrics):
        os.unlink(metrics)
    cmd = ["timeout", str(JOB_LIMIT_S), args.mpiexec, args.np_flag, "2",
           args.toy, *flags, "--metrics", metrics]
    print("+", " ".join(cmd), flush=True)
    job = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env,
                           start_new_session=True)
    try:
        check(wait_for_lines(metrics, 5, 30), "training did not start")
        for _ in range(stops):
            fault_at = time.monotonic()
            pause(job, metrics, pause_s, stop, readers_pause)
            time.sleep(0.5)
        out, err = job.communicate(timeout=JOB_LIMIT_S)
        return job.returncode, out.decode(), err.decode(), \
            time.monotonic() - fault_at
    finally:
        end_job(job)


def test_suspend(args):
    """A job stopped as a whole (every process, as a batch scheduler
    suspends it) for longer than --timeout, and a reader of its standard
    output that pauses for longer, only delay it: it finishes with exit 0
    and the losses of an unpaused run. One rank stopped alone is still
    named within the timeout."""
    def losses_of(out):
        return [l for l in out.splitlines() if l.startswith("step ")]

    # Stopped as a whole for 5 timeouts, longer than the watchers' stop
    # limit (2 timeouts + 2 s) too; rank 0 resumes last.
    # Rank 0 sleeps in each step, so that rank 1 is stopped in a wait.
    flags = ["--steps", "150", "--timeout", "1"]
    env = clean_env(PPRT_TOY_SLEEP_MS=20, PPRT_TOY_SLEEP_RANK=0)
    ref = mpirun(args, 2, args.toy, *flags, env=env)
    check(ref.returncode == 0, "unpaused run failed", ref)
    def job_rank_0_first(job):
        rank_0 = [p for p in ranks_of(job.pid, args.toy)
                  if mpi_rank_of(p) == 0]
        return rank_0 + [p for p in children_of(job.pid) if p not in rank_0]
    rc, out, err, seconds = suspended_run(args, flags, env, 4.5,
                                          job_rank_0_first, stops=2)
    check(rc == 0, f"job stopped as a whole exited {rc}:\n{err}")
    check(losses_of(out) == losses_of(ref.stdout),
          f"losses differ from the unpaused run:\n{out}\n{err}")
    print(f"stopped as a whole twice: finished {seconds:.1f} s after")

    # A reader that pauses while rank 0 prints thousands of lines (more
    # than the pipes between it and the reader hold), and 3 timeouts more.
    flags = ["--steps", "16000", "--timeout", "1"]
    ref = mpirun(args, 2, args.toy, *flags)
    check(ref.returncode == 0, "unpaused run failed", ref)
    rc, out, err, seconds = suspended_run(args, flags, clean_env(), 3.0, None,
                                          readers_pause=True)
    check(rc == 0, f"job with a paused reader exited {rc}:\n{err}")
    check(losses_of(out) == losses_of(ref.stdout),
          f"losses differ from the unpaused run:\n{err}")
    print(f"paused reader: finished {seconds:.1f} s after")

    # A reader still paused when the run ends, for 3 timeouts more: every
    # line arrives once it reads again.
    rc, out, err, seconds = suspended_run(args, flags, clean_env(), 3.0, None,
                                          readers_pause="through end")
    check(rc == 0, f"job with a reader paused through its end exited "
                   f"{rc}:\n{err}")
    check(losses_of(out) == losses_of(ref.stdout),
          f"lines lost or changed with a reader paused through the end "
          f"({len(losses_of(out))} of {len(losses_of(ref.stdout))}):\n{err}")
    print(f"reader paused through the end: finished {seconds:.1f} s after")

    # One rank stopped: the other names it within about one timeout.
    def rank_1(job):
        return [p for p in ranks_of(job.pid, args.toy)
                if mpi_rank_of(p) == 1]
    rc, out, err, seconds = suspended_run(
        args, ["--steps", "100000", "--timeout", "1"], env, None, rank_1)
    check(rc not in (0, 124), f"job with a stopped rank exited {rc}:\n{err}")
    check(re.search(r"^pprt: rank 0: rank 1 stopped answering: timed out "
                    r"after 1\.\d s", err, re.M),
          f"rank 1 not named:\n{err}")
    check(seconds < 10, f"ended {seconds:.1f} s after the stop")
    print(f"one rank stopped: named, ended {seconds:.1f} s after")


def test_non_finite(args):
    """A diverging run stops at the first NaN loss, naming step, stage and
    micro-batch; --allow-non-finite trains on."""
    proc = mpirun(args, 2, args.toy, "--steps", "4", "--lr", "1e30")
    check(proc.returncode not in (0, 124), "diverging run exited 0", proc)
    check("rank 1: step 2: the loss of stage 1 micro-batch 0 is NaN; "
          "stopping (--allow-non-finite trains on)" in proc.stderr,
          "no message naming step, stage and micro-batch", proc)
    check(proc.stdout.startswith("step 1 loss") and "step 2" not in
          proc.stdout, "expected step 1 alone to finish", proc)
    proc = mpirun(args, 2, args.toy, "--steps", "3", "--lr", "1e30",
                  "--allow-non-finite")
    check(proc.returncode == 0 and proc.stdout.count("nan") == 2,
          "--allow-non-finite did not train on", proc)


def test_bad_option(args):
    """Unknown options and bad values exit 2 with the usage text and a line
    saying which value is wrong and why."""
    for flags, message in (
            (["--bogus"], "unknown option '--bogus'"),
            (["--steps", "x"], "invalid value 'x' for --steps: expected an "
             "integer >= 0"),
            (["--steps"], "--steps needs a value: an integer >= 0"),
            (["--lr", "1e40"], "invalid value '1e40' for --lr: expected a "
             "finite number within float range"),
            (["--timeout=0"], "invalid value '0' for --timeout: expected a "
             "positive number of seconds"),
            (["--zero", "2"], "invalid value '2' for --zero: expected 0, 1 "
             "or 3"),
            (["--threads", "0"], "invalid value '0' for --threads: expected "
             "an integer in [1, 1024]")):
        proc = mpirun(args, 1, args.toy, *flags)
        check(proc.returncode == 2 and message in proc.stderr,
              f"{flags}: expected exit 2 and '{message}'", proc)
    for flags in (["--bogus"], ["--steps", "x"], ["--timeout", "0"],
                  ["--optimizer", "rmsprop"], ["--beta1", "1"],
                  ["--eps", "0"], ["--sequential-replicas", "0"]):
        for np in (None, 1):
            if np is None:
                proc = subprocess.run(["timeout", str(JOB_LIMIT_S), args.ref,
                                       *flags], capture_output=True, text=True,
                                      env=clean_env())
            else:
                proc = mpirun(args, np, args.toy, *flags)
            check(proc.returncode == 2, f"{flags}: expected exit 2", proc)
            check("usage:" in proc.stderr, f"{flags}: no usage text", proc)
    proc = mpirun(args, 1, args.toy, "--steps", "1",
                  env=clean_env(PPRT_TIMEOUT="soon"))
    check(proc.returncode == 2 and "PPRT_TIMEOUT" in proc.stderr,
          "bad PPRT_TIMEOUT accepted", proc)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        proc = mpirun(args, 1, args.toy, "--steps", "1",
                      env=clean_env(**{var: "many"}))
        check(proc.returncode == 2 and f"invalid {var} 'many'" in proc.stderr,
              f"bad {var} accepted", proc)
    proc = subprocess.run([args.toy, "--help"], capture_output=True,
                          text=True, env=clean_env())
    check(proc.returncode == 0 and "usage:" in proc.stdout, "--help", proc)


def test_profile(args):
    """--profile times every stage call after the warm-up and writes a
    pp-profile-v1 file with the saved buffers' sizes and the transfer time."""
    import json
    out = os.path.join(args.work, "toy-profile.json")
    if os.path.exists(out):
        os.remove(out)
    proc = mpirun(args, 2, args.toy, "--steps", "3", "--warmup", "1",
                  "--profile", out)
    losses, _ = parse_run(proc)
    check(len(losses) == 4, "expected 1 warm-up and 3 measured steps", proc)
    with open(out) as f:
        prof = json.load(f)
    check(prof["format"] == "pp-profile-v1" and prof["time_unit"] == "ms"
          and prof["memory_unit"] == "bytes", f"header: {prof}")
    check([st["stage"] for st in prof["stages"]] == [0, 1], f"{prof}")
    for st in prof["stages"]:
        # The toy's backward is fused: all of it is B.
        check(st["forward"] > 0 and st["backward_input"] > 0
              and st["backward_weight"] == 0, f"times: {st}")
    # Stage 0 keeps X (16x8 floats); stage 1 keeps H, P and Y (16x16,
    # 16x4, 16x4); nothing is held until a W.
    check([st["activation_memory"] for st in prof["stages"]] == [512, 1536]
          and all(st["stash_memory"] == 0 for st in prof["stages"]),
          f"memory: {prof['stages']}")
    check(prof["transfer"] > 0, f"no transfer time: {prof}")
    check(all(st["optimizer"] > 0 for st in prof["stages"])
          and 0 <= prof["step_overhead"] < prof["meta"]["step_time"]
          and len(prof["meta"]["process_busy_time"]) == 2
          and all(0 < t <= prof["meta"]["step_time"]
                  for t in prof["meta"]["process_busy_time"]),
          f"optimizer steps and set-up: {prof}")
    meta = prof["meta"]
    check(meta["step_time"] > 0 and meta["steps"] == 3
          and meta["warmup_steps"] == 1 and meta["ranks"] == 2
          and meta["backward"].startswith("fused") and meta["clock"] == "wall",
          f"meta: {meta}")
    proc = mpirun(args, 2, args.toy, "--steps", "2", "--profile", out,
                  "--profile-clock", "cpu")
    parse_run(proc)
    with open(out) as f:
        prof = json.load(f)
    check(prof["meta"]["clock"] == "cpu"
          and all(st["forward"] > 0 for st in prof["stages"]),
          f"CPU-time profile: {prof}")
    proc = mpirun(args, 1, args.toy, "--profile", out, "--profile-clock",
                  "cycles")
    check(proc.returncode == 2 and "usage:" in proc.stderr,
          "--profile-clock cycles accepted", proc)
    for flags in (["--steps", "0"], ["--check-gradients"]):
        proc = mpirun(args, 1, args.toy, "--profile", out, *flags)
        check(proc.returncode == 2 and "--profile needs" in proc.stderr,
              f"{flags} accepted with --profile", proc)
    # An unwritable path fails before the first step, on every rank.
    bad = os.path.join(args.work, "no-such-dir", "p.json")
    proc = mpirun(args, 2, args.toy, "--steps", "1", "--profile", bad)
    check(proc.returncode == 2 and f"--profile: cannot write '{bad}': No such "
          "file or directory" in proc.stderr and "step" not in proc.stdout,
          "unwritable profile path not rejected at start", proc)
    proc = mpirun(args, 2, args.toy, "--steps", "1", "--profile", args.work)
    check(proc.returncode == 2 and "it is a directory" in proc.stderr,
          "a directory accepted as the profile path", proc)


def test_world_size(args):
    """3 processes cannot run a 2-rank pipeline, nor 2 one declared for 2
    data-parallel replicas."""
    proc = mpirun(args, 3, args.toy, "--steps", "1")
    check(proc.returncode != 0, "3-process run of a 2-rank program ran", proc)
    check(proc.stderr.count("world size 3 is not a multiple of") == 1,
          "expected one clear world-size message", proc)
    proc = mpirun(args, 2, args.toy, "--steps", "1",
                  env=clean_env(PPRT_TOY_REPLICAS=2))
    check(proc.returncode != 0, "2-process run of a 2x2 program ran", proc)
    message = ("world size 2 does not match the program: 2 pipeline ranks x "
               "2 data-parallel replicas; run with mpirun -np 4")
    check(proc.stderr.count(message) == 1, "expected one clear message", proc)


def test_errors(args):
    """Program bugs abort the whole job with one line naming the rank."""
    cases = {
        "none": None,
        "ndims": "pprt: rank 0: buffer 0 of stage 0: rank 7 out of range "
                 "0..6",
        "abi": "pprt: rank 0: the program was compiled for pprt ABI version "
               "20261208, but this runtime implements version 20261207",
        "dtype": "pprt: rank 0: buffer 1: unknown element type 9",
        "f16param": "pprt: rank 1: initialising: buffer 3 (param of stage 1) "
                    "holds f16; only f32 is supported so far",
        "id": "pprt: rank 1: unknown buffer id 7",
        "mb": "pprt: rank 1: buffer 0 (micro-batch): micro-batch 16384 out "
              "of range 0..16383",
        "tag": "pprt: rank 1: send of buffer 131072 micro-batch 1: tag "
               "2147483649 exceeds",
        "offset": "pprt: rank 1: pipeline rank 1: an action of step 2 runs "
                  "in step 1's call, which needs two weight versions and a "
                  "later step",
        "offsetloss": "pprt: rank 1: pipeline rank 1: stage 1 micro-batch 0 "
                      "records a loss in the previous step's call",
        "acquire": "pprt: rank 1: pprt_param_acquire: buffer 131072 is not "
                   "a param",
        "release": "pprt: rank 1: pprt_param_release of param 0 (stage 1), "
                   "which no pprt_param_acquire holds",
    }
    for case, message in cases.items():
        proc = mpirun(args, 2, args.error, "--steps", "2",
                      env=clean_env(PPRT_ERR=case))
        if message is None:
            check(proc.returncode == 0, "correct program failed", proc)
            continue
        check(proc.returncode not in (0, 124), f"{case}: did not fail", proc)
        check(message in proc.stderr, f"{case}: no {message!r}", proc)


def test_link_mpicc(args):
    """`train.o libpprt.a -lmpi <BLAS>` links with plain cc and with mpicc
    (the CPU backend computes pprt_gemm on the BLAS)."""
    src = os.path.join(os.path.dirname(__file__), "toy_program.c")
    obj = os.path.join(args.work, "link_toy.o")
    cc = os.environ.get("CC", "cc")
    includes = [f"-I{path}" for path in args.include.split("|")]
    subprocess.run([cc, "-std=c11", "-c", *includes, src, "-o", obj],
                   check=True)
    blas = [lib for lib in args.blas.split("|") if lib]
    links = [[cc, obj, args.lib, "-lmpi", *blas]]
    if args.mpicc:
        links.append([args.mpicc, obj, args.lib, *blas])
    for i, link in enumerate(links):
        exe = os.path.join(args.work, f"link_toy{i}")
        print("+", " ".join(link + ["-o", exe]), flush=True)
        subprocess.run(link + ["-o", exe], check=True)
        losses, _ = parse_run(mpirun(args, 2, exe, "--steps", "2"))
        check(len(losses) == 2, f"{exe}: expected 2 steps")


CORPUS_TEXT = (
    "the river starts high in the hills, where the snow lies late into "
    "spring.\nin the morning the water is cold and clear, and it runs fast "
    "over the stones.\n")
DATA_RE = re.compile(r"^data step (\d+) replica (\d+) mb (\d+) row (\d+) "
                     r"in ([-\d ]+) target ([-\d ]+)$")
CORPUS_ROWS = 2  # rows per micro-batch of corpus_program.c


def write_corpus(args, name, text):
    path = os.path.join(args.work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def corpus_windows(args, np, *flags, mb=2, data=None, ids=None):
    """Runs the corpus program; returns {(step, global row): (in, target)}
    with the windows decoded through the corpus's sorted vocabulary. `data`
    replaces `--corpus corpus.txt`; `ids` (i32, i64) makes the program's
    data integer ids instead of one-hot."""
    path = write_corpus(args, "corpus.txt", CORPUS_TEXT)
    vocab = sorted(set(CORPUS_TEXT))
    env = clean_env(PPRT_CORPUS_MB=mb)
    if ids:
        env["PPRT_CORPUS_IDS"] = ids
    proc = mpirun(args, np, args.corpus_prog, "--steps", "3",
                  *(data or ["--corpus", path]), *flags, env=env)
    check(proc.returncode == 0, "corpus run failed", proc)
    windows = {}
    for line in proc.stdout.splitlines():
        if STEP_RE.match(line):
            continue
        m = DATA_RE.match(line)
        check(m, f"unexpected output line {line!r}", proc)
        step, replica, slot, row = map(int, m.groups()[:4])
        chars = []
        for field in m[5], m[6]:
            ids = list(map(int, field.split()))
            check(all(0 <= i < len(vocab) for i in ids),
                  f"not one-hot or outside the vocabulary: {line!r}")
            chars.append("".join(vocab[i] for i in ids))
        global_row = (replica * mb + slot) * CORPUS_ROWS + row
        windows[step, global_row] = tuple(chars)
    check(len(windows) == 3 * np * mb * CORPUS_ROWS,
          f"expected a line per step and row: {sorted(windows)}", proc)
    return windows


def write_bytes(args, name, data):
    path = os.path.join(args.work, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def npy_bytes(descr, shape, payload):
    """A version 1.0 .npy file, written the way numpy.save writes it."""
    header = (f"{{'descr': '{descr}', 'fortran_order': False, "
              f"'shape': {shape}, }}")
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode() + payload)


def corpus_token_ids():
    """CORPUS_TEXT as ids into its sorted vocabulary."""
    vocab = sorted(set(CORPUS_TEXT))
    return [vocab.index(ch) for ch in CORPUS_TEXT]


def test_corpus(args):
    """--corpus fills one-hot windows of the text; targets are the next
    characters; the windows are deterministic, move with step and seed."""
    windows = corpus_windows(args, 1)
    for (step, row), (x, y) in windows.items():
        check(x[1:] == y[:-1], f"target is not the shifted input: {x!r} "
              f"{y!r}")
        check(x + y[-1] in CORPUS_TEXT, f"{x + y[-1]!r} is not in the corpus")
    steps = [{w for (s, _), w in windows.items() if s == k} for k in (1, 2, 3)]
    check(steps[0] != steps[1] != steps[2], "steps repeat the same windows")
    check(corpus_windows(args, 1) == windows, "the windows are not "
          "deterministic")
    check(corpus_windows(args, 1, "--seed", "2") != windows,
          "--seed does not change the windows")
    print("windows of step 1:", sorted(steps[0]))


def test_corpus_replicas(args):
    """2 data-parallel replicas with 1 micro-batch each read the same global
    rows as 1 process with 2 micro-batches."""
    check(corpus_windows(args, 2, mb=1) == corpus_windows(args, 1, mb=2),
          "replicas do not split the global batch like micro-batches")


def test_corpus_errors(args):
    """Unusable corpora stop the job with one clear line from rank 0."""
    many = "".join(chr(c) for c in range(ord("0"), ord("0") + 40)) * 2
    cases = [
        (args.corpus_prog, os.path.join(args.work, "missing.txt"),
         "missing.txt: cannot open: No such file or directory"),
        (args.corpus_prog, write_corpus(args, "short.txt", "abcdefgh"),
         "the corpus has 8 characters; a context of 8 positions needs at "
         "least 9"),
        (args.corpus_prog, write_corpus(args, "wide.txt", many),
         "the corpus has 40 distinct characters, but input argument 0 has "
         "room for 32"),
        (args.toy, write_corpus(args, "toy.txt", CORPUS_TEXT),
         "input argument 0 is 2-D f32; the loader fills one-hot"),
    ]
    for prog, path, message in cases:
        proc = mpirun(args, 2, prog, "--steps", "1", "--corpus", path,
                      env=clean_env(PPRT_CORPUS_MB=1))
        check(proc.returncode not in (0, 124), f"{path}: did not fail", proc)
        check(proc.stderr.count(message) == 1,
              f"{path}: expected one {message!r}", proc)
    proc = mpirun(args, 1, args.corpus_prog, "--corpus=")
    check(proc.returncode == 2 and "usage:" in proc.stderr,
          "empty --corpus accepted", proc)


def test_tokens(args):
    """--tokens reads nanoGPT-style flat uint16/uint32 ids and .npy: the
    corpus's characters as ids give exactly --corpus's windows, as one-hot
    data and as i32/i64 ids, on 1 process and on 2 replicas."""
    ids = corpus_token_ids()
    u16 = write_bytes(args, "tokens.bin", struct.pack(f"<{len(ids)}H", *ids))
    u32 = write_bytes(args, "tokens32.bin",
                      struct.pack(f"<{len(ids)}I", *ids))
    npy = write_bytes(args, "tokens.npy",
                      npy_bytes("<u4", f"({len(ids)},)",
                                struct.pack(f"<{len(ids)}I", *ids)))
    expected = corpus_windows(args, 1)
    for data in (["--tokens", u16],
                 ["--tokens", u32, "--token-dtype", "uint32"],
                 ["--tokens", npy]):
        check(corpus_windows(args, 1, data=data) == expected,
              f"{data}: windows differ from --corpus")
    for kind in ("i32", "i64"):
        check(corpus_windows(args, 1, data=["--tokens", u16], ids=kind) ==
              expected, f"{kind} ids differ from the one-hot windows")
    check(corpus_windows(args, 2, mb=1, data=["--tokens", npy], ids="i64") ==
          corpus_windows(args, 1, mb=2), "replicas read other token rows")


def test_tokens_errors(args):
    """Unusable token files stop the job with one clear line naming the
    file; so do ids past the table they index, from --tokens, --classes or
    --data."""
    ids = corpus_token_ids()
    payload = struct.pack(f"<{len(ids)}I", *ids)
    cases = [
        (write_bytes(args, "odd.bin", b"\x01\x00\x02"), [],
         "odd.bin: 3 bytes is not a whole number of uint16 ids"),
        (write_bytes(args, "f4.npy", npy_bytes("<f4", f"({len(ids)},)",
                                               payload)), [],
         "f4.npy: the array's dtype is '<f4'; token ids must be uint16"),
        (write_bytes(args, "2d.npy", npy_bytes("<u4", f"({len(ids)}, 1)",
                                               payload)), [],
         "2d.npy: the array must be 1-D (shape (N,)), not"),
        (write_bytes(args, "cut.npy", npy_bytes("<u4", "(100000,)",
                                                payload)), [],
         "cut.npy: the header says 100000 elements but the file holds"),
        (write_bytes(args, "wide.bin", struct.pack("<20H", *range(20, 40))),
         [], "wide.bin: the largest id is 39, but input argument 0 has "
         "room for 32 ids"),
        (write_bytes(args, "both.bin", struct.pack("<20H", *range(20))),
         ["--corpus", write_corpus(args, "c.txt", CORPUS_TEXT)],
         "give --corpus or --tokens, not both"),
    ]
    for path, extra, message in cases:
        proc = mpirun(args, 2, args.corpus_prog, "--steps", "1", "--tokens",
                      path, *extra, env=clean_env(PPRT_CORPUS_MB=1))
        check(proc.returncode not in (0, 124), f"{path}: did not fail", proc)
        check(proc.stderr.count(message) == 1,
              f"{path}: expected one {message!r}", proc)
    big = write_bytes(args, "big.bin", struct.pack("<20I", *range(19), 2**31))
    env = clean_env(PPRT_CORPUS_MB=1)
    env["PPRT_CORPUS_IDS"] = "i32"
    proc = mpirun(args, 2, args.corpus_prog, "--steps", "1", "--tokens", big,
                  "--token-dtype", "uint32", env=env)
    message = "the largest id is 2147483648, more than i32 input argument 0"
    check(proc.returncode not in (0, 124) and
          proc.stderr.count(message) == 1, f"expected one {message!r}", proc)
    # Ids index tables of 32 rows (an embedding, a loss's classes): an id
    # of 32 or more would gather nothing and train silently.
    wide = write_bytes(args, "wide-ids.bin", struct.pack("<20H", *range(13, 33)))
    env = clean_env(PPRT_CORPUS_MB=1, PPRT_CORPUS_IDS="i64")
    proc = mpirun(args, 2, args.corpus_prog, "--steps", "1", "--tokens", wide,
                  env=env)
    message = ("wide-ids.bin: the largest id is 32, but input argument 0 "
               "indexes a table of 32 rows: ids must be below 32")
    check(proc.returncode not in (0, 124) and
          proc.stderr.count(message) == 1, f"expected one {message!r}", proc)
    proc = mpirun(args, 1, args.corpus_prog, "--token-dtype", "int8")
    check(proc.returncode == 2 and "uint16 or uint32" in proc.stderr,
          "--token-dtype int8 accepted", proc)
    # The same tables bound --classes and the arrays of --data (each id
    # named by sample and position) before the first step.
    env = clean_env(PPRT_CORPUS_MB=1, PPRT_CORPUS_IDS="i64")
    def ids_npy(name, ids):
        return write_bytes(args, name, npy_bytes(
            "<i8", f"({len(ids) // 8}, 8)", struct.pack(f"<{len(ids)}q",
                                                        *ids)))
    good = ids_npy("ids.npy", [i % 32 for i in range(32)])
    past = ids_npy("ids-past.npy", [32 if i == 21 else i for i in range(32)])
    neg = ids_npy("ids-neg.npy", [-1] + list(range(1, 32)))
    for flags, message in (
            (["--classes", "33"], "pprt: --classes 33 draws ids in [0, 33), "
             "but input argument 0 indexes a table of 32 rows: give "
             "--classes 32 or fewer"),
            (["--data", f"{past},{good}"], f"pprt: --data {past}: sample 2 "
             "holds id 32 at position 5, but input argument 0 indexes a "
             "table of 32 rows: ids must be in [0, 32)"),
            (["--data", f"{good},{neg}"], f"pprt: --data {neg}: sample 0 "
             "holds id -1 at position 0, but target argument 1 indexes a "
             "table of 32 rows")):
        proc = mpirun(args, 2, args.corpus_prog, "--steps", "1", *flags,
                      env=env)
        check(one_error_line(proc, message, 1), f"{flags}: no {message!r}",
              proc)
    for flags in (["--classes", "32"], ["--data", f"{good},{good}"]):
        proc = mpirun(args, 1, args.corpus_prog, "--steps", "1", *flags,
                      env=env)
        check(proc.returncode == 0, f"{flags}: ids within the table refused",
              proc)
    # Every count of an .npy header is bounded before it sizes anything:
    # 2^61 samples of 8 int64 ids are 2^64 elements, which wrapped to 0,
    # passed the size check and read far outside the file (SIGSEGV).
    for shape, message in (
            ("(2305843009213693952, 8)", "the shape (2305843009213693952, 8) "
             "has too many elements: their count overflows 64 bits"),
            ("(18446744073709551616, 8)", "malformed .npy header"),
            ("(-4, 8)", "malformed .npy header")):
        wraps = write_bytes(args, "wraps.npy", npy_bytes(
            "<i8", shape, struct.pack("<32q", *range(32))))
        proc = mpirun(args, 2, args.corpus_prog, "--steps", "1", "--data",
                      f"{wraps},{wraps}", env=env)
        check(one_error_line(proc, f"pprt: --data {wraps}: {message}", 1),
              f"{shape}: no {message!r}", proc)


def run_changing(args, flags, path, change, more_steps=0):
    """Starts the corpus program on 1 process for endless steps, calls
    `change(path)` after its first step, and returns (exit status, step
    losses, stderr): the run's own end, or, after `more_steps` more steps,
    the one its termination gives."""
    cmd = [args.mpiexec, args.np_flag, "1", args.corpus_prog, "--steps",
           "100000000", *flags]
    print("+", " ".join(cmd), flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=clean_env(PPRT_CORPUS_MB=1,
                                          PPRT_CORPUS_IDS="i64"))
    losses, changed_at = [], None
    deadline = time.monotonic() + JOB_LIMIT_S
    try:
        for line in proc.stdout:
            if m := STEP_RE.match(line.strip()):
                losses.append(m[2])
                if changed_at is None:
                    change(path)
                    changed_at = len(losses)
                elif len(losses) >= changed_at + more_steps > changed_at:
                    proc.terminate()
                    break
            if time.monotonic() > deadline:
                break
        _, err = proc.communicate(timeout=JOB_LIMIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, losses, err


def truncated_within_refill(args):
    """A --tokens file cut right after a refill's check passed, before its
    reads (the shim truncates it after the Nth check), for each of the
    first checks: one line naming the file, no signal, and every step that
    ran trained on the file's own ids (its losses are the unbroken run's)."""
    if not args.truncate_shim:
        return  # a sanitized build: the preload cannot come first
    # 400 KB, several times the reader's window, so refills read the file.
    ids = [(i * 7) % 32 for i in range(200000)]
    original = struct.pack(f"<{len(ids)}H", *ids)
    steps = 12
    env = dict(PPRT_CORPUS_MB=1, PPRT_CORPUS_IDS="i64")
    tokens = write_bytes(args, "cut.bin", original)
    unbroken = step_losses_any(mpirun(args, 1, args.corpus_prog, "--steps",
                                      str(steps), "--tokens", tokens,
                                      env=clean_env(**env)))
    check(len(unbroken) == steps, f"the unbroken run made {len(unbroken)} "
          f"of {steps} steps")
    message = (f"pprt: rank 0: --tokens {tokens}: the file changed while "
               "training read it: it had 400000 bytes, now 100; the run "
               "stops rather than train on other data")
    for at in range(1, 7):
        write_bytes(args, "cut.bin", original)
        proc = mpirun(args, 1, args.corpus_prog, "--steps", str(steps),
                      "--tokens", tokens, env=clean_env(
                          **env, LD_PRELOAD=args.truncate_shim,
                          PPRT_TRUNCATE_PATH=tokens,
                          PPRT_TRUNCATE_AT_STAT=at, PPRT_TRUNCATE_TO=100))
        losses = step_losses_any(proc)
        check(proc.returncode not in (0, 124) and
              proc.stderr.count(message) == 1 and
              "signal" not in proc.stderr and
              "Bus error" not in proc.stderr,
              f"cut after check {at}: exit {proc.returncode}, expected one "
              f"{message!r}", proc)
        check(all(unbroken.get(step) == loss
                  for step, loss in losses.items()),
              f"cut after check {at}: the steps that ran lost "
              f"{sorted(losses.items())} against {sorted(unbroken.items())}")


def test_inputs_changed(args):
    """A --tokens file truncated, rewritten or replaced while training ends
    the job with one line naming it (its mapping raised SIGBUS, or read
    zeros or the new ids); --data's arrays are read into memory, so a
    truncated one trains on exactly as it was."""
    ids = [(i * 7) % 32 for i in range(40000)]
    original = struct.pack(f"<{len(ids)}H", *ids)
    tokens = write_bytes(args, "changing.bin", original)
    def truncate(path):
        os.truncate(path, 100)
    def rewrite(path):
        with open(path, "r+b") as f:
            f.write(bytes(len(original)))
    def replace(path):
        write_bytes(args, "changing.new", original)
        os.replace(os.path.join(args.work, "changing.new"), path)
    for change, why in (
            (truncate, "it had 80000 bytes, now 100"),
            (rewrite, "it was written to since the run opened it"),
            (replace, "it was replaced or removed since the run opened it")):
        write_bytes(args, "changing.bin", original)
        rc, losses, err = run_changing(args, ["--tokens", tokens], tokens,
                                       change)
        message = (f"pprt: rank 0: --tokens {tokens}: the file changed while "
                   f"training read it: {why}; the run stops rather than train "
                   "on other data")
        check(rc not in (0, 124) and err.count(message) == 1 and
              "signal" not in err,
              f"{change.__name__}: exit {rc}, expected one {message!r}:\n"
              f"{err}")
    truncated_within_refill(args)
    # 512 samples of 8 ids: 32 KB, beyond the first page, which a mapping
    # lost once the file was cut to 200 bytes (SIGBUS).
    samples = [(i * 7) % 32 for i in range(512 * 8)]
    array = npy_bytes("<i8", "(512, 8)", struct.pack(f"<{len(samples)}q",
                                                      *samples))
    data = write_bytes(args, "changing.npy", array)
    flags = ["--data", f"{data},{data}"]
    rc, losses, err = run_changing(args, flags, data,
                                   lambda path: os.truncate(path, 200),
                                   more_steps=2000)
    check(len(losses) >= 2001 and "Bus error" not in err,
          f"--data cut while training: exit {rc}, {len(losses)} steps:\n"
          f"{err}")
    write_bytes(args, "changing.npy", array)
    proc = mpirun(args, 1, args.corpus_prog, "--steps", str(len(losses)),
                  *flags, env=clean_env(PPRT_CORPUS_MB=1,
                                        PPRT_CORPUS_IDS="i64"))
    check([loss for _, loss in sorted(step_losses_any(proc).items())] ==
          losses,
          "--data cut while training changed the losses", proc)


def test_data_samples(args):
    """--data arrays holding NaN or an infinity are refused before the first
    step, naming the file, sample and position; a step takes each of its
    rows from a different sample (PyTorch's DataLoader with drop_last=True):
    fewer samples than a step's rows are refused, and the samples an epoch
    leaves out are said once."""
    def arrays(name, count, x_bad=None, y_bad=None):
        x = [0.01 * (i % 97) for i in range(count * 8)]
        y = [0.02 * (i % 89) for i in range(count * 4)]
        if x_bad:
            x[x_bad[0]] = x_bad[1]
        if y_bad:
            y[y_bad[0]] = y_bad[1]
        xs = write_bytes(args, f"{name}-x.npy", npy_bytes(
            "<f4", f"({count}, 8)", struct.pack(f"<{len(x)}f", *x)))
        ys = write_bytes(args, f"{name}-y.npy", npy_bytes(
            "<f4", f"({count}, 4)", struct.pack(f"<{len(y)}f", *y)))
        return xs, ys

    # The toy's step takes 32 rows (2 micro-batches of 16).
    nan_x, nan_y = arrays("nan", 40, x_bad=(3 * 8 + 5, float("nan")))
    inf_x, inf_y = arrays("inf", 40, y_bad=(39 * 4, float("-inf")))
    one_x, one_y = arrays("one", 1)
    short_x, short_y = arrays("short", 31)
    cases = [
        (nan_x, nan_y, f"pprt: --data {nan_x}: sample 3 holds nan at "
                       f"position 5; training data must be finite"),
        (inf_x, inf_y, f"pprt: --data {inf_y}: sample 39 holds -inf at "
                       f"position 0; training data must be finite"),
        (one_x, one_y, "pprt: --data has 1 sample; a step takes 32 rows "
                       "(rows per micro-batch x micro-batches x "
                       "data-parallel replicas), each a different sample: "
                       "give at least 32"),
        (short_x, short_y, "pprt: --data has 31 samples; a step takes 32 "
                           "rows"),
    ]
    for x, y, message in cases:
        proc = mpirun(args, 2, args.toy, "--steps", "2", "--data", f"{x},{y}")
        check(one_error_line(proc, message, 1), f"expected {message!r}", proc)
    proc = mpirun(args, 2, args.toy, "--steps", "2", "--data",
                  f"{nan_x},{nan_y}", "--allow-non-finite")
    check(proc.returncode == 0 and " loss nan" in proc.stdout,
          "--allow-non-finite did not train on the NaN", proc)

    # 40 samples: one step an epoch, 8 left out, said once.
    x, y = arrays("forty", 40)
    proc = mpirun(args, 2, args.toy, "--steps", "3", "--data", f"{x},{y}")
    note = ("pprt: --data: 40 samples make 1 step of 32 rows an epoch; the "
            "last 8 of each epoch's shuffled order are left out (as "
            "PyTorch's DataLoader with drop_last=True)")
    check(proc.returncode == 0 and proc.stderr.count(note) == 1,
          f"expected one line {note!r}", proc)
    # 32 samples fill a step exactly: said nothing.
    x, y = arrays("exact", 32)
    proc = mpirun(args, 2, args.toy, "--steps", "3", "--data", f"{x},{y}")
    check(proc.returncode == 0 and "pprt:" not in proc.stderr,
          "32 samples for 32 rows", proc)


def test_guarded(args):
    """Under the guarded backend, whose memory faults outside its own ops,
    stage functions and transfers, every runtime path gives bit-identical
    output to the CPU backend; so the runtime never reads buffers itself."""
    adam = ["--optimizer", "adam", "--lr", "0.05"]
    runs = [
        (2, args.toy, ["--steps", "4", "--lr", "0.2", "--print-params"], {}),
        (2, args.toy, ["--steps", "4", "--print-params", *adam], {}),
        (4, args.toy, ["--steps", "3", "--print-params"],
         {"PPRT_TOY_REPLICAS": 2}),
        (1, args.ref, ["--steps", "3", "--sequential-replicas", "2",
                       "--print-params", *adam], {}),
        (1, args.ref, ["--check-gradients"], {}),
        (2, args.user, ["--steps", "3"], {}),
    ]
    for np, prog, flags, env in runs:
        cpu = mpirun(args, np, prog, *flags,
                     env=clean_env(PPRT_BACKEND="cpu", **env))
        guarded = mpirun(args, np, prog, *flags,
                         env=clean_env(PPRT_BACKEND="guarded", **env))
        check(cpu.returncode == 0, "cpu run failed", cpu)
        check(guarded.returncode == 0, "guarded run failed", guarded)
        check(guarded.stdout == cpu.stdout and cpu.stdout,
              f"outputs differ:\n{cpu.stdout}\nvs guarded\n{guarded.stdout}")
    out = os.path.join(args.work, "guarded-profile.json")
    proc = mpirun(args, 2, args.toy, "--steps", "2", "--warmup", "1",
                  "--profile", out, "--backend", "guarded")
    check(proc.returncode == 0 and os.path.exists(out), "profile failed", proc)
    # The guard itself: a read of a buffer outside a stage function.
    proc = mpirun(args, 1, args.ref, "--steps", "1",
                  env=clean_env(PPRT_TOY_TOUCH_OUTSIDE=1,
                                PPRT_BACKEND="guarded"))
    check(proc.returncode not in (0, 124), "stray read not caught", proc)
    check("touched outside a backend op" in proc.stderr,
          "no guarded-backend message", proc)
    parse_run(mpirun(args, 1, args.ref, "--steps", "1", "--backend", "cpu",
                     env=clean_env(PPRT_TOY_TOUCH_OUTSIDE=1,
                                   PPRT_BACKEND="guarded")))
    proc = mpirun(args, 1, args.ref, "--backend", "gpu")
    check(proc.returncode == 2 and "--backend" in proc.stderr,
          "unknown backend accepted", proc)


LATENCY_ROW_RE = re.compile(
    r"^\|\s*(\d+ (?:B|KiB|MiB))\s*\|\s*(\S+)\s*\|\s*(\S+)\s*\|\s*(\S+)\s*\|$")


WAIT_RE = re.compile(r"^wait: (\S+) ms wall, (\S+) ms CPU$", re.M)


def test_recv_latency(args):
    """bench/recv_latency prints a row per size; pprt's receive of a small
    message stays near raw MPI (the sleeping poll made it 10-50x slower),
    and a rank waiting 300 ms for its peer uses under a quarter of that in
    CPU time."""
    proc = mpirun(args, 2, args.latency, "--steps", "1",
                  env=clean_env(PPRT_LATENCY_ITERS=100,
                                PPRT_LATENCY_ROUNDS=5,
                                PPRT_LATENCY_WAIT_MS=300))
    check(proc.returncode == 0, "benchmark failed", proc)
    rows = [m.groups() for line in proc.stdout.splitlines()
            if (m := LATENCY_ROW_RE.match(line))]
    check([r[0] for r in rows] == ["4 B", "1 KiB", "64 KiB", "1 MiB"],
          f"unexpected rows {rows}", proc)
    for size, raw, via, ratio in rows:
        check(float(raw) > 0 and float(via) > 0, f"{size}: bad times", proc)
        # The times are printed to 0.005 us: the ratio of the unrounded
        # times lies between those of the rounded ones' extremes.
        low = (float(via) - 0.005) / (float(raw) + 0.005)
        high = (float(via) + 0.005) / max(float(raw) - 0.005, 1e-9)
        check(low - 0.005 <= float(ratio) <= high + 0.005,
              f"{size}: inconsistent ratio", proc)
    # Loose enough for a loaded machine; a sleeping receive fails it. A
    # sanitized runtime is slower than the uninstrumented MPI it is timed
    # against, so there only the rows are checked.
    if not os.environ.get("PPRT_TEST_SANITIZED"):
        check(float(rows[0][3]) < 5, f"4 B receive {rows[0][3]}x raw MPI",
              proc)
    # A rank waiting out a bubble sleeps: spinning through it would take
    # cores from busy ranks. Rank 0 may leave the barrier a little after
    # rank 1 starts its sleep, so its wait may be a little shorter.
    wait = WAIT_RE.search(proc.stdout)
    check(wait is not None, "no wait line", proc)
    wall, cpu = float(wait[1]), float(wait[2])
    check(wall >= 250, f"the wait took {wall} ms, under rank 1's sleep",
          proc)
    check(cpu < 0.25 * wall, f"the waiting rank used {cpu} ms of CPU in "
          f"{wall} ms", proc)
    print(proc.stdout)


def step_losses(proc):
    """{step: loss text} of a successful run."""
    check(proc.returncode == 0, "run failed", proc)
    return {int(m[1]): m[2] for m in
            re.finditer(r"^step (\d+) loss (\S+)$", proc.stdout, re.M)}


def test_weights(args):
    """--save after 3 steps, then --init-weights --first-step 4 for 2 more,
    trains exactly like 5 steps (one replica and two); the file is valid
    safetensors holding the params that --print-params reports."""
    sys.path.insert(0, os.path.dirname(__file__))
    import safetensors_file
    flags = ["--lr", "0.2"]
    for np in (2, 4):
        path = os.path.join(args.work, f"weights_{np}.safetensors")
        whole = step_losses(mpirun(args, np, args.toy, "--steps", "5", *flags))
        first = mpirun(args, np, args.toy, "--steps", "3", "--save", path,
                       "--print-params", *flags)
        check(not os.path.exists(path + ".tmp"), "temporary file left", first)
        rest = step_losses(mpirun(args, np, args.toy, "--steps", "2",
                                  "--init-weights", path, "--first-step", "4",
                                  *flags))
        check(sorted(rest) == [4, 5], f"resumed steps: {rest}")
        for step in (4, 5):
            check(rest[step] == whole[step],
                  f"{np} processes: step {step} resumed {rest[step]} != "
                  f"{whole[step]}")
        meta, tensors = safetensors_file.read(path)
        check(without_checksum(meta) == {"format": "pt", "producer": "pprt",
                                         "step": "3"}, f"metadata {meta}")
        shapes = {k: (t[0], t[1]) for k, t in tensors.items()}
        check(shapes == {"param2": ("F32", [8, 16]),
                         "param3": ("F32", [16, 4])}, f"tensors {shapes}")
        _, params = parse_run(first)
        for k, (dtype, shape, values) in tensors.items():
            total, sumsq = params[int(k[len("param"):])]
            check(close(sum(values), total, rel=1e-6), f"{k}: sum differs")
            check(close(sum(v * v for v in values), sumsq, rel=1e-6),
                  f"{k}: sumsq differs")
        # 0 steps from a file save the same file.
        again = path + ".again"
        step_losses(mpirun(args, np, args.toy, "--steps", "0", "--init-weights",
                           path, "--first-step", "4", "--save", again))
        with open(path, "rb") as a, open(again, "rb") as b:
            check(a.read() == b.read(), "a load-and-save changed the file")
    print("resumed losses:", rest)


def test_weights_errors(args):
    """Bad weight files and options end the job with one line naming the
    rank, never a crash."""
    sys.path.insert(0, os.path.dirname(__file__))
    import safetensors_file as sf
    work = args.work
    w2, w3 = sf.f32([0.0] * 128), sf.f32([0.0] * 64)

    def made(name, tensors):
        path = os.path.join(work, name)
        sf.write(path, tensors)
        return path

    garbage = os.path.join(work, "garbage.safetensors")
    with open(garbage, "wb") as f:
        f.write(b"\x10\0\0\0\0\0\0\0{\"param2\": [1]}  ")
    missing = os.path.join(work, "missing.safetensors")
    cases = [
        (["--init-weights", missing],
         f"pprt: rank 0: --init-weights '{missing}': cannot open: No such "
         "file or directory"),
        (["--init-weights", garbage],
         f"pprt: rank 0: --init-weights '{garbage}': bad header: expected "
         "'{' at byte 11"),
        (["--init-weights", made("no3.safetensors",
                                 {"param2": ("F32", [8, 16], w2)})],
         "': no tensor 'param3' (stage 1's weight)"),
        (["--init-weights", made("shape.safetensors",
                                 {"param2": ("F32", [16, 8], w2),
                                  "param3": ("F32", [16, 4], w3)})],
         "': tensor 'param2' is F32 [16,8] in the file, but the model's is "
         "F32 [8,16]"),
        (["--init-weights", made("dtype.safetensors",
                                 {"param2": ("F32", [8, 16], w2),
                                  "param3": ("I32", [16, 4], w3)})],
         "': tensor 'param3' is I32 [16,4] in the file, but the model's is "
         "F32 [16,4]"),
        (["--save", os.path.join(work, "no-such-dir", "w.safetensors")],
         "pprt: rank 0: --save: cannot write"),
        (["--save", work], "pprt: rank 0: --save: cannot write"),
        (["--save", "x", "--profile", "y"],
         "--save writes trained weights and excludes --profile"),
        (["--first-step", "0"],
         "invalid value '0' for --first-step: expected an integer >= 1"),
    ]
    for flags, message in cases:
        proc = mpirun(args, 2, args.toy, "--steps", "1", *flags)
        check(proc.returncode in (1, 2), f"{flags}: did not fail cleanly",
              proc)
        check(message in proc.stderr, f"{flags}: no {message!r}", proc)
        check(len([l for l in proc.stderr.splitlines() if "pprt: rank" in l])
              <= 1, f"{flags}: more than one error line", proc)
    # A program without params has nothing to save or load.
    for flag in ("--save", "--init-weights"):
        path = os.path.join(work, "noparams.safetensors")
        proc = mpirun(args, 1, args.corpus_prog, "--steps", "1", flag, path)
        message = f"pprt: rank 0: {flag} '{path}': the program has no parameters"
        check(proc.returncode == 1 and message in proc.stderr,
              f"{flag}: no {message!r}", proc)


def read_checkpoint(ckpt):
    sys.path.insert(0, os.path.dirname(__file__))
    import safetensors_file
    return safetensors_file.read(os.path.join(ckpt, "checkpoint.safetensors"))


def same_bytes(a, b):
    with open(a, "rb") as x, open(b, "rb") as y:
        return x.read() == y.read()


def test_checkpoint(args):
    """--checkpoint-every 2 over 3 steps, then --resume for 2 more, ends
    with the weights (--save) of 5 unbroken steps byte for byte: SGD and
    Adam, one replica and two, and two played in turn by one process
    (--sequential-replicas). The checkpoint holds each param with Adam's
    moments and step count and the settings in __metadata__; --init-weights
    reads its weights; a 0-step resume writes the same checkpoint again."""
    optimizers = {"sgd": ["--lr", "0.2"],
                  "adam": ["--optimizer", "adam", "--lr", "0.05",
                           "--beta1", "0.8"]}
    layouts = [(2, args.toy, []), (4, args.toy, []),
               (1, args.ref, ["--sequential-replicas", "2"])]
    for (np, prog, extra), (name, opt) in (
            (layout, o) for layout in layouts for o in optimizers.items()):
        label = f"{name}-{np}-{os.path.basename(prog)}"
        flags = [*extra, *opt]
        ckpt = os.path.join(args.work, f"ckpt-{label}")
        whole = os.path.join(args.work, f"whole-{label}.safetensors")
        rest = os.path.join(args.work, f"rest-{label}.safetensors")
        whole_losses = step_losses(mpirun(args, np, prog, "--steps", "5",
                                          "--save", whole, *flags))
        first = mpirun(args, np, prog, "--steps", "3", "--checkpoint", ckpt,
                       "--checkpoint-every", "2", *flags)
        check(step_losses(first) == {k: whole_losses[k] for k in (1, 2, 3)},
              f"{label}: checkpointing changed the losses", first)
        # Step 2's checkpoint, then step 3's, keeping step 2's beside it.
        check(sorted(os.listdir(ckpt)) == ["checkpoint.prev.safetensors",
                                           "checkpoint.safetensors",
                                           "pprt.lock"],
              f"{label}: {os.listdir(ckpt)} in the checkpoint directory")
        meta, tensors = read_checkpoint(ckpt)
        want = {"format": "pt", "producer": "pprt", "pprt_checkpoint": "1",
                "step": "3", "optimizer": name, "seed": "1"}
        if name == "adam":
            want.update(beta1="0.800000012", beta2="0.999000013",
                        eps="9.99999994e-09")
        check(without_checksum(meta) == want, f"{label}: metadata {meta}")
        shapes = {k: (t[0], t[1]) for k, t in tensors.items()}
        want = {"param2": ("F32", [8, 16]), "param3": ("F32", [16, 4])}
        if name == "adam":
            for k, v in list(want.items()):
                want.update({k + ".adam_m": v, k + ".adam_v": v,
                             k + ".adam_step": ("I64", [])})
            check(tensors["param2.adam_step"][2] == (3).to_bytes(8, "little"),
                  f"{label}: Adam's step count is not 3")
        check(shapes == want, f"{label}: tensors {shapes}")
        resumed = mpirun(args, np, prog, "--steps", "2", "--resume", ckpt,
                         "--save", rest, *flags)
        check(step_losses(resumed) == {k: whole_losses[k] for k in (4, 5)},
              f"{label}: resumed losses differ from {whole_losses}", resumed)
        check(same_bytes(whole, rest),
              f"{label}: resumed weights differ from the unbroken run's")
        # A rank killed while writing leaves a partial .tmp beside the
        # complete checkpoint: a resume ignores it, a write replaces it.
        again = ckpt + "-again"
        shutil.rmtree(again, ignore_errors=True)
        os.makedirs(again)
        for d in (ckpt, again):
            with open(os.path.join(d, "checkpoint.safetensors.tmp"),
                      "wb") as f:
                f.write(b"\x40\0\0\0\0\0\0\0{\"param2\"")
        step_losses(mpirun(args, np, prog, "--steps", "0", "--resume", ckpt,
                           "--checkpoint", again, *flags))
        check(same_bytes(os.path.join(ckpt, "checkpoint.safetensors"),
                         os.path.join(again, "checkpoint.safetensors")),
              f"{label}: a 0-step resume changed the checkpoint")
        check(sorted(os.listdir(again)) == ["checkpoint.safetensors",
                                            "pprt.lock"],
              f"{label}: the stale .tmp was not replaced")
    # The weights of a checkpoint start a fresh run like a --save file.
    ckpt = os.path.join(args.work,
                        f"ckpt-sgd-2-{os.path.basename(args.toy)}")
    saved = os.path.join(args.work, "ckpt-saved.safetensors")
    mpirun(args, 2, args.toy, "--steps", "3", "--lr", "0.2", "--save", saved)
    a = step_losses(mpirun(args, 2, args.toy, "--steps", "1", "--lr", "0.2",
                           "--init-weights", saved))
    b = step_losses(mpirun(args, 2, args.toy, "--steps", "1", "--lr", "0.2",
                           "--init-weights",
                           os.path.join(ckpt, "checkpoint.safetensors")))
    check(a == b, f"--init-weights of a checkpoint: {b} != {a}")


def test_state(args):
    """STATE buffers (PPRT_TOY_STATE: a running mean, f32, and a count of
    forwards, i64): --save writes them as state<i> after the params, a
    checkpoint holds them without optimizer state and --resume continues
    them byte for byte, --init-weights starts from them and needs them,
    and with 2 data-parallel replicas replica 0's are saved."""
    sys.path.insert(0, os.path.dirname(__file__))
    import safetensors_file as sf
    work = args.work
    env = clean_env(PPRT_TOY_STATE=1)
    flags = ["--lr", "0.2"]

    def saved(np, name, *extra):
        path = os.path.join(work, f"state-{name}.safetensors")
        step_losses(mpirun(args, np, args.toy, *flags, "--save", path,
                           *extra, env=env))
        return path, sf.read(path)[1]

    def count(tensors):
        check(tensors["state5"][:2] == ("I64", []),
              f"state5 is {tensors['state5'][:2]}")
        return int.from_bytes(tensors["state5"][2], "little", signed=True)

    whole, tensors = saved(2, "whole", "--steps", "5")
    check(list(tensors) == ["param2", "param3", "state4", "state5"],
          f"saved tensors {list(tensors)}")
    check(tensors["state4"][:2] == ("F32", [16]),
          f"state4 is {tensors['state4'][:2]}")
    check(any(tensors["state4"][2]), "the running mean stayed zero")
    check(count(tensors) == 10, f"5 steps of 2 forwards: {count(tensors)}")

    ckpt = os.path.join(work, "state-ckpt")
    step_losses(mpirun(args, 2, args.toy, *flags, "--steps", "3",
                       "--checkpoint", ckpt, env=env))
    _, ckpt_tensors = read_checkpoint(ckpt)
    check(sorted(ckpt_tensors) == ["param2", "param3", "state4", "state5"],
          f"checkpoint tensors {sorted(ckpt_tensors)}")
    check(count(ckpt_tensors) == 6, f"checkpoint count {count(ckpt_tensors)}")
    rest, _ = saved(2, "rest", "--steps", "2", "--resume", ckpt)
    check(same_bytes(whole, rest),
          "resumed state or weights differ from the unbroken run's")

    _, more = saved(2, "more", "--steps", "1", "--init-weights", whole)
    check(count(more) == 12, f"--init-weights then a step: {count(more)}")

    # Replica 0 reads the same rows with one replica or two; its state after
    # one step (same weights) is what --save writes.
    _, one = saved(2, "one", "--steps", "1")
    _, two = saved(4, "two", "--steps", "1")
    check(one["state4"] == two["state4"] and count(two) == 2,
          "2 replicas saved another state than replica 0's")

    meta, params = sf.read(whole)
    no_state = os.path.join(work, "state-missing.safetensors")
    sf.write(no_state, {k: ("F32", params[k][1], sf.f32(params[k][2]))
                        for k in ("param2", "param3")})
    proc = mpirun(args, 2, args.toy, *flags, "--steps", "1",
                  "--init-weights", no_state, env=env)
    check(proc.returncode != 0 and
          "no tensor 'state4' (stage 0's state)" in proc.stderr,
          "--init-weights without the state", proc)


# The metadata key of the checksum pprt writes into every safetensors file.
CHECKSUM = "pprt_data_fnv1a"


def without_checksum(meta):
    """`meta` less the checksum, which must be 16 hex digits."""
    digits = meta.get(CHECKSUM, "")
    check(len(digits) == 16 and all(c in "0123456789abcdef" for c in digits),
          f"no checksum in {meta}")
    return {k: v for k, v in meta.items() if k != CHECKSUM}


def test_checkpoint_errors(args):
    """A checkpoint of another model or optimizer, a missing, corrupt or
    truncated one, and bad options end the job at start with one line
    naming the file and what is wrong; replicas that diverged are named
    instead of saved."""
    sys.path.insert(0, os.path.dirname(__file__))
    import safetensors_file as sf
    work = args.work
    good = os.path.join(work, "ckpt-good")
    parse_run(mpirun(args, 2, args.toy, "--steps", "2", "--checkpoint", good))
    good_file = os.path.join(good, "checkpoint.safetensors")
    meta, tensors = sf.read(good_file)
    with open(good_file, "rb") as f:
        blob = f.read()

    def made(name, tensors=tensors, meta=meta, raw=None):
        d = os.path.join(work, f"ckpt-{name}")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "checkpoint.safetensors")
        if raw is not None:
            with open(path, "wb") as f:
                f.write(raw)
        else:
            # A file written by hand carries no checksum of pprt's.
            meta = {k: v for k, v in meta.items() if k != CHECKSUM}
            sf.write(path, {k: (t[0], t[1], sf.f32(t[2]) if t[0] == "F32"
                                else t[2]) for k, t in tensors.items()}, meta)
        return d, path

    adam_dir = os.path.join(work, "ckpt-good-adam")
    parse_run(mpirun(args, 2, args.toy, "--steps", "2", "--optimizer", "adam",
                     "--checkpoint", adam_dir))
    adam_meta, adam_tensors = sf.read(os.path.join(adam_dir,
                                                   "checkpoint.safetensors"))
    w2 = tensors["param2"]
    cases = [
        (*made("count", meta=adam_meta,
               tensors={**adam_tensors, "param3.adam_step":
                        ("I64", [], (9).to_bytes(8, "little"))}),
         ["--optimizer", "adam"], "': tensor 'param3.adam_step' counts 9 "
         "updates; after step 2 it must be in [0, 2]"),
        (*made("count-shape", meta=adam_meta,
               tensors={**adam_tensors, "param2.adam_step":
                        ("I64", [1], (1).to_bytes(8, "little"))}),
         ["--optimizer", "adam"], "': tensor 'param2.adam_step' must be an "
         "I64 scalar"),
        (made("missing")[0] + "-none", [],
         "': cannot open: No such file or directory"),
        (*made("garbage", raw=b"\x10\0\0\0\0\0\0\0{\"param2\": [1]}  "),
         [], "': bad header: expected '{' at byte 11"),
        (*made("truncated", raw=blob[:len(blob) - 10]), [],
         "': tensor 'param3': data_offsets"),
        (*made("short", raw=blob[:6]), [], "': bad header: the file has 6 "
         "bytes"),
        # One bit of a weight flipped: the header still parses.
        (*made("torn", raw=blob[:-5] + bytes([blob[-5] ^ 1]) + blob[-4:]), [],
         "': the tensor data does not match the checksum its header records "
         "(pprt_data_fnv1a " + meta[CHECKSUM]),
        (*made("shape", tensors={**tensors, "param2": ("F32", [16, 8],
                                                         w2[2])}), [],
         "': tensor 'param2' is F32 [16,8] in the file, but the model's is "
         "F32 [8,16]"),
        (*made("extra", tensors={**tensors, "param9": w2}), [],
         "': tensor 'param9' is not part of this model's sgd training state"),
        (*made("absent", tensors={"param2": w2}), [],
         "': no tensor 'param3' (stage 1's weight)"),
        (good, good_file, ["--optimizer", "adam"],
         "': the checkpoint was written with --optimizer sgd, but this run "
         "has --optimizer adam"),
        (*made("no-moments", meta={**meta, "optimizer": "adam", "beta1":
                                   "0.899999976", "beta2": "0.999000013",
                                   "eps": "9.99999994e-09"}),
         ["--optimizer", "adam"], "': no tensor 'param2.adam_m' (stage 0's "
         "weight's optimizer state)"),
        (good, good_file, ["--seed", "7"],
         "': the checkpoint was written with --seed 1, but this run has "
         "--seed 7"),
        (*made("not-one", meta={"format": "pt", "step": "2"}), [],
         "': not a pprt checkpoint: no \"pprt_checkpoint\" in __metadata__"),
        (*made("version", meta={**meta, "pprt_checkpoint": "2"}), [],
         "': checkpoint format version '2'; this runtime reads version 1"),
        (*made("step", meta={**meta, "step": "-1"}), [],
         "': bad or missing \"step\" in __metadata__"),
    ]
    for case in cases:
        d, path, flags, message = (case if len(case) == 4 else
                                   (case[0], os.path.join(
                                       case[0], "checkpoint.safetensors"),
                                    case[1], case[2]))
        proc = mpirun(args, 2, args.toy, "--steps", "1", "--resume", d,
                      *flags)
        message = f"pprt: rank 0: --resume '{path}{message}"
        check(proc.returncode == 1, f"{d}: did not fail cleanly", proc)
        check(message in proc.stderr, f"{d}: no {message!r}", proc)
        check(len([l for l in proc.stderr.splitlines() if "pprt: rank" in l])
              == 1 and "step" not in proc.stdout,
              f"{d}: not one error line before the first step", proc)
    a_file = os.path.join(work, "a-file")
    with open(a_file, "w") as f:
        f.write("x")
    for flags, message, rc in (
            (["--checkpoint-every", "2"],
             "--checkpoint-every needs --checkpoint DIR", 2),
            (["--checkpoint-every", "0", "--checkpoint", good],
             "invalid value '0' for --checkpoint-every", 2),
            (["--resume", good, "--init-weights", good_file],
             "--resume sets the weights and excludes --init-weights", 2),
            (["--resume", good, "--first-step", "3"],
             "--resume sets the first step and excludes --first-step", 2),
            (["--checkpoint", good, "--profile", "p.json"],
             "--checkpoint and --resume train and exclude --profile", 2),
            (["--checkpoint", a_file],
             f"pprt: rank 0: --checkpoint: '{a_file}' is not a directory", 2),
            (["--checkpoint", os.path.join(work, "no-such-dir", "c")],
             "pprt: rank 0: --checkpoint: cannot create", 2)):
        proc = mpirun(args, 2, args.toy, "--steps", "1", *flags)
        check(proc.returncode == rc and message in proc.stderr,
              f"{flags}: expected exit {rc} and {message!r}", proc)
    # Nothing to train, nothing to save.
    for flag in ("--checkpoint", "--resume"):
        proc = mpirun(args, 1, args.corpus_prog, "--steps", "1", flag, good)
        message = (f"pprt: rank 0: {flag} '{good}': the program has no "
                   "parameters")
        check(proc.returncode == 1 and message in proc.stderr,
              f"{flag}: no {message!r}", proc)
    # Ranks that find different checkpoints under one name (a copy per
    # node) stop at start instead of running different steps.
    for d, steps in (("ckpt-node-a", "2"), ("ckpt-node-b", "3")):
        os.makedirs(os.path.join(work, d), exist_ok=True)
        parse_run(mpirun(args, 2, args.toy, "--steps", steps, "--checkpoint",
                         os.path.join(work, d, "c")))
    cmd = ["timeout", str(JOB_LIMIT_S), args.mpiexec]
    for d in ("ckpt-node-a", "ckpt-node-b"):
        cmd += [":"] if d.endswith("b") else []
        cmd += [args.np_flag, "1", "-wdir", os.path.join(work, d), args.toy,
                "--steps", "1", "--resume", "c"]
    print("+", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          env=clean_env())
    message = ("pprt: rank 0: --resume 'c/checkpoint.safetensors': the ranks "
               "read different files")
    check(proc.returncode == 1 and message in proc.stderr,
          f"different files per rank: no {message!r}", proc)
    # Replicas whose gradients are not all-reduced drift apart: the
    # checkpoint names the param instead of saving one replica's copy.
    drift = os.path.join(work, "ckpt-drift")
    proc = mpirun(args, 4, args.toy, "--steps", "3", "--checkpoint", drift,
                  env=clean_env(PPRT_TOY_REDUCE="skip"))
    message = ("': after step 3 the data-parallel replicas hold different "
               "values of param 2 or of its optimizer state")
    check(proc.returncode == 1 and message in proc.stderr
          and not os.path.exists(os.path.join(drift,
                                              "checkpoint.safetensors")),
          f"diverged replicas: no {message!r}", proc)


def test_checkpoint_previous(args):
    """Each checkpoint keeps the one before it beside it
    (checkpoint.prev.safetensors); when the newest is torn or missing,
    --resume's one line names the previous one, its step and how to resume
    from it, and --resume of that file continues the unbroken run."""
    sys.path.insert(0, os.path.dirname(__file__))
    import safetensors_file as sf
    d = os.path.join(args.work, "ckpt-prev")
    shutil.rmtree(d, ignore_errors=True)
    proc = mpirun(args, 2, args.toy, "--steps", "3", "--checkpoint", d,
                  "--checkpoint-every", "1")
    check(proc.returncode == 0, "the checkpointing run failed", proc)
    unbroken = step_losses_any(proc)
    newest = os.path.join(d, "checkpoint.safetensors")
    previous = os.path.join(d, "checkpoint.prev.safetensors")
    check(sf.read(newest)[0]["step"] == "3" and
          sf.read(previous)[0]["step"] == "2" and
          not os.path.exists(previous + ".tmp"),
          f"{d}: expected the checkpoints of steps 3 and 2, got "
          f"{sorted(os.listdir(d))}")
    with open(newest, "rb") as f:
        blob = f.read()
    intact = (f"; the previous checkpoint '{previous}' (step 2) is intact: "
              f"continue from it with --resume {previous}")
    torn = blob[:-5] + bytes([blob[-5] ^ 1]) + blob[-4:]
    for name, newest_bytes, why in (
            ("torn", torn, "the tensor data does not match the checksum"),
            ("cut", blob[:len(blob) - 10], "tensor 'param3': data_offsets"),
            ("missing", None, "cannot open: No such file or directory")):
        if newest_bytes is None:
            os.remove(newest)
        else:
            with open(newest, "wb") as f:
                f.write(newest_bytes)
        proc = mpirun(args, 2, args.toy, "--steps", "1", "--resume", d)
        lines = [l for l in proc.stderr.splitlines() if "pprt: rank" in l]
        check(proc.returncode == 1 and len(lines) == 1 and
              lines[0].startswith(f"pprt: rank 0: --resume '{newest}': "
                                  f"{why}") and lines[0].endswith(intact),
              f"{name}: expected one line naming the previous checkpoint",
              proc)
    # The previous one resumes the unbroken run; a torn one is not named.
    proc = mpirun(args, 2, args.toy, "--steps", "1", "--resume", previous)
    check(proc.returncode == 0 and
          step_losses_any(proc) == {3: unbroken[3]},
          f"--resume {previous}: expected step 3's loss {unbroken[3]}", proc)
    with open(previous, "r+b") as f:
        f.truncate(len(blob) - 10)
    proc = mpirun(args, 2, args.toy, "--steps", "1", "--resume", d)
    check(proc.returncode == 1 and "previous checkpoint" not in proc.stderr,
          "a torn previous checkpoint was named", proc)


def test_metrics(args):
    """--metrics writes one JSON object per step on rank 0: the step, the
    loss stdout prints and a positive time; a path it cannot write fails
    before training, on every rank."""
    import json
    path = os.path.join(args.work, "metrics.jsonl")
    proc = mpirun(args, 2, args.toy, "--steps", "3", "--first-step", "2",
                  "--metrics", path)
    losses = step_losses(proc)
    with open(path) as f:
        records = [json.loads(line) for line in f]
    check([r["step"] for r in records] == [2, 3, 4], f"steps {records}")
    for r in records:
        check(r["loss"] == float(losses[r["step"]]), f"loss {r} != stdout")
        check(r["seconds"] > 0, f"time {r}")
    bad = mpirun(args, 2, args.toy, "--steps", "3", "--metrics",
                 os.path.join(args.work, "missing", "m.jsonl"))
    check(bad.returncode != 0 and "step" not in bad.stdout and
          "--metrics: cannot write" in bad.stderr,
          "an unwritable --metrics file must fail before training", bad)


def one_error_line(proc, message, rc):
    """Whether `proc` exited `rc` before any step with `message` as its one
    line from pprt."""
    lines = [l for l in proc.stderr.splitlines() if l.startswith("pprt:")]
    return (proc.returncode == rc and "step" not in proc.stdout and
            len(lines) == 1 and message in lines[0])


def test_outputs(args):
    """Every output is proven creatable where its writer puts it before the
    first step: devices, FIFOs, kernel files and names too long for the
    writer's temporary are refused at once with one line. A write that
    fails late loses nothing silently: --metrics stops and the run exits 1
    with its weights saved; --save and --checkpoint put the state in a
    rescue place and name it."""
    work = os.path.join(args.work, "outputs")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    fifo = os.path.join(work, "fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    long_name = os.path.join(work, "w" * 253)
    cases = [
        (["--metrics", "/dev/full"], "pprt: rank 0: --metrics: cannot write "
         "'/dev/full': it is a character device; outputs must be regular "
         "files"),
        (["--save", "/dev/null"], "--save: cannot write '/dev/null': it is a "
         "character device"),
        (["--save", fifo], f"--save: cannot write '{fifo}': it is a FIFO"),
        (["--metrics", fifo], f"--metrics: cannot write '{fifo}': it is a "
         "FIFO"),
        (["--save", "/proc/self/comm"], "--save: cannot write "
         "'/proc/self/comm': it is a file of the kernel"),
        (["--metrics", "/proc/self/comm"], "--metrics: cannot write "
         "'/proc/self/comm': it is a file of the kernel"),
        (["--profile", "/proc/self/comm"], "--profile: cannot write "
         "'/proc/self/comm': it is a file of the kernel"),
        (["--save", long_name], f"--save: cannot write '{long_name}': cannot "
         f"create '{long_name}.tmp': File name too long (with the suffix the "
         "writer adds"),
        (["--checkpoint", "/proc/self"], "--checkpoint: cannot write "
         "'/proc/self/checkpoint.safetensors': cannot create "
         "'/proc/self/checkpoint.safetensors.tmp'"),
    ]
    for i, (flags, message) in enumerate(cases):
        proc = mpirun(args, 1 if i else 2, args.toy, "--steps", "1", *flags)
        check(one_error_line(proc, message, 2),
              f"{flags}: expected exit 2 and one line {message!r}", proc)
    check(sorted(os.listdir(work)) == ["fifo"], f"left: {os.listdir(work)}")
    # Outputs over inputs or over each other (the same name, or the same
    # inode under another) are refused before any work: --save replaced
    # the program, and --save F --metrics F wrote both into one file.
    prog = os.path.join(work, "prog")
    shutil.copy(args.toy, prog)
    link = os.path.join(work, "link")
    os.link(prog, link)
    weights = os.path.join(work, "w.safetensors")
    with open(weights, "wb") as f:
        f.write(b"weights")
    same = os.path.join(work, "same")
    ckpt = os.path.join(work, "ckpt")
    for run, flags, message in (
            (prog, ["--save", prog], f"--save: cannot write '{prog}': it is "
             "this job's program"),
            (prog, ["--metrics", link], f"--metrics: cannot write '{link}': "
             "it is this job's program"),
            (args.toy, ["--save", weights, "--init-weights", weights],
             f"--save: cannot write '{weights}': it is the file "
             "--init-weights reads"),
            (args.toy, ["--save", same, "--metrics", same], "--save and "
             f"--metrics both name '{same}'; give each output a file of its "
             "own"),
            (args.toy, ["--metrics", os.path.join(ckpt, "checkpoint."
                                                  "safetensors"),
                        "--checkpoint", ckpt], "--metrics and --checkpoint "
             "both name"),
            (args.toy, ["--save", weights, "--data", f"x.npy,{weights}:w"],
             f"--save: cannot write '{weights}': it is the file --data "
             "reads")):
        proc = mpirun(args, 1, run, "--steps", "1", *flags)
        check(one_error_line(proc, message, 2),
              f"{flags}: expected exit 2 and one line {message!r}", proc)
    with open(prog, "rb") as a, open(args.toy, "rb") as b:
        check(a.read() == b.read(), "the program was changed")
    with open(weights, "rb") as f:
        check(f.read() == b"weights", "--init-weights was changed")
    check(sorted(os.listdir(work)) == ["fifo", "link", "prog",
                                       "w.safetensors"],
          f"left: {os.listdir(work)}")
    for name in ("link", "prog", "w.safetensors"):
        os.unlink(os.path.join(work, name))
    # A transport trace is opened without blocking on a FIFO.
    os.mkfifo(os.path.join(work, "trace.0"))
    prefix = os.path.join(work, "trace")
    proc = mpirun(args, 1, args.ref, "--steps", "1",
                  env=clean_env(PPRT_TRANSPORT_TRACE=prefix))
    message = ("pprt: rank 0: PPRT_TRANSPORT_TRACE: cannot write the "
               f"transport trace '{prefix}.0': not a regular file")
    check(proc.returncode not in (0, 124) and message in proc.stderr,
          f"no {message!r}", proc)
    # Standard output that loses the step lines (a run without a launcher
    # in between): reported once, and the run exits 1.
    with open("/dev/full", "w") as full:
        proc = subprocess.run(["timeout", str(JOB_LIMIT_S), args.ref,
                               "--steps", "3"], stdout=full,
                              stderr=subprocess.PIPE, text=True,
                              env=clean_env())
    message = ("pprt: rank 0: cannot write to standard output: No space left "
               "on device; training goes on without it")
    check(proc.returncode == 1 and proc.stderr.count(message) == 1,
          f"no {message!r}", subprocess.CompletedProcess(
              proc.args, proc.returncode, "", proc.stderr))
    late_save(args, work)
    late_checkpoint(args, work)
    file_size_limit(args, work)
    shared_checkpoint_dir(args, work)
    shared_save(args, work)


def shared_output(args, work, option, name, lock, own, *flags):
    """A job holds its output `option` (at `name` in `work`, locked through
    file `lock` there) locked while it runs: a second job on it is refused
    at once, naming the first's pid and host (two jobs on one checkpoint
    directory tore checkpoints and lost each other's)."""
    import socket
    path = os.path.join(work, name)
    cmd = [args.mpiexec, args.np_flag, "2", args.toy, "--steps", "100000000",
           option, path, *flags]
    print("+", " ".join(cmd), flush=True)
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             env=clean_env())
    try:
        check(first.stdout.readline().startswith("step 1 "),
              "the first job did not start")
        with open(os.path.join(work, lock)) as f:
            holder = f.read().strip()
        check(re.fullmatch(rf"pid \d+ on host {re.escape(socket.gethostname())}",
                           holder), f"the lock names {holder!r}")
        pid = int(holder.split()[1])
        check(mpi_rank_of(pid) == 0, f"pid {pid} is not rank 0 of the job")
        second = mpirun(args, 2, args.toy, "--steps", "1", option, path)
        message = (f"pprt: rank 0: {option}: '{path}' is in use by "
                   f"another job ({holder}); give each job {own} of its "
                   "own")
        check(one_error_line(second, message, 2), f"no {message!r}", second)
        check(first.poll() is None, "the first job ended")
    finally:
        first.terminate()
        first.communicate(timeout=JOB_LIMIT_S)
    # The lock ends with the job that held it, however it ended.
    step_losses(mpirun(args, 2, args.toy, "--steps", "1", option, path))


def shared_checkpoint_dir(args, work):
    shared_output(args, work, "--checkpoint", "shared", "shared/pprt.lock",
                  "a checkpoint directory", "--checkpoint-every", "100000000")
    shutil.rmtree(os.path.join(work, "shared"))


def shared_save(args, work):
    shared_output(args, work, "--save", "shared.safetensors",
                  "shared.safetensors.lock", "a --save file")


def file_size_limit(args, work):
    """A file-size limit (ulimit -f) below the weights' size is a full
    disk: the write fails (SIGXFSZ used to end the rank and leave a torn
    PATH.tmp), the rescue places are tried, and each line names its file.
    One process, whose MPI (UCX over TCP) writes no shared-memory file
    that the limit would stop."""
    import resource
    limit = 512  # bytes: the header fits, the 968 bytes of weights do not
    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    cwd = os.path.join(work, "fsize")
    os.makedirs(cwd)
    save = os.path.join(cwd, "w.safetensors")
    for flags, lines in (
            (["--save", save],
             [f"pprt: rank 0: --save '{save}': cannot write '{save}.tmp': "
              "File too large (past the file-size limit, ulimit -f)",
              "pprt: rank 0: --save './pprt-rescued-",
              "pprt: rank 0: --save: no rescue place took what could not be "
              f"written to '{save}' either"]),
            (["--checkpoint", "ckpt", "--checkpoint-every", "1"],
             ["pprt: rank 0: --checkpoint 'ckpt/checkpoint.safetensors': "
              "cannot write 'ckpt/checkpoint.safetensors.tmp': File too "
              "large (past the file-size limit, ulimit -f)"])):
        cmd = ["timeout", str(JOB_LIMIT_S), args.ref, "--steps", "2", *flags]
        print("+", " ".join(cmd), flush=True)
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                              preexec_fn=limited,
                              env=clean_env(TMPDIR=cwd, UCX_TLS="self,tcp"))
        check(proc.returncode == 1, f"{flags}: expected exit 1", proc)
        for line in lines:
            check(line in proc.stderr, f"{flags}: no {line!r}", proc)
        left = [name for root, _, names in os.walk(cwd) for name in names
                if name != "pprt.lock"]
        check(left == [], f"{flags}: left {left}", proc)
    shutil.rmtree(cwd)


def run_until(args, cwd, path, flags, breaks):
    """Starts the toy on 2 processes in `cwd` (also its TMPDIR), waits for
    its first step line and then for `path` to appear (if given), calls
    `breaks()` while the run goes on, and returns the finished run."""
    cmd = ["timeout", str(JOB_LIMIT_S), args.mpiexec, args.np_flag, "2",
           args.toy, *flags]
    print("+", " ".join(cmd), flush=True)
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=clean_env(TMPDIR=cwd))
    first = proc.stdout.readline()
    deadline = time.monotonic() + JOB_LIMIT_S
    while path and not os.path.exists(path) and proc.poll() is None and \
            time.monotonic() < deadline:
        time.sleep(0.005)
    running = proc.poll() is None
    breaks()
    out, err = proc.communicate()
    result = subprocess.CompletedProcess(cmd, proc.returncode, first + out,
                                         err)
    check(running, "the run ended before its output could be broken",
          result)
    return result


def block_temporary(path):
    """Makes a directory of the writer's temporary `path` + ".tmp", so that
    creating it fails (EISDIR); retried while a write has the file open."""
    while True:
        try:
            os.mkdir(path + ".tmp")
            return
        except FileExistsError:
            time.sleep(0.001)


def late_save(args, work):
    """--save's temporary cannot be created by the end of a long run: the
    weights go to the working directory, named, and the run exits 1."""
    import glob
    sys.path.insert(0, os.path.dirname(__file__))
    import safetensors_file
    cwd = os.path.join(work, "save")
    os.makedirs(os.path.join(cwd, "out"))
    save = os.path.join(cwd, "out", "w.safetensors")
    proc = run_until(args, cwd, None,
                     ["--steps", "10000", "--lr", "0.2", "--save", save,
                      "--print-params"],
                     lambda: block_temporary(save))
    rescued = glob.glob(os.path.join(cwd, "pprt-rescued-*-w.safetensors"))
    check(proc.returncode == 1 and len(rescued) == 1,
          "no rescued weights", proc)
    name = os.path.join(".", os.path.basename(rescued[0]))
    for message in (f"pprt: rank 0: --save '{save}': cannot create "
                    f"'{save}.tmp': Is a directory",
                    f"pprt: rank 0: --save: the trained weights are in "
                    f"'{name}' instead of '{save}'"):
        check(message in proc.stderr, f"no {message!r}", proc)
    params = {}
    for line in proc.stdout.splitlines():
        if m := PARAM_RE.match(line):
            params[int(m[1])] = (float(m[2]), float(m[3]))
    _, tensors = safetensors_file.read(rescued[0])
    check(sorted(tensors) == ["param2", "param3"], f"tensors {tensors}")
    for k, (_, _, values) in tensors.items():
        total, sumsq = params[int(k[len("param"):])]
        check(close(sum(values), total, rel=1e-6) and
              close(sum(v * v for v in values), sumsq, rel=1e-6),
              f"{k}: the rescued weights are not the trained ones")


def late_checkpoint(args, work):
    """--checkpoint's temporary cannot be created after its first
    checkpoint: the next step's state goes to a rescue directory that
    --resume continues from, the directory keeps its last checkpoint, and
    the run stops with exit 1."""
    import glob
    cwd = os.path.join(work, "ckpt")
    os.makedirs(cwd)
    ckpt = os.path.join(cwd, "c")
    proc = run_until(args, cwd, os.path.join(ckpt, "checkpoint.safetensors"),
                     ["--steps", "10000", "--lr", "0.2", "--checkpoint", ckpt,
                      "--checkpoint-every", "1"],
                     lambda: block_temporary(
                         os.path.join(ckpt, "checkpoint.safetensors")))
    rescued = glob.glob(os.path.join(cwd, "pprt-rescued-*-c"))
    check(proc.returncode == 1 and len(rescued) == 1,
          "no rescued checkpoint", proc)
    kept = read_checkpoint(ckpt)[0]["step"]
    last = max(step_losses_any(proc))
    name = os.path.join(".", os.path.basename(rescued[0]))
    for message in (f"pprt: rank 0: --checkpoint: the training state after "
                    f"step {last} is in '{name}' (continue with --resume "
                    f"{name})",
                    f"pprt: rank 0: --checkpoint: '{ckpt}' keeps the "
                    f"checkpoint of step {kept}"):
        check(message in proc.stderr, f"no {message!r}", proc)
    check(read_checkpoint(rescued[0])[0]["step"] == str(last) and
          kept == str(last - 1),
          f"rescued step {last}, kept {kept}: not the last two steps")
    resumed = step_losses(mpirun(args, 2, args.toy, "--steps", "1", "--lr",
                                 "0.2", "--resume", rescued[0]))
    check(sorted(resumed) == [last + 1], f"resumed steps {resumed}")


def step_losses_any(proc):
    """{step: loss text} of a run, successful or not."""
    return {int(m[1]): m[2] for m in
            re.finditer(r"^step (\d+) loss (\S+)$", proc.stdout, re.M)}


def test_inputs(args):
    """Inputs are regular files, opened without blocking: a FIFO or a device
    as --init-weights, --resume, --tokens or --corpus ends the job at once
    with one line. Weights and optimizer state out of range, and step
    numbers past int64, are refused before the first step."""
    sys.path.insert(0, os.path.dirname(__file__))
    import safetensors_file as sf
    work = os.path.join(args.work, "inputs")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    fifo = os.path.join(work, "fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    fifo_npy = os.path.join(work, "fifo.npy")
    if not os.path.exists(fifo_npy):
        os.mkfifo(fifo_npy)
    fifo_dir = os.path.join(work, "fifo-ckpt")
    os.makedirs(fifo_dir, exist_ok=True)
    fifo_ckpt = os.path.join(fifo_dir, "checkpoint.safetensors")
    if not os.path.exists(fifo_ckpt):
        os.mkfifo(fifo_ckpt)
    for prog, flags, message in (
            (args.toy, ["--init-weights", fifo], f"--init-weights '{fifo}': "
             "cannot read: a FIFO; only regular files are read"),
            (args.toy, ["--init-weights", "/dev/zero"], "--init-weights "
             "'/dev/zero': cannot read: a character device"),
            (args.toy, ["--resume", fifo_dir], f"--resume '{fifo_ckpt}': "
             "cannot read: a FIFO"),
            (args.corpus_prog, ["--tokens", fifo], f"--tokens {fifo}: cannot "
             "read: a FIFO"),
            (args.corpus_prog, ["--corpus", fifo], f"--corpus {fifo}: cannot "
             "read: a FIFO"),
            (args.corpus_prog, ["--corpus", "/dev/zero"], "--corpus "
             "/dev/zero: cannot read: a character device"),
            (args.corpus_prog, ["--tokens", work], f"--tokens {work}: cannot "
             "read: a directory"),
            (args.corpus_prog, ["--data", f"{fifo_npy},{fifo_npy}"],
             f"--data {fifo_npy}: cannot read: a FIFO")):
        proc = mpirun(args, 2, prog, "--steps", "1", *flags,
                      env=clean_env(PPRT_CORPUS_MB=1))
        check(one_error_line(proc, message, 1),
              f"{flags}: expected exit 1 and one line {message!r}", proc)
    # State out of range.
    good = os.path.join(work, "adam")
    parse_run(mpirun(args, 2, args.toy, "--steps", "2", "--optimizer", "adam",
                     "--checkpoint", good))
    meta, tensors = sf.read(os.path.join(good, "checkpoint.safetensors"))

    def made(name, changes, meta=meta):
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "checkpoint.safetensors")
        # Written by hand: without pprt's checksum, so the values are read.
        meta = {k: v for k, v in meta.items() if k != CHECKSUM}
        sf.write(path, {k: (t[0], t[1], sf.f32(t[2]) if t[0] == "F32"
                            else t[2])
                        for k, t in {**tensors, **changes}.items()}, meta)
        return d, path

    def with_value(name, index, value):
        dtype, shape, values = tensors[name]
        values = list(values)
        values[index] = value
        return {name: (dtype, shape, values)}

    adam = ["--optimizer", "adam"]
    for (d, path), flags, message in (
            (made("neg-v", with_value("param3.adam_v", 5, -1.0)), adam,
             "': tensor 'param3.adam_v' holds -1 at element 5; Adam's second "
             "moments must be >= 0"),
            (made("nan-v", with_value("param2.adam_v", 0, float("nan"))),
             adam, "': tensor 'param2.adam_v' holds nan at element 0"),
            (made("inf-m", with_value("param2.adam_m", 7, float("inf"))),
             adam, "': tensor 'param2.adam_m' holds inf at element 7; Adam's "
             "moments must be finite"),
            (made("nan-w", with_value("param3", 2, float("nan"))), adam,
             "': tensor 'param3' holds nan at element 2; weights must be "
             "finite (--allow-non-finite loads them)"),
            (made("last-step", {}, meta={**meta, "step": str(2**63 - 1)}),
             adam, "': the checkpoint's step 9223372036854775807 with --steps "
             "1 would number steps past 9223372036854775807")):
        proc = mpirun(args, 2, args.toy, "--steps", "1", "--resume", d,
                      *flags)
        message = f"pprt: rank 0: --resume '{path}{message}"
        check(one_error_line(proc, message, 1), f"{d}: no {message!r}", proc)
    # A header length 4 bytes short, within the writer's padding: every
    # tensor would shift by one float.
    saved = os.path.join(work, "w.safetensors")
    parse_run(mpirun(args, 2, args.toy, "--steps", "1", "--save", saved))
    with open(saved, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    text = blob[8:8 + n].rstrip(b" ")
    text += b" " * (4 + (-(len(text) + 4) % 8))
    short = os.path.join(work, "short.safetensors")
    with open(short, "wb") as f:
        f.write(struct.pack("<Q", len(text) - 4) + text + blob[8 + n:])
    proc = mpirun(args, 2, args.toy, "--steps", "1", "--init-weights", short)
    check(one_error_line(proc, "': the tensors cover 768 of the 772 data "
                         "bytes: 4 bytes after the last belong to no tensor",
                         1), "a header 4 bytes short was accepted", proc)
    nan_w = made("nan-w", {})[1]
    sf.write(nan_w, {"param2": ("F32", [8, 16], sf.f32([float("nan")] * 128)),
                     "param3": ("F32", [16, 4], sf.f32([0.0] * 64))})
    proc = mpirun(args, 2, args.toy, "--steps", "1", "--init-weights", nan_w)
    check(one_error_line(proc, "tensor 'param2' holds nan at element 0", 1),
          "non-finite --init-weights accepted", proc)
    proc = mpirun(args, 2, args.toy, "--steps", "1", "--init-weights", nan_w,
                  "--allow-non-finite")
    check(proc.returncode == 0, "--allow-non-finite refused NaN weights",
          proc)
    # Step numbers past int64.
    for flags, message in (
            (["--first-step", str(2**63 - 1), "--steps", "2"],
             "--first-step 9223372036854775807 with --steps 2 would number "
             "steps past 9223372036854775807, the largest step number"),
            (["--profile", "p.json", "--warmup", str(2**63 - 1), "--steps",
              "1"], "--warmup 9223372036854775807 with --steps 1 would")):
        proc = mpirun(args, 1, args.toy, *flags)
        check(proc.returncode == 2 and message in proc.stderr and
              "step" not in proc.stdout, f"{flags}: no {message!r}", proc)
    proc = mpirun(args, 2, args.toy, "--first-step", str(2**63 - 1),
                  "--steps", "1")
    check(step_losses(proc).keys() == {2**63 - 1}, "the last step number "
          "must still run", proc)


def test_group(args):
    """An exchange group posts its sends before its receives wait: two ranks
    that each receive before they send exchange their values inside one,
    and wait for each other outside it (a timeout naming both). Misused
    groups end the job with one line."""
    ok = mpirun(args, 2, args.group, "--steps", "2")
    check(ok.returncode == 0 and ok.stdout.count("loss") == 2,
          "the grouped exchange did not complete", ok)
    stuck = mpirun(args, 2, args.group, "--steps", "1", "--timeout", "1",
                   env=clean_env(PPRT_GROUP="none"))
    check(stuck.returncode not in (0, 124) and "timed out" in stuck.stderr,
          "without a group both receives must wait and time out", stuck)
    for name, message in (
            ("nested", "pprt_group_begin inside an exchange group"),
            ("unopened", "pprt_group_end without pprt_group_begin"),
            ("open", "the step ended inside an exchange group"),
            ("same_slot", "micro-batch slot 0 is sent and received in one "
             "exchange group")):
        proc = mpirun(args, 2, args.group, "--steps", "1", "--timeout", "5",
                      env=clean_env(PPRT_GROUP=name))
        check(proc.returncode != 0 and message in proc.stderr,
              f"{name}: no {message!r}", proc)


def test_staged(args):
    """The host-staged transport (the CUDA backend's) under the guarded
    backend: the inner MPI transport runs with device memory closed, so a
    transfer handed a device pointer faults, and a wrong size, offset or
    order of staging copies changes the output, which must be bit-identical
    to the CPU backend's: sends, receives and data-parallel all-reduces."""
    adam = ["--optimizer", "adam", "--lr", "0.05"]
    runs = [
        (2, args.toy, ["--steps", "4", "--lr", "0.2", "--print-params"], {}),
        (2, args.toy, ["--steps", "4", "--print-params", *adam], {}),
        (4, args.toy, ["--steps", "3", "--print-params"], {}),
        (4, args.toy, ["--steps", "3", "--print-params", *adam],
         {"PPRT_TOY_REPLICAS": 2}),
        (2, args.user, ["--steps", "3"], {}),
    ]
    for np, prog, flags, env in runs:
        cpu = mpirun(args, np, prog, *flags,
                     env=clean_env(PPRT_BACKEND="cpu", **env))
        staged = mpirun(args, np, prog, *flags, "--backend", "guarded-staged",
                        env=clean_env(**env))
        check(cpu.returncode == 0, "cpu run failed", cpu)
        check(staged.returncode == 0, "staged run failed", staged)
        check(staged.stdout == cpu.stdout and cpu.stdout,
              f"outputs differ:\n{cpu.stdout}\nvs staged\n{staged.stdout}")


def tp_env(tp, ranks, **extra):
    return clean_env(PPRT_TP=tp, PPRT_TP_RANKS=ranks, **extra)


def tp_run(args, np, tp, ranks, *flags, **extra):
    return mpirun(args, np, args.tp, *flags, env=tp_env(tp, ranks, **extra))


def same_tensors(path, ref_path, label):
    """The safetensors files hold the same tensors and shapes, with values
    within 1e-5 relative (tensor parallelism sums in another order)."""
    sys.path.insert(0, os.path.dirname(__file__))
    import safetensors_file
    _, got = safetensors_file.read(path)
    _, want = safetensors_file.read(ref_path)
    check(sorted(got) == sorted(want), f"{label}: tensors {sorted(got)}")
    for name, (dtype, shape, values) in want.items():
        check(got[name][:2] == (dtype, shape),
              f"{label}: {name} is {got[name][:2]}, not {(dtype, shape)}")
        if dtype != "F32":
            check(got[name][2] == values, f"{label}: {name} differs")
            continue
        for i, (a, b) in enumerate(zip(got[name][2], values)):
            check(close(a, b, rel=1e-5, abs_tol=1e-7),
                  f"{label}: {name}[{i}] = {a}, unsplit {b}")


def same_losses(proc, ref, label):
    losses, ref_losses = step_losses(proc), step_losses(ref)
    check(sorted(losses) == sorted(ref_losses), f"{label}: steps", proc)
    for k in losses:
        check(close(float(losses[k]), float(ref_losses[k]), abs_tol=0.0),
              f"{label}: step {k} loss {losses[k]} != unsplit "
              f"{ref_losses[k]}", proc)


def memory_lines(proc):
    return {int(m[1]): (int(m[2]), int(m[3]), int(m[4])) for m in re.finditer(
        r"^memory rank (\d+): weights (\d+) gradients (\d+) optimizer "
        r"(\d+) bytes$", proc.stdout, re.M)}


def test_tensor_parallel(args):
    """The MLP with column-, row-split and replicated weights on 2 tensor-
    parallel processes per pipeline rank trains like its unsplit run: the
    same losses and saved (global) weights, SGD and Adam, pipelined,
    over 2 data-parallel replicas with ZeRO-1, and under the guarded staged
    backend; checkpoints move between T = 2 and T = 1 both ways; each rank
    holds (--print-memory) its blocks only."""
    work = args.work
    sgd = ["--lr", "0.1"]
    adam = ["--optimizer", "adam", "--lr", "0.02"]
    refs = {}
    for name, opt in (("sgd", sgd), ("adam", adam)):
        ref_path = os.path.join(work, f"tp-ref-{name}.safetensors")
        ref = refs[name] = tp_run(args, 1, 1, 1, "--steps", "4", "--save",
                                  ref_path, *opt)
        # (T = 2 on one pipeline rank runs below, with replicas.)
        label = f"{name} T=2 x P=2"
        path = os.path.join(work, f"tp-{name}.safetensors")
        proc = tp_run(args, 4, 2, 2, "--steps", "4", "--save", path, *opt)
        same_losses(proc, ref, label)
        same_tensors(path, ref_path, label)
    # 2 replicas of T = 2, the optimizer state sharded (ZeRO-1) per tp
    # index, against 2 replicas unsplit; the replicated b1 stays identical
    # across the tensor group (--print-params checks it).
    ref_path = os.path.join(work, "tp-dp-ref.safetensors")
    ref = tp_run(args, 2, 1, 1, "--steps", "3", "--save", ref_path,
                 "--print-memory", *adam)
    path = os.path.join(work, "tp-dp.safetensors")
    proc = tp_run(args, 4, 2, 1, "--steps", "3", "--save", path, "--zero",
                  "1", "--print-params", "--print-memory", *adam)
    same_losses(proc, ref, "T=2 x 2 replicas, ZeRO-1")
    same_tensors(path, ref_path, "T=2 x 2 replicas, ZeRO-1")
    # Weights: W0 8x16, W1 16x12, b1 12, W2 12x4 floats, halved but b1.
    whole, split = 4 * (128 + 192 + 12 + 48), 4 * (64 + 96 + 12 + 24)
    mem, ref_mem = memory_lines(proc), memory_lines(ref)
    check(sorted(mem) == [0, 1, 2, 3], f"memory lines {mem}", proc)
    for rank, (weights, grads, optimizer) in mem.items():
        check(weights == split and grads == split,
              f"rank {rank}: {weights} B of weights, {grads} B of gradients; "
              f"expected {split} (of {whole})", proc)
        # Adam's two moments of this replica's half of each local param
        # (every local param has an even length).
        check(optimizer == split,
              f"rank {rank}: {optimizer} B of optimizer state", proc)
    check(all(m[0] == whole for m in ref_mem.values()), f"{ref_mem}", ref)
    # Through the guarded backend's staged transport, traced: the tensor
    # group's collectives (group 1) happen, and train the same.
    trace = os.path.join(work, "tp-trace")
    proc = tp_run(args, 4, 2, 2, "--steps", "2", *sgd,
                  PPRT_BACKEND="guarded-staged", PPRT_TRANSPORT_TRACE=trace)
    got, want = step_losses(proc), step_losses(refs["sgd"])
    check(sorted(got) == [1, 2] and all(
        close(float(got[k]), float(want[k]), abs_tol=0.0) for k in got),
        f"guarded-staged: losses {got} differ from the unsplit {want}", proc)
    with open(trace + ".0") as f:
        lines = f.read().splitlines()
    check(lines.count("allreduce group=1 count=192") == 4
          and lines.count("allreduce group=1 count=2 op=max") == 4
          and lines.count("allreduce group=1 count=2 op=min") == 4
          and lines.count("all_gather group=1 count=32 blocks=2") == 0,
          f"rank 0's tensor-group collectives: {lines}")
    with open(trace + ".2") as f:
        lines = f.read().splitlines()
    check(lines.count("all_gather group=1 count=32 blocks=2") == 4
          and lines.count("allreduce group=1 count=192") == 4,
          f"rank 2's tensor-group collectives: {lines}")
    # A checkpoint after 2 steps of T = 2 resumes at T = 1 for 2 more, and
    # the reverse; both end with the weights of 4 unbroken unsplit steps.
    ref_path = os.path.join(work, "tp-ref-adam.safetensors")
    for (np, tp, ranks), (np2, tp2, ranks2) in (((4, 2, 2), (1, 1, 1)),
                                                 ((1, 1, 1), (4, 2, 2))):
        label = f"T={tp} checkpoint resumed at T={tp2}"
        ckpt = os.path.join(work, f"tp-ckpt-{tp}-{tp2}")
        path = os.path.join(work, f"tp-resumed-{tp}-{tp2}.safetensors")
        step_losses(tp_run(args, np, tp, ranks, "--steps", "2",
                           "--checkpoint", ckpt, *adam))
        step_losses(tp_run(args, np2, tp2, ranks2, "--steps", "2", "--resume",
                           ckpt, "--save", path, *adam))
        same_tensors(path, ref_path, label)
    # --init-weights of an unsplit run's file starts T = 2 where it ended.
    path = os.path.join(work, "tp-ref-sgd.safetensors")
    a = tp_run(args, 1, 1, 1, "--steps", "1", "--init-weights", path, *sgd)
    b = tp_run(args, 2, 2, 1, "--steps", "1", "--init-weights", path, *sgd)
    same_losses(b, a, "--init-weights at T=2")


def test_tensor_parallel_replicas(args):
    """T = 2 x P = 2 x 2 replicas (8 processes), Adam with and without
    ZeRO-1, against 2 unsplit replicas: the same losses and weights; its
    ZeRO-1 checkpoint resumes unsplit."""
    adam = ["--optimizer", "adam", "--lr", "0.02", "--steps", "3"]
    ref_path = os.path.join(args.work, "tp8-ref.safetensors")
    ref = tp_run(args, 2, 1, 1, "--save", ref_path, *adam)
    for zero in ("0", "1"):
        path = os.path.join(args.work, f"tp8-zero{zero}.safetensors")
        proc = tp_run(args, 8, 2, 2, "--save", path, "--zero", zero,
                      "--print-params", *adam)
        same_losses(proc, ref, f"T=2 x P=2 x 2 replicas, ZeRO {zero}")
        same_tensors(path, ref_path, f"T=2 x P=2 x 2 replicas, ZeRO {zero}")
    # A ZeRO-1 checkpoint of the 8 processes (each tp index's moments
    # gathered over its replicas, then its blocks over the tensor group)
    # resumes as 2 unsplit replicas.
    ckpt = os.path.join(args.work, "tp8-ckpt")
    path = os.path.join(args.work, "tp8-resumed.safetensors")
    adam2 = adam[:-1] + ["2"]
    step_losses(tp_run(args, 8, 2, 2, "--checkpoint", ckpt, "--zero", "1",
                       *adam2))
    adam1 = adam[:-1] + ["1"]
    step_losses(tp_run(args, 2, 1, 1, "--resume", ckpt, "--save", path,
                       *adam1))
    same_tensors(path, ref_path, "ZeRO-1 checkpoint of 2 x 2 x 2 resumed")


def test_tensor_parallel_errors(args):
    """A world T does not divide, a bad split and an unsupported element
    type end the job with one line naming the rank; a tensor-group peer
    that stops is named, with its group, by the others' timeout."""
    proc = tp_run(args, 3, 2, 1, "--steps", "1")
    check(one_error_line(proc, "pprt: rank 0: world size 3 is not a multiple "
                         "of the program's 1 pipeline ranks x 2 tensor-"
                         "parallel processes; run with mpirun -np <k * 2>",
                         1), "expected one line on the world size", proc)
    cases = [
        ({"PPRT_TP_SPLIT_DIM": 2}, "pprt: rank 0: pprt_set_buffer_split: "
         "buffer 0 (param 2 of stage 0): split dim 2 out of range 0..1"),
        ({"PPRT_TP_PARTS": 3}, "pprt: rank 0: buffer 0 (param 2 of stage 0) "
         "is split in 3 parts, but the program runs 2 tensor-parallel "
         "processes per pipeline rank"),
        ({"PPRT_TP_DTYPE": 1}, "pprt_tp_all_reduce in stage 0 micro-batch 0: "
         "element type f16; only f32 is supported so far"),
    ]
    for env, message in cases:
        proc = tp_run(args, 2, 2, 1, "--steps", "1", **env)
        check(proc.returncode == 1 and message in proc.stderr,
              f"{env}: expected {message!r}", proc)
        check(all(line.startswith("pprt: rank ")
                  for line in proc.stderr.splitlines()
                  if line.startswith("pprt")),
              f"{env}: an error line without its rank", proc)
    # A replicated param whose copies drift apart is named.
    proc = tp_run(args, 2, 2, 1, "--steps", "1", "--print-params",
                  PPRT_TP_DRIFT=1)
    check(proc.returncode == 1 and "pprt: the data-parallel replicas or "
          "tensor-parallel ranks hold different values of param 4"
          in proc.stderr, "the drifted b1 was not reported", proc)
    start = time.monotonic()
    proc = tp_run(args, 4, 2, 2, "--steps", "3", "--timeout", "1",
                  PPRT_TP_STALL_STEP=2)
    elapsed = time.monotonic() - start
    check(proc.returncode not in (0, 124), "job did not fail by itself", proc)
    check(elapsed < 15, f"took {elapsed:.1f} s to fail", proc)
    # Rank 0 waits in the all-reduce for its stopped tensor-group peer
    # (whichever rank finds it first tells the others).
    named = re.search(
        r"^pprt: rank 0: rank 1 \(replica 0, pipeline rank 0, tensor index "
        r"1\) stopped answering.* after 1\.0 s waiting for the "
        r"tensor-parallel all-reduce of 192 f32 in stage 0 micro-batch 0 "
        r"over the tensor group of pipeline rank 0, replica 0 \(world ranks "
        r"0\.\.1\)$", proc.stderr, re.M)
    check(named, "no timeout line naming rank 1 and its group", proc)
    check(proc.stdout.startswith("step 1 loss"), "step 1 did not run", proc)
    # The same for a max all-reduce.
    proc = tp_run(args, 4, 2, 2, "--steps", "3", "--timeout", "1",
                  PPRT_TP_STALL_MAX_STEP=2)
    check(proc.returncode not in (0, 124), "job did not fail by itself", proc)
    named = re.search(
        r"^pprt: rank 0: rank 1 \(replica 0, pipeline rank 0, tensor index "
        r"1\) stopped answering.* after 1\.0 s waiting for the "
        r"tensor-parallel max all-reduce of 2 f32 in stage 0 micro-batch 0 "
        r"over the tensor group of pipeline rank 0, replica 0 \(world ranks "
        r"0\.\.1\)$", proc.stderr, re.M)
    check(named, "no timeout line naming the max all-reduce", proc)


def gpu_present():
    try:
        proc = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and "GPU" in proc.stdout


def test_cuda_no_device(args):
    """Without a GPU or driver, --backend cuda (or PPRT_BACKEND=cuda) ends
    every rank at start, exit 1, with one line per rank naming it and the
    reason; a runtime built without CUDA says that instead."""
    if gpu_present():
        raise Skip("a GPU is present")
    if args.cuda == "ON":
        reason = "no CUDA device (cudaGetDeviceCount: "
    else:
        reason = "this runtime was built without CUDA"
    for np, flags, env in ((1, ["--backend", "cuda"], {}),
                           (2, ["--backend", "cuda"], {}),
                           (2, [], {"PPRT_BACKEND": "cuda"})):
        proc = mpirun(args, np, args.toy, "--steps", "2", *flags,
                      env=clean_env(**env))
        check(proc.returncode == 1, f"{np} ranks: expected exit 1", proc)
        check(not proc.stdout, "trained without a device", proc)
        lines = sorted(proc.stderr.splitlines())
        check(len(lines) == np, f"expected {np} error lines", proc)
        for rank, line in enumerate(lines):
            check(line.startswith(f"pprt: rank {rank}: --backend cuda: "
                                  f"{reason}"), f"bad line {line!r}", proc)


def test_compiled_cuda_no_device(args):
    """The same for a program pp-compile built (linked with the CUDA
    libraries when the runtime has CUDA), which still trains on the CPU."""
    if gpu_present():
        raise Skip("a GPU is present")
    exe = os.path.join(args.work, "cuda_mlp")
    subprocess.run([args.pp_compile, args.model, "--stages", "2",
                    "--microbatches", "2", "-o", exe], check=True)
    reason = ("no CUDA device (cudaGetDeviceCount: " if args.cuda == "ON"
              else "this runtime was built without CUDA")
    proc = mpirun(args, 2, exe, "--steps", "1", "--backend", "cuda")
    check(proc.returncode == 1 and not proc.stdout, "expected exit 1", proc)
    lines = sorted(proc.stderr.splitlines())
    check([line.startswith(f"pprt: rank {r}: --backend cuda: {reason}")
           for r, line in enumerate(lines)] == [True, True],
          "expected one line per rank", proc)
    parse_run(mpirun(args, 2, exe, "--steps", "1"))


def test_cuda_gpu(args):
    """On a GPU: the CUDA backend trains the toy pipeline like the CPU
    backend (fp32 within 1e-4), 1 rank, 2 ranks sharing the GPU through the
    host-staged transport, 4 ranks data-parallel, SGD and Adam."""
    if args.cuda != "ON":
        raise Skip("the runtime was built without CUDA")
    if not gpu_present():
        raise Skip("no GPU (nvidia-smi -L)")
    adam = ["--optimizer", "adam", "--lr", "0.05"]
    runs = [
        (1, args.ref, ["--steps", "4", "--lr", "0.2", "--print-params"]),
        (2, args.toy, ["--steps", "4", "--lr", "0.2", "--print-params"]),
        (2, args.toy, ["--steps", "4", "--print-params", *adam]),
        (4, args.toy, ["--steps", "3", "--print-params", *adam]),
    ]
    for np, prog, flags in runs:
        cpu = parse_run(mpirun(args, np, prog, *flags, "--backend", "cpu"))
        gpu = parse_run(mpirun(args, np, prog, *flags, "--backend", "cuda"))
        for a, b in zip(cpu[0], gpu[0]):
            check(close(a, b, rel=1e-4), f"loss {b} on the GPU != cpu {a}")
        check(cpu[1].keys() == gpu[1].keys(), "param sets differ")
        for k in cpu[1]:
            for a, b in zip(cpu[1][k], gpu[1][k]):
                check(close(a, b, rel=1e-4), f"param {k}: {gpu[1][k]} on the "
                      f"GPU != cpu {cpu[1][k]}")


def compile_target_cuda(args, name, *flags):
    """The examples' MLP built with pp-compile --target=cuda (and `flags`)."""
    exe = os.path.join(args.work, name)
    subprocess.run([args.pp_compile, args.model, "--target=cuda", *flags,
                    "-o", exe], check=True)
    return exe


def test_target_cuda_no_device(args):
    """A program pp-compile --target=cuda built (GPU kernels and cuBLAS
    GEMMs) runs under --backend cuda by default; without a GPU or driver it
    ends every rank at start with the one-line error, and under another
    backend it says it needs --backend cuda."""
    if gpu_present():
        raise Skip("a GPU is present")
    if args.cuda != "ON":
        raise Skip("the runtime was built without CUDA")
    exe = compile_target_cuda(args, "target_cuda_mlp", "--stages", "2",
                              "--microbatches", "2")
    reason = "no CUDA device (cudaGetDeviceCount: "
    for flags in ([], ["--backend", "cuda"]):
        proc = mpirun(args, 2, exe, "--steps", "1", *flags)
        check(proc.returncode == 1 and not proc.stdout, "expected exit 1", proc)
        lines = sorted(proc.stderr.splitlines())
        check([line.startswith(f"pprt: rank {r}: --backend cuda: {reason}")
               for r, line in enumerate(lines)] == [True, True],
              "expected one line per rank", proc)
    proc = mpirun(args, 1, exe, "--steps", "1", "--backend", "cpu")
    check(proc.returncode == 1 and proc.stderr.strip() ==
          "pprt: rank 0: --backend cpu: this program's stage code runs on "
          "GPUs (pp-compile --target=cuda); run it with --backend cuda",
          "expected the --backend cuda error", proc)


def test_target_cuda_gpu(args):
    """On a GPU: the MLP built with --target=cuda trains like its CPU build
    (fp32 losses and parameters within 1e-4), on 1 rank and on 2 ranks
    sharing the GPU through the host-staged transport."""
    if args.cuda != "ON":
        raise Skip("the runtime was built without CUDA")
    if not gpu_present():
        raise Skip("no GPU (nvidia-smi -L)")
    for np, flags in ((1, ["--stages", "1"]),
                      (2, ["--stages", "2", "--microbatches", "2"])):
        gpu_exe = compile_target_cuda(args, f"target_cuda_mlp{np}", *flags)
        cpu_exe = os.path.join(args.work, f"target_cpu_mlp{np}")
        subprocess.run([args.pp_compile, args.model, *flags, "-o", cpu_exe],
                       check=True)
        run = ["--steps", "4", "--lr", "0.1", "--print-params"]
        cpu = parse_run(mpirun(args, np, cpu_exe, *run))
        gpu = parse_run(mpirun(args, np, gpu_exe, *run))
        for a, b in zip(cpu[0], gpu[0]):
            check(close(a, b, rel=1e-4), f"loss {b} on the GPU != cpu {a}")
        check(cpu[1].keys() == gpu[1].keys(), "param sets differ")
        for k in cpu[1]:
            for a, b in zip(cpu[1][k], gpu[1][k]):
                check(close(a, b, rel=1e-4), f"param {k}: {gpu[1][k]} on the "
                      f"GPU != cpu {cpu[1][k]}")


TRANSFER_RE = re.compile(r"^\s*pp\.(send|recv) \w+ stage \d+ mb \d+ "
                         r"(?:to|from) (\d+)( grouped)?$")
TRACE_RE = re.compile(r"^(send|irecv|recv) peer=(\d+) tag=(\d+) bytes=\d+$")


def schedule_transfers(text):
    """Each pp.rank's transfers in a schedule's text: (kind, peer, grouped)."""
    ranks, rank = {}, None
    for line in text.splitlines():
        m = re.match(r"^\s*pp\.rank (\d+) \{", line)
        if m:
            rank = ranks.setdefault(int(m.group(1)), [])
            continue
        m = TRANSFER_RE.match(line)
        if m and rank is not None:
            rank.append((m.group(1), int(m.group(2)), bool(m.group(3))))
    return ranks


def expected_calls(transfers):
    """The transport calls the core must issue for one rank's transfers: a
    transfer followed by `grouped` ones opens an exchange group, in which
    receives start (irecv) and complete at its end; others are alone."""
    calls = []
    for i, (kind, peer, grouped) in enumerate(transfers):
        next_grouped = i + 1 < len(transfers) and transfers[i + 1][2]
        in_group = grouped or next_grouped
        if in_group and not grouped:
            calls.append("group_begin")
        if kind == "send":
            calls.append(f"send {peer}")
        else:
            calls.append(f"{'irecv' if in_group else 'recv'} {peer}")
        if grouped and not next_grouped:
            calls.append("group_end")
    return calls


def traced_calls(path):
    """A transport trace's calls without tags, and each peer's tags in the
    order this rank sends to (and receives from) it."""
    calls, sent, received = [], {}, {}
    with open(path) as f:
        for line in f.read().splitlines():
            m = TRACE_RE.match(line)
            if not m:
                calls.append(line)
                continue
            kind, peer, tag = m.group(1), int(m.group(2)), int(m.group(3))
            calls.append(f"{kind} {peer}")
            (sent if kind == "send" else received).setdefault(
                peer, []).append(tag)
    return calls, sent, received


def test_transfer_order(args):
    """What reaches the transport is the schedule's order: for pp-compiled
    MLPs whose schedules pp-insert-transfers ordered for rendezvous
    transfers (`--semantics rendezvous`, the order NCCL needs and a CUDA
    program gets; proved again here by pp-verify-schedule
    {semantics=rendezvous}), every rank's PPRT_TRANSPORT_TRACE holds its
    transfers in the schedule's order, each exchange group bracketed once
    (one NCCL group), and the transfers between two ranks pair up in the
    order both issue them (NCCL matches them so, ignoring tags)."""
    pp_opt = os.path.join(os.path.dirname(args.pp_compile), "pp-opt")
    for ranks, flags in (
            (2, ["--stages", "2", "--microbatches", "4", "--schedule",
                 "zb-h1"]),
            (2, ["--stages", "4", "--ranks", "2", "--microbatches", "4",
                 "--schedule", "interleaved-1f1b"]),
            (4, ["--stages", "4", "--microbatches", "8", "--schedule",
                 "1f1b"])):
        name = f"order_{flags[-1]}_{ranks}"
        flags += ["--semantics", "rendezvous"]
        exe = os.path.join(args.work, name)
        sched = exe + ".mlir"
        subprocess.run([args.pp_compile, args.model, *flags, "-o", exe],
                       check=True)
        subprocess.run([args.pp_compile, args.model, *flags,
                        "--emit=schedule", "-o", sched], check=True)
        subprocess.run([pp_opt, sched, "-o", os.devnull,
                        "--pp-verify-schedule=semantics=rendezvous"],
                       check=True)
        with open(sched) as f:
            expected = schedule_transfers(f.read())
        check(sorted(expected) == list(range(ranks)) and
              any(g for r in expected.values() for (_, _, g) in r),
              f"{name}: no grouped transfers in the schedule")
        prefix = os.path.join(args.work, name + ".trace")
        proc = mpirun(args, ranks, exe, "--steps", "1",
                      env=clean_env(PPRT_TRANSPORT_TRACE=prefix))
        check(proc.returncode == 0, f"{name}: the run failed", proc)
        traces = {r: traced_calls(f"{prefix}.{r}") for r in range(ranks)}
        for r in range(ranks):
            want = expected_calls(expected[r])
            check(traces[r][0] == want, f"{name}: rank {r} issued\n"
                  f"{traces[r][0]}\nfor the schedule's\n{want}")
            for peer, tags in traces[r][1].items():
                check(traces[peer][2].get(r) == tags,
                      f"{name}: rank {r} sends tags {tags} to rank {peer}, "
                      f"which receives {traces[peer][2].get(r)}")


# bf16 keeps 8 significant bits: each GEMM input is rounded with a relative
# error of at most u = 2^-8. A product of two rounded inputs is then off by
# at most 2u, and the fp32 sums of such products by 2u relative to the sum
# of their magnitudes, about 2u for the MLP's well-conditioned layers; a
# squared-error loss doubles a relative error of its inputs, and the
# rounding of both layers adds up: 8u = 2^-5 bounds the loss difference of
# the first steps, before the trajectories drift apart.
BF16_LOSS_RTOL = 2.0 ** -5


def compile_mlp(args, name, *flags):
    """The examples' MLP built with pp-compile and `flags`."""
    exe = os.path.join(args.work, name)
    subprocess.run([args.pp_compile, args.model, *flags, "-o", exe],
                   check=True)
    return exe


def blas_losses(args, exe, library, *flags):
    """The losses of 4 steps of `exe` on the BLAS at `library`."""
    env = clean_env(PPRT_BLAS=library)
    return parse_run(mpirun(args, 1, exe, "--steps", "4", "--lr", "0.1",
                            *flags, env=env))[0]


def check_close_losses(got, want, what):
    check(len(got) == len(want) == 4, f"{what}: expected 4 losses")
    for a, b in zip(want, got):
        check(close(a, b), f"{what}: loss {b} vs OpenBLAS's {a}")


def test_blas(args):
    """PPRT_BLAS: the MLP with library GEMMs trains on OpenBLAS named by
    path exactly as on the linked one, also on a copy of it (a second
    OpenBLAS in the process, on the kernels the backend chose), and on the
    naive BLAS within 1e-5; a library that cannot be loaded, or has no
    cblas_sgemm, ends the run with one line."""
    exe = compile_mlp(args, "mlp_blas", "--stages", "1", "--microbatches", "2",
                      "--gemm=library")
    want = blas_losses(args, exe, "")
    openblas = args.blas.split("|")[0]
    copy = os.path.join(args.work, "libopenblas-copy.so")
    shutil.copyfile(openblas, copy)
    for library in (openblas, copy):
        check(blas_losses(args, exe, library) == want,
              f"PPRT_BLAS={library}: losses differ from the linked "
              "OpenBLAS's")
    check_close_losses(blas_losses(args, exe, args.naive_blas), want,
                       "the naive BLAS")
    missing = os.path.join(args.work, "no-such-blas.so")
    for library, reason in ((missing, f"cannot load '{missing}': "),
                            ("libm.so.6", "'libm.so.6' has no cblas_sgemm")):
        proc = mpirun(args, 1, exe, "--steps", "1",
                      env=clean_env(PPRT_BLAS=library))
        check(proc.returncode == 1 and not proc.stdout, "expected exit 1",
              proc)
        lines = proc.stderr.splitlines()
        check(len(lines) == 1 and lines[0].startswith(
            f"pprt: rank 0: --backend cpu: PPRT_BLAS: {reason}"),
            "expected one line naming the library", proc)


def mkl_library():
    """libmkl_rt of PyPI's mkl (PPRT_TEST_MKL=PATH, or the one in
    ~/.cache/pp-python-venv), or None."""
    venv = os.path.expanduser("~/.cache/pp-python-venv/lib/libmkl_rt.so*")
    for path in [os.environ.get("PPRT_TEST_MKL", "")] + sorted(glob.glob(venv)):
        if path and os.path.exists(path):
            return path
    return None


def test_blas_mkl(args):
    """PPRT_BLAS=libmkl_rt: pprt_gemm's contract holds on MKL (batched
    products through cblas_sgemm_batch_strided), also where
    MKL_INTERFACE_LAYER asks for 64-bit integers (pprt sets the 32-bit
    interface), and the MLP trains as on OpenBLAS within 1e-5, on 1 and 2
    threads."""
    mkl = mkl_library()
    if not mkl:
        raise Skip("no MKL (pip install mkl into ~/.cache/pp-python-venv, "
                   "or set PPRT_TEST_MKL=PATH)")
    for layer in ("", "ILP64"):
        proc = subprocess.run([args.gemm_test], capture_output=True, text=True,
                              env=clean_env(PPRT_BLAS=mkl,
                                            MKL_INTERFACE_LAYER=layer))
        check(proc.returncode == 0,
              f"pprt-gemm-test on {mkl} (MKL_INTERFACE_LAYER={layer}) failed",
              proc)
    exe = compile_mlp(args, "mlp_mkl", "--stages", "1", "--microbatches", "2",
                      "--gemm=library")
    want = blas_losses(args, exe, "")
    for threads in ("1", "2"):
        check_close_losses(blas_losses(args, exe, mkl, "--threads", threads),
                           want, f"MKL on {threads} threads")


def test_precision_bf16(args):
    """pp-compile --precision=bf16 (GEMM inputs rounded to bf16, fp32
    accumulation, fp32 weights, optimizer and loss) trains the MLP on the
    CPU like its fp32 build within BF16_LOSS_RTOL, but not identically (the
    rounding happened), on 1 and 2 ranks, under SGD and Adam."""
    for np, flags in ((1, ["--stages", "1", "--microbatches", "2"]),
                      (2, ["--stages", "2", "--microbatches", "4"])):
        fp32 = compile_mlp(args, f"mlp_fp32_{np}", *flags)
        bf16 = compile_mlp(args, f"mlp_bf16_{np}", *flags, "--precision=bf16")
        for run in (["--steps", "4", "--lr", "0.1"],
                    ["--steps", "4", "--optimizer", "adam", "--lr", "0.01"]):
            want = parse_run(mpirun(args, np, fp32, *run))[0]
            got = parse_run(mpirun(args, np, bf16, *run))[0]
            check(len(got) == len(want) == 4, "expected 4 losses")
            for a, b in zip(want, got):
                check(close(a, b, rel=BF16_LOSS_RTOL, abs_tol=0),
                      f"{np} ranks {run}: bf16 loss {b} vs fp32 {a}")
            check(got != want, f"{np} ranks {run}: bf16 losses {got} equal "
                  "the fp32 ones: no GEMM read bf16")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    for opt in ("mpiexec", "np-flag", "toy", "ref", "user", "error", "group",
                "corpus-prog", "tp", "latency", "lib", "blas", "include", "mpicc", "work",
                "cuda", "pp-compile", "model", "gemm-test", "naive-blas",
                "truncate-shim"):
        p.add_argument(f"--{opt}", default="")
    p.add_argument("test")
    args = p.parse_args()
    try:
        globals()[f"test_{args.test}"](args)
    except Failure as e:
        print(f"FAIL {args.test}: {e}", file=sys.stderr)
        return 1
    except Skip as e:
        print(f"SKIP {args.test}: {e}")
        return 77
    print(f"PASS {args.test}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
