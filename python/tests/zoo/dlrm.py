"""A DLRM-style recommender: one nn.Embedding table per sparse feature, a
bottom MLP on the dense features, the pairwise dot products of all
feature vectors (torch.stack, torch.bmm with its own transpose, the upper
triangle picked by index buffers from torch.triu_indices) and a top MLP,
trained with binary cross-entropy on click labels from `.npy` arrays (a
float, an int64 and a label array). At the whole batch's shape the split
is refused at the concatenation of the picked products."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case

TABLES, DIM, DENSE, SAMPLES = (16, 12, 10), 8, 4, 64


class DLRM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = nn.ModuleList(nn.Embedding(n, DIM) for n in TABLES)
        self.bottom = nn.Sequential(nn.Linear(DENSE, 16), nn.ReLU(),
                                    nn.Linear(16, DIM), nn.ReLU())
        features = len(TABLES) + 1
        rows, cols = torch.triu_indices(features, features, 1)
        self.register_buffer("rows", rows, persistent=False)
        self.register_buffer("cols", cols, persistent=False)
        pairs = features * (features - 1) // 2
        self.top = nn.Sequential(nn.Linear(DIM + pairs, 16), nn.ReLU(),
                                 nn.Linear(16, 1))

    def forward(self, dense, sparse):
        x = self.bottom(dense)
        features = [x] + [table(sparse[:, i])
                          for i, table in enumerate(self.embeddings)]
        t = torch.stack(features, dim=1)
        products = torch.bmm(t, t.transpose(1, 2))
        pairs = products[:, self.rows, self.cols]
        return self.top(torch.cat([x, pairs], dim=1)).squeeze(1)


def clicks():
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((SAMPLES, DENSE)).astype(np.float32)
    sparse = np.stack([rng.integers(0, n, SAMPLES) for n in TABLES], 1)
    labels = (rng.random(SAMPLES) < 0.5).astype(np.float32)
    return [dense, sparse.astype(np.int64), labels]


CASES = [Case(
    "dlrm", DLRM, F.binary_cross_entropy_with_logits,
    inputs=[(16, DENSE), (16, len(TABLES))], targets=[(16,)], data=clicks,
    refused="dlrm.py",
    uses=["nn.Embedding", "nn.Linear", "nn.ReLU", "torch.stack",
          "torch.bmm", "indexing with index tensors", "torch.cat",
          "F.binary_cross_entropy_with_logits"])]
