"""nn.MultiheadAttention applied to the input as people write it (the
default need_weights=True, batch_first=True) and followed by a linear
head trains under pp with PyTorch's losses. Its head merge reshapes a flat
buffer into the output projection's left operand, whose register tiles
pp-vectorize-contractions reads through a memref.expand_shape the alias
folding cannot fold (test/StageCode/vectorize-contractions.mlir,
@reshaped_lhs). Exported at the micro-batch shape with 2 micro-batches,
it trains on 1, 2 and 4 stages.
Skipped where torch or torch_mlir is not importable."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
nn = torch.nn
F = torch.nn.functional

from test_torch import SEED, TAG_DATA, microbatch_losses, uniform  # noqa: E402,E501

STEPS = 5
LR = 0.1
MICROBATCHES = 2
BATCH, SEQ, DIM, HEADS, OUT = 4, 6, 16, 2, 4


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(DIM, HEADS, batch_first=True)
        self.head = nn.Linear(DIM, OUT)

    def forward(self, x):
        y, _ = self.attn(x, x, x)
        return self.head(y)


def synthetic_batch(step):
    """The runtime's data of step `step`: element c of row r of argument i
    is uniform(SEED, DATA, step, i, r, c) (runtime/lib/driver/data.c)."""
    x = uniform([TAG_DATA, step, 0], (BATCH, SEQ * DIM))
    t = uniform([TAG_DATA, step, 1], (BATCH, SEQ * OUT))
    return (torch.from_numpy(x).reshape(BATCH, SEQ, DIM),
            torch.from_numpy(t).reshape(BATCH, SEQ, OUT))


@pytest.mark.parametrize("stages", [1, 2, 4])
def test_multihead_attention_trains_like_pytorch(pp, tmp_path, stages):
    import pp.torch
    torch.manual_seed(0)
    model = Attention()
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    exported = pp.torch.export(
        model, (torch.zeros(BATCH, SEQ, DIM), torch.zeros(BATCH, SEQ, OUT)),
        F.mse_loss, tmp_path / "mha.mlir", microbatches=MICROBATCHES)
    program = pp.compile(exported.mlir, stages=stages,
                         microbatches=MICROBATCHES)
    assert program.ranks == stages
    saved = tmp_path / "trained.safetensors"
    run = pp.run(program, steps=STEPS, lr=LR, seed=SEED,
                 init_weights=exported.weights, save=saved)
    losses = microbatch_losses(model, initial, synthetic_batch, STEPS, LR,
                               MICROBATCHES)
    assert run.losses == pytest.approx(losses, rel=1e-5)
    trained = exported.state_dict(saved)
    for name, value in model.state_dict().items():
        assert torch.allclose(trained[name], value, rtol=1e-5,
                              atol=1e-6), name
