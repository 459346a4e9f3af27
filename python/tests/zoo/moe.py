"""A Mixture-of-Experts MLP as people write a small one: pre-norm residual
blocks whose feed-forward is 4 experts, of which a linear router picks 2
per row with torch.topk; a softmax over the selected logits mixes their
outputs (dense dispatch: every expert runs on every row, gated by zero
where not chosen)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case
from llama import FeedForward

ROWS, FEATURES, DIM, OUT = 8, 8, 16, 4
VOCAB, CONTEXT = 16, 4


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
    targets=[(ROWS, OUT)], lr=0.1, stages=(), slow_stages=(2,),
    uses=["torch.topk", "F.softmax", "nn.Linear", "nn.GELU",
          "nn.LayerNorm", "F.mse_loss"])]


class SparseMoE(nn.Module):
    """Mixtral's sparse block, with dense gates: the top-2 probabilities,
    renormalised, scattered into a gate per expert, and the load-balancing
    loss of the router (Switch Transformer's, as Mixtral computes it)."""

    def __init__(self, dim, hidden=16, experts=4, top_k=2):
        super().__init__()
        self.experts_count, self.top_k = experts, top_k
        self.gate = nn.Linear(dim, experts, bias=False)
        self.experts = nn.ModuleList(FeedForward(dim, hidden)
                                     for _ in range(experts))

    def forward(self, x):
        probs = F.softmax(self.gate(x), dim=-1)
        weights, selected = torch.topk(probs, self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        gates = torch.zeros_like(probs).scatter(-1, selected, weights)
        out = sum(gates[..., e:e + 1] * expert(x)
                  for e, expert in enumerate(self.experts))
        chosen = F.one_hot(selected, self.experts_count).float()
        tokens_per_expert = chosen.mean(dim=(0, 1))
        router_prob_per_expert = probs.mean(dim=(0, 1))
        aux = self.experts_count * (tokens_per_expert *
                                    router_prob_per_expert).sum()
        return out, aux


# The load-balancing loss multiplies two means over the batch's tokens: a
# PyTorch loop takes each micro-batch's, so the step exported at the whole
# batch's shape is refused at the product (moe.py), not split.
class Mixtral(nn.Module):
    def __init__(self, dim=DIM, blocks=2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(blocks))
        self.moes = nn.ModuleList(SparseMoE(dim) for _ in range(blocks))
        self.head = nn.Linear(dim, VOCAB)

    def forward(self, ids):
        h, aux = self.embed(ids), 0.0
        for norm, moe in zip(self.norms, self.moes):
            out, loss = moe(norm(h))
            h, aux = h + out, aux + loss
        return self.head(h), aux


def lm_and_balance_loss(output, targets):
    logits, aux = output
    return F.cross_entropy(logits.reshape(-1, VOCAB),
                           targets.reshape(-1)) + 0.01 * aux


CASES.append(Case(
    "mixtral", Mixtral, lm_and_balance_loss, inputs=[(ROWS, CONTEXT)],
    targets=[(ROWS, CONTEXT)], vocab=VOCAB, stages=(2,), slow_stages=(1, 4),
    lr=0.1, mean_loss=False, refused="moe.py",
    uses=["torch.topk", "Tensor.scatter", "F.one_hot", "tuple outputs",
          "F.softmax", "F.silu", "nn.Embedding", "nn.LayerNorm", "nn.Linear",
          "F.cross_entropy"]))
