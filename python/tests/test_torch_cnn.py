"""Convolutional models from PyTorch train under pp with PyTorch's losses
and weights: a ResNet-style network (nn.Conv2d with stride, padding,
dilation and groups, nn.BatchNorm2d in training mode, residual blocks,
max, average and adaptive average pooling) and a 1-D CNN (nn.Conv1d with
padding, nn.GroupNorm, F.pad, pooling). Every convolution and pooling
sits behind another layer with weights, so the weights' gradients pass
through the input gradients of all of them. Two stages (1f1b), one
micro-batch: pp-split-microbatches does not split `tensor.pad` yet.
Skipped where torch or torch_mlir is not importable."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
nn = torch.nn
F = torch.nn.functional

from test_torch import SEED, TAG_DATA, uniform  # noqa: E402

STEPS = 4
LR = 0.05


def synthetic(step, index, shape):
    """The runtime's synthetic data argument `index` of step `step` (0-based),
    drawn per row over the flattened row (runtime/lib/driver/data.c)."""
    values = uniform([TAG_DATA, step, index],
                     (shape[0], int(np.prod(shape[1:]))))
    return torch.from_numpy(values.reshape(shape))


class Block(nn.Module):
    """A residual block: two 3x3 convolutions with batch norms."""

    def __init__(self, channels, groups=1, dilation=1):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=dilation,
                               dilation=dilation, groups=groups, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


class ResNet(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.stem = nn.Conv2d(2, 4, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.block1 = Block(4, groups=2, dilation=2)
        self.block2 = Block(4)
        self.avg = nn.AvgPool2d(2, padding=1)
        self.head = nn.Linear(4, classes)

    def forward(self, x):
        y = self.pool(F.relu(self.bn(self.stem(x))))
        y = self.avg(self.block2(self.block1(y)))
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.head(y)


class Conv1dNet(nn.Module):
    """A 1-D CNN over sequences: padded and strided convolutions, group
    norm, explicit padding, max and average pooling."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(3, 8, 5, padding=2)
        self.norm1 = nn.GroupNorm(2, 8)
        self.conv2 = nn.Conv1d(8, 8, 3, stride=2, dilation=2, groups=4)
        self.norm2 = nn.GroupNorm(4, 8)
        self.head = nn.Linear(8 * 2, 2)

    def forward(self, x):
        y = F.gelu(self.norm1(self.conv1(x)))
        y = F.max_pool1d(y, 2)
        y = F.pad(y, (1, 2))
        y = torch.tanh(self.norm2(self.conv2(y)))
        y = F.avg_pool1d(y, 2)
        return self.head(y.flatten(1))


def train_like_pytorch(pp, model, shapes, tmp_path):
    """Trains `model` under pp (2 stages) and with PyTorch's SGD from the
    same weights on the runtime's synthetic data; returns both losses, the
    weights pp saved (under the module's keys) and the module's."""
    import pp.torch
    torch.manual_seed(0)
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    zeros = tuple(torch.zeros(shape) for shape in shapes)
    with pytest.warns(UserWarning) if any(
            isinstance(m, nn.BatchNorm2d) for m in model.modules()) else \
            _no_warning():
        exported = pp.torch.export(model, zeros, F.mse_loss,
                                   tmp_path / "model.mlir", whole_batch=True)
    program = pp.compile(exported.mlir, stages=2, microbatches=1)
    saved = tmp_path / "trained.safetensors"
    run = pp.run(program, steps=STEPS, lr=LR, seed=SEED,
                 init_weights=exported.weights, save=saved)
    model.load_state_dict(initial)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for step in range(STEPS):
        x, t = (synthetic(step, i, shape) for i, shape in enumerate(shapes))
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), t)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return run.losses, losses, exported, exported.state_dict(saved), model


class _no_warning:
    def __enter__(self):
        import warnings
        self.catcher = warnings.catch_warnings()
        self.catcher.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *args):
        self.catcher.__exit__(*args)


def assert_weights_match(trained, model):
    params = dict(model.named_parameters())
    assert set(trained) == set(params)
    for name, value in params.items():
        assert torch.allclose(trained[name], value.detach(), rtol=1e-4,
                              atol=1e-6), name


def test_resnet_trains_like_pytorch(pp, tmp_path):
    torch.manual_seed(0)
    model = ResNet()
    pp_losses, torch_losses, exported, trained, model = train_like_pytorch(
        pp, model, [(4, 2, 12, 12), (4, 3)], tmp_path)
    assert pp_losses == pytest.approx(torch_losses, rel=1e-5)
    assert_weights_match(trained, model)
    # Batch norm trains with batch statistics; exported at the whole batch's
    # shape its running statistics stay as they are (the zoo checks their
    # update at the micro-batch shape), and export says which buffers.
    assert "bn.running_mean" in exported.frozen_buffers
    assert "block2.bn2.num_batches_tracked" in exported.frozen_buffers
    text = exported.mlir.read_text()
    for op in ("linalg.conv_2d_nchw_fchw", "linalg.conv_2d_ngchw_gfchw",
               "linalg.pooling_nchw_max", "linalg.pooling_nchw_sum",
               "tensor.pad"):
        assert op in text, op


def test_conv1d_groupnorm_trains_like_pytorch(pp, tmp_path):
    torch.manual_seed(0)
    model = Conv1dNet()
    pp_losses, torch_losses, exported, trained, model = train_like_pytorch(
        pp, model, [(4, 3, 16), (4, 2)], tmp_path)
    assert pp_losses == pytest.approx(torch_losses, rel=1e-5)
    assert_weights_match(trained, model)
    assert exported.frozen_buffers == ()
    text = exported.mlir.read_text()
    # A grouped 1-D convolution and 1-D pooling arrive as 2-D ones over a
    # unit height.
    for op in ("linalg.conv_1d_ncw_fcw", "linalg.conv_2d_ngchw_gfchw",
               "linalg.pooling_nchw_max", "linalg.pooling_nchw_sum", "tensor.pad"):
        assert op in text, op
