"""The one action vocabulary (include/pp/Dialect/PP/IR/ActionVocabulary.h)
against what reads and writes it: PyTorch pipelining's own action parser,
pp-schedule-v1's validator, the timelines, the exporters and the plot."""

import importlib.util

import pytest

from conftest import REPO


def _vocabulary(pp):
    return pp._pp.action_vocabulary()


def _json_validator():
    spec = importlib.util.spec_from_file_location(
        "validate_schedule_json",
        REPO / "test" / "Target" / "validate_schedule_json.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_json_names_are_the_specs(pp):
    validator = _json_validator()
    spec_ops = (validator.COMPUTE_OPS + validator.TRANSFER_OPS
                + validator.STAGE_OPS)
    names = [json for json, *_ in _vocabulary(pp) if json]
    assert names == list(spec_ops)
    computes = [json for json, _, _, phase, *_ in _vocabulary(pp) if phase]
    assert computes == list(validator.COMPUTE_OPS)


def test_pytorch_names_are_pytorchs():
    """Every PyTorch name parses as the same action in PyTorch, with a
    micro-batch exactly where the vocabulary says, and every computation
    type PyTorch has is in the vocabulary (OVERLAP_F_B is pp's pair)."""
    pytest.importorskip("torch")
    schedules = pytest.importorskip("torch.distributed.pipelining.schedules")
    import pp
    names = set()
    for _, name, has_microbatch, *_ in pp._pp.action_vocabulary():
        if not name:
            continue
        names.add(name)
        text = f"3{name}5" if has_microbatch else f"3{name}"
        action = schedules._Action.from_str(text)
        assert repr(action) == text
        assert (action.microbatch_index is not None) == has_microbatch
    pytorch = {str(schedules._Action(0, kind, None)).removeprefix("0")
               for kind in schedules._ComputationType}
    assert pytorch - names == {"OVERLAP_F_B"}


def test_exporters_and_timeline_use_it(pp):
    vocabulary = _vocabulary(pp)
    json_names = {json for json, *_ in vocabulary if json}
    pytorch_names = {name for _, name, *_ in vocabulary if name}
    s = pp.schedule("zb-h1", num_stages=4, num_microbatches=8)
    kinds = {a.kind for a in s.timeline()}
    assert kinds <= json_names and {"F", "B", "W"} <= kinds
    import json
    ops = {action["op"] for rank in json.loads(s.to_json())["ranks"]
           for action in rank}
    assert ops <= json_names
    cells = [c for row in s.to_csv().splitlines() for c in row.split(",")]
    assert {c.lstrip("0123456789").rstrip("0123456789")
            for c in cells} <= pytorch_names


def test_plot_colours_every_computation(pp):
    pytest.importorskip("matplotlib")
    from pp import plot
    computes = {json: colour for json, _, _, phase, _, colour
                in _vocabulary(pp) if phase}
    assert plot.PHASE_COLOURS == computes
    assert set(plot.PHASE_NAMES) == set(computes)
