"""Values that are not f32 cross a stage boundary: a PyTorch model whose
padding mask (ids != 0, i1) and shifted token ids (i64) are computed in
stage 0 and read in stage 1 (masked_fill, nn.Embedding) trains under pp
on 2 ranks with the per-step losses of a PyTorch loop over the same token
windows and initial weights. Skipped where torch or torch_mlir is not
importable."""

import re
import subprocess

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
pytest.importorskip("numpy")

STEPS = 6
MICROBATCHES = 8
LR, SEED = 0.05, 1


class MaskedTokens(torch.nn.Module):
    """Embeds ids and their successors, zeroes the positions of id 0 after
    the first and the last layer and adds a per-successor bias to the
    logits: the mask and the successors are used on both sides of the
    cut."""

    def __init__(self, vocab, dim=16):
        super().__init__()
        self.vocab = vocab
        self.emb = torch.nn.Embedding(vocab, dim)
        self.l1 = torch.nn.Linear(dim, dim)
        self.l2 = torch.nn.Linear(dim, dim)
        self.l3 = torch.nn.Linear(dim, dim)
        self.l4 = torch.nn.Linear(dim, dim)
        self.out = torch.nn.Linear(dim, vocab)
        self.bias = torch.nn.Embedding(vocab, vocab)

    def forward(self, ids):
        pad = ids != 0
        shifted = (ids + 1) % self.vocab
        h = torch.tanh(self.l1(self.emb(ids) + self.emb(shifted)))
        h = h.masked_fill(~pad.unsqueeze(-1), 0.0)
        h = torch.tanh(self.l2(h))
        h = torch.tanh(self.l3(h))
        h = torch.tanh(self.l4(h))
        h = torch.where(pad.unsqueeze(-1), h, 0.0)
        return self.out(h) + self.bias(shifted)


def loss_fn(logits, targets):
    return torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def test_mask_and_ids_cross_stages(pp, pp_compile, torch_gpt, tmp_path):
    example = torch_gpt
    import pp.torch
    torch.manual_seed(0)
    model = MaskedTokens(example.VOCAB)
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    ids = torch.zeros(example.ROWS, example.CONTEXT, dtype=torch.int64)
    exported = pp.torch.export(model, (ids, ids), loss_fn,
                               tmp_path / "masked.mlir", whole_batch=True)
    tokens = example.write_tokens(tmp_path / "tokens.bin")
    assert (tokens == 0).any() and (tokens != 0).any()
    flags = ["--stages", "2", "--microbatches", str(MICROBATCHES),
             "--schedule", "1f1b"]
    # Stage 0's forward hands stage 1 an i1 mask and i64 ids.
    text = subprocess.run([pp_compile, str(exported.mlir), *flags,
                           "--emit=schedule", "-o", "-"], check=True,
                          capture_output=True, text=True).stdout
    forward = re.search(r"func\.func @train_step_s0_forward\(.*", text)[0]
    assert re.search(r"xi1>[^,]*act stage 0", forward), forward
    assert re.search(r"xi64>[^,]*act stage 0", forward), forward
    program = pp.compile(exported.mlir, stages=2, microbatches=MICROBATCHES,
                         schedule="1f1b")
    run = pp.run(program, steps=STEPS, lr=LR, seed=SEED,
                 init_weights=exported.weights,
                 extra_args=["--tokens", str(tmp_path / "tokens.bin")])
    model.load_state_dict(initial)
    expected = example.pytorch_losses(model, tokens, STEPS, loss_fn, LR,
                                      MICROBATCHES)
    assert run.losses == pytest.approx(expected, rel=1e-5)
    assert expected[-1] < expected[0]
