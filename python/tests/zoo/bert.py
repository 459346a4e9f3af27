"""A BERT-style sequence classifier as people write one: token and position
embeddings, a layer norm, nn.TransformerEncoder with a key padding mask
computed from the ids (`ids == PAD`), a tanh pooler over the first ([CLS])
position and a linear classifier; the forward returns a dict, as Hugging
Face's ModelOutput, whose logits the loss reads. Ids (padded at the end)
and labels are `.npy` arrays."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case

VOCAB, LENGTH, ROWS, DIM, CLASSES, SAMPLES = 16, 8, 8, 16, 3, 40
PAD, CLS = 0, 1


class BertClassifier(nn.Module):
    def __init__(self, dim=DIM, heads=2, layers=1):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, dim, padding_idx=PAD)
        self.positions = nn.Embedding(LENGTH, dim)
        self.norm = nn.LayerNorm(dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0,
                                           activation="gelu",
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers,
                                             enable_nested_tensor=False)
        self.pooler = nn.Linear(dim, dim)
        self.classifier = nn.Linear(dim, CLASSES)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        h = self.norm(self.tokens(ids) + self.positions(positions))
        h = self.encoder(h, src_key_padding_mask=ids == PAD)
        pooled = torch.tanh(self.pooler(h[:, 0]))
        return {"logits": self.classifier(pooled), "pooled": pooled}


def classification_loss(output, labels):
    return F.cross_entropy(output["logits"], labels)


def padded_data():
    """[CLS] and 2 to LENGTH - 1 ids, then padding; labels in [0, CLASSES)."""
    rng = np.random.default_rng(4)
    ids = rng.integers(2, VOCAB, (SAMPLES, LENGTH))
    ids[:, 0] = CLS
    lengths = rng.integers(3, LENGTH + 1, SAMPLES)
    ids[np.arange(LENGTH) >= lengths[:, None]] = PAD
    return [ids, rng.integers(0, CLASSES, SAMPLES)]


CASES = [Case(
    "bert", BertClassifier, classification_loss,
    inputs=[(ROWS, LENGTH)], targets=[(ROWS,)], data=padded_data,
    stages=(2,), slow_stages=(1, 4), lr=0.1, whole_batch="slow",
    mean_loss=False,
    uses=["key padding mask", "dict outputs", "nn.TransformerEncoder",
          "nn.TransformerEncoderLayer", "nn.Embedding", "nn.LayerNorm",
          "nn.Linear", "torch.tanh", "F.cross_entropy"])]
