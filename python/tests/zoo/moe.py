"""A Mixture-of-Experts MLP as people write a small one: pre-norm residual
blocks whose feed-forward is 4 experts, of which a linear router picks 2
per row with torch.topk; a softmax over the selected logits mixes their
outputs (dense dispatch: every expert runs on every row, gated by zero
where not chosen)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case

ROWS, FEATURES, DIM, OUT = 8, 8, 16, 4


class Expert(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(),
                                 nn.Linear(hidden, dim))

    def forward(self, x):
        return self.net(x)


class TopKMoE(nn.Module):
    def __init__(self, dim, experts=4, k=2, hidden=16):
        super().__init__()
        self.k = k
        self.router = nn.Linear(dim, experts, bias=False)
        self.experts = nn.ModuleList(Expert(dim, hidden)
                                     for _ in range(experts))

    def forward(self, x):
        logits, chosen = torch.topk(self.router(x), self.k, dim=-1)
        weights = F.softmax(logits, dim=-1)
        out = torch.zeros_like(x)
        for i, expert in enumerate(self.experts):
            gate = (weights * (chosen == i)).sum(dim=-1, keepdim=True)
            out = out + gate * expert(x)
        return out


class MoENet(nn.Module):
    def __init__(self, blocks=2):
        super().__init__()
        self.embed = nn.Linear(FEATURES, DIM)
        self.norms = nn.ModuleList(nn.LayerNorm(DIM) for _ in range(blocks))
        self.moes = nn.ModuleList(TopKMoE(DIM) for _ in range(blocks))
        self.head = nn.Linear(DIM, OUT)

    def forward(self, x):
        h = self.embed(x)
        for norm, moe in zip(self.norms, self.moes):
            h = h + moe(norm(h))
        return self.head(h)


CASES = [Case(
    "moe", MoENet, F.mse_loss, inputs=[(ROWS, FEATURES)],
    targets=[(ROWS, OUT)], lr=0.1,
    uses=["torch.topk", "F.softmax", "nn.Linear", "nn.GELU",
          "nn.LayerNorm", "F.mse_loss"])]
