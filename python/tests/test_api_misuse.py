"""Misuses of the public Python API are a TypeError or ValueError naming
the argument, raised before any work: not an AttributeError,
IsADirectoryError (naming a file descriptor) or ZeroDivisionError from
inside pp, nor a model that "fails to parse" because a path was taken for
MLIR text."""

import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
MLP = REPO / "examples" / "mlp" / "mlp.mlir"


def _schedule(pp, **kwargs):
    return pp.schedule("1f1b", num_stages=2, num_microbatches=2, **kwargs)


def test_a_directory_where_a_file_is_read(pp, tmp_path):
    folder = tmp_path / "s.json"
    folder.mkdir()
    with pytest.raises(ValueError, match="cannot read '.*s.json': it is a "
                       "directory"):
        pp.Schedule.load(folder)
    with pytest.raises(ValueError, match="it is a directory"):
        pp.Schedule.from_json(folder)
    with pytest.raises(ValueError, match="it is a directory"):
        pp.compile(tmp_path, stages=2, microbatches=2)
    with pytest.raises(ValueError, match="model: '.*' is a directory"):
        pp.compile(str(tmp_path), stages=2, microbatches=2)


def test_a_directory_where_a_file_is_written(pp, tmp_path):
    schedule = _schedule(pp)
    for write in (schedule.to_json, schedule.to_csv, schedule.to_svg,
                  schedule.to_chrome_trace):
        with pytest.raises(ValueError, match="path: cannot write .*: it is "
                           "a directory"):
            write(tmp_path)


def test_a_missing_model_path_is_not_parsed_as_text(pp, tmp_path):
    with pytest.raises(ValueError, match="model: no file '.*missing.mlir'"):
        pp.compile(str(tmp_path / "missing.mlir"), stages=2, microbatches=2)


def test_arguments_of_the_wrong_type(pp, tmp_path):
    cases = [
        (lambda: pp.schedule(3, num_microbatches=2), "name must be a str"),
        (lambda: _schedule(pp, semantics=1), "semantics must be a str"),
        (lambda: _schedule(pp, cost_file=3), "cost_file must be a str"),
        (lambda: _schedule(pp, costs=[1, 2]), "costs must be a pp.Costs"),
        (lambda: _schedule(pp, costs=pp.Costs(forward="a")),
         "costs.forward must be a number"),
        (lambda: _schedule(pp, memory_cap="x"), "memory_cap must be a number"),
        (lambda: _schedule(pp).simulate(all_reduce_cost="x"),
         "all_reduce_cost must be a number"),
        (lambda: _schedule(pp).verify(semantics=2), "semantics must be a str"),
        (lambda: _schedule(pp, insert_transfers=False).insert_transfers(
            num_replicas="2"), "num_replicas must be an int"),
        (lambda: pp.Schedule.from_json(3), "source must be a str"),
        (lambda: pp.Schedule.load(3), "path must be a str"),
        (lambda: pp.compile(3, stages=2, microbatches=2),
         "model must be a str"),
        (lambda: pp.compile(MLP, stages=2, microbatches=2, filename=3),
         "filename must be a str"),
        (lambda: pp.compile(MLP, stages=2, microbatches=2, output=3),
         "output must be a str"),
        (lambda: pp.run("train", steps=1), "program must be a pp.Program"),
        (lambda: pp.sample_order("4", 0, 4), "num_samples must be an int"),
    ]
    for call, message in cases:
        with pytest.raises(TypeError, match=message):
            call()


def test_wrong_values(pp):
    with pytest.raises(ValueError, match="costs: unknown field 'fwd'"):
        _schedule(pp, costs={"fwd": 1})
    with pytest.raises(ValueError, match="num_replicas must be at least 1"):
        _schedule(pp, insert_transfers=False).insert_transfers(
            num_replicas=-1)
    with pytest.raises(ValueError, match="num_samples must be at least 1"):
        pp.sample_order(0, 0, 4)
    with pytest.raises(ValueError, match="step must be at least 0"):
        pp.sample_order(4, -1, 4)
    # Well-formed numbers of other types are still numbers.
    numpy = pytest.importorskip("numpy")
    schedule = _schedule(pp, costs={"forward": numpy.array([1.0, 2.0])},
                         memory_cap=numpy.float64(0))
    assert schedule.simulate().makespan > 0


def test_run_arguments_are_checked_before_mpiexec(pp, tmp_path):
    program = pp.Program(path=tmp_path / "train", schedule="1f1b", stages=2,
                         ranks=2, microbatches=2, replicas=1, params=())
    cases = [
        (dict(steps=-1), ValueError, "steps must be at least 1"),
        (dict(steps="3"), TypeError, "steps must be an int"),
        (dict(steps=1, ranks=0), ValueError, "ranks must be at least 1"),
        (dict(steps=1, data="x.npy"), TypeError, "data must be a sequence"),
        (dict(steps=1, extra_args="--lr"), TypeError,
         "extra_args must be a sequence of str"),
        (dict(steps=1, save=1), TypeError, "save must be a str"),
        (dict(steps=1, sample_lengths=2), TypeError,
         "sample_lengths must be a str"),
    ]
    for kwargs, error, message in cases:
        with pytest.raises(error, match=message):
            pp.run(program, **kwargs)


def test_sample_spans_lie_back_to_back(pp, tmp_path):
    """Each sample takes its tokens and the next one's as its last target;
    one that would run past the tokens starts over at 0."""
    index = tmp_path / "lengths.txt"
    index.write_text("# two steps\n3 1\n\n2, 4\n")
    assert pp.sample_spans(index, 12) == [[(0, 3), (4, 1)], [(6, 2), (0, 4)]]
    index.write_text("3 0\n")
    with pytest.raises(ValueError, match="0 is not a positive length"):
        pp.sample_spans(index, 12)


def test_export_arguments(pp, tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch_mlir")
    import pp.torch as ppt
    model = torch.nn.Linear(4, 2)
    inputs = (torch.ones(4, 4), torch.ones(4, 2))
    loss = torch.nn.functional.mse_loss
    cases = [
        (dict(module="model"), TypeError, "module must be a torch.nn.Module"),
        (dict(example_inputs=inputs[0]), TypeError,
         "example_inputs must be a sequence"),
        (dict(loss_fn="mse"), TypeError, "loss_fn must be callable"),
        (dict(path=tmp_path), ValueError, "path: '.*' is a directory"),
        (dict(path=tmp_path / "no" / "step.mlir"), ValueError,
         "is not a directory"),
        (dict(microbatches="2"), TypeError, "microbatches must be an int"),
        (dict(split_points="layer"), TypeError,
         "split_points must be a sequence of submodule names"),
        (dict(parallelize_plan=["colwise"]), TypeError,
         "parallelize_plan must be a mapping"),
    ]
    for kwargs, error, message in cases:
        arguments = dict(module=model, example_inputs=inputs, loss_fn=loss,
                         path=tmp_path / "step.mlir", microbatches=2)
        arguments.update(kwargs)
        with pytest.raises(error, match=message):
            ppt.export(**arguments)
