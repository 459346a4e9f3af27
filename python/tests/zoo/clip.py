"""A CLIP-style contrastive model: an image tower (nn.Linear, GELU) and a
text tower (nn.Embedding, nn.Flatten, nn.Linear), both `F.normalize`d,
their similarity matrix scaled by a learned temperature
(`logit_scale.exp()`) and the symmetric cross-entropy against
`torch.arange` labels: the loss has no targets. The similarities mix the
rows of the batch, so each micro-batch is its own contrastive batch (what
PyTorch's loop over micro-batches computes); at the whole batch's shape
the split is refused at the similarity product."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case

WORDS, VOCABULARY = 4, 20


class CLIP(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.image = nn.Sequential(nn.Linear(12, 16), nn.GELU(),
                                   nn.Linear(16, dim))
        self.text = nn.Sequential(nn.Embedding(VOCABULARY, 16), nn.Flatten(),
                                  nn.Linear(16 * WORDS, dim))
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, image, text):
        a = F.normalize(self.image(image), dim=-1)
        b = F.normalize(self.text(text), dim=-1)
        return self.logit_scale.exp() * a @ b.t()


def contrastive_loss(logits):
    labels = torch.arange(logits.shape[0], device=logits.device)
    return (F.cross_entropy(logits, labels) +
            F.cross_entropy(logits.t(), labels)) / 2


def pairs():
    rng = np.random.default_rng(4)
    return [rng.standard_normal((64, 12)).astype(np.float32),
            rng.integers(0, VOCABULARY, (64, WORDS)).astype(np.int64)]


CASES = [Case(
    "clip", CLIP, contrastive_loss, inputs=[(16, 12), (16, WORDS)],
    targets=[], data=pairs, refused="clip.py",
    uses=["nn.Linear", "nn.GELU", "nn.Embedding", "nn.Flatten",
          "F.normalize", "learned temperature", "torch.arange",
          "F.cross_entropy"])]
