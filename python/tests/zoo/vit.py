"""ViTs as people write them: patches embedded by a convolution whose
kernel and stride are the patch (timm's and torchvision's `PatchEmbed`),
or cut with reshape and permute into a linear embedding; a class token
concatenated in front, learned position embeddings, nn.TransformerEncoder
of nn.TransformerEncoderLayer (pre-norm, batch_first, GELU) and a linear
head on the class token."""

import functools

import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case

ROWS, CHANNELS, SIZE, PATCH, CLASSES = 8, 2, 8, 4, 4


class ViT(nn.Module):
    def __init__(self, conv_patches=True, dim=16, heads=2, layers=2):
        super().__init__()
        patches = (SIZE // PATCH) ** 2
        if conv_patches:
            self.patch_embed = nn.Conv2d(CHANNELS, dim, PATCH, stride=PATCH)
        else:
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

    def embed(self, images):
        """[rows, patches, dim]: a patch per kernel position, or patches cut
        with reshape and permute."""
        if isinstance(self.patch_embed, nn.Conv2d):
            return self.patch_embed(images).flatten(2).transpose(1, 2)
        b, c, h, w = images.shape
        x = images.reshape(b, c, h // PATCH, PATCH, w // PATCH, PATCH)
        x = x.permute(0, 2, 4, 1, 3, 5).reshape(b, -1, c * PATCH * PATCH)
        return self.patch_embed(x)

    def forward(self, images):
        x = self.embed(images)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1) + self.pos_embed
        x = self.norm(self.encoder(x))
        return self.head(x[:, 0])


ENCODER = ["class token", "torch.cat", "nn.Linear",
           "nn.TransformerEncoderLayer", "nn.TransformerEncoder", "nn.GELU",
           "nn.LayerNorm", "F.mse_loss"]

# The linear embedding's runs are in the full zoo only: the
# convolutional one covers the same encoder in CI.
CASES = [
    Case("vit", functools.partial(ViT, conv_patches=False), F.mse_loss,
         inputs=[(ROWS, CHANNELS, SIZE, SIZE)], targets=[(ROWS, CLASSES)],
         lr=0.1, stages=(), slow_stages=(2,), whole_batch="slow",
         uses=ENCODER),
    Case("vit-conv", ViT, F.mse_loss,
         inputs=[(ROWS, CHANNELS, SIZE, SIZE)], targets=[(ROWS, CLASSES)],
         lr=0.1, uses=ENCODER + ["nn.Conv2d"])]
