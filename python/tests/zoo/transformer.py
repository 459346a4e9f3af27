"""An encoder-decoder on nn.Transformer as people write a small translation
model: token and learned position embeddings for the source and the
shifted target, a causal target mask from
nn.Transformer.generate_square_subsequent_mask, and a linear head over the
vocabulary trained with cross-entropy on the next target tokens. The task
reverses the source; source, decoder input and labels are `.npy` arrays."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case

VOCAB, LENGTH, ROWS, DIM, SAMPLES = 12, 6, 8, 16, 40
BOS = 0


class Seq2Seq(nn.Module):
    def __init__(self, dim=DIM, heads=2):
        super().__init__()
        self.src_embed = nn.Embedding(VOCAB, dim)
        self.tgt_embed = nn.Embedding(VOCAB, dim)
        self.position = nn.Parameter(torch.randn(1, LENGTH, dim) * 0.1)
        self.transformer = nn.Transformer(
            dim, heads, num_encoder_layers=1, num_decoder_layers=1,
            dim_feedforward=2 * dim, dropout=0.0, batch_first=True)
        self.head = nn.Linear(dim, VOCAB)

    def forward(self, src, tgt):
        length = tgt.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(length)
        h = self.transformer(self.src_embed(src) + self.position,
                             self.tgt_embed(tgt) + self.position[:, :length],
                             tgt_mask=mask, tgt_is_causal=True)
        return self.head(h)


def next_token_loss(logits, labels):
    return F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))


def reversal_data():
    """Sources of ids in [1, VOCAB), the decoder's input (BOS, then the
    reversed source but its last id) and the labels (the reversed source)."""
    src = np.random.default_rng(3).integers(1, VOCAB, (SAMPLES, LENGTH))
    labels = src[:, ::-1].copy()
    tgt = np.concatenate([np.full((SAMPLES, 1), BOS), labels[:, :-1]], 1)
    return [src, tgt, labels]


CASES = [Case(
    "transformer", Seq2Seq, next_token_loss,
    inputs=[(ROWS, LENGTH), (ROWS, LENGTH)], targets=[(ROWS, LENGTH)],
    data=reversal_data, stages=(2,), slow_stages=(1, 4), lr=0.1,
    whole_batch="slow", mean_loss=False,
    uses=["nn.Transformer", "causal mask", "nn.Embedding", "nn.Linear",
          "F.cross_entropy"])]
