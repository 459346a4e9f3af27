#!/usr/bin/env python3
"""Variable-length inputs as a hostile user gives them: the token-weighted
GPT of step_plans.py (shapes 2 x 16, 4 x 8, 8 x 4, compiled with
--step-plans) runs on 1 rank and on 2 ranks (2 replicas) on seeded
mutations of well-formed data: text indexes with garbage, signs, zeros and
lengths past 2^31 and 2^63, too few and too many samples; .npy lengths of
other dtypes, shapes, byte orders, headers and counts; token files ending
mid-document, end ids outside the vocabulary, documents of 0, 1 and too
many tokens, refused or split (--long-documents); FIFOs that close early,
write partial lines or stall past --timeout; token files rewritten while
the run reads them;
--samples-per-step and --plan-lookahead out of range and options combined
against the rules.

Each case must exit 0 with the losses of its well-formed equivalent (the
same samples as a text index read whole), or exit non-zero with one
`pprt:` line naming its input, within the bound; never a signal, a hang,
a sanitizer report, or exit 0 with other losses. --cases picks that many
of the generated cases (seeded); the findings are listed by kind."""

import argparse
import concurrent.futures
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from step_plans import INDEX, SHAPES, generate  # noqa: E402
from variable_length import CORPUS  # noqa: E402

STEPS = 5
SAMPLES = 8  # a step's samples, as INDEX's
LOOKAHEADS = ["0", "1", "3"]


def write(path, data):
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return path


def npy(path, values, descr="<i8", shape=None, header_extra="",
        version=1, header_len=None):
    """An .npy of `values` packed as `descr`, its header as given."""
    shape = (len(values),) if shape is None else shape
    dims = "".join(f"{d}, " for d in shape) if len(shape) == 1 else \
        ", ".join(map(str, shape))
    header = (f"{{'descr': '{descr}', 'fortran_order': False, "
              f"'shape': ({dims.rstrip(' ') if len(shape) == 1 else dims}), "
              f"{header_extra}}}")
    prefix = 10 if version == 1 else 12
    header += " " * ((64 - (prefix + len(header) + 1) % 64) % 64) + "\n"
    n = len(header) if header_len is None else header_len
    size = struct.pack("<H", n) if version == 1 else struct.pack("<I", n)
    fmt = {"i8": "q", "u8": "Q", "i4": "i", "u4": "I", "i2": "h", "u2": "H",
           "f8": "d", "f4": "f", "i1": "b", "u1": "B"}.get(descr[1:], "q")
    order = ">" if descr[0] == ">" else "<"
    body = b"".join(struct.pack(order + fmt, v) for v in values)
    return write(path, b"\x93NUMPY" + bytes([version, 0]) + size +
                 header.encode() + body)


class Data:
    """Well-formed documents: `lines` of predicted lengths, each document
    its random ids below END and then END, as a uint16 .npy; the same
    samples as a text index and as .npy lengths."""

    def __init__(self, workdir, vocab, lines, seed):
        self.dir = workdir
        self.end = vocab - 1
        rng = random.Random(seed)
        self.lines = lines
        self.ids = []
        for line in lines:
            for n in line:
                self.ids += [rng.randrange(self.end) for _ in range(n)]
                self.ids.append(self.end)
        self.tokens = self.token_file("tokens.npy", self.ids)
        self.index = write(os.path.join(workdir, "index.txt"), "".join(
            " ".join(map(str, line)) + "\n" for line in lines))
        self.lengths = npy(os.path.join(workdir, "lengths.npy"),
                           [n + 1 for line in lines for n in line])

    def token_file(self, name, ids, descr="<u2"):
        return npy(os.path.join(self.dir, name), ids, descr)

    def path(self, name):
        return os.path.join(self.dir, name)


def compile_program(pp_compile, workdir, stages, replicas):
    """The planned program on `stages` x `replicas` ranks."""
    cut = ["--stage-ends", "0"] if stages > 1 else []
    sub = os.path.join(workdir, f"{stages}x{replicas}")
    os.makedirs(sub)
    models = [generate(sub, seq, rows, cut) for seq, rows in SHAPES]
    exe = os.path.join(sub, "planned")
    proc = subprocess.run(
        [pp_compile, models[0], "--stages", str(stages), "--microbatches",
         "1",
         "--schedule", "greedy", "--data-parallel", str(replicas),
         "--step-plans", INDEX, "-O0"] +
        ["--variant=" + m for m in models[1:]] + ["-o", exe],
        capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        sys.exit(f"FAILED: pp-compile\n{proc.stdout}{proc.stderr}")
    with open(models[0]) as f:
        vocab = int(re.search(r"vocabulary (\d+)", f.read()).group(1))
    return exe, vocab


class Outcome:
    def __init__(self, rc, out, seconds):
        self.rc, self.out, self.seconds = rc, out, seconds
        self.losses = [float(x) for x in
                       re.findall(r"^step \d+ loss (\S+)$", out, re.M)]


def execute(exe, ranks, args, bound, background=None):
    cmd = ["mpirun", "-np", str(ranks), exe, "--lr", "0.3"] + args
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    if background:
        threading.Thread(target=background, daemon=True).start()
    try:
        out, _ = proc.communicate(timeout=bound)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, _ = proc.communicate()
        rc = None
    return Outcome(rc, out, time.monotonic() - start)


SANITIZER = re.compile(r"runtime error:|AddressSanitizer|LeakSanitizer|"
                       r"UndefinedBehaviorSanitizer")
# A runtime error, or the program's own for a bad option (then its usage).
ERROR = r"^(?:pprt|\S*planned\S*): .*$"
SIGNAL = re.compile(r"signal \d+|Segmentation fault|core dumped|"
                    r"exited on signal|Aborted|Bus error|killed by signal")


def judge(case, got, reference):
    """The finding's kind, or None: `case.expect` is "same" (exit 0 with
    the reference's losses), "error" (one line matching case.error),
    "either" (one of the two; the losses before an error the reference's
    too), "runs" (exit 0, any losses: no equivalent index) or
    "runs-or-error"."""
    if got.rc is None:
        return "hang"
    if SANITIZER.search(got.out):
        return "sanitizer"
    if got.rc < 0 or got.rc >= 128 or SIGNAL.search(got.out):
        return "crash"
    if case.expect == "runs" or (case.expect == "runs-or-error" and
                                 got.rc == 0):
        return None if got.rc == 0 and len(got.losses) == case.steps \
            else "refused"
    if got.losses != reference[:len(got.losses)]:
        return "wrong-losses"
    if got.rc == 0:
        if case.expect == "error":
            return "accepted"
        return None if len(got.losses) == case.steps else "wrong-losses"
    if case.expect == "same":
        return "refused"
    # Each rank that finds a problem of its own (a --tokens file changed
    # under every reader) may say so: the same line, but for its rank.
    errors = sorted(set(re.sub(r"^pprt: rank \d+: ", "pprt: ", e)
                        for e in re.findall(ERROR, got.out, re.M)))
    if len(errors) != 1 or not re.search(case.error, errors[0]):
        return "unclear-error"
    return None


class Case:
    def __init__(self, name, args, expect="error", error=r".",
                 background=None, bound=30, steps=STEPS, setup=None):
        self.name, self.args, self.expect, self.error = name, args, expect, \
            error
        self.setup = setup
        self.background, self.bound, self.steps = background, bound, steps


def fifo_writer(path, chunks, pause=0.05, hold=0.0):
    """A writer of `chunks` into the FIFO at `path`, then held open for
    `hold` seconds before it closes."""
    def feed():
        try:
            fd = os.open(path, os.O_WRONLY)
        except OSError:
            return
        try:
            for c in chunks:
                os.write(fd, c.encode())
                time.sleep(pause)
            time.sleep(hold)
        except OSError:
            pass
        finally:
            os.close(fd)
    return feed


def cases(data, rng):
    """Every case, in a fixed order; each a function of a fresh name."""
    d = data
    choose = ["--choose-plans", "--steps", str(STEPS)]
    tokens = ["--tokens", d.tokens]
    counter = [0]

    def fresh(name):
        counter[0] += 1
        return d.path(f"c{counter[0]}-{name}")

    def index(name, text, expect="error", error=None, extra=()):
        path = write(fresh("index.txt"), text)
        return Case(name, tokens + ["--sample-lengths", path] + choose +
                    list(extra), expect,
                    error or re.escape(f"--sample-lengths {path}"))

    good = open(d.index).read()
    out = []
    # Text indexes, read whole.
    out.append(index("the index itself", good, "same"))
    out.append(index("commas, tabs, CRLF and comments",
                     "# lengths\r\n" + good.replace(" ", ",\t")
                     .replace("\n", " # x\r\n"), "same"))
    out.append(index("no newline at the end", good.rstrip("\n"), "same"))
    out.append(index("an empty file", "", error=r"no step has a sample"))
    out.append(index("comments only", "# nothing\n#\n",
                     error=r"no step has a sample"))
    for bad in ["x", "-3", "0", "1.5", "3e2", "0x10", "++4", "4-", "\x00",
                "\xff\xfe", "nan", "inf"]:
        lines = good.splitlines()
        k = rng.randrange(len(lines))
        words = lines[k].split()
        words[rng.randrange(len(words))] = bad
        lines[k] = " ".join(words)
        out.append(index(f"the length {bad!r} on line {k + 1}",
                         "\n".join(lines) + "\n",
                         error=rf"line {k + 1}|step {k}"))
    for huge in [2**31 - 1, 2**31, 2**32 + 4, 2**62, 2**63 - 1, 2**63,
                 2**64 + 1, 10**30]:
        lines = good.splitlines()
        k = rng.randrange(len(lines))
        words = lines[k].split()
        words[rng.randrange(len(words))] = str(huge)
        lines[k] = " ".join(words)
        out.append(index(f"a length of {huge} on line {k + 1}",
                         "\n".join(lines) + "\n",
                         error=rf"line {k + 1}|step {k}"))
    out.append(index("two lengths of 2^62 and more on a line",
                     f"{2**62} {2**62} {2**62} 4 4 4 4 4\n",
                     error=r"line 1|step 0"))
    out.append(index("one sample a step", "3\n5\n", "runs"))
    out.append(index("17 samples a step", " ".join(["2"] * 17) + "\n",
                     "runs-or-error", error=r"step 0"))
    out.append(index("a sample past every shape", "17 1 1 1 1 1 1 1\n",
                     error=r"step 0"))
    out.append(index("a sample past the tokens", f"{len(d.ids)}\n",
                     error=r"step 0"))
    out.append(index("a line of 100000 samples",
                     " ".join(["1"] * 100000) + "\n", error=r"step 0"))
    out.append(index("a line of 100000 random lengths",
                     " ".join(str(rng.randrange(1, 30))
                              for _ in range(100000)) + "\n",
                     error=r"step 0"))

    # Streamed indexes (--plan-lookahead), a regular file and FIFOs.
    for k in ["-1", "1000001", str(2**63), "x", ""]:
        out.append(Case(f"--plan-lookahead {k!r}",
                        tokens + ["--sample-lengths", d.index,
                                  "--plan-lookahead", k] + choose,
                        error=r"--plan-lookahead"))
    for k in LOOKAHEADS + ["1000000"]:
        out.append(Case(f"a regular file streamed, look-ahead {k}",
                        tokens + ["--sample-lengths", d.index,
                                  "--plan-lookahead", k] + choose +
                        ["--steps", str(len(d.lines))], "same",
                        steps=len(d.lines)))
    out.append(Case("a regular file streamed past its end",
                    tokens + ["--sample-lengths", d.index,
                              "--plan-lookahead", "1"] + choose, "error",
                    r"the index ended after 3 steps"))
    lines = good.splitlines(keepends=True)
    stream = (lines * 2)[:STEPS]

    def fifo(name, chunks, expect, error, k="1", pause=0.05, hold=0.0,
             timeout="60", bound=30):
        path = fresh("fifo")
        os.mkfifo(path)
        return Case(name, tokens + ["--sample-lengths", path,
                                    "--plan-lookahead", k,
                                    "--timeout", timeout] + choose,
                    expect, error, fifo_writer(path, chunks, pause, hold),
                    bound)

    for k in LOOKAHEADS:
        out.append(fifo(f"a FIFO, look-ahead {k}", stream, "same", ".", k))
        out.append(fifo(f"a FIFO a byte at a time, look-ahead {k}",
                        list("".join(stream)), "same", ".", k, pause=0.001))
    out.append(fifo("a FIFO closed after 2 steps", stream[:2], "error",
                    r"the index ended after 2 steps"))
    out.append(fifo("a FIFO closed at once", [], "error",
                    r"the index ended after 0 steps"))
    out.append(fifo("a FIFO closed mid-line", stream[:2] + ["4 4 2"],
                    "error", r"line 3|step 2|ended after"))
    out.append(fifo("a FIFO with garbage on line 3",
                    stream[:2] + ["4 x 2\n"] + stream[3:], "error",
                    r"line 3"))
    out.append(fifo("a FIFO stalled past --timeout 1", stream[:2], "error",
                    r"line 3: no line came within --timeout 1", timeout="1",
                    hold=60, bound=25))
    unwritten = fresh("fifo")
    os.mkfifo(unwritten)
    out.append(Case("a FIFO no writer opens",
                    tokens + ["--sample-lengths", unwritten,
                              "--plan-lookahead", "1", "--timeout", "1"] +
                    choose, "error", r"line 1: no line came within --timeout 1",
                    bound=25))
    out.append(fifo("a FIFO's lines of 200000 samples",
                    [" ".join(["1"] * 200000) + "\n"] * STEPS, "error",
                    r"step 0"))
    out.append(fifo("a FIFO's line of 100000 random lengths",
                    [" ".join(str(rng.randrange(1, 30)) for _ in
                              range(100000)) + "\n"] * STEPS, "error",
                    r"step 0"))
    out.append(fifo("a FIFO whose last line ends mid-line",
                    stream[:STEPS - 1] + [stream[STEPS - 1][:3]], "error",
                    rf"line {STEPS}"))

    # Documents by their end id.
    docs = tokens + ["--document-end", str(d.end)] + choose

    def documents(name, extra, expect="same", error=r"--document-end",
                  ids=None, descr="<u2"):
        args = list(docs)
        if ids is not None:
            path = d.token_file(os.path.basename(fresh("tokens.npy")), ids,
                                descr)
            args[1] = path
        return Case(name, args + list(extra), expect, error)

    for k in LOOKAHEADS:
        out.append(documents(f"documents by end id, look-ahead {k}",
                             ["--plan-lookahead", k]))
    for n in ["0", "-1", "1000001", str(2**63), "x"]:
        out.append(documents(f"--samples-per-step {n}",
                             ["--samples-per-step", n], "error",
                             r"--samples-per-step"))
    out.append(documents("--samples-per-step 1000000",
                         ["--samples-per-step", "1000000"], "error",
                         r"--document-end|step"))
    for n in ["-1", str(2**63), "x", str(d.end + 1), "65536", str(2**40)]:
        out.append(Case(f"--document-end {n}",
                        tokens + ["--document-end", n] + choose, "error",
                        r"--document-end"))
    out.append(documents("a token file ending mid-document", [], "error",
                         r"ends mid-document", ids=d.ids[:-3]))
    out.append(documents("a token file of one token, the end id", [],
                         "error", r"--tokens .*corpus has 1 tokens",
                         ids=[d.end]))
    out.append(documents("a token file of end ids only", [], "error",
                         r"no document has a token", ids=[d.end] * 50))
    out.append(documents("a document of 40 tokens", [], "error",
                         r"longer than", ids=[1] * 40 + [d.end] + d.ids))
    out.append(documents("a file without an end id but the last", [],
                         "error", r"longer than",
                         ids=[1] * 100000 + [d.end]))
    split = ["--long-documents", "split"]
    out.append(documents("--long-documents split, nothing to cut", split))
    # The first document (16 predicted tokens) and the second joined: the
    # pieces are the index's samples, one target other.
    joined = list(d.ids)
    joined[d.lines[0][0]] = 1
    out.append(documents("two documents joined, split", split, "runs",
                         ids=joined))
    out.append(documents("a document of 18 tokens, split (a piece of 1)",
                         split, "runs", ids=[1] * 17 + [d.end] + d.ids))
    out.append(documents("a file without an end id but the last, split",
                         split, "error", r"no plan",
                         ids=[1] * 100000 + [d.end]))
    for v in ["cut", "", "Split"]:
        out.append(documents(f"--long-documents {v!r}",
                             ["--long-documents", v], "error",
                             r"--long-documents"))
    out.append(Case("--long-documents with a text index",
                    tokens + ["--sample-lengths", d.index] + split + choose,
                    "error", r"--long-documents"))
    out.append(documents("an id outside the vocabulary", [], "error",
                         r"--tokens|vocabulary",
                         ids=[d.end + 5] + d.ids[1:]))
    out.append(documents("empty documents between", [], "same",
                         ids=[d.end] * 3 + d.ids))
    out.append(documents("uint32 ids", [], ids=d.ids, descr="<u4"))
    out.append(documents("big-endian ids", [], "error", r"--tokens",
                         ids=d.ids, descr=">u2"))
    out.append(Case("--document-end with --sample-lengths",
                    docs + ["--sample-lengths", d.index], "error",
                    r"--document-end"))
    out.append(Case("--document-end without --choose-plans",
                    tokens + ["--document-end", str(d.end), "--steps", "2"],
                    "error", r"--choose-plans"))
    out.append(Case("--document-end with --corpus",
                    ["--corpus", CORPUS, "--document-end", "3"] + choose,
                    "error", r"--tokens|--corpus"))
    out.append(Case("--samples-per-step with a text index",
                    tokens + ["--sample-lengths", d.index,
                              "--samples-per-step", "8"] + choose,
                    "error", r"--samples-per-step"))
    out.append(Case("--document-end with --first-step",
                    docs + ["--first-step", "2"], "error", r"--first-step"))

    # Document lengths from a .npy.
    def lengths(name, values, expect="error", error=None, extra=(), **kw):
        path = npy(fresh("lengths.npy"), values, **kw)
        return Case(name, tokens + ["--sample-lengths", path] + choose +
                    list(extra), expect,
                    error or re.escape(f"--sample-lengths {path}"))

    flat = [n + 1 for line in d.lines for n in line]
    for k in LOOKAHEADS:
        out.append(lengths(f".npy lengths, look-ahead {k}", flat, "same",
                           extra=["--plan-lookahead", k]))
    for descr in ["<i4", "<u4", "<i2", "<u2", "<u8"]:
        out.append(lengths(f".npy lengths as {descr}", flat, "same",
                           descr=descr))
    for descr in ["<f8", "<f4", "|i1", "|u1", ">i8", ">i4", "<c16", "|b1"]:
        out.append(lengths(f".npy lengths as {descr}", flat, descr=descr))
    out.append(lengths("a 2-D .npy", flat, shape=(len(flat) // 2, 2)))
    out.append(lengths("a 0-D .npy", flat[:1], shape=()))
    out.append(lengths("an empty .npy", [], shape=(0,)))
    out.append(lengths("a count past the file", flat, shape=(len(flat) + 9,)))
    out.append(lengths("a count that overflows", flat, shape=(2**61,)))
    out.append(lengths("a count past 2^63", flat, shape=(2**63,)))
    out.append(lengths("a header length past the file", flat,
                       header_len=60000))
    out.append(lengths("a version-2 header of 2^32-1 bytes", flat,
                       version=2, header_len=2**32 - 1))
    out.append(lengths("a header padded to 4000 bytes", flat, "same",
                       header_extra="'x': '" + "y" * 3900 + "', "))
    out.append(lengths("a header of 5000 bytes", flat,
                       header_extra="'x': '" + "y" * 4900 + "', "))
    out.append(lengths("a negative length", [5, -3] + flat))
    out.append(lengths("a length of -2^63", [-2**63] + flat))
    out.append(lengths("a length of 2^63 - 1", [2**63 - 1] + flat))
    out.append(lengths("a uint64 length of 2^64 - 1", [2**64 - 1] + flat,
                       descr="<u8"))
    out.append(lengths("a uint64 length of 2^63", [2**63] + flat,
                       descr="<u8"))
    out.append(lengths("lengths past the tokens", flat + [9, 9, 9]))
    out.append(lengths("zero lengths between", [0, 0] + flat, "same"))
    out.append(lengths("all lengths 1", [1] * 40, error=r"no document"))
    out.append(lengths("a length past every shape", [40] + flat))
    out.append(lengths(".npy lengths, split, nothing to cut", flat, "same",
                       extra=split))
    out.append(lengths("a length past every shape, split",
                       [40] + flat, extra=split))
    out.append(Case("a .npy that is not one", tokens + [
        "--sample-lengths", write(fresh("lengths.npy"), "1 2 3\n")] + choose,
        error=r"\.npy"))
    out.append(Case("a .npy truncated in its header", tokens + [
        "--sample-lengths", write(fresh("lengths.npy"), b"\x93NUMPY\x01")]
        + choose, error=r"\.npy"))

    # The token file rewritten and truncated while the run reads it (each
    # run on a fresh copy).
    def rewrite(name, how, extra=()):
        path = fresh("tokens.npy")

        def act():
            time.sleep(0.6)
            how(path)

        def setup():
            d.token_file(os.path.basename(path), d.ids)
        return Case(name, ["--tokens", path, "--document-end", str(d.end),
                           "--choose-plans", "--steps", "1000",
                           "--plan-lookahead", "1"] + list(extra), "either",
                    r"--tokens \S+: |--document-end", act, steps=1000,
                    setup=setup)
    out.append(rewrite("tokens truncated while read",
                       lambda p: os.truncate(p, 200)))
    out.append(rewrite("tokens truncated while read, split",
                       lambda p: os.truncate(p, 200), split))

    def scramble(p):
        with open(p, "r+b") as f:
            f.seek(128)
            f.write(b"\xff\x7f" * ((os.path.getsize(p) - 128) // 2))
    out.append(rewrite("tokens rewritten in place while read", scramble))
    return out


# The cases that found something (a signal, a hang, a sanitizer report, a
# wrong or unclear result) before the runtime was fixed: every run has them.
FOUND = (r"'\\x00'|^the length 'x'|a length of (9223372036854775808|"
         r"18446744073709551617)|two lengths of 2\^62|mid-line|stalled|"
         r"no writer|100000 random|samples-per-step 1000000$|2\^63 - 1|"
         r"2\^64 - 1|2\^63$|rewritten in place")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--cases", type=int, default=16,
                        help="how many of the generated cases beside those "
                        "that found something (each on every layout); 0: "
                        "all")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--program", action="append", default=[],
                        help="SxR=PATH: run PATH (the same program linked "
                        "another way, e.g. against a sanitized runtime) "
                        "for layout SxR")
    parser.add_argument("--only", default="",
                        help="run only the cases whose name matches")
    parser.add_argument("--layouts", default="1x1,1x2",
                        help="stages x replicas of each program to run on")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    findings = {}
    total = 0
    with tempfile.TemporaryDirectory() as workdir:
        layouts = [tuple(map(int, layout.split("x")))
                   for layout in args.layouts.split(",")]
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            built = pool.map(lambda sr: compile_program(
                args.pp_compile, workdir, *sr), layouts)
            programs = {s * r: program
                        for (s, r), program in zip(layouts, built)}
        for given in args.program:
            layout, path = given.split("=", 1)
            stages, replicas = map(int, layout.split("x"))
            programs[stages * replicas] = (
                os.path.abspath(path), programs[stages * replicas][1])
        vocab = next(iter(programs.values()))[1]
        with open(INDEX) as f:
            lines = [[int(x) for x in re.split(r"[ ,]+", ln.split("#")[0]
                                               .strip())]
                     for ln in f if ln.split("#")[0].strip()]
        data = Data(workdir, vocab, lines, args.seed)
        every = cases(data, rng)
        found = [c for c in every if re.search(FOUND, c.name)]
        rest = [c for c in every if c not in found]
        chosen = every if args.cases <= 0 else found + rng.sample(
            rest, min(args.cases, len(rest)))
        chosen = [c for c in chosen if re.search(args.only, c.name)]
        for ranks, (exe, _) in programs.items():
            ref = execute(exe, ranks, ["--tokens", data.tokens,
                                       "--sample-lengths", data.index,
                                       "--choose-plans", "--steps",
                                       "1000"], 120)
            if ref.rc != 0:
                sys.exit(f"FAILED: the reference run\n{ref.out}")
            for case in chosen:
                total += 1
                if case.setup:
                    case.setup()
                got = execute(exe, ranks, case.args, case.bound,
                              case.background)
                kind = judge(case, got, ref.losses)
                status = kind or "ok"
                first = next((ln for ln in got.out.splitlines()
                              if ln.startswith("pprt:")), "")
                print(f"{status:14} {ranks} rank(s): {case.name} "
                      f"[{got.seconds:.1f} s] {first[:160]}")
                if kind:
                    findings.setdefault(kind, []).append(
                        f"{ranks} rank(s): {case.name}: rc {got.rc}: "
                        f"{got.out[-600:]}")
    print(f"{total} cases, {sum(map(len, findings.values()))} findings" +
          "".join(f", {k} {len(v)}" for k, v in sorted(findings.items())))
    for kind, items in sorted(findings.items()):
        for item in items:
            print(f"FINDING {kind}: {item}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
