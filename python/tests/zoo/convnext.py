"""A ConvNeXt as its paper writes one: a patchify stem (kernel = stride),
blocks of a 7x7 depthwise convolution, nn.LayerNorm over channels last
(`permute`), an inverted MLP with GELU and a learned layer scale on the
residual branch, global average pooling with `Tensor.mean` and a
normalised head, trained with cross-entropy on int64 labels."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case

CLASSES = 5


class Block(nn.Module):
    def __init__(self, dim, layer_scale=0.1):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(layer_scale * torch.ones(dim))

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.pwconv2(self.act(self.pwconv1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.stem = nn.Conv2d(3, dim, 2, stride=2)
        self.blocks = nn.Sequential(Block(dim), Block(dim))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, CLASSES)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.head(self.norm(x.mean([-2, -1])))


def images():
    rng = np.random.default_rng(2)
    return [rng.standard_normal((64, 3, 8, 8)).astype(np.float32),
            rng.integers(0, CLASSES, 64).astype(np.int64)]


CASES = [Case(
    "convnext", ConvNeXt, F.cross_entropy, inputs=[(16, 3, 8, 8)],
    targets=[(16,)], data=images, whole_batch="ci", mean_loss=False,
    uses=["nn.Conv2d", "depthwise convolution", "nn.LayerNorm", "nn.Linear",
          "nn.GELU", "layer scale", "Tensor.permute", "Tensor.mean",
          "F.cross_entropy"])]
