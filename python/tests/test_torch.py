"""pp.torch: a PyTorch MLP exported with pp.torch.export trains under pp
(2 stages, 4 micro-batches) with the losses of a plain PyTorch loop from
the same initial weights and data, and the weights pp saves load back into
the module; so do a model with a layer norm, a softmax and a buffer, and
one whose torch.einsum sends a 5-D tensor between its stages.
Skipped where torch or torch_mlir is not importable."""

import importlib.util
import math
import pathlib

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
np = pytest.importorskip("numpy")

STEPS = 4
LR = 0.1
SEED = 1
MASK = (1 << 64) - 1
TAG_DATA = 0x44415441     # runtime/lib/driver/data.c
TAG_TEACHER = 0x54434852


def splitmix64(x):
    """The runtime's hash step (pprt_math.h), on uint64 arrays."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def uniform(keys, shape):
    """uniform_pm1(pprt_hash(SEED, keys + [i, j])) over a 2-D grid."""
    h = splitmix64(np.uint64(SEED))
    for key in keys:
        h = splitmix64(h ^ np.uint64(key & MASK))
    rows = np.arange(shape[0], dtype=np.uint64)[:, None]
    cols = np.arange(shape[1], dtype=np.uint64)[None, :]
    h = splitmix64(splitmix64(h ^ rows) ^ cols)
    return ((h >> np.uint64(11)).astype(np.float64) * 2.0 ** -52 -
            1.0).astype(np.float32)


def synthetic_batch(step, x_shape, t_shape):
    """The runtime's data for step `step` (0-based) of argument 0 (x) and
    its teacher targets (argument 1): tanh(x @ T) accumulated in f64."""
    x = uniform([TAG_DATA, step, 0], x_shape)
    din, dout = x_shape[1], t_shape[1]
    teacher = uniform([TAG_TEACHER], (din, dout)) / np.float32(math.sqrt(din))
    t = np.tanh(x.astype(np.float64) @ teacher.astype(np.float64))
    return torch.from_numpy(x), torch.from_numpy(t.astype(np.float32))


def squared_error(y, t):
    return ((y - t) ** 2).mean()


@pytest.fixture(scope="module")
def exported(pp, tmp_path_factory):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 4))
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    path = tmp_path_factory.mktemp("torch") / "mlp.mlir"
    import pp.torch
    result = pp.torch.export(model, (torch.zeros(16, 16), torch.zeros(16, 4)),
                             squared_error, path, whole_batch=True)
    return model, initial, result


def microbatch_losses(model, initial, batch, steps, lr, microbatches,
                      loss_fn=None):
    """PyTorch's losses of `steps` SGD steps from the state dict `initial`,
    on `batch(step)`'s (inputs, targets), each step a loop over its
    micro-batches with `loss_fn` (default the mean squared error) scaled by
    their count (torch.distributed.pipelining's scale_grads)."""
    loss_fn = loss_fn or torch.nn.functional.mse_loss
    model.load_state_dict(initial)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        x, t = batch(step)
        optimizer.zero_grad()
        loss = 0.0
        for xs, ts in zip(x.chunk(microbatches), t.chunk(microbatches)):
            part = loss_fn(model(xs), ts) / microbatches
            part.backward()
            loss += part.item()
        optimizer.step()
        losses.append(loss)
    return losses


def torch_losses(model, steps, x_shape, criterion=squared_error, lr=LR):
    """Plain PyTorch SGD on the whole batch of each step (the runtime's data
    of shape `x_shape`, 16x4 targets): the loss pp sums over micro-batches
    is the mean over the whole batch."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        x, t = synthetic_batch(step, x_shape, (16, 4))
        optimizer.zero_grad()
        loss = criterion(model(x), t)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_export_marks_arguments(exported):
    _, _, result = exported
    text = result.mlir.read_text()
    assert "math.fpowi" in text
    assert text.count("pp.param") == 4 and text.count("pp.target") == 1
    assert result.names == {"param2": "0.weight", "param3": "0.bias",
                            "param4": "2.weight", "param5": "2.bias"}
    assert (result.inputs, result.targets) == ((0,), (1,))


def test_trains_like_pytorch(pp, exported, tmp_path):
    model, initial, result = exported
    program = pp.compile(result.mlir, stages=2, microbatches=4)
    saved = tmp_path / "trained.safetensors"
    run = pp.run(program, steps=STEPS, lr=LR, seed=SEED,
                 init_weights=result.weights, save=saved)
    model.load_state_dict(initial)
    expected = torch_losses(model, STEPS, (16, 16))
    assert run.losses == pytest.approx(expected, rel=1e-5)
    # The trained weights go back into the module under their own names.
    trained = result.state_dict(saved)
    assert set(trained) == set(initial)
    for name, value in model.state_dict().items():
        assert torch.allclose(trained[name], value, rtol=1e-5, atol=1e-6), name


class NormalizedHead(torch.nn.Module):
    """nn.LayerNorm (f64 statistics in torch-mlir's import), F.softmax (a
    max that also returns its index) and a buffer (a dense_resource
    constant, not a parameter)."""

    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(8)
        self.hidden = torch.nn.Linear(8, 4)
        self.head = torch.nn.Linear(4, 4)
        self.register_buffer("scale", torch.linspace(0.5, 2.0, 4))

    def forward(self, x):
        probs = torch.nn.functional.softmax(self.hidden(self.norm(x)), dim=-1)
        return self.head(probs * self.scale)


def test_norm_softmax_buffer(pp, tmp_path):
    import pp.torch
    torch.manual_seed(0)
    model = NormalizedHead()
    mse = torch.nn.functional.mse_loss
    result = pp.torch.export(model, (torch.zeros(16, 8), torch.zeros(16, 4)),
                             mse, tmp_path / "normalized.mlir",
                             whole_batch=True)
    text = result.mlir.read_text()
    assert "dense_resource" in text and "f64" in text and "xi64>" in text
    assert "scale" not in result.names.values()
    program = pp.compile(result.mlir, stages=2, microbatches=4)
    run = pp.run(program, steps=3, lr=0.5, seed=SEED,
                 init_weights=result.weights)
    expected = torch_losses(model, 3, (16, 8), mse, lr=0.5)
    assert run.losses == pytest.approx(expected, rel=1e-5)


def torch_inputs_models():
    """The models of the committed torch-mlir exports (gen_torch_inputs.py),
    so that a test trains the model whose export the lit tests read."""
    path = (pathlib.Path(__file__).resolve().parents[2] / "test" / "Dialect" /
            "PP" / "Transforms" / "Inputs" / "torch" / "gen_torch_inputs.py")
    spec = importlib.util.spec_from_file_location("gen_torch_inputs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_einsum_rank5_across_stages(pp, pp_compile, tmp_path):
    """On 2 stages the 5-D outer product (4 rows a micro-batch) is what
    stage 0 sends stage 1, its gradient what comes back; the losses and
    trained weights are PyTorch's."""
    import subprocess
    import pp.torch
    torch.manual_seed(0)
    model = torch_inputs_models().BilinearPool()
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    mse = torch.nn.functional.mse_loss
    result = pp.torch.export(model, (torch.zeros(16, 8), torch.zeros(16, 4)),
                             mse, tmp_path / "einsum.mlir", whole_batch=True)
    schedule = tmp_path / "schedule.mlir"
    subprocess.run([pp_compile, str(result.mlir), "--stages", "2",
                    "--microbatches", "4", "--emit=schedule", "-o",
                    str(schedule)], check=True)
    text = schedule.read_text()
    for slot in ("act stage 0 output 0", "grad stage 0 output 0"):
        assert f"tensor<4x2x3x4x4xf32> {{pp.slot = #pp.slot<{slot}>}}" in text
    program = pp.compile(result.mlir, stages=2, microbatches=4)
    saved = tmp_path / "trained.safetensors"
    run = pp.run(program, steps=STEPS, lr=LR, seed=SEED,
                 init_weights=result.weights, save=saved)
    model.load_state_dict(initial)
    expected = torch_losses(model, STEPS, (16, 8), mse)
    assert run.losses == pytest.approx(expected, rel=1e-5)
    trained = result.state_dict(saved)
    for name, value in model.state_dict().items():
        assert torch.allclose(trained[name], value, rtol=1e-5, atol=1e-6), name


class Wave(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.tan(self.layer(x))  # pp has no derivative rule for tan


def test_unsupported_op_names_the_line(pp, tmp_path):
    import pp.torch
    result = pp.torch.export(Wave(), (torch.zeros(4, 8), torch.zeros(4, 4)),
                             torch.nn.functional.mse_loss,
                             tmp_path / "wave.mlir", whole_batch=True)
    line = next(number for number, text in enumerate(
        pathlib.Path(__file__).read_text().splitlines(), 1)
        if "torch.tan(" in text)
    with pytest.raises(pp.CompileError) as error:
        pp.compile(result.mlir, stages=1, microbatches=1)
    assert (f"test_torch.py:{line}:0: error: no derivative rule for "
            f"'math.tan'") in str(error.value)


def test_module_without_parameters(pp, tmp_path):
    import pp.torch
    with pytest.raises(ValueError, match="no parameters"):
        pp.torch.export(torch.nn.ReLU(), (torch.zeros(4, 2), torch.zeros(4, 2)),
                        squared_error, tmp_path / "relu.mlir",
                        whole_batch=True)
