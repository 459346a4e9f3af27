"""Dropout (p > 0, training mode) from PyTorch trains under pp with masks
drawn per step, micro-batch and op (pp.random_seed): pipelined on 2
stages it gives the losses of pp's own unpipelined run, bit for bit; the
masks change from step to step; and the fraction they drop is p. Skipped
where torch or torch_mlir is not importable."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
nn = torch.nn
F = torch.nn.functional

from test_torch import SEED, synthetic_batch  # noqa: E402

STEPS = 4
P = 0.25


class DropoutMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(16, 32)
        self.drop = nn.Dropout(P)
        self.mid = nn.Linear(32, 32)
        self.out = nn.Linear(32, 4)

    def forward(self, x):
        y = self.drop(torch.tanh(self.hidden(x)))
        return self.out(self.drop(torch.tanh(self.mid(y))))


def test_pipelined_masks_match_unpipelined(pp, tmp_path):
    import pp.torch
    torch.manual_seed(0)
    model = DropoutMLP()
    exported = pp.torch.export(model, (torch.zeros(16, 16),
                                       torch.zeros(16, 4)), F.mse_loss,
                               tmp_path / "dropout.mlir", whole_batch=True)
    runs = {}
    for stages in (1, 2):
        program = pp.compile(exported.mlir, stages=stages, microbatches=1)
        runs[stages] = pp.run(program, steps=STEPS, lr=0.1, seed=SEED,
                              init_weights=exported.weights).losses
    assert runs[2] == runs[1]
    # Without dropout (PyTorch in eval mode, same weights and data) the
    # first loss differs: the masks act.
    model.eval()
    x, t = synthetic_batch(0, (16, 16), (16, 4))
    with torch.no_grad():
        assert abs(F.mse_loss(model(x), t).item() - runs[1][0]) > 1e-3


class Rate(nn.Module):
    """mean(dropout(w * ones)) = kept fraction * w / (1 - p)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(()))
        self.drop = nn.Dropout(P)

    def forward(self, x):
        return self.drop(torch.ones_like(x) * self.w)


def mean_output(y, t):
    return y.mean() + 0.0 * t.mean()


def test_mask_rate_and_fresh_masks(pp, tmp_path):
    import pp.torch
    exported = pp.torch.export(Rate(), (torch.zeros(64, 64),
                                        torch.zeros(64, 1)), mean_output,
                               tmp_path / "rate.mlir", whole_batch=True)
    program = pp.compile(exported.mlir, stages=1, microbatches=1)
    losses = pp.run(program, steps=3, lr=0.0, seed=SEED,
                    init_weights=exported.weights).losses
    dropped = [1.0 - loss * (1.0 - P) for loss in losses]
    # 4096 draws a step: the standard deviation of the rate is 0.0068.
    for rate in dropped:
        assert rate == pytest.approx(P, abs=0.03)
    assert len(set(losses)) == len(losses)  # each step draws anew
