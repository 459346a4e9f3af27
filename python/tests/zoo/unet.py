"""A small UNet as people write one for denoising: a 3x3 convolution with
nn.GroupNorm and SiLU per level (one, to keep CI's compile short),
max-pooling down, back up through nn.ConvTranspose2d at the inner level
and F.interpolate then a convolution at the outer one, each joined to its
encoder's features by torch.cat, and a 1x1 convolution predicting the
noise (MSE)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case

ROWS, CHANNELS, SIZE = 8, 1, 8


class ConvBlock(nn.Sequential):
    def __init__(self, cin, cout, groups=2):
        super().__init__(
            nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(groups, cout),
            nn.SiLU())


class UNet(nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.enc1 = ConvBlock(CHANNELS, width)
        self.enc2 = ConvBlock(width, 2 * width)
        self.mid = ConvBlock(2 * width, 2 * width)
        self.up2 = nn.ConvTranspose2d(2 * width, 2 * width, 2, stride=2)
        self.dec2 = ConvBlock(4 * width, width)
        self.up1 = nn.Conv2d(width, width, 3, padding=1)
        self.dec1 = ConvBlock(2 * width, width)
        self.out = nn.Conv2d(width, CHANNELS, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], dim=1))
        up = self.up1(F.interpolate(d2, scale_factor=2, mode="nearest"))
        d1 = self.dec1(torch.cat([up, e1], dim=1))
        return self.out(d1)


CASES = [Case(
    "unet", UNet, F.mse_loss, inputs=[(ROWS, CHANNELS, SIZE, SIZE)],
    targets=[(ROWS, CHANNELS, SIZE, SIZE)], stages=(2,), slow_stages=(1, 4),
    lr=0.1, whole_batch="slow",
    uses=["nn.ConvTranspose2d", "F.interpolate", "nn.GroupNorm", "nn.SiLU",
          "torch.cat", "nn.Conv2d", "F.max_pool2d", "F.mse_loss"])]
