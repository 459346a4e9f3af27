"""A T5-style encoder: relative position bias from log-spaced buckets
(computed once from the positions into an index buffer, looked up in an
nn.Embedding per head), T5's layer norm (a root mean square without the
mean), bias-free projections, a gated GELU feed-forward
(`approximate="tanh"`), and cross-entropy with `ignore_index` on the
padded end of each target row."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case

VOCABULARY, POSITIONS, DIM, HEADS, BUCKETS = 32, 8, 16, 2, 8


class T5LayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def relative_buckets(relative, buckets=BUCKETS, max_distance=16):
    half = buckets // 2
    bucket = (relative > 0).long() * half
    distance = relative.abs()
    exact = half // 2
    logarithmic = exact + (torch.log(distance.float() / exact + 1e-6) /
                           math.log(max_distance / exact) *
                           (half - exact)).long()
    logarithmic = torch.min(logarithmic, torch.full_like(logarithmic,
                                                         half - 1))
    return bucket + torch.where(distance < exact, distance, logarithmic)


class EncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(DIM, DIM, bias=False)
                                          for _ in range(4))
        self.relative_bias = nn.Embedding(BUCKETS, HEADS)
        positions = torch.arange(POSITIONS)
        self.register_buffer(
            "buckets", relative_buckets(positions[None] - positions[:, None]),
            persistent=False)
        self.norm1, self.norm2 = T5LayerNorm(DIM), T5LayerNorm(DIM)
        self.wi_0 = nn.Linear(DIM, 2 * DIM, bias=False)
        self.wi_1 = nn.Linear(DIM, 2 * DIM, bias=False)
        self.wo = nn.Linear(2 * DIM, DIM, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        y = self.norm1(x)
        q, k, v = (p(y).view(b, s, HEADS, -1).transpose(1, 2)
                   for p in (self.q, self.k, self.v))
        bias = self.relative_bias(self.buckets).permute(2, 0, 1)
        scores = q @ k.transpose(-1, -2) + bias[None]
        attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.o(attended)
        y = self.norm2(x)
        gated = F.gelu(self.wi_0(y), approximate="tanh") * self.wi_1(y)
        return x + self.wo(gated)


class T5Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCABULARY, DIM)
        self.layers = nn.Sequential(EncoderLayer(), EncoderLayer())
        self.head = nn.Linear(DIM, VOCABULARY)

    def forward(self, ids):
        return self.head(self.layers(self.embed(ids)))


def token_loss(logits, labels):
    return F.cross_entropy(logits.flatten(0, 1), labels.flatten(),
                           ignore_index=-100)


def reversal():
    ids = np.random.default_rng(7).integers(0, VOCABULARY, (64, POSITIONS))
    labels = ids[:, ::-1].copy()
    labels[:, -2:] = -100
    return [ids.astype(np.int64), labels.astype(np.int64)]


CASES = [Case(
    "t5", T5Encoder, token_loss, inputs=[(16, POSITIONS)],
    targets=[(16, POSITIONS)], data=reversal, whole_batch="slow",
    mean_loss=False,
    uses=["nn.Embedding", "relative position bias", "RMSNorm", "nn.Linear",
          "F.softmax", "nn.GELU", "ignore_index", "F.cross_entropy"])]
