"""A small idiomatic PyTorch GPT (token and position embeddings, pre-norm
blocks of causal multi-head attention and a GELU MLP, a final layer norm
and a linear head), written as one would for PyTorch alone: pp takes it
through pp.torch.export (examples/torch-gpt/README.md)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads, context):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer(
            "mask", torch.tril(torch.ones(context, context)).view(
                1, 1, context, context))

    def forward(self, x):
        batch, positions, dim = x.shape
        q, k, v = self.qkv(x).split(dim, dim=2)
        shape = (batch, positions, self.heads, dim // self.heads)
        q = q.view(shape).transpose(1, 2)
        k = k.view(shape).transpose(1, 2)
        v = v.view(shape).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(dim // self.heads)
        scores = scores.masked_fill(
            self.mask[:, :, :positions, :positions] == 0, float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(batch, positions, dim)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, dim, heads, context):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, context)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(),
                                 nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=64, context=16, dim=32, heads=2, layers=2):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(context, dim)
        self.blocks = nn.Sequential(
            *[Block(dim, heads, context) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.tokens(ids) + self.positions(positions)
        return self.head(self.ln_f(self.blocks(x)))


def loss_fn(logits, targets):
    """Cross-entropy over the vocabulary, on integer next-token targets."""
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def padded_loss_fn(logits, targets, weights):
    """The padded language-model loss: each position's cross-entropy times
    its weight, summed. With weights 1/N at the N real target tokens of a
    step and 0 at padding (what pp's --sample-lengths loader fills), it is
    the step's mean over its real tokens however the samples are padded
    (docs/VariableLength.md)."""
    per_token = F.cross_entropy(logits.flatten(0, 1), targets.flatten(),
                                reduction="none")
    return (per_token * weights.flatten()).sum()
