"""A ViT as people write one without a convolution: patches cut with
reshape and permute into a linear patch embedding, a class token
concatenated in front, learned position embeddings, nn.TransformerEncoder
of nn.TransformerEncoderLayer (pre-norm, batch_first, GELU) and a linear
head on the class token."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case

ROWS, CHANNELS, SIZE, PATCH, CLASSES = 8, 2, 8, 4, 4


class ViT(nn.Module):
    def __init__(self, dim=16, heads=2, layers=2):
        super().__init__()
        patches = (SIZE // PATCH) ** 2
        self.patch_embed = nn.Linear(CHANNELS * PATCH * PATCH, dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, patches + 1, dim) * .02)
        layer = nn.TransformerEncoderLayer(
            dim, heads, dim_feedforward=2 * dim, dropout=0.0,
            activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers,
                                             enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, CLASSES)

    def forward(self, images):
        b, c, h, w = images.shape
        x = images.reshape(b, c, h // PATCH, PATCH, w // PATCH, PATCH)
        x = x.permute(0, 2, 4, 1, 3, 5).reshape(b, -1, c * PATCH * PATCH)
        x = self.patch_embed(x)
        cls = self.cls_token.expand(b, -1, -1)
        x = torch.cat([cls, x], dim=1) + self.pos_embed
        x = self.norm(self.encoder(x))
        return self.head(x[:, 0])


CASES = [Case(
    "vit", ViT, F.mse_loss, inputs=[(ROWS, CHANNELS, SIZE, SIZE)],
    targets=[(ROWS, CLASSES)], lr=0.1,
    whole_batch="ci",
    uses=["class token", "torch.cat", "nn.Linear", "nn.TransformerEncoderLayer",
          "nn.TransformerEncoder", "nn.GELU", "nn.LayerNorm", "F.mse_loss"])]
