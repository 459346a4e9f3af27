#!/usr/bin/env python3
"""Regenerates the torch-mlir exports beside it, the inputs of pp's front-end
pass tests (so that those tests need no torch): small idiomatic PyTorch
models exported by pp.torch.export (python/pp/torch.py), and one module
imported with its weights left inside (as dense_resource constants).

  python gen_torch_inputs.py   # needs torch and torch_mlir (docs/PyTorch.md)

Source locations name this file; they are rewritten to be relative to it so
that the outputs do not depend on where the repository lives."""

import importlib.util
import pathlib
import re
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[5]
spec = importlib.util.spec_from_file_location(
    "pp_torch", REPO / "python" / "pp" / "torch.py")
pp_torch = importlib.util.module_from_spec(spec)
sys.modules["pp_torch"] = pp_torch
spec.loader.exec_module(pp_torch)


def squared_error(y, t):
    return ((y - t) ** 2).mean()


class LayerNormHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.norm(x))


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(8, 16)
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        return self.head(torch.tanh(self.hidden(x)))


class Wave(nn.Module):
    """tan has no derivative rule in pp: the error names this line."""

    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 4)

    def forward(self, x):
        return torch.tan(self.layer(x))


class TokenModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 8)
        self.head = nn.Linear(8, 10)

    def forward(self, ids):
        return self.head(self.embed(ids))


class MaskedTokens(nn.Module):
    """A padding mask (ids != 0) and shifted ids used after the first and
    the last layer: with 2 stages they cross the cut (i1 and i64)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 8)
        self.l1 = nn.Linear(8, 8)
        self.l2 = nn.Linear(8, 8)
        self.l3 = nn.Linear(8, 8)
        self.head = nn.Linear(8, 10)
        self.bias = nn.Embedding(10, 10)

    def forward(self, ids):
        pad = ids != 0
        shifted = (ids + 1) % 10
        h = torch.tanh(self.l1(self.embed(ids) + self.embed(shifted)))
        h = h.masked_fill(~pad.unsqueeze(-1), 0.0)
        h = torch.tanh(self.l3(torch.tanh(self.l2(h))))
        h = torch.where(pad.unsqueeze(-1), h, 0.0)
        return self.head(h) + self.bias(shifted)


def token_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, 10), targets.reshape(-1))


class SoftmaxHead(nn.Module):
    """F.softmax's max also returns an index nothing reads."""

    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return F.softmax(self.head(x), dim=-1)


class MaxIndex(nn.Module):
    """A max whose index is used too: it picks the next class's score."""

    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 4)

    def forward(self, x):
        y = self.layer(x)
        values, index = y.max(dim=-1, keepdim=True)
        return values * y.gather(-1, (index + 1) % 4)


class BilinearPool(nn.Module):
    """Bilinear pooling per head and token: the torch.einsum outer product
    of two projections is a 5-D (batch, head, token, d, e) tensor, and
    torch-mlir's einsum lowering unsqueezes operands to 5-D too."""

    def __init__(self, heads=2, tokens=3, dim=4):
        super().__init__()
        self.shape = (heads, tokens, dim)
        self.left = nn.Linear(8, heads * tokens * dim)
        self.right = nn.Linear(8, heads * tokens * dim)
        self.pool = nn.Parameter(torch.randn(dim, dim) / dim)
        self.head = nn.Linear(heads * tokens, 4)

    def forward(self, x):
        shape = (x.shape[0],) + self.shape
        a = self.left(x).reshape(shape)
        b = self.right(x).reshape(shape)
        outer = torch.tanh(torch.einsum("bhtd,bhte->bhtde", a, b))
        pooled = torch.einsum("bhtde,de->bht", outer, self.pool)
        return self.head(pooled.reshape(x.shape[0], -1))


class ConvNet(nn.Module):
    """Strided, padded, dilated and grouped 2-D convolutions, max, average
    and adaptive average pooling, each behind a layer with weights, so
    their input gradients are needed."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 4, 3, stride=2, padding=1)
        self.conv = nn.Conv2d(4, 4, 3, padding=2, dilation=2, groups=2)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        y = self.conv(torch.tanh(self.stem(x)))
        y = F.avg_pool2d(F.max_pool2d(torch.tanh(y), 2), 2, padding=1)
        return self.head(F.adaptive_avg_pool2d(y, 1).flatten(1))


class DropoutMLP(nn.Module):
    """Two dropouts (p > 0, training mode): torch-mlir advances a global
    seed for each."""

    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(8, 16)
        self.drop = nn.Dropout(0.25)
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        return self.out(self.drop(torch.tanh(self.hidden(self.drop(x)))))


def export(name, module, inputs, loss_fn):
    path = HERE / f"{name}.mlir"
    pp_torch.export(module, inputs, loss_fn, path, whole_batch=True)
    path.with_suffix(".safetensors").unlink()
    relocate(path)


def relocate(path):
    """Source paths outside this directory become their file names."""
    text = path.read_text()
    text = text.replace(f'"{HERE}/', '"')
    text = text.replace(f'"{REPO}/', '"')
    text = re.sub(r'"/[^"]*/site-packages/', '"', text)
    path.write_text(text)


def export_frozen():
    """A module exported with its weights as constants, not arguments."""
    from torch_mlir import fx

    class Step(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(4, 2)

        def forward(self, x, t):
            return squared_error(self.layer(x), t)

    module = fx.export_and_import(Step(), torch.randn(8, 4), torch.randn(8, 2),
                                  output_type="linalg-on-tensors",
                                  func_name="train_step")
    path = HERE / "frozen_weights.mlir"
    path.write_text(module.operation.get_asm(enable_debug_info=True))
    relocate(path)


def main():
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    export("mlp", mlp, (torch.randn(16, 16), torch.randn(16, 4)),
           squared_error)
    export("layer_norm", LayerNormHead(),
           (torch.randn(16, 8), torch.randn(16, 4)), F.mse_loss)
    export("classifier", Classifier(),
           (torch.randn(16, 8), torch.randint(0, 5, (16,))), F.cross_entropy)
    export("wave", Wave(), (torch.randn(16, 8), torch.randn(16, 4)),
           F.mse_loss)
    export("softmax", SoftmaxHead(),
           (torch.randn(16, 8), torch.randn(16, 4)), F.mse_loss)
    export("tokens", TokenModel(),
           (torch.randint(0, 10, (4, 6)), torch.randint(0, 10, (4, 6))),
           token_loss)
    export("masked_tokens", MaskedTokens(),
           (torch.randint(0, 10, (4, 6)), torch.randint(0, 10, (4, 6))),
           token_loss)
    export("max_index", MaxIndex(),
           (torch.randn(16, 8), torch.randn(16, 1)), F.mse_loss)
    export("einsum", BilinearPool(),
           (torch.randn(16, 8), torch.randn(16, 4)), F.mse_loss)
    export("conv", ConvNet(),
           (torch.randn(2, 1, 8, 8), torch.randn(2, 2)), F.mse_loss)
    export("dropout", DropoutMLP(),
           (torch.randn(4, 8), torch.randn(4, 4)), F.mse_loss)
    export_frozen()


if __name__ == "__main__":
    main()
