"""A WaveNet: dilated causal nn.Conv1d pairs (`F.pad` on the left) with a
gated activation (tanh times sigmoid), 1x1 residual and skip
convolutions, the skips summed, trained with cross-entropy over 16
classes at every position (`[batch, classes, positions]` logits). The
last block's residual output is unused, as in the paper's stack: its
convolution gets no gradient and keeps its weights."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case

CLASSES, LENGTH = 16, 16


class GatedBlock(nn.Module):
    def __init__(self, channels, dilation):
        super().__init__()
        self.dilation = dilation
        self.filter = nn.Conv1d(channels, channels, 2, dilation=dilation)
        self.gate = nn.Conv1d(channels, channels, 2, dilation=dilation)
        self.residual = nn.Conv1d(channels, channels, 1)
        self.skip = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        y = F.pad(x, (self.dilation, 0))
        z = torch.tanh(self.filter(y)) * torch.sigmoid(self.gate(y))
        return x + self.residual(z), self.skip(z)


class WaveNet(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.input = nn.Conv1d(1, channels, 1)
        self.blocks = nn.ModuleList(GatedBlock(channels, d) for d in (1, 2, 4))
        self.output = nn.Conv1d(channels, CLASSES, 1)

    def forward(self, x):
        x = self.input(x)
        skips = 0
        for block in self.blocks:
            x, skip = block(x)
            skips = skips + skip
        return self.output(F.relu(skips))


def signals():
    rng = np.random.default_rng(3)
    return [rng.standard_normal((64, 1, LENGTH)).astype(np.float32),
            rng.integers(0, CLASSES, (64, LENGTH)).astype(np.int64)]


CASES = [Case(
    "wavenet", WaveNet, F.cross_entropy, inputs=[(16, 1, LENGTH)],
    targets=[(16, LENGTH)], data=signals, whole_batch="slow",
    mean_loss=False,
    uses=["nn.Conv1d", "F.pad", "torch.tanh", "torch.sigmoid", "F.relu",
          "unused parameters", "F.cross_entropy"])]
