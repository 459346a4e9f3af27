"""A convolutional autoencoder: strided nn.Conv2d down, nn.ConvTranspose2d
(stride 2, output_padding 1) up, a sigmoid output trained with binary
cross-entropy against its own input from a `.npy` array."""

import numpy as np
import torch.nn as nn
import torch.nn.functional as F

from harness import Case


class Autoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1,
                               output_padding=1), nn.ReLU(),
            nn.ConvTranspose2d(8, 1, 3, stride=2, padding=1,
                               output_padding=1), nn.Sigmoid())

    def forward(self, x):
        return self.decoder(self.encoder(x))


def images():
    x = np.random.default_rng(1).random((64, 1, 8, 8)).astype(np.float32)
    return [x, x.copy()]


CASES = [Case(
    "autoencoder", Autoencoder, F.binary_cross_entropy,
    inputs=[(16, 1, 8, 8)], targets=[(16, 1, 8, 8)], data=images,
    whole_batch="slow",
    uses=["nn.Conv2d", "nn.ConvTranspose2d", "nn.ReLU", "nn.Sigmoid",
          "F.binary_cross_entropy"])]
