"""pp.torch.export's batch norm state (docs/PyTorch.md): exported with
`microbatches`, the running statistics of batch norms in training mode are
`pp.state` arguments after the weights, the step returns their new values
after the loss (marked with their argument), and the weights file holds
their starting values as `state<argument>` (i64 for the batch count); at
the whole batch's shape they stay frozen; the step's update, run eagerly,
matches PyTorch's modules. The zoo's ResNet checks the values pp trains
against PyTorch's loop. Skipped without torch and torch_mlir."""

import re

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
nn = torch.nn
F = torch.nn.functional


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.bn = nn.BatchNorm1d(6, momentum=None)
        self.out = nn.Linear(6, 2)

    def forward(self, x):
        return self.out(F.relu(self.bn(self.fc(x))))


def export(pp, tmp_path, **options):
    import pp.torch
    torch.manual_seed(0)
    model = Net()
    model.bn.running_mean.fill_(0.25)
    model.bn.num_batches_tracked.fill_(3)
    exported = pp.torch.export(model, (torch.zeros(8, 4), torch.zeros(8, 2)),
                               F.mse_loss, tmp_path / "net.mlir", **options)
    return model, exported


def test_running_statistics_are_state(pp, tmp_path):
    model, exported = export(pp, tmp_path, microbatches=2)
    keys = ("bn.running_mean", "bn.running_var", "bn.num_batches_tracked")
    assert exported.states == keys
    assert exported.frozen_buffers == ()
    assert {k: v for k, v in exported.names.items()
            if k.startswith("state")} == dict(zip(
                ("state8", "state9", "state10"), keys))
    text = exported.mlir.read_text()
    signature = re.search(r"func.func @train_step\((.*)\n", text)[1]
    assert '%arg8: tensor<6xf32> {pp.name = "bn.running_mean", pp.state}' \
        in signature
    assert '%arg10: tensor<i64> {pp.name = "bn.num_batches_tracked", ' \
        'pp.state}' in signature
    assert "-> (tensor<f32>, tensor<6xf32> {pp.state = 8 : i64}, " \
        "tensor<6xf32> {pp.state = 9 : i64}, tensor<i64> {pp.state = 10 : " \
        "i64})" in signature
    saved = exported.state_dict(exported.weights)
    for key in keys:
        assert torch.equal(saved[key], model.state_dict()[key]), key
    assert saved["bn.num_batches_tracked"].dtype == torch.int64


def test_whole_batch_keeps_them_frozen(pp, tmp_path):
    with pytest.warns(UserWarning, match="bn.running_mean"):
        _, exported = export(pp, tmp_path, whole_batch=True)
    assert exported.states == ()
    assert "bn.num_batches_tracked" in exported.frozen_buffers
    assert "pp.state" not in exported.mlir.read_text()


def test_step_updates_them_as_pytorch_does(pp):
    """The exported step's computation, run eagerly on three batches, leaves
    the running statistics of a batch norm with momentum 0.1 and one with a
    cumulative average (momentum None) where PyTorch's modules leave them."""
    import copy

    import pp.torch as ppt
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4),
                          nn.BatchNorm2d(4, momentum=None), nn.Flatten(),
                          nn.Linear(64, 2))
    reference = copy.deepcopy(model)
    x, t = torch.randn(4, 2, 4, 4), torch.randn(4, 2)
    updated = ppt._updated_buffers(model, (x,))
    states = tuple(ppt._key(prefix, name)
                   for prefix in ppt._tracked_norms(model, updated)
                   for name in ppt._STATISTICS)
    assert len(states) == 6
    names = list(dict(model.named_parameters()))
    step = ppt._training_step(model, F.mse_loss, names, 1, 1.0, updated,
                              states)
    buffers = dict(model.named_buffers())
    state = [buffers[name].clone() for name in states]
    for _ in range(3):
        x = torch.randn(4, 2, 4, 4)
        state = list(step(x, t, *(p.detach() for p in model.parameters()),
                          *state)[1:])
        reference(x)
    expected = reference.state_dict()
    for name, value in zip(states, state):
        assert value.dtype == expected[name].dtype, name
        assert torch.allclose(value, expected[name], rtol=1e-6,
                              atol=1e-7), name
