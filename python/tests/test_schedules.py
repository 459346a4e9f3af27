"""pp.schedule: every built-in schedule and auto generate schedules that
verify (also with rendezvous transfers), with the costs and memory caps
asked for."""

import json
import re

import pytest

# (schedule, stages, ranks): one stage per rank, looped, and V-shaped.
PROBLEMS = [
    ("gpipe", 4, None), ("1f1b", 4, None), ("zb-h1", 4, None),
    ("zb-h2", 4, None), ("interleaved-1f1b", 8, 4), ("looped-bfs", 8, 4),
    ("zbv", 8, 4), ("v-half", 8, 4), ("v-min", 8, 4), ("dualpipev", 8, 4),
    ("greedy", 4, None), ("greedy", 8, 4), ("hanayo", 8, 4),
    ("hanayo", 16, 4), ("interleaved-zb", 8, 4), ("interleaved-zb", 12, 4),
    ("pipedream-2bw", 4, None), ("seq1f1b", 4, None),
    ("auto", 4, None), ("exact", 4, None),
]


def test_every_built_in_is_tested(pp):
    assert pp.SCHEDULES[:4] == ("gpipe", "1f1b", "interleaved-1f1b",
                                "looped-bfs")
    assert {name for name, _, _ in PROBLEMS} >= set(pp.SCHEDULES)


@pytest.mark.parametrize("name,stages,ranks", PROBLEMS)
def test_generates_and_verifies(pp, name, stages, ranks):
    # seq1f1b runs 4 micro-batches of 2 sequence slices: 8 slices.
    slices = 2 if name == "seq1f1b" else 1
    s = pp.schedule(name, num_stages=stages, num_ranks=ranks,
                    num_microbatches=8 // slices, slices=slices,
                    semantics="rendezvous")
    assert s.verify() is s
    assert s.verify("async") is s
    assert s.name == name
    assert s.num_stages == stages
    assert s.num_ranks == (ranks or stages)
    assert s.num_microbatches == 8
    assert sorted(set(s.stage_rank)) == list(range(s.num_ranks))


@pytest.mark.parametrize("name,ranks", [("1f1b", 4), ("gpipe", 4),
                                        ("interleaved-1f1b", 2)])
def test_split_backward(pp, name, ranks):
    s = pp.schedule(name, num_stages=4, num_ranks=ranks, num_microbatches=4,
                    split_backward=True).verify()
    kinds = {a.kind for a in s.timeline()}
    assert {"B", "W"} <= kinds and "BW" not in kinds


def test_costs_and_cap_are_the_schedules(pp):
    costs = pp.Costs(forward=[1, 2, 3, 4], backward_input=2,
                     backward_weight=1.5, comm=0.25, activation=2, stash=0.5)
    s = pp.schedule("zb-h1", num_stages=4, num_microbatches=8, costs=costs,
                    memory_cap=[16, 12, 12, 16]).verify()
    cost = json.loads(s.to_json())["cost"]
    assert cost["F"] == [1, 2, 3, 4]
    assert cost["B"] == [2] * 4 and cost["W"] == [1.5] * 4
    assert cost["comm"] == 0.25 and cost["weight_grad_stash"] == [0.5] * 4
    assert s.memory_caps == [16, 12, 12, 16]


def test_costs_as_a_mapping(pp):
    s = pp.schedule("1f1b", num_stages=2, num_microbatches=2,
                    costs={"forward": 2, "comm": 1})
    assert s.simulate().makespan == pp.schedule(
        "1f1b", num_stages=2, num_microbatches=2,
        costs=pp.Costs(forward=2, comm=1)).simulate().makespan


def test_auto_stays_within_the_cap(pp):
    s = pp.schedule("auto", num_stages=4, num_microbatches=8, memory_cap=2)
    s.verify()
    assert max(s.simulate().peak_memory) <= 2
    assert any(r.startswith("auto:") for r in s.remarks)


def test_auto_optimises_the_program_of_its_semantics(pp):
    # Transfers as long as a forward: with async sends auto reaches its
    # lower bound, 30; a send that waits for its receive holds both ranks,
    # and auto picks another schedule for that program.
    # Either way its makespan is the program's under those semantics.
    def auto(semantics):
        s = pp.schedule("auto", num_stages=4, num_microbatches=8,
                        costs={"comm": 1.0}, semantics=semantics)
        s.verify(semantics=semantics)
        reported = re.match(r"auto: makespan ([0-9.]+)", s.remarks[0])
        assert float(reported.group(1)) == pytest.approx(
            s.simulate(semantics=semantics).makespan, rel=1e-12)
        return s
    fast, safe = auto("async"), auto("rendezvous")
    assert fast.simulate(semantics="async").makespan == pytest.approx(30)
    assert safe.simulate(semantics="rendezvous").makespan == pytest.approx(50)
    assert safe.simulate(semantics="async").makespan > 30
    with pytest.raises(pp.Error, match="unknown semantics 'nccl'"):
        pp.schedule("1f1b", num_stages=2, num_microbatches=2,
                    semantics="nccl")


def test_cost_file(pp):
    from conftest import REPO
    s = pp.schedule("auto", num_microbatches=8, cost_file=REPO / "examples"
                    / "profiles" / "mlp-4-stages.json", costs={"comm": 0})
    assert s.verify().num_stages == 4


def test_data_parallel_all_reduces(pp):
    s = pp.schedule("1f1b", num_stages=2, num_microbatches=4, num_replicas=2)
    assert "ALLREDUCE" in {a.kind for a in s.verify().timeline()}


def test_unknown_schedule_is_an_error(pp):
    with pytest.raises(pp.Error, match="unknown schedule 'nope'") as info:
        pp.schedule("nope", num_stages=4, num_microbatches=8)
    assert not isinstance(info.value, pp.VerifyError)
    assert info.value.diagnostics[0].severity == "error"


def test_a_schedule_that_does_not_fit_is_an_error(pp):
    with pytest.raises(pp.Error, match="at least 2 stages per rank"):
        pp.schedule("interleaved-1f1b", num_stages=4, num_microbatches=8)


def test_docstring_example(pp):
    import doctest
    assert doctest.testmod(pp).failed == 0


def test_seq1f1b_closed_form(pp):
    # (m k + p - 1)(F + B + W) / k with unit costs per micro-batch.
    s = pp.schedule("seq1f1b", num_stages=4, num_microbatches=8, slices=4)
    assert s.num_microbatches == 32
    assert s.simulate().makespan == (32 + 3) * 3 / 4
    with pytest.raises(pp.Error, match="invalid schedule: backward of "
                       "stage 0 mb 0 .micro-batch 0 slice 0. runs before"):
        pp.schedule("1f1b", num_stages=2, num_microbatches=2, slices=2)
