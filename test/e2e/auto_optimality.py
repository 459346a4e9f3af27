#!/usr/bin/env python3
"""Checks that `pp-schedule{schedule=auto}` finds optimal schedules.

An independent oracle computes the least makespan of every schedule of
seeded random small problems (several seeds; p <= 3 ranks, m <= 4
micro-batches, heterogeneous per-stage F, B, W costs and transfer time,
with and without a memory cap, split backward; one stage per rank and two
per rank on the looped and V placements; some with a cap per rank, one rank
having about half the memory of the others), and for both `schedule=exact` (auto's exact
search alone, which no built-in or greedy schedule can cover for) and
`schedule=auto`, `pp-opt --pp-schedule{schedule=... ...}
--pp-insert-transfers{semantics=async} --pp-verify-schedule --pp-simulate`
(each receive right before its consumer, as the search models it) must
report exactly that makespan (within 1e-9), claim it proven optimal (exact
by exhaustive search; auto by that or by meeting its lower bound), and pass
the verifier (which checks the memory cap). Some problems have slow transfers and tight
caps; on enough of them the cap must bind (the optimum without it is
faster), or they would not test the search's memory and transfer handling.

The oracle shares nothing with `auto` but the model. Its only reduction is
that a stage runs the F's, B's and W's of its micro-batches in increasing
order (they all cost the same). It runs every order of appending actions to
ranks, each starting as soon as its rank is free and its inputs are there,
breadth first by the number of actions run, and merges two states only when
they have run the same actions (hence hold the same memory) and one has
every rank clock and every result some action still needs no later than the
other. On the smallest problems it is itself checked against plain
enumeration of every order without any merging.
"""

import argparse
import concurrent.futures
import operator
import random
import re
import subprocess
import sys

from auto_property import parse_f64

F, B, W = 0, 1, 2
TOLERANCE = 1e-9


class Problem:
    def __init__(self, ranks, stages, mbs, fwd, bwd, wgt, comm, act, stash,
                 cap):
        self.ranks, self.stages, self.mbs = ranks, stages, mbs
        self.duration = [fwd, bwd, wgt]
        self.delta = [act, [stash[s] - act[s] for s in range(stages)],
                      [-x for x in stash]]
        # One cap for every rank, or a list of one per rank.
        self.comm, self.act, self.stash, self.cap = comm, act, stash, cap
        # Whether the cap was chosen to bind (and the test checks it does).
        self.tight = False

    def cap_of(self, rank):
        return self.cap[rank] if isinstance(self.cap, list) else self.cap

    def placements(self):
        """The placements auto searches: one stage per rank, or stage s on
        rank s mod p (looped) and, with 2W stages per rank, Hanayo's W waves
        (chunk s // p down the ranks when even, back up when odd; W = 1 is
        the V, stages r and 2p - 1 - r on r)."""
        p, n = self.ranks, self.stages
        if n == p:
            return [list(range(n))]
        looped = [s % p for s in range(n)]
        result = [looped]
        if n % (2 * p) == 0:
            waves = [s % p if (s // p) % 2 == 0 else p - 1 - s % p
                     for s in range(n)]
            if waves != looped:
                result.append(waves)
        return result


class Model:
    """The timing and memory rules of one placement."""

    def __init__(self, problem, placement):
        self.pb, self.rank = problem, placement
        self.runnable_cache, self.needed_cache = {}, {}

    def arrival(self, src, dst, time):
        return time if self.rank[src] == self.rank[dst] else time + self.pb.comm

    def inputs(self, phase, s):
        """(phase, stage) of the inputs of the action (phase, s, mb)."""
        if phase == F:
            return [(F, s - 1)] if s > 0 else []
        if phase == B:
            return [(F, s)] + ([(B, s + 1)] if s + 1 < self.pb.stages else [])
        return [(B, s)]

    def consumers(self, phase, s):
        if phase == F:
            return [(B, s)] + ([(F, s + 1)] if s + 1 < self.pb.stages else [])
        if phase == B:
            return [(W, s)] + ([(B, s - 1)] if s > 0 else [])
        return []

    def moves(self, done, clock, ends):
        """Every action the state may append within the cap: (phase, stage,
        mb, end time). `ends` maps (phase, stage, mb) to end times."""
        for (phase, s, mb), r, inputs, duration, _, _ in self.runnable(done):
            start = clock[r]
            for key, comm in inputs:
                start = max(start, ends[key] + comm)
            yield phase, s, mb, start + duration

    def runnable(self, done):
        """The actions whose inputs are computed and that fit the cap after
        `done`: ((phase, stage, mb), rank, inputs as (key, the transfer time
        to add to its end time), duration, the counts after it and the
        results still needed then). They depend on `done` alone, which many
        states share."""
        found = self.runnable_cache.get(done)
        if found is not None:
            return found
        pb = self.pb
        held = [0.0] * pb.ranks
        for s in range(pb.stages):
            for phase in (F, B, W):
                held[self.rank[s]] += done[phase][s] * pb.delta[phase][s]
        found = []
        for s in range(pb.stages):
            r = self.rank[s]
            for phase in (F, B, W):
                mb = done[phase][s]
                if mb == pb.mbs:
                    continue
                if any(done[ph][t] <= mb for ph, t in self.inputs(phase, s)):
                    continue
                if held[r] + pb.delta[phase][s] > pb.cap_of(r) + 1e-9:
                    continue
                # arrival(t, s, end) is end + comm across ranks.
                inputs = [((ph, t, mb), self.arrival(t, s, 0.0))
                          for ph, t in self.inputs(phase, s)]
                nxt = after(done, phase, s)
                found.append(((phase, s, mb), r, inputs,
                              pb.duration[phase][s], nxt,
                              self.needed_keys(nxt, done, (phase, s, mb))))
        self.runnable_cache[done] = found
        return found

    def needed(self, done, key):
        """Whether the result `key` is still an input of an action not run."""
        phase, s, mb = key
        return any(done[ph][t] <= mb for ph, t in self.consumers(phase, s))

    def needed_keys(self, done, before=None, key=None):
        """The computed results some action not run after `done` still
        needs, in a fixed order: a state keeps their end times. `done` is
        `before` plus `key`, when given: the results `before` needs, and
        `key`, filtered."""
        found = self.needed_cache.get(done)
        if found is None:
            if before is None:
                candidates = ((phase, s, mb) for phase in (F, B)
                              for s in range(self.pb.stages)
                              for mb in range(done[phase][s]))
            else:
                candidates = self.needed_keys(before) + (key,)
            found = tuple(k for k in candidates if self.needed(done, k))
            self.needed_cache[done] = found
        return found


def after(done, phase, s):
    return tuple(tuple(row[:s] + (row[s] + 1,) + row[s + 1:])
                 if ph == phase else row for ph, row in enumerate(done))


def pareto_optimum(problem, placement):
    """The least makespan, breadth first with dominated states merged. A
    state is its rank clocks and the end times of the results still needed
    (`Model.needed_keys`), as one vector for the dominance test, and those
    end times by key."""
    model = Model(problem, placement)
    ranks = problem.ranks
    start = (tuple([0] * problem.stages),) * 3
    level = {start: [((0.0,) * ranks, {})]}
    for _ in range(3 * problem.stages * problem.mbs):
        following = {}
        for done, states in level.items():
            actions = model.runnable(done)
            for vector, ends in states:
                for key, r, inputs, duration, nxt, keys in actions:
                    begin = vector[r]
                    for needed, comm in inputs:
                        begin = max(begin, ends[needed] + comm)
                    end = begin + duration
                    # Only the new result is missing from `ends`.
                    new_ends = {k: ends.get(k, end) for k in keys}
                    insert(following.setdefault(nxt, []),
                           vector[:r] + (end,) + vector[r + 1:ranks] +
                           tuple(new_ends.values()), new_ends)
        level = following
    return min((max(vector[:ranks]) for states in level.values()
                for vector, _ in states), default=float('inf'))


def insert(states, vector, ends):
    """Adds a state to a list of mutually undominated ones (same actions
    run, so the same results are still needed, in the same order): one
    dominates another when every clock and end time is no later."""
    for other, _ in states:
        if all(map(operator.le, other, vector)):
            return
    states[:] = [(v, e) for v, e in states
                 if not all(map(operator.le, vector, v))]
    states.append((vector, ends))


def enumerated_optimum(problem, placement):
    """The least makespan over every order of appending actions, nothing
    merged: only for the smallest problems."""
    model = Model(problem, placement)
    total = 3 * problem.stages * problem.mbs

    def walk(done, clock, ends, count):
        if count == total:
            return max(clock)
        best = float('inf')
        for phase, s, mb, end in list(model.moves(done, clock, ends)):
            r = placement[s]
            ends[(phase, s, mb)] = end
            best = min(best, walk(after(done, phase, s),
                                  clock[:r] + (end,) + clock[r + 1:], ends,
                                  count + 1))
            del ends[(phase, s, mb)]
        return best
    start = (tuple([0] * problem.stages),) * 3
    return walk(start, (0.0,) * problem.ranks, {}, 0)


def optimum(problem, oracle=pareto_optimum):
    return min(oracle(problem, p) for p in problem.placements())


def least_memory(act, ranks, stages, rank):
    """What `rank` holds with one micro-batch in flight, on the placement
    where that is most."""
    v = act[rank] + (act[2 * ranks - 1 - rank] if stages > ranks else 0.0)
    return max(v, sum(act[s] for s in range(stages) if s % ranks == rank))


def random_problem(rng, ranks, stages, mbs, capped, slack=2.5, slowest=0.2,
                   per_rank=False):
    """With `per_rank`, a cap per rank, one rank having about half the
    memory of the others."""
    def per_stage(lo, hi):
        return [rng.uniform(lo, hi) for _ in range(stages)]
    fwd, bwd, wgt = per_stage(0.5, 2), per_stage(0.5, 2), per_stage(0.5, 2)
    comm = rng.uniform(0, slowest)
    act = per_stage(0.5, 1.5)
    stash = [a * rng.uniform(0, 0.6) for a in act]
    cap = float('inf')
    if capped:
        # Enough for one micro-batch in flight on every placement, and at
        # most the most any rank can hold.
        least = [least_memory(act, ranks, stages, r) for r in range(ranks)]
        factor = rng.uniform(1.0, min(mbs, slack))
        if per_rank:
            small = rng.randrange(ranks)
            cap = [least[r] * (max(1.0, factor / 2) if r == small else factor)
                   for r in range(ranks)]
        else:
            cap = max(least) * factor
    return Problem(ranks, stages, mbs, fwd, bwd, wgt, comm, act, stash, cap)


def problems(seed):
    rng = random.Random(seed)
    result = []
    for ranks in (1, 2, 3):
        for mbs in (1, 2, 3, 4):
            for capped in (False, True):
                result.append(random_problem(rng, ranks, ranks, mbs, capped))
    for ranks, mbs in ((1, 2), (1, 3), (2, 1), (2, 2)):
        for capped in (False, True):
            result.append(random_problem(rng, ranks, 2 * ranks, mbs, capped))
    # Where the built-in and greedy schedules most often miss the optimum.
    rng = random.Random(seed + 2)
    for ranks, mbs in ((3, 4),) * 8 + ((2, 3),) * 4 + ((2, 4),) * 2:
        result.append(random_problem(rng, ranks, ranks, mbs, True))
    # Slow transfers and tight caps: results in flight and memory matter.
    rng = random.Random(seed + 3)
    for ranks, stages, mbs in ((2, 2, 3), (2, 2, 4), (3, 3, 3), (3, 3, 4),
                               (2, 4, 2), (1, 2, 3)) * 2:
        pb = random_problem(rng, ranks, stages, mbs, True, slack=1.4,
                            slowest=1.5)
        pb.tight = True
        result.append(pb)
    # A cap per rank, one rank with about half the memory: the search must
    # hold each rank to its own cap.
    rng = random.Random(seed + 4)
    for ranks, stages, mbs in ((2, 2, 3), (2, 2, 4), (3, 3, 3), (3, 3, 4),
                               (2, 4, 2), (1, 2, 3), (2, 4, 1), (3, 3, 2)):
        result.append(random_problem(rng, ranks, stages, mbs, True,
                                     per_rank=True))
    for ranks, stages, mbs in ((2, 2, 4), (3, 3, 4), (2, 4, 2)):
        pb = random_problem(rng, ranks, stages, mbs, True, slack=1.4,
                            slowest=1.5, per_rank=True)
        pb.tight = True
        result.append(pb)
    # Caps per rank where the greedy and local search most often miss the
    # optimum, and on two stages per rank.
    rng = random.Random(seed + 5)
    for ranks, stages, mbs in ((3, 3, 4),) * 4 + ((2, 4, 2), (2, 4, 3)):
        result.append(random_problem(rng, ranks, stages, mbs, True,
                                     per_rank=True))
    return result


def values(xs):
    return ','.join(repr(x) for x in xs)


def run_schedule(pp_opt, pb, schedule):
    options = [
        f'schedule={schedule}', 'semantics=async', 'split-backward=1',
        f'num-stages={pb.stages}',
        f'num-ranks={pb.ranks}', f'num-microbatches={pb.mbs}',
        f'forward-cost={values(pb.duration[F])}',
        f'backward-input-cost={values(pb.duration[B])}',
        f'backward-weight-cost={values(pb.duration[W])}',
        f'comm-cost={pb.comm!r}', f'activation-memory={values(pb.act)}',
        f'stash-memory={values(pb.stash)}'
    ]
    if isinstance(pb.cap, list):
        options.append(f'memory-cap={values(pb.cap)}')
    elif pb.cap != float('inf'):
        options.append(f'memory-cap={pb.cap!r}')
    cmd = [pp_opt, '-', '--pp-schedule=' + ' '.join(options),
           '--pp-insert-transfers=semantics=async', '--pp-verify-schedule',
           '--pp-simulate',
           '-o', '-']
    proc = subprocess.run(cmd, input='module {}\n', capture_output=True,
                          text=True)
    if proc.returncode != 0:
        return None, proc.stderr, cmd
    match = re.search(r'pp\.makespan = ([0-9a-fA-Fx.eE+-]+)', proc.stdout)
    makespan = parse_f64(match.group(1)) if match else None
    return makespan, proc.stderr, cmd


def describe(pb):
    cap = (','.join(f'{c:.4g}' for c in pb.cap) if isinstance(pb.cap, list)
           else f'{pb.cap:.4g}')
    return (f'p={pb.ranks} stages={pb.stages} m={pb.mbs} cap={cap} '
            f'F={values(pb.duration[F])} B={values(pb.duration[B])} '
            f'W={values(pb.duration[W])} comm={pb.comm!r} '
            f'act={values(pb.act)} stash={values(pb.stash)}')


def check_schedule(pp_opt, pb, schedule, expected):
    """An error message or None, and the remarks. `exact` must prove its
    result by exhaustive search; `auto` may also by meeting its lower
    bound."""
    got, remarks, cmd = run_schedule(pp_opt, pb, schedule)
    claim = ('proven optimal by exhaustive search' if schedule == 'exact'
             else 'proven optimal')
    error = None
    if got is None:
        error = 'pp-opt failed or printed no makespan:\n' + remarks
    elif abs(got - expected) > TOLERANCE:
        error = f'makespan {got!r}, optimum {expected!r}'
    elif claim not in remarks:
        error = 'no claim of optimality:\n' + remarks
    if error:
        error = (f'{schedule}: {describe(pb)}\n  {error}\n  command: ' +
                 ' '.join(cmd))
    return error, remarks


def with_cap(pb, cap):
    return Problem(pb.ranks, pb.stages, pb.mbs, *pb.duration, pb.comm, pb.act,
                   pb.stash, cap)


def check(pp_opt, pb):
    """The error messages (exact's and auto's), whether auto's search beat
    its other candidates, whether the memory cap of a tight problem binds,
    and whether a cap per rank binds beyond the largest of them."""
    expected = optimum(pb)
    binds = pb.tight and optimum(
        with_cap(pb, float('inf'))) < expected - TOLERANCE
    rank_binds = isinstance(pb.cap, list) and optimum(
        with_cap(pb, max(pb.cap))) < expected - TOLERANCE
    exact_error, _ = check_schedule(pp_opt, pb, 'exact', expected)
    auto_error, remarks = check_schedule(pp_opt, pb, 'auto', expected)
    searched = re.search(r'auto: makespan \S+ \(exhaustive search\)',
                         remarks) is not None
    return exact_error, auto_error, searched, binds, rank_binds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--pp-opt', required=True)
    parser.add_argument('--seed', type=int, default=20261131)
    parser.add_argument('--seeds', type=int, default=2,
                        help='how many seeds from --seed on (in steps of '
                        '100) generate problems')
    parser.add_argument('--jobs', type=int, default=2)
    parser.add_argument('--min-searched', type=int, default=3)
    parser.add_argument('--min-binding', type=int, default=6)
    parser.add_argument('--min-rank-binding', type=int, default=4)
    args = parser.parse_args()

    # The oracle itself: merging dominated states loses no optimum.
    rng = random.Random(args.seed + 1)
    for ranks, stages, mbs, capped in (
            (1, 1, 3, False), (1, 1, 3, True), (2, 2, 2, False),
            (2, 2, 2, True), (2, 2, 3, True), (3, 3, 1, False),
            (3, 3, 2, True), (1, 2, 2, False), (2, 4, 1, False),
            (2, 4, 1, True)):
        pb = random_problem(rng, ranks, stages, mbs, capped)
        merged, plain = optimum(pb), optimum(pb, enumerated_optimum)
        if merged != plain:
            print(f'FAIL oracle: merged {merged!r}, enumerated {plain!r} '
                  f'for {describe(pb)}')
            return 1

    cases = [pb for i in range(args.seeds)
             for pb in problems(args.seed + 100 * i)]
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(check, [args.pp_opt] * len(cases), cases))
    exact_failures = [r[0] for r in results if r[0]]
    auto_failures = [r[1] for r in results if r[1]]
    searched = sum(r[2] for r in results)
    binding = sum(r[3] for r in results)
    rank_binding = sum(r[4] for r in results)
    for failure in exact_failures + auto_failures:
        print('FAIL ' + failure)
    print(f'{len(cases) - len(exact_failures)} of {len(cases)} problems: '
          f'exact reports the optimum')
    print(f'{len(cases) - len(auto_failures)} of {len(cases)} problems: auto '
          f'reports the optimum; on {searched} only its exhaustive search '
          f'found it')
    tight = sum(pb.tight for pb in cases)
    print(f'the memory cap binds on {binding} of {tight} tight problems')
    per_rank = sum(isinstance(pb.cap, list) for pb in cases)
    print(f'the caps per rank bind beyond their largest on {rank_binding} of '
          f'{per_rank} problems')
    # Otherwise these problems would test the search's memory check little.
    if binding < args.min_binding:
        print(f'FAIL: the memory cap binds on fewer than {args.min_binding} '
              f'tight problems')
        return 1
    # Otherwise a search that used one rank's cap for all could pass.
    if rank_binding < args.min_rank_binding:
        print(f'FAIL: the caps per rank bind on fewer than '
              f'{args.min_rank_binding} problems')
        return 1
    # Otherwise these problems would not test auto's use of the search.
    if searched < args.min_searched:
        print(f'FAIL: fewer than {args.min_searched} problems need the search')
        return 1
    return 1 if exact_failures or auto_failures else 0


if __name__ == '__main__':
    sys.exit(main())
