"""A 1-D CNN over sequences as people write one for signals: a padded
convolution with group normalization, max pooling, a causal (left-padded with
F.pad) dilated, strided and grouped convolution, average pooling and a
linear classifier over the flattened features."""

import torch.nn as nn
import torch.nn.functional as F

from harness import Case

ROWS, CHANNELS, LENGTH, CLASSES = 8, 3, 16, 4


class CausalConv1d(nn.Module):
    """A convolution that sees only the past: padded on the left."""

    def __init__(self, cin, cout, kernel, stride=1, dilation=1, groups=1):
        super().__init__()
        self.left = dilation * (kernel - 1)
        self.conv = nn.Conv1d(cin, cout, kernel, stride=stride,
                              dilation=dilation, groups=groups)

    def forward(self, x):
        return self.conv(F.pad(x, (self.left, 0)))


class CNN1d(nn.Module):
    def __init__(self, width=8, classes=CLASSES):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv1d(CHANNELS, width, 5, padding=2),
            nn.GroupNorm(2, width),
            nn.GELU(),
            nn.MaxPool1d(2),
            CausalConv1d(width, width, 3, stride=2, dilation=2, groups=4),
            nn.GELU(),
            nn.AvgPool1d(2))
        self.classifier = nn.Linear(width * LENGTH // 8, classes)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


CASES = [Case(
    "cnn1d", CNN1d, F.mse_loss, inputs=[(ROWS, CHANNELS, LENGTH)],
    targets=[(ROWS, CLASSES)], lr=0.05,
    uses=["nn.Conv1d", "nn.GroupNorm", "nn.GELU", "nn.MaxPool1d", "F.pad",
          "nn.AvgPool1d", "nn.Linear", "F.mse_loss"])]
