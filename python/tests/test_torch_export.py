"""pp.torch.export's pipelining options and errors: a step traced at the
micro-batch shape, cut points from module names (`split_points`) and
`pipe_split`, which become `pp.boundary` markers pp-partition-stages
honours; an op of a dialect pp does not compile is an error at the model's
line naming the PyTorch op; an nn.Embedding with max_norm is refused at
the module; and pp.CompileError carries the "called from" notes that lead
from torch's own modules to the model's line. Skipped where torch or
torch_mlir is not importable."""

import re
import subprocess

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8),
        torch.nn.Tanh(), torch.nn.Linear(8, 2))


def squared_error(y, t):
    return ((y - t) ** 2).mean()


BATCH = (torch.zeros(8, 4), torch.zeros(8, 2))


def stage_params(pp_opt, path):
    """The pp.name of the weights each stage reads, after
    pp-partition-stages."""
    out = subprocess.run(
        [pp_opt, str(path), "--pp-split-microbatches=num-microbatches=4",
         "--pp-partition-stages"], check=True, capture_output=True,
        text=True).stdout
    names = dict(re.findall(r'(%arg\d+): tensor<[^>]*> \{pp.name = "([^"]*)"',
                            out))
    return [[names[a] for a in re.findall(r"%arg\d+", operands)
             if a in names]
            for operands in re.findall(r"pp.stage \d+ \(([^)]*)\)", out)]


def test_traced_at_microbatch_shape(pp, tmp_path):
    import pp.torch
    exported = pp.torch.export(mlp(), BATCH, squared_error,
                               tmp_path / "mlp.mlir", microbatches=4)
    text = exported.mlir.read_text()
    assert exported.microbatches == 4
    assert "pp.microbatches = 4 : i64" in text
    assert re.search(r"%arg0: tensor<2x4xf32>", text)
    # The loss is scaled so that the micro-batches' sum is the batch's mean.
    assert "2.500000e-01" in text
    unscaled = pp.torch.export(mlp(), BATCH, squared_error,
                               tmp_path / "sum.mlir", microbatches=4,
                               scale_grads=False)
    assert "2.500000e-01" not in unscaled.mlir.read_text()
    with pytest.raises(pp.CompileError,
                       match="split into 4 micro-batches already, not 2"):
        pp.compile(exported.mlir, stages=2, microbatches=2)
    with pytest.raises(ValueError, match="does not split into 3"):
        pp.torch.export(mlp(), BATCH, squared_error, tmp_path / "x.mlir",
                        microbatches=3)


def test_microbatch_shape_is_the_default(pp, tmp_path):
    """export needs the micro-batch count, or whole_batch=True; pp.compile
    takes the count from a step traced at the micro-batch shape and needs
    it for one traced at the whole batch's."""
    import pp.torch
    with pytest.raises(ValueError, match="pass microbatches=N"):
        pp.torch.export(mlp(), BATCH, squared_error, tmp_path / "x.mlir")
    with pytest.raises(ValueError, match="whole_batch=True traces the whole"):
        pp.torch.export(mlp(), BATCH, squared_error, tmp_path / "x.mlir",
                        microbatches=4, whole_batch=True)
    traced = pp.torch.export(mlp(), BATCH, squared_error,
                             tmp_path / "mlp.mlir", microbatches=4)
    assert pp.compile(traced.mlir, stages=2).microbatches == 4
    whole = pp.torch.export(mlp(), BATCH, squared_error,
                            tmp_path / "whole.mlir", whole_batch=True)
    assert whole.microbatches is None
    assert "pp.microbatches" not in whole.mlir.read_text()
    with pytest.raises(ValueError, match="needs microbatches"):
        pp.compile(whole.mlir, stages=2)
    assert pp.compile(whole.mlir, stages=2, microbatches=4).microbatches == 4


def test_split_points_cut_where_named(pp, pp_opt, tmp_path):
    import pp.torch
    exported = pp.torch.export(mlp(), BATCH, squared_error,
                               tmp_path / "mlp.mlir", microbatches=4,
                               split_points=["2"])
    assert exported.mlir.read_text().count('"pp.boundary"') == 1
    assert stage_params(pp_opt, exported.mlir) == [
        ["0.weight", "0.bias"], ["2.weight", "2.bias", "4.weight", "4.bias"]]
    exported = pp.torch.export(mlp(), BATCH, squared_error,
                               tmp_path / "mlp4.mlir", microbatches=4,
                               split_points=["4"])
    assert stage_params(pp_opt, exported.mlir) == [
        ["0.weight", "0.bias", "2.weight", "2.bias"], ["4.weight", "4.bias"]]
    with pytest.raises(ValueError, match="split point 'nine' names no"):
        pp.torch.export(mlp(), BATCH, squared_error, tmp_path / "x.mlir",
                        microbatches=4, split_points=["nine"])


class Marked(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(4, 8)
        self.second = torch.nn.Linear(8, 2)

    def forward(self, x):
        import pp.torch
        h = pp.torch.pipe_split(torch.relu(self.first(x)))
        return self.second(h)


def test_pipe_split_marks_a_value(pp, pp_opt, tmp_path):
    import pp.torch
    torch.manual_seed(0)
    exported = pp.torch.export(Marked(), BATCH, squared_error,
                               tmp_path / "marked.mlir", microbatches=4)
    assert exported.mlir.read_text().count('"pp.boundary"') == 1
    assert stage_params(pp_opt, exported.mlir) == [
        ["first.weight", "first.bias"], ["second.weight", "second.bias"]]
    # Outside an export it is the identity.
    x = torch.ones(2)
    assert pp.torch.pipe_split(x) is x


class Prefix(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = torch.nn.Linear(4, 2)

    def forward(self, x):
        return torch.cumsum(self.gate(x), dim=-1)  # the cumsum line


def line_of(marker):
    return next(i for i, line in enumerate(open(__file__), 1)
                if marker in line)


def test_unknown_dialect_names_the_pytorch_op(pp, tmp_path):
    import pp.torch
    with pytest.raises(pp.CompileError) as info:
        pp.torch.export(Prefix(), BATCH, squared_error, tmp_path / "r.mlir",
                        whole_batch=True)
    [error] = info.value.diagnostics
    assert error.location == f"{__file__}:{line_of('# the cumsum line')}:0"
    assert error.message == (
        "'tm_tensor.scan' (from PyTorch's aten.cumsum) is an op of dialect "
        "'tm_tensor', which pp does not compile")
    assert not (tmp_path / "r.mlir").exists()


class Tangent(torch.nn.Module):
    def forward(self, x):
        return torch.tan(x)  # the tangent line


class Wave(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 2)
        self.tangent = Tangent()

    def forward(self, x):
        return self.tangent(self.linear(x))  # the model line


def test_compile_error_names_the_calling_lines(pp, tmp_path):
    """The error is at the op's line in the module that computes it (as
    for ops inside torch.nn's own modules), and its notes lead to the
    model's line that called that module."""
    import pp.torch
    exported = pp.torch.export(Wave(), BATCH, squared_error,
                               tmp_path / "wave.mlir", whole_batch=True)
    with pytest.raises(pp.CompileError) as info:
        pp.compile(exported.mlir, stages=1, microbatches=1)
    tangent = f"{__file__}:{line_of('# the tangent line')}:0"
    model = f"{__file__}:{line_of('# the model line')}:0"
    error = info.value.diagnostics[0]
    assert error.message == "no derivative rule for 'math.tan'"
    assert error.location == tangent
    assert [n.message for n in error.notes][:2] == ["called from"] * 2
    assert error.notes[0].location == model
    assert f"{tangent}: error: no derivative rule" in str(info.value)
    assert f"{model}: note: called from" in str(info.value)


class DataDependent(torch.nn.Module):
    """Values that depend on the data where a static step needs shapes."""

    def __init__(self, use):
        super().__init__()
        self.linear = torch.nn.Linear(4, 2)
        self.use = use

    def forward(self, x):
        y = self.linear(x)
        if self.use == "mask":
            return y[y > 0]  # the mask line
        if self.use == "nonzero":
            return y[torch.nonzero(y > 0)[:, 0]]  # the nonzero line
        return y * y.abs().max().item()  # the item line


@pytest.mark.parametrize("use,message", [
    ("mask", "aten.index.Tensor makes a shape that depends on the data"),
    ("nonzero", "aten.nonzero makes a shape that depends on the data"),
    ("item", "a Python number taken from a tensor (.item())")])
def test_data_dependent_values_refused_at_their_line(pp, tmp_path, use,
                                                     message):
    import pp.torch
    with pytest.raises(ValueError) as info:
        pp.torch.export(DataDependent(use), BATCH[:1],
                        lambda y: y.sum(), tmp_path / "d.mlir",
                        num_targets=0, microbatches=2)
    assert str(info.value).startswith(
        f"{__file__}:{line_of(f'# the {use} line')}: {message}")
    assert not (tmp_path / "d.mlir").exists()


def test_loss_that_is_not_a_scalar_refused(pp, tmp_path):
    import pp.torch

    def per_row(y, t):
        return ((y - t) ** 2).mean(1)
    with pytest.raises(ValueError, match=r"loss_fn 'per_row' returns a "
                       r"tensor of shape \(2,\), not a scalar"):
        pp.torch.export(mlp(), BATCH, per_row, tmp_path / "l.mlir",
                        microbatches=4)


def test_batch_without_rows_refused(pp, tmp_path):
    import pp.torch
    with pytest.raises(ValueError, match=r"example input 1 of shape "
                       r"\(0, 2\) has no rows"):
        pp.torch.export(mlp(), (torch.zeros(8, 4), torch.zeros(0, 2)),
                        squared_error, tmp_path / "e.mlir", whole_batch=True)


def test_lowering_past_the_timeout_is_an_export_error(pp, tmp_path):
    import pp.torch
    with pytest.raises(pp.ExportError, match=r"did not finish in 0.001 s "
                       r"\(export's timeout\); its PyTorch ops: aten.linear"):
        pp.torch.export(mlp(), BATCH, squared_error, tmp_path / "t.mlir",
                        microbatches=4, timeout=0.001)
    assert not (tmp_path / "t.mlir").exists()
    with pytest.raises(ValueError, match="timeout must be a positive"):
        pp.torch.export(mlp(), BATCH, squared_error, tmp_path / "t.mlir",
                        microbatches=4, timeout=0)


class Centered(torch.nn.Module):
    """Subtracts the batch's mean: each micro-batch would see its own."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 2)

    def forward(self, x):
        y = self.linear(x)
        return y - y.mean(0)  # the batch mean line


def test_check_split_is_exact_or_refused(pp):
    import pp.torch
    batch = (torch.randn(8, 4), torch.randn(8, 2))
    result = pp.torch.check_split(mlp(), batch, squared_error, 4)
    assert result.refused is None and result.exact, result
    assert result.pp_loss == pytest.approx(result.torch_loss, rel=1e-5)
    refused = pp.torch.check_split(Centered(), batch, squared_error, 4)
    assert not refused.exact
    assert refused.refused.diagnostics[0].location == \
        f"{__file__}:{line_of('# the batch mean line')}:0"


class RenormalisedLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4, max_norm=1.0)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, ids):
        return self.head(self.embed(ids)).mean(1)


def test_embedding_max_norm_is_refused_at_the_module(pp, tmp_path):
    """nn.Embedding(max_norm=...) rescales its weight in place in each
    forward, which the step does not: refused, naming the module, before
    anything is traced."""
    import pp.torch
    with pytest.raises(ValueError, match=r"^embed: Embedding\(max_norm=1.0\) "
                       "rescales the rows it looks up in place"):
        pp.torch.export(RenormalisedLM(),
                        (torch.zeros(8, 3, dtype=torch.int64),
                         torch.zeros(8, 2)),
                        squared_error, tmp_path / "lm.mlir", microbatches=4)
    assert not (tmp_path / "lm.mlir").exists()
