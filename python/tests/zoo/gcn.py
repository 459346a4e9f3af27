"""A graph convolutional network on a fixed graph: the symmetrically
normalised adjacency (self loops, `rsqrt` of the degrees) is a buffer
that multiplies each layer's node features, a batch of graphs' features
in, a class per node out, trained with label-smoothed cross-entropy."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case

NODES, FEATURES, CLASSES = 10, 6, 3


class GCN(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        generator = torch.Generator().manual_seed(5)
        edges = (torch.rand(NODES, NODES, generator=generator) < 0.3).float()
        adjacency = ((edges + edges.t()) > 0).float() + torch.eye(NODES)
        scale = adjacency.sum(1).rsqrt()
        self.register_buffer("adjacency",
                             scale[:, None] * adjacency * scale[None, :])
        self.layer1 = nn.Linear(FEATURES, hidden)
        self.layer2 = nn.Linear(hidden, CLASSES)

    def forward(self, x):  # [graphs, nodes, features]
        h = F.relu(self.adjacency @ self.layer1(x))
        return (self.adjacency @ self.layer2(h)).flatten(0, 1)


def node_loss(logits, labels):
    return F.cross_entropy(logits, labels.flatten(), label_smoothing=0.1)


def graphs():
    rng = np.random.default_rng(6)
    return [rng.standard_normal((64, NODES, FEATURES)).astype(np.float32),
            rng.integers(0, CLASSES, (64, NODES)).astype(np.int64)]


CASES = [Case(
    "gcn", GCN, node_loss, inputs=[(16, NODES, FEATURES)],
    targets=[(16, NODES)], data=graphs, whole_batch="ci", mean_loss=False,
    uses=["nn.Linear", "F.relu", "label smoothing", "F.cross_entropy"])]
