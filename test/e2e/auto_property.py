#!/usr/bin/env python3
"""Properties of `pp-schedule{schedule=auto}` on seeded random problems.

A user schedules with `pp-opt --pp-schedule{...} --pp-insert-transfers
--pp-verify-schedule --pp-simulate` and expects `auto` to be the fastest
schedule pp can emit for the problem. On random problems (2 to 8 ranks,
one or two stages per rank, 4 to 64 micro-batches, heterogeneous F, B, W,
activation and stash per stage, transfer time > 0, a memory cap per rank,
async and rendezvous transfers, split and fused backwards, and in half of
them measured optimizer steps per stage and a per-step set-up, given in a
pp-profile-v1 cost file as a profiler writes them) this checks,
for the program each schedule emits as `pp-simulate` times it:

- the makespans `auto`'s and `exact`'s remarks report are `pp-simulate`'s
  (1e-9 relative);
- `auto` is no slower than any built-in that schedules the problem within
  the caps, `greedy` included;
- `auto` is no slower than `exact`'s schedule wherever `exact` proves an
  optimum, and equals it under async transfers with one stage per rank
  (exact's model, where it searches every placement auto does);
- where `auto` finds nothing within the caps, no built-in does either.

Transfer semantics are given to pp-schedule alone: the later passes read
them from the schedule, so the pipeline runs and times one program.
"""

import argparse
import concurrent.futures
import json
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

BUILTINS = ['gpipe', '1f1b', 'interleaved-1f1b', 'looped-bfs', 'zb-h1',
            'zb-h2', 'zbv', 'v-half', 'v-min', 'dualpipev', 'hanayo',
            'interleaved-zb', 'greedy']
RELATIVE = 1e-9
EXACT_ACTIONS = 3000  # the largest problem `exact` searches


def parse_f64(text):
    if text.startswith('0x'):
        return struct.unpack('>d', bytes.fromhex(text[2:].rjust(16, '0')))[0]
    return float(text)


def values(xs):
    return ','.join(repr(round(x, 3)) for x in xs)


def random_problem(rng):
    ranks = rng.randint(2, 8)
    stages = ranks * rng.choice([1, 1, 2])
    mbs = rng.choice([4, 5, 6, 8, 12, 16, 24, 32, 48, 64])
    def costs():
        return [rng.uniform(0.5, 1.5) for _ in range(stages)]
    act = costs()
    stash = [a * rng.uniform(0.0, 0.8) for a in act]
    per_rank = stages // ranks
    largest = max(act)
    # From barely enough for one micro-batch per stage up to about what
    # 1f1b holds; some ranks tighter than others.
    cap = [round(largest * rng.uniform(per_rank, 2 * stages) + 0.01, 3)
           for _ in range(ranks)]
    return {
        'ranks': ranks, 'stages': stages, 'mbs': mbs,
        'forward': costs(), 'backward-input': costs(),
        'backward-weight': costs(), 'comm': round(rng.uniform(0.05, 1.0), 3),
        'activation': act, 'stash': stash, 'cap': cap,
        'semantics': rng.choice(['async', 'rendezvous']),
        'split': rng.choice([0, 1]),
        'optimizer': [round(rng.uniform(0.0, 3.0), 3) for _ in range(stages)]
        if rng.random() < 0.5 else None,
        'overhead': round(rng.uniform(0.0, 1.0), 3),
    }


def write_profile(pb, directory):
    """A cost file with the problem's optimizer steps and set-up (the
    options give every other field), or None where it has none."""
    if pb['optimizer'] is None:
        return None
    stage = {'forward': 1, 'backward_input': 1, 'backward_weight': 1,
             'activation_memory': 1, 'stash_memory': 0}
    profile = {'format': 'pp-profile-v1', 'time_unit': 'unit',
               'memory_unit': 'unit', 'transfer': 0,
               'step_overhead': pb['overhead'],
               'stages': [dict(stage, stage=s, optimizer=t)
                          for s, t in enumerate(pb['optimizer'])]}
    path = os.path.join(directory, f'profile-{id(pb)}.json')
    with open(path, 'w') as f:
        json.dump(profile, f)
    return path


def describe(pb):
    extra = (f" optimizer={values(pb['optimizer'])} "
             f"overhead={pb['overhead']}" if pb['optimizer'] else '')
    return (f"p={pb['ranks']} stages={pb['stages']} m={pb['mbs']} "
            f"{pb['semantics']} split={pb['split']} cap={values(pb['cap'])}"
            + extra)


def command(pp_opt, pb, schedule):
    options = [
        f'schedule={schedule}', f"semantics={pb['semantics']}",
        f"split-backward={pb['split']}", f"num-stages={pb['stages']}",
        f"num-ranks={pb['ranks']}", f"num-microbatches={pb['mbs']}",
        f"forward-cost={values(pb['forward'])}",
        f"backward-input-cost={values(pb['backward-input'])}",
        f"backward-weight-cost={values(pb['backward-weight'])}",
        f"comm-cost={pb['comm']!r}",
        f"activation-memory={values(pb['activation'])}",
        f"stash-memory={values(pb['stash'])}",
        f"memory-cap={values(pb['cap'])}",
    ] + ([f"cost-file={pb['profile']}"] if pb.get('profile') else [])
    return [pp_opt, '-', '--pp-schedule=' + ' '.join(options),
            '--pp-insert-transfers', '--pp-verify-schedule', '--pp-simulate',
            '-o', '-']


def run(pp_opt, pb, schedule):
    """The simulated makespan of what `schedule` emits (None if pp-opt
    refuses the problem), the makespan its remark reports, and stderr."""
    proc = subprocess.run(command(pp_opt, pb, schedule), input='module {}\n',
                          capture_output=True, text=True)
    if proc.returncode != 0:
        if 'error:' not in proc.stderr:
            raise RuntimeError(f'{schedule}: pp-opt failed without an '
                               f'error ({proc.returncode}): {proc.stderr}')
        return None, None, proc.stderr
    match = re.search(r'pp\.makespan = ([0-9a-fA-Fx.eE+-]+)', proc.stdout)
    simulated = parse_f64(match.group(1))
    reported = re.search(rf'{re.escape(schedule)}: makespan ([0-9.eE+-]+)',
                         proc.stderr)
    return simulated, float(reported.group(1)) if reported else None, \
        proc.stderr


def close(a, b):
    return abs(a - b) <= RELATIVE * max(abs(a), abs(b), 1.0)


def check(pp_opt, pb):
    """The failures on one problem, as messages, and auto's makespan beside
    the best built-in's (but greedy's) and greedy's (None: none fits)."""
    errors = []
    best = {}
    auto, reported, remarks = run(pp_opt, pb, 'auto')
    if auto is not None and (reported is None or not close(auto, reported)):
        errors.append(f'auto reports {reported} but its program simulates '
                      f'to {auto!r}')
    for name in BUILTINS:
        other, _, _ = run(pp_opt, pb, name)
        if other is None:
            continue
        key = 'greedy' if name == 'greedy' else 'builtin'
        best[key] = min(best.get(key, other), other)
        if auto is None:
            errors.append(f'auto found nothing within the caps, {name} '
                          f'emits {other!r}: {remarks.strip()}')
        elif auto > other * (1 + RELATIVE):
            errors.append(f'auto {auto!r} is slower than {name} {other!r}')
    if 3 * pb['stages'] * pb['mbs'] <= EXACT_ACTIONS and auto is not None:
        exact, exact_reported, _ = run(pp_opt, pb, 'exact')
        if exact is not None:
            if exact_reported is None or not close(exact, exact_reported):
                errors.append(f'exact reports {exact_reported} but its '
                              f'program simulates to {exact!r}')
            if auto > exact * (1 + RELATIVE):
                errors.append(f'auto {auto!r} is slower than exact '
                              f'{exact!r}')
            elif (pb['semantics'] == 'async' and
                  pb['stages'] == pb['ranks'] and not close(auto, exact)):
                errors.append(f'auto {auto!r} differs from the proven '
                              f'optimum {exact!r}')
    return ([f'{describe(pb)}: {e}\n  '
             f'{" ".join(command(pp_opt, pb, "auto"))}' for e in errors],
            auto, best.get('builtin'), best.get('greedy'))


def summarise(results):
    """How often auto beats the best built-in and greedy, and by how much."""
    for index, name in ((2, 'the best built-in'), (3, 'greedy')):
        pairs = [(r[1], r[index]) for r in results
                 if r[1] is not None and r[index] is not None]
        gains = [100 * (other - auto) / other for auto, other in pairs
                 if auto < other * (1 - RELATIVE)]
        print(f'auto faster than {name} on {len(gains)} of {len(pairs)} '
              f'problems (mean {sum(gains) / max(len(gains), 1):.2f}%, '
              f'max {max(gains, default=0.0):.2f}%)')


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--pp-opt', required=True)
    parser.add_argument('--problems', type=int, default=240)
    parser.add_argument('--seed', type=int, default=34)
    parser.add_argument('--jobs', type=int, default=2)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    problems = [random_problem(rng) for _ in range(args.problems)]
    with tempfile.TemporaryDirectory() as directory, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for pb in problems:
            pb['profile'] = write_profile(pb, directory)
        results = list(pool.map(lambda pb: check(args.pp_opt, pb), problems))
    failures = [e for errors, *_ in results for e in errors]
    for failure in failures:
        print(failure)
    summarise(results)
    failed = sum(1 for errors, *_ in results if errors)
    print(f'{len(problems) - failed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
