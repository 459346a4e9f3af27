"""Faults of a whole job and of its files, for fault_injection.py: the job
suspended as a whole (SIGSTOP of every process, as a batch scheduler
does, then SIGCONT), a reader of its standard output that pauses (while
the job trains, or through its end), a second
job on its checkpoint directory or --save file, a --data file truncated,
rewritten or replaced while it trains, and a file-size limit (ulimit -f)
below a checkpoint's size. Each must end by itself: a suspended job or a
paused reader only delays it (exit 0, the unbroken run's weights bit for
bit), a second job is refused at once naming the first, a changed file
changes nothing (the arrays were read at start), and a limit ends the job
with the write named and the previous checkpoint intact. A row records a
hang, a silent wrong result (exit 0 with other weights) and data lost (a
checkpoint torn or gone)."""

import filecmp
import json
import os
import re
import resource
import signal
import struct
import subprocess
import time

from pprt_tests import children_of, npy_bytes  # noqa: E402

KINDS = ("suspend", "shared", "changed", "fsize", "reader_end", "reader")


def count_lines(path):
    try:
        with open(path) as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def wait_until(cond, limit_s, job=None):
    deadline = time.monotonic() + limit_s
    while not cond():
        if (job and job.poll() is not None) or time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


class JobFaults:
    """Runs job faults with `campaign`'s compiled programs and unbroken
    runs (fault_injection.Campaign)."""

    def __init__(self, campaign):
        self.c = campaign
        self.args = campaign.args
        self.workdir = campaign.workdir
        self.rates = {}  # steps per second of a short unbroken run

    def path(self, i, name):
        return os.path.join(self.workdir, f"job{i}-{name}")

    def start(self, cmd, **kw):
        return subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, **kw)

    def finish(self, job, row):
        """Waits for `job` within the bound; records hang, exit, stderr."""
        start = time.monotonic()
        try:
            out, err = job.communicate(timeout=self.args.bound + 60)
            row["hung"] = False
        except subprocess.TimeoutExpired:
            row["hung"] = True
            os.killpg(job.pid, signal.SIGKILL)
            out, err = job.communicate()
        row["seconds"] = time.monotonic() - start
        row["rc"] = job.returncode
        row["err"] = err
        return out

    def same_as_unbroken(self, row, config, opt, steps, save, extra=()):
        whole = self.c.unbroken_weights(config, opt, steps, extra)
        row["bitwise"] = os.path.exists(save) and filecmp.cmp(
            whole, save, shallow=False)
        row["wrong"] = row["rc"] == 0 and not row["bitwise"]

    def fault(self, i, kind, rng):
        config = ("4x1", "2x2")[i % 2]
        opt = ("sgd", "adam")[(i // 2) % 2]
        row = {"i": i, "kind": kind, "config": config, "opt": opt,
               "moment": "train",
               "hung": False, "wrong": False, "lost": False, "err": "",
               "seconds": 0.0, "rc": None}
        getattr(self, kind)(i, row, config, opt, rng)
        return row

    def suspend(self, i, row, config, opt, rng):
        """Every process of the job stopped for longer than the watchers'
        stop limit (2 timeouts + 2 s), continued in a random order."""
        steps, save, metrics = 600, self.path(i, "w.safetensors"), \
            self.path(i, "metrics")
        job = self.start(self.c.base(config, opt) + [
            "--steps", str(steps), "--save", save, "--metrics", metrics],
            stdout=subprocess.DEVNULL)
        at = rng.randrange(20, 300)
        row["hit"] = wait_until(lambda: count_lines(metrics) >= at, 60, job)
        pids = children_of(job.pid)
        rng.shuffle(pids)
        for sig in (signal.SIGSTOP, signal.SIGCONT):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            if sig == signal.SIGSTOP:
                time.sleep(2 * self.args.timeout + 3 + rng.uniform(0, 2))
        self.finish(job, row)
        row["ok"] = row["rc"] == 0
        self.same_as_unbroken(row, config, opt, steps, save)

    def reader(self, i, row, config, opt, rng):
        """Standard output unread while rank 0 prints more lines than the
        pipes to the reader hold (about 5,000), and for 1.5 timeouts more;
        read again before the job ends (a reader still paused then keeps
        the launcher from MPI_Finalize: docs/Reliability.md). The job's
        length comes from the rate of a short run, so that a fast machine
        does not end it before the pause is long enough."""
        steps = self.reader_steps(config, opt)
        save, metrics = self.path(i, "w.safetensors"), self.path(i, "metrics")
        job = self.start(self.c.base(config, opt) + [
            "--steps", str(steps), "--save", save, "--metrics", metrics],
            stdout=subprocess.PIPE)
        wait_until(lambda: count_lines(metrics) >= 100, 60, job)
        paused = count_lines(metrics)
        filled = wait_until(lambda: count_lines(metrics) >= paused + 6000,
                            60 + 6000 / 50, job)
        longer = time.monotonic()
        wait_until(lambda: time.monotonic() - longer > 1.5 * self.args.timeout
                   or count_lines(metrics) >= steps - steps // 10,
                   3 * self.args.timeout, job)
        longer = time.monotonic() - longer
        row["hit"] = (filled and longer > self.args.timeout
                      and count_lines(metrics) < steps)
        out = self.finish(job, row)
        lines = [l for l in out.splitlines() if l.startswith("step ")]
        row["ok"] = row["rc"] == 0 and len(lines) == steps
        self.same_as_unbroken(row, config, opt, steps, save)

    def reader_end(self, i, row, config, opt, rng):
        """Standard output unread from the first steps until every step is
        done and 2 to 3 timeouts more: the ranks end their run and wait in
        MPI_Finalize on the launcher, which waits on the reader. 9,000
        lines, more than the pipes to the reader hold (about 5,000), so
        that the launcher is blocked writing them."""
        steps = 9000
        save, metrics = self.path(i, "w.safetensors"), self.path(i, "metrics")
        job = self.start(self.c.base(config, opt) + [
            "--steps", str(steps), "--save", save, "--metrics", metrics],
            stdout=subprocess.PIPE)
        ended = wait_until(lambda: count_lines(metrics) >= steps,
                           60 + steps / 50, job)
        time.sleep((2 + rng.random()) * self.args.timeout)
        row["hit"] = ended and job.poll() is None
        out = self.finish(job, row)
        lines = [l for l in out.splitlines() if l.startswith("step ")]
        row["ok"] = row["rc"] == 0 and len(lines) == steps
        self.same_as_unbroken(row, config, opt, steps, save)

    def reader_steps(self, config, opt):
        """Steps for which a job prints 6,100 lines and then runs about 3
        timeouts more, at the step time an unbroken 2,000-step run measured
        (--metrics: steps alone, so the rate is high and the job no
        shorter)."""
        if (config, opt) not in self.rates:
            metrics = self.path(f"rate-{config}-{opt}", "metrics")
            self.c.unbroken_weights(config, opt, 2000, ["--metrics", metrics])
            with open(metrics) as f:
                seconds = sum(json.loads(l)["seconds"] for l in f)
            self.rates[config, opt] = 2000 / seconds
        steps = 6100 + int(self.rates[config, opt] * 3 * self.args.timeout)
        return min(max(9000, -(-steps // 1000) * 1000), 200000)

    def shared(self, i, row, config, opt, rng):
        """A second job on the first's checkpoint directory, and a third on
        its --save file, while it trains."""
        ckpt, save = self.path(i, "ckpt"), self.path(i, "w.safetensors")
        job = self.start(self.c.base(config, opt) + [
            "--steps", "1000000", "--checkpoint", ckpt,
            "--checkpoint-every", "1", "--save", save],
            stdout=subprocess.DEVNULL)
        row["hit"] = wait_until(
            lambda: os.path.exists(os.path.join(ckpt,
                                                "checkpoint.safetensors")),
            60, job)
        refused = []
        for option, value, other in (
                ("--checkpoint", ckpt, ["--save", self.path(i, "x")]),
                ("--save", save, [])):
            second = subprocess.run(
                self.c.base(config, opt) + ["--steps", "2", option, value,
                                            *other],
                capture_output=True, text=True, timeout=self.args.bound + 60)
            refused.append(second.returncode == 2 and re.search(
                rf"pprt: rank 0: {option}: '{re.escape(value)}' is in use by "
                r"another job \(pid \d+ on host \S+\)", second.stderr))
        job.send_signal(signal.SIGTERM)
        self.finish(job, row)
        row["ok"] = all(refused) and job.poll() is not None
        self.c.check_checkpoint(row, config, opt, ckpt)
        row["lost"] = not row["intact"]
        row["wrong"] = row["intact"] and not row["bitwise"]

    def data_arrays(self, i, rows, seed):
        x = [((k * 37 + seed) % 101) / 50.0 - 1.0 for k in range(rows * 16)]
        y = [((k * 53 + seed) % 89) / 44.0 - 1.0 for k in range(rows * 4)]
        return (npy_bytes("<f4", f"({rows}, 16)",
                          struct.pack(f"<{len(x)}f", *x)),
                npy_bytes("<f4", f"({rows}, 4)",
                          struct.pack(f"<{len(y)}f", *y)))

    def changed(self, i, row, config, opt, rng):
        """--data's array truncated, rewritten in place or replaced while
        the job trains."""
        rows, steps = 256, 400
        x_path, y_path = self.path(i, "x.npy"), self.path(i, "y.npy")
        x, y = self.data_arrays(i, rows, 0)
        for path, data in ((x_path, x), (y_path, y)):
            with open(path, "wb") as f:
                f.write(data)
        data = ["--data", f"{x_path},{y_path}"]
        save, metrics = self.path(i, "w.safetensors"), self.path(i, "metrics")
        job = self.start(self.c.base(config, opt) + data + [
            "--steps", str(steps), "--save", save, "--metrics", metrics],
            stdout=subprocess.DEVNULL)
        row["hit"] = wait_until(
            lambda: count_lines(metrics) >= rng.randrange(5, 100), 60, job)
        how = ("truncate", "rewrite", "replace")[(i // len(KINDS)) % 3]
        row["how"] = how
        other, _ = self.data_arrays(i, rows, 7)
        if how == "truncate":
            os.truncate(x_path, 200)
        elif how == "rewrite":
            with open(x_path, "r+b") as f:
                f.write(other)
        else:
            with open(x_path + ".new", "wb") as f:
                f.write(other)
            os.replace(x_path + ".new", x_path)
        self.finish(job, row)
        row["ok"] = row["rc"] == 0
        with open(x_path, "wb") as f:
            f.write(x)
        self.same_as_unbroken(row, config, opt, steps, save, data)

    def fsize(self, i, row, config, opt, rng):
        """A job resumed under a file-size limit below its checkpoint's
        size: every write fails like a full disk, and the checkpoint it
        resumed from stays."""
        ckpt, save = self.path(i, "ckpt"), self.path(i, "w.safetensors")
        # A longer timeout on a loaded machine, as the fault is not about
        # time.
        base = self.c.base(config, opt, timeout=20)
        self.c.run_ok(base + ["--steps", "2", "--checkpoint", ckpt])
        before = os.path.join(ckpt, "checkpoint.safetensors")
        with open(before, "rb") as f:
            kept = f.read()
        limit = len(kept) // 2
        cwd = self.path(i, "cwd")
        os.makedirs(os.path.join(cwd, "tmp"))

        def limited():
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        job = self.start(base + [
            "--steps", "2", "--resume", ckpt, "--checkpoint", ckpt,
            "--checkpoint-every", "1", "--save", save],
            stdout=subprocess.DEVNULL, cwd=cwd, preexec_fn=limited,
            # MPICH's and UCX's POSIX shared memory files are past the
            # limit; System V segments are not files. (UCX over TCP
            # deadlocks in MPI_Finalize now and then: a rank flushing its
            # endpoints waits on one blocked in the PMI barrier.)
            env=dict(os.environ, TMPDIR=os.path.join(cwd, "tmp"),
                     UCX_TLS="self,sysv", MPIR_CVAR_NOLOCAL="1"))
        row["hit"] = True
        self.finish(job, row)
        left = [os.path.join(d, n)
                for d in (ckpt, cwd, os.path.join(cwd, "tmp"))
                for n in os.listdir(d) if n.endswith(".tmp")]
        with open(before, "rb") as f:
            row["intact"] = f.read() == kept
        row["lost"] = not row["intact"]
        row["ok"] = (row["rc"] == 1 and not left and
                     "File too large (past the file-size limit" in row["err"])
        row["wrong"] = row["rc"] == 0
