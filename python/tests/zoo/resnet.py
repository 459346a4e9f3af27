"""A small ResNet as torchvision writes one: basic blocks of two 3x3
convolutions with batch norms and a residual connection, a grouped and
dilated first convolution, a ResNet-D downsampling path (average pooling,
then a 1x1 convolution), a max-pooled stem and an adaptive
average pooling before the classifier. Batch norm trains in training mode
with each micro-batch's statistics, and pp updates its running statistics
as PyTorch's loop does (docs/PyTorch.md); the downsampling path's keeps a
cumulative average (`momentum=None`)."""

import torch.nn as nn
import torch.nn.functional as F

from harness import Case

ROWS, CHANNELS, SIZE, CLASSES = 8, 3, 8, 4


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1, groups=1, dilation=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride,
                               padding=dilation, dilation=dilation,
                               groups=groups, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(
                nn.AvgPool2d(stride), nn.Conv2d(inplanes, planes, 1,
                                                bias=False),
                nn.BatchNorm2d(planes, momentum=None))

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class ResNet(nn.Module):
    def __init__(self, width=8, classes=CLASSES):
        super().__init__()
        self.conv1 = nn.Conv2d(CHANNELS, width, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(2)
        self.layer1 = BasicBlock(width, width, groups=2, dilation=2)
        self.layer2 = BasicBlock(width, 2 * width, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(2 * width, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(self.avgpool(x).flatten(1))


CASES = [Case(
    "resnet", ResNet, F.mse_loss, inputs=[(ROWS, CHANNELS, SIZE, SIZE)],
    targets=[(ROWS, CLASSES)], stages=(), slow_stages=(2,), lr=0.05,
    refused="resnet.py",
    uses=["nn.Conv2d", "nn.BatchNorm2d", "nn.ReLU", "nn.MaxPool2d",
          "nn.AvgPool2d", "nn.AdaptiveAvgPool2d", "nn.Linear",
          "F.mse_loss"])]
