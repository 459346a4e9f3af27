"""A sequence regressor on nn.MultiheadAttention (batch_first), in
pre-norm blocks with a ReLU feed-forward, mean-pooled into a linear head."""

import torch.nn as nn
import torch.nn.functional as F

from harness import Case

ROWS, SEQ, FEATURES, OUT = 8, 6, 8, 4


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.ReLU(),
                                nn.Linear(2 * dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        a, _ = self.attn(h, h, h, need_weights=False)
        x = x + a
        return x + self.ff(self.norm2(x))


class Regressor(nn.Module):
    def __init__(self, dim=16, heads=2, layers=2):
        super().__init__()
        self.embed = nn.Linear(FEATURES, dim)
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(layers)])
        self.head = nn.Linear(dim, OUT)

    def forward(self, x):
        return self.head(self.blocks(self.embed(x)).mean(dim=1))


CASES = [
    Case("mha", Regressor, F.mse_loss, inputs=[(ROWS, SEQ, FEATURES)],
         targets=[(ROWS, OUT)], lr=0.1, split_points=["blocks.1"],
         stages=(), slow_stages=(2,), whole_batch="slow",
         uses=["nn.MultiheadAttention", "nn.LayerNorm", "nn.ReLU",
               "nn.Linear", "F.mse_loss", "Tensor.mean"]),
    # The whole-batch export again with every contraction generated and
    # vectorized (-O2: pp-vectorize-contractions on the projections).
    Case("mha-vectorized", Regressor, F.mse_loss,
         inputs=[(ROWS, SEQ, FEATURES)], targets=[(ROWS, OUT)], lr=0.1,
         split_points=["blocks.1"], stages=(), whole_batch="slow",
         compile_options={"opt_level": 2, "gemm": "generated"}, uses=[])]
