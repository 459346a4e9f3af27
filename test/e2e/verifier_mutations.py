#!/usr/bin/env python3
"""Differential mutation test of pp-verify-schedule: valid schedules from
every generator are mutated (an action dropped, duplicated, moved past its
neighbour, misrouted to another peer, or renumbered), and the verifier must
reject exactly the mutants that an independent validator of the JSON
contract (test/Target/validate_schedule_json.py, docs/ScheduleJSON.md) rejects."""

import argparse
import concurrent.futures
import importlib.util
import json
import os
import random
import re
import subprocess
import sys

# (schedule, stages, ranks, micro-batches, split backward)
# Every built-in schedule, so that each one's export is also checked
# against the contract.
SCHEDULES = [
    ("gpipe", 3, 3, 3, False), ("1f1b", 3, 3, 4, False),
    ("1f1b", 3, 3, 4, True), ("zb-h1", 3, 3, 4, False),
    ("zb-h2", 3, 3, 4, False), ("interleaved-1f1b", 6, 3, 3, False),
    ("looped-bfs", 6, 3, 3, False), ("zbv", 6, 3, 4, False),
    ("v-half", 6, 3, 4, False), ("v-min", 6, 3, 4, False),
    ("dualpipev", 6, 3, 6, False), ("hanayo", 12, 3, 5, False),
    ("interleaved-zb", 6, 3, 3, False),
    ("auto", 3, 3, 4, False),
]
ACTION = re.compile(r"^\s*pp\.(compute|send|recv|all_reduce)\b")


def load_validator(path):
    spec = importlib.util.spec_from_file_location("validate_schedule_json",
                                                  path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generate(args, name, stages, ranks, microbatches, split):
    spec = (f"schedule={name} num-stages={stages} num-ranks={ranks} "
            f"num-microbatches={microbatches} "
            f"split-backward={'true' if split else 'false'}")
    out = subprocess.run([args.pp_opt, "-", f"--pp-schedule={spec}",
                          "--pp-insert-transfers"], input="module {}",
                         capture_output=True, text=True, check=True).stdout
    # Optimizer steps are outside the JSON contract: leave them out.
    return [l for l in out.splitlines() if "pp.optimizer_step" not in l]


def mutate(lines, rng):
    """One random mutation of an action line; None if it changed nothing."""
    actions = [i for i, l in enumerate(lines) if ACTION.match(l)]
    i = rng.choice(actions)
    kind = rng.choice(["drop", "duplicate", "swap", "peer", "mb", "stage"])
    out = list(lines)
    if kind == "drop":
        del out[i]
    elif kind == "duplicate":
        out.insert(i, out[i])
    elif kind == "swap":
        if i + 1 >= len(out) or not ACTION.match(out[i + 1]):
            return None
        out[i], out[i + 1] = out[i + 1], out[i]
    else:
        field = {"peer": r"(to|from) (\d+)", "mb": r"(mb) (\d+)",
                 "stage": r"(stage) (\d+)"}[kind]
        m = re.search(field, out[i])
        if not m:
            return None
        value = max(0, int(m.group(2)) + rng.choice([-1, 1]))
        out[i] = out[i][:m.start(2)] + str(value) + out[i][m.end(2):]
    return None if out == lines else "\n".join(out)


MARKER = "// ----- next chunk"


def run_chunks(tool, flags, texts):
    """Runs `tool` once on every text (--split-input-file); its exit status
    and each text's output, empty where the text failed."""
    proc = subprocess.run(
        [tool, "-", "--split-input-file", f"--output-split-marker={MARKER}",
         *flags], input="\n// -----\n".join(texts), capture_output=True,
        text=True)
    outputs = proc.stdout.split(MARKER)
    if len(outputs) != len(texts):
        raise RuntimeError(f"{tool}: {len(outputs)} outputs for "
                           f"{len(texts)} inputs\n{proc.stderr[-2000:]}")
    return proc.returncode, [o.strip() for o in outputs]


def validator_rejects(validator, document):
    try:
        return bool(validator.Validator(json.loads(document)).run())
    except Exception:  # the validator's own run would fail too
        return True


def judge_one(args, validator, text):
    """(verifier rejects, validator rejects) for one schedule, or ("crash",
    None) when the verifier died."""
    verify = subprocess.run([args.pp_opt, "-", "--pp-verify-schedule"],
                            input=text, capture_output=True, text=True)
    if verify.returncode not in (0, 1):
        return "crash", None
    export = subprocess.run([args.pp_translate, "-", "--pp-schedule-to-json"],
                            input=text, capture_output=True, text=True)
    if export.returncode != 0:  # malformed beyond JSON: both must reject
        return verify.returncode != 0, True
    return verify.returncode != 0, validator_rejects(validator, export.stdout)


def judge(args, validator, texts):
    """judge_one of every text, with one pp-opt and one pp-translate for
    all of them; one by one if the batch crashed."""
    status, verified = run_chunks(args.pp_opt, ["--pp-verify-schedule"], texts)
    if status not in (0, 1):
        return [judge_one(args, validator, text) for text in texts]
    _, exported = run_chunks(args.pp_translate, ["--pp-schedule-to-json"],
                             texts)
    return [(not v, True) if not e else (not v, validator_rejects(validator, e))
            for v, e in zip(verified, exported)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-opt", required=True)
    parser.add_argument("--pp-translate", required=True)
    parser.add_argument("--validator", required=True)
    parser.add_argument("--mutants", type=int, default=40,
                        help="mutants per schedule")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    jobs = []
    for name, stages, ranks, microbatches, split in SCHEDULES:
        lines = generate(args, name, stages, ranks, microbatches, split)
        valid = "\n".join(lines)
        jobs.append((f"{name} (unmutated)", valid))
        while sum(1 for j in jobs if j[0].startswith(name + " ")) < args.mutants:
            mutant = mutate(lines, rng)
            if mutant:
                jobs.append((f"{name} mutant", mutant))
    validator = load_validator(args.validator)
    groups = [jobs[i:i + args.mutants] for i in range(0, len(jobs),
                                                      args.mutants)]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        verdicts = [v for group in pool.map(
            lambda g: judge(args, validator, [text for _, text in g]), groups)
                    for v in group]
    passed = failed = rejected = 0
    for (label, text), (verifier, oracle) in zip(jobs, verdicts):
        ok = verifier == oracle
        if label.endswith("(unmutated)") and (verifier or oracle):
            ok = False  # a generated schedule must be valid
        rejected += bool(oracle)
        if not ok:
            print(f"MISMATCH {label}: verifier rejects={verifier}, "
                  f"validator rejects={oracle}\n{text}\n")
        passed, failed = passed + ok, failed + (not ok)
    print(f"{len(jobs)} schedules, {rejected} broken by the validator's "
          f"judgement, verifier agreed on {passed}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
