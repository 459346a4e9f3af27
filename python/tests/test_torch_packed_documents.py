"""Packed rows that train as the unpacked documents do: a GPT written the
usual way for packed training, its attention masked block-diagonally by
document ids and its position embeddings read at each token's position
within its document, both extra model inputs declared with
`pp.torch.export(..., packed_inputs=...)` and filled by the runtime's
`--sample-lengths` loader. Packed (`packing="always"`) on 2 pipeline ranks
its losses and final weights are PyTorch's with every document run alone
at its own length, within 1e-5, and so are those of the same model under
step plans (one document a row). Misdeclared inputs are refused by
`export`, and a program that declares them without variable-length samples
by the runtime, in one line. Skipped where torch or torch_mlir is not
importable."""

import math
import pathlib
import re

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
np = pytest.importorskip("numpy")

from test_torch_step_plans import pytorch_losses  # noqa: E402

nn = torch.nn
F = torch.nn.functional

REPO = pathlib.Path(__file__).resolve().parents[2]
# Steps of 55, 37 and 45 tokens; packed into rows of 16, no document runs
# on into the next row.
INDEX = REPO / "test" / "e2e" / "Inputs" / "sample-lengths-packed-documents.txt"
VOCAB, CONTEXT = 512, 16
SHAPES = [(2, 16), (4, 8)]  # (rows, positions) of each variant
STEPS, LR = 6, 0.5
PACKED = {"document_ids": 1, "position_ids": 2}


class Attention(nn.Module):
    """Causal self-attention within each document of a packed row."""

    def __init__(self, dim, heads, context):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("causal", torch.tril(
            torch.ones(context, context, dtype=torch.bool)))

    def forward(self, x, documents):
        batch, positions, dim = x.shape
        q, k, v = self.qkv(x).split(dim, dim=2)
        shape = (batch, positions, self.heads, dim // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        same = documents[:, :, None] == documents[:, None, :]
        mask = same & self.causal[:positions, :positions]
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(dim // self.heads)
        scores = scores.masked_fill(~mask[:, None], float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(batch, positions, dim))


class Block(nn.Module):
    def __init__(self, dim, heads, context):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, context)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(),
                                 nn.Linear(4 * dim, dim))

    def forward(self, x, documents):
        x = x + self.attn(self.ln1(x), documents)
        return x + self.mlp(self.ln2(x))


class DocumentGPT(nn.Module):
    """A GPT that takes, beside the token ids, each token's document index
    within its row and its position within its document."""

    def __init__(self, vocab=VOCAB, context=CONTEXT, dim=16, heads=2,
                 layers=2):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(context, dim)
        self.blocks = nn.ModuleList(
            [Block(dim, heads, context) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids, document_ids, position_ids):
        x = self.tokens(ids) + self.positions(position_ids)
        for block in self.blocks:
            x = block(x, document_ids)
        return self.head(self.ln_f(x))


def padded_loss(logits, targets, weights):
    per_token = F.cross_entropy(logits.flatten(0, 1), targets.flatten(),
                                reduction="none")
    return (per_token * weights.flatten()).sum()


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def example_data(rows, positions):
    ids = torch.zeros(rows, positions, dtype=torch.int64)
    return (ids, ids, ids, ids, torch.zeros(rows, positions))


@pytest.fixture(scope="module")
def gpt(tmp_path_factory):
    """The model, its initial weights, and its steps at SHAPES, cut before
    block 1."""
    import pp.torch
    torch.manual_seed(0)
    model = DocumentGPT()
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    out = tmp_path_factory.mktemp("gpt")
    exports = [pp.torch.export(model, example_data(rows, positions),
                               padded_loss, out / f"step-{rows}x{positions}.mlir",
                               num_targets=2, microbatches=1,
                               split_points=["blocks.1"],
                               packed_inputs=PACKED)
               for rows, positions in SHAPES]
    return initial, exports


@pytest.fixture(scope="module")
def token_file(tmp_path_factory):
    ids = np.random.default_rng(11).integers(0, VOCAB, 1024).astype("<u2")
    path = tmp_path_factory.mktemp("tokens") / "tokens.npy"
    np.save(path, ids)
    return path, ids.astype(np.int64)


class Alone(nn.Module):
    """The model on rows of one document each: document 0, positions
    0..L-1."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(ids, torch.zeros_like(ids),
                          torch.arange(ids.shape[1]).expand_as(ids))


@pytest.fixture(scope="module")
def reference(pp, gpt, token_file):
    """The model trained by SGD on each step's mean cross-entropy over its
    real tokens, every document run alone at its own length (no padding,
    no packing), and the losses."""
    initial, _ = gpt
    _, ids = token_file
    model = DocumentGPT()
    model.load_state_dict(initial)
    losses = pytorch_losses(Alone(model), ids,
                            pp.sample_spans(INDEX, len(ids)), STEPS, lr=LR)
    return model, losses


@pytest.mark.parametrize("packing", ["always", "never"])
def test_packed_documents_train_as_unpacked(pp, gpt, token_file, reference,
                                            tmp_path, packing):
    """Packed into rows of 16 (4, 3 and 3 rows a step) or planned one
    document a row, the model's losses and final weights are those of
    every document alone, within 1e-5."""
    _, exports = gpt
    text = exports[0].mlir.read_text()
    assert 'pp.packed_input = "document_ids"' in text
    assert 'pp.packed_input = "position_ids"' in text
    path, _ = token_file
    program = pp.compile(exports[0].mlir, stages=2, microbatches=1,
                         schedule="greedy", step_plans=str(INDEX),
                         packing=packing, opt_level=0,
                         variant=[str(e.mlir) for e in exports[1:]])
    saved = tmp_path / "trained.safetensors"
    run = pp.run(program, steps=STEPS, lr=LR,
                 init_weights=exports[0].weights, save=saved, tokens=path,
                 sample_lengths=INDEX)
    model, expected = reference
    assert run.losses == pytest.approx(expected, rel=1e-5)
    assert expected[3] < expected[0]  # step 3 runs step 0's samples, trained
    trained = exports[0].state_dict(saved)
    for name, value in model.named_parameters():
        torch.testing.assert_close(trained[name], value.detach(),
                                   rtol=1e-5, atol=1e-6, msg=name)


@pytest.mark.parametrize("packed, expected", [
    ({"segment_ids": 1},
     r"packed_inputs: 'segment_ids' is not one of document_ids, "
     r"position_ids"),
    ({"document_ids": 3},
     r"packed_inputs: document_ids is 3, not the position of one of the 3 "
     r"model inputs"),
    ({"position_ids": 0, "document_ids": 0},
     r"packed_inputs: .* gives two roles to one input"),
])
def test_export_refuses_misdeclared_packed_inputs(pp, tmp_path, packed,
                                                  expected):
    import pp.torch
    with pytest.raises(ValueError, match=expected):
        pp.torch.export(DocumentGPT(), example_data(2, 16), padded_loss,
                        tmp_path / "step.mlir", num_targets=2,
                        microbatches=1, packed_inputs=packed)


def test_export_refuses_a_float_packed_input(pp, tmp_path):
    import pp.torch
    data = list(example_data(2, 16))
    data[2] = torch.zeros(2, 16)
    with pytest.raises(ValueError, match=r"packed_inputs: position_ids is "
                       r"input 2, which must be an int32 or int64 \[rows, "
                       r"positions\] tensor like the token ids, got "
                       r"torch.float32 \(2, 16\)"):
        pp.torch.export(DocumentGPT(), tuple(data), padded_loss,
                        tmp_path / "step.mlir", num_targets=2,
                        microbatches=1, packed_inputs=PACKED)


def test_runtime_refuses_packed_inputs_without_samples(pp, gpt, token_file):
    """Document ids come from a step's samples: a program that takes them
    run on plain --tokens is one line naming the argument."""
    _, exports = gpt
    program = pp.compile(exports[0].mlir, stages=2, microbatches=1,
                         schedule="greedy", opt_level=0)
    with pytest.raises(pp.RunError) as error:
        pp.run(program, steps=1, lr=LR, init_weights=exports[0].weights,
               tokens=token_file[0])
    lines = {line for line in error.value.stderr.splitlines()
             if line.startswith("pprt: ")}
    assert lines == {
        "pprt: input argument 1 takes each token's document index within "
        "its row (pp.packed_input), which only variable-length samples "
        "give: run with --sample-lengths (or --document-end) and --tokens "
        "or --corpus"}, error.value.stderr
