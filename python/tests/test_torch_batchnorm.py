"""Convolutional classifiers with nn.BatchNorm2d in training mode, written
as people write them: a MobileNet-style network (Hardswish, depthwise
convolutions, squeeze-and-excitation) and a basic ResNet, trained with
cross-entropy on int64 labels on 2 stages (1f1b, 4 micro-batches).
Exported at the micro-batch shape (export's default) they train with the
losses of PyTorch's loop over the same micro-batches; exported at the whole
batch's shape, their batch norms' statistics mix rows of the batch, which
pp-split-microbatches refuses at the model's line instead of training with
the whole batch's counts on each micro-batch. Skipped without torch and
torch_mlir."""

import pathlib
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
np = pytest.importorskip("numpy")
nn = torch.nn
F = torch.nn.functional

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from split_check import check_split  # noqa: E402

ROWS, CHANNELS, SIZE, CLASSES = 8, 3, 8, 5
MICROBATCHES, STEPS, LR = 4, 3, 0.05
RTOL = 1e-5


class SqueezeExcitation(nn.Module):
    def __init__(self, channels, squeezed):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, squeezed, 1)
        self.fc2 = nn.Conv2d(squeezed, channels, 1)

    def forward(self, x):
        scale = F.hardsigmoid(self.fc2(F.relu(self.fc1(self.avgpool(x)))))
        return x * scale


class InvertedResidual(nn.Module):
    def __init__(self, channels, expanded):
        super().__init__()
        self.expand = nn.Sequential(
            nn.Conv2d(channels, expanded, 1, bias=False),
            nn.BatchNorm2d(expanded), nn.Hardswish())
        self.depthwise = nn.Sequential(
            nn.Conv2d(expanded, expanded, 3, padding=1, groups=expanded,
                      bias=False),
            nn.BatchNorm2d(expanded), nn.Hardswish())
        self.se = SqueezeExcitation(expanded, 4)
        self.project = nn.Sequential(
            nn.Conv2d(expanded, channels, 1, bias=False),
            nn.BatchNorm2d(channels))

    def forward(self, x):
        out = self.se(self.depthwise(self.expand(x)))
        return x + self.project(out)


class MobileNet(nn.Module):
    def __init__(self, width=8, classes=CLASSES):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(CHANNELS, width, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(width), nn.Hardswish())
        self.block = InvertedResidual(width, 2 * width)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(width, classes)

    def forward(self, x):
        x = self.block(self.stem(x))
        return self.classifier(torch.flatten(self.pool(x), 1))


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(
                nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    def __init__(self, width=8, classes=CLASSES):
        super().__init__()
        self.conv1 = nn.Conv2d(CHANNELS, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(2)
        self.layer1 = BasicBlock(width, width)
        self.layer2 = BasicBlock(width, 2 * width, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(2 * width, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


MODELS = {"mobilenet": (MobileNet, "block"), "resnet": (ResNet, "layer2")}


def data(directory):
    """One batch of images and int64 labels, as the arrays pp.run reads."""
    rng = np.random.default_rng(0)
    images = rng.standard_normal((ROWS, CHANNELS, SIZE, SIZE), np.float32)
    labels = rng.integers(0, CLASSES, ROWS)
    paths = [directory / "images.npy", directory / "labels.npy"]
    np.save(paths[0], images)
    np.save(paths[1], labels)
    return torch.from_numpy(images), torch.from_numpy(labels), paths


def pytorch_losses(pp, model, images, labels):
    """PyTorch's loop over the micro-batches of each step's samples, each
    micro-batch's loss divided by their count (scale_grads)."""
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for step in range(STEPS):
        order = torch.as_tensor(np.asarray(
            pp.sample_order(ROWS, step, ROWS), dtype=np.int64))
        optimizer.zero_grad()
        total = 0.0
        for x, t in zip(images[order].chunk(MICROBATCHES),
                        labels[order].chunk(MICROBATCHES)):
            loss = F.cross_entropy(model(x), t) / MICROBATCHES
            loss.backward()
            total += loss.item()
        optimizer.step()
        losses.append(total)
    return losses


@pytest.mark.parametrize("name", sorted(MODELS))
def test_microbatch_shape_trains_like_pytorch(pp, name, tmp_path):
    import pp.torch
    make, cut = MODELS[name]
    torch.manual_seed(0)
    model = make()
    images, labels, paths = data(tmp_path)
    exported = pp.torch.export(
        model, (images, labels), F.cross_entropy, tmp_path / "step.mlir",
        microbatches=MICROBATCHES, split_points=[cut])
    program = pp.compile(exported.mlir, stages=2, schedule="1f1b",
                         opt_level=0)
    assert program.microbatches == MICROBATCHES
    run = pp.run(program, steps=STEPS, lr=LR, init_weights=exported.weights,
                 data=[str(p) for p in paths], timeout=300)
    expected = pytorch_losses(pp, model, images, labels)
    difference = max(abs(a - b) / abs(b) for a, b in zip(run.losses, expected))
    print(f"{name}: pp {run.losses} torch {expected} max rel {difference:.2e}")
    assert run.losses == pytest.approx(expected, rel=RTOL)
    assert expected[-1] != expected[0]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_whole_batch_shape_is_refused_at_the_model_line(pp, name, tmp_path):
    """Never a wrong loss: split into micro-batches, the whole batch's
    export is either exact (the check compares it with PyTorch's loop) or
    refused; the batch norms' statistics make it refused, located at the
    batch norm with the model's line that called it among the notes."""
    make, _ = MODELS[name]
    torch.manual_seed(0)
    images, labels, _ = data(tmp_path)
    result = check_split(pp, make(), (images, labels), F.cross_entropy,
                         MICROBATCHES, tmp_path, mean_loss=False)
    assert result.refused is not None, result
    [error] = result.refused.diagnostics
    assert "combines rows of the batch with a sum over the batch" in \
        error.message
    assert error.location.split(":")[0].endswith("batchnorm.py")
    assert any(note.location.startswith(__file__ + ":")
               for note in error.notes), error


class RowWise(nn.Module):
    """The same kind of classifier without batch norm: its rows are
    computed one by one, so the whole batch's export splits exactly."""

    def __init__(self, width=8, classes=CLASSES):
        super().__init__()
        self.conv = nn.Conv2d(CHANNELS, width, 3, stride=2, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(width, classes)

    def forward(self, x):
        x = F.hardswish(self.conv(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def test_whole_batch_shape_of_a_rowwise_model_splits_exactly(pp, tmp_path):
    """The check passes where the split is exact: a mean squared error (a
    sum over the whole batch times a constant) and cross-entropy's mean
    over the targets it counts (each micro-batch's own, summed)."""
    torch.manual_seed(0)
    images, labels, _ = data(tmp_path)
    targets = torch.nn.functional.one_hot(labels, CLASSES).float()
    mse = check_split(pp, RowWise(), (images, targets), F.mse_loss,
                      MICROBATCHES, tmp_path, mean_loss=True)
    entropy = check_split(pp, RowWise(), (images, labels), F.cross_entropy,
                          MICROBATCHES, tmp_path, mean_loss=False)
    for result in (mse, entropy):
        print(result)
        assert result.refused is None
