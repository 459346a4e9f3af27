"""Schedule.simulate against pp-opt --pp-simulate's remark, and the
timeline it is drawn from."""

import re
import subprocess

import pytest

REMARK = re.compile(r"remark: makespan (\S+), bubble (\S+)% \(idle per rank: "
                    r"([^)]*)\), peak activation memory per rank: (.*)")


def pp_opt_simulate(pp_opt, schedule_options, simulate_options=""):
    """The makespan, bubble (%), idle and peak memory pp-opt reports."""
    result = subprocess.run(
        [pp_opt, f"--pp-schedule={schedule_options}", "--pp-insert-transfers",
         "--pp-verify-schedule", f"--pp-simulate={simulate_options}",
         "-o", "/dev/null"],
        input="module {}", capture_output=True, text=True, check=True)
    makespan, bubble, idle, peak = REMARK.search(result.stderr).groups()
    numbers = lambda text: [float(v) for v in text.split(", ")]
    return float(makespan), float(bubble), numbers(idle), numbers(peak)


CASES = [
    ("gpipe", dict(num_stages=4, num_microbatches=4, costs={"comm": 1}),
     {"semantics": "rendezvous"},
     "schedule=gpipe num-stages=4 num-microbatches=4 comm-cost=1"),
    ("zb-h1", dict(num_stages=4, num_microbatches=16), {},
     "schedule=zb-h1 num-stages=4 num-microbatches=16"),
    ("1f1b", dict(num_stages=4, num_microbatches=8,
                  costs={"forward": [1, 2, 1, 3], "backward_input": 2,
                         "comm": 0.5}), {},
     "schedule=1f1b num-stages=4 num-microbatches=8 forward-cost=1,2,1,3 "
     "backward-input-cost=2 comm-cost=0.5"),
    ("interleaved-1f1b", dict(num_stages=8, num_ranks=4, num_microbatches=8,
                              costs={"activation": 2, "stash": 1},
                              split_backward=True),
     {},
     "schedule=interleaved-1f1b num-stages=8 num-ranks=4 num-microbatches=8 "
     "activation-memory=2 stash-memory=1 split-backward=1"),
    ("dualpipev", dict(num_stages=8, num_ranks=4, num_microbatches=8,
                       costs={"backward_weight": 0.5}), {},
     "schedule=dualpipev num-stages=8 num-ranks=4 num-microbatches=8 "
     "backward-weight-cost=0.5"),
]


@pytest.mark.parametrize("name,kwargs,simulate,options", CASES,
                         ids=[c[0] for c in CASES])
def test_matches_pp_opt(pp, pp_opt, name, kwargs, simulate, options):
    result = pp.schedule(name, **kwargs).simulate(**simulate)
    simulate_options = " ".join(f"{k}={v}" for k, v in simulate.items())
    makespan, bubble, idle, peak = pp_opt_simulate(pp_opt, options,
                                                   simulate_options)
    assert result.makespan == pytest.approx(makespan)
    assert round(100 * result.bubble, 1) == pytest.approx(bubble)
    assert result.idle == pytest.approx(idle)
    assert result.peak_memory == pytest.approx(peak)


def test_all_reduce_cost_matches_pp_opt(pp, pp_opt):
    s = pp.schedule("1f1b", num_stages=2, num_microbatches=4, num_replicas=2)
    result = s.simulate(all_reduce_cost=3)
    result_args = subprocess.run(
        [pp_opt, "--pp-schedule=schedule=1f1b num-stages=2 num-microbatches=4",
         "--pp-insert-transfers=num-replicas=2",
         "--pp-simulate=all-reduce-cost=3", "-o", "/dev/null"],
        input="module {}", capture_output=True, text=True, check=True)
    makespan = float(REMARK.search(result_args.stderr).group(1))
    assert result.makespan == makespan
    assert result.makespan > s.simulate().makespan


def test_simulation_fields(pp):
    result = pp.schedule("1f1b", num_stages=4, num_microbatches=8).simulate()
    assert result == pp.Simulation(makespan=33.0, idle=[9.0] * 4,
                                   bubble=9 / 33, peak_memory=[4, 3, 2, 1])


def test_timeline_agrees_with_simulate(pp):
    s = pp.schedule("zb-h2", num_stages=4, num_microbatches=8,
                    costs={"forward": 2, "comm": 0.5})
    timeline = s.timeline()
    result = s.simulate()
    assert max(a.end for a in timeline) == result.makespan
    for rank in range(s.num_ranks):
        held = [a.memory for a in timeline if a.rank == rank]
        assert max(held) == result.peak_memory[rank]
        assert held[-1] == 0
    first = timeline[0]
    assert (first.rank, first.kind, first.stage, first.microbatch,
            first.start, first.end) == (0, "F", 0, 0, 0.0, 2.0)


def test_unknown_semantics(pp):
    s = pp.schedule("1f1b", num_stages=2, num_microbatches=2)
    with pytest.raises(ValueError, match="unknown semantics 'eager'"):
        s.timeline("eager")
    with pytest.raises(pp.Error, match="unknown semantics 'eager'"):
        s.simulate("eager")


def pp_opt_zero_makespan(pp_opt, zero):
    """pp-opt's makespan of 1f1b on 2 stages and 4 micro-batches with 2
    replicas under ZeRO level(s) `zero` ("1", or "0,3" per stage)."""
    result = subprocess.run(
        [pp_opt, "--pp-schedule=schedule=1f1b num-stages=2 num-microbatches=4",
         f"--pp-insert-transfers=num-replicas=2 zero={zero} semantics=async",
         "--pp-simulate=all-reduce-cost=3", "-o", "/dev/null"],
        input="module {}", capture_output=True, text=True, check=True)
    return float(REMARK.search(result.stderr).group(1))


def test_insert_transfers_zero_matches_pp_opt(pp, pp_opt):
    s = pp.schedule("1f1b", num_stages=2, num_microbatches=4,
                    insert_transfers=False)
    s.insert_transfers(num_replicas=2, semantics="async", zero=1)
    text = s.to_mlir()
    assert "pp.reduce_scatter" in text and "pp.all_gather" in text
    assert "pp.all_reduce" not in text
    assert s.simulate(all_reduce_cost=3).makespan == \
        pp_opt_zero_makespan(pp_opt, "1")


def test_insert_transfers_zero3_gathers_before_use(pp, pp_opt):
    s = pp.schedule("1f1b", num_stages=2, num_microbatches=4,
                    insert_transfers=False)
    s.insert_transfers(num_replicas=2, semantics="async", zero=3)
    text = s.to_mlir()
    assert "zero = 3 : i64" in text and "pp.all_reduce" not in text
    # Each rank gathers its stage's weights before its first compute.
    for rank in text.split("pp.rank")[1:]:
        lines = [line.strip() for line in rank.splitlines()[1:] if
                 line.strip().startswith("pp.")]
        assert lines[0].startswith("pp.all_gather")
    assert s.simulate(all_reduce_cost=3).makespan == \
        pp_opt_zero_makespan(pp_opt, "3")


def test_insert_transfers_zero_per_stage_matches_pp_opt(pp, pp_opt):
    """A level per stage: stage 0 all-reduces, stage 1 (ZeRO-3) gathers
    before its first compute and reduce-scatters; as pp-opt's zero=0,3."""
    s = pp.schedule("1f1b", num_stages=2, num_microbatches=4,
                    insert_transfers=False)
    s.insert_transfers(num_replicas=2, semantics="async", zero=[0, 3])
    text = s.to_mlir()
    assert "zero = array<i64: 0, 3>" in text
    assert "pp.all_reduce stage 0" in text
    assert "pp.all_gather stage 1" in text
    assert "pp.reduce_scatter stage 1" in text
    assert s.simulate(all_reduce_cost=3).makespan == \
        pp_opt_zero_makespan(pp_opt, "0,3")
    with pytest.raises(TypeError, match="zero must be an int or a list"):
        s.insert_transfers(num_replicas=2, zero=[0, "3"])
