"""A small MobileNetV3 as torchvision writes one: a strided stem,
inverted residual blocks (a 1x1 expansion, a depthwise convolution with
groups = channels, squeeze-and-excitation, a 1x1 projection, a residual
sum in place), nn.BatchNorm2d in training mode after every convolution
(torchvision's eps=0.001, momentum=0.01), Hardswish and ReLU, an adaptive
average pool and a Hardswish classifier head, trained with cross-entropy
on int64 labels from `.npy` arrays. One block gates with torchvision's
squeeze-and-excitation (1x1 convolutions, Hardsigmoid), another with
SENet's (nn.Linear, Sigmoid). The head has no dropout: pp's masks cannot be
PyTorch's (docs/PyTorch.md). At the whole batch's shape the batch norms'
statistics mix the micro-batches' rows, and the split is refused at the
model's line. The linear layers keep PyTorch's initialisation (not
torchvision's 0.01 normal), so the logits, and the loss, depend on the
features."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case

ROWS, CHANNELS, SIZE, CLASSES, SAMPLES = 8, 3, 8, 5, 40


def _make_divisible(v, divisor=8):
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class Conv2dNormActivation(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1,
                 groups=1, activation_layer=nn.Hardswish):
        padding = (kernel_size - 1) // 2
        layers = [nn.Conv2d(in_channels, out_channels, kernel_size, stride,
                            padding, groups=groups, bias=False),
                  nn.BatchNorm2d(out_channels, eps=0.001, momentum=0.01)]
        if activation_layer is not None:
            layers.append(activation_layer(inplace=True))
        super().__init__(*layers)


class SqueezeExcitation(nn.Module):
    """torchvision.ops.SqueezeExcitation with MobileNetV3's gate."""

    def __init__(self, input_channels, squeeze_channels):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = nn.ReLU()
        self.scale_activation = nn.Hardsigmoid()

    def _scale(self, input):
        scale = self.avgpool(input)
        scale = self.fc1(scale)
        scale = self.activation(scale)
        scale = self.fc2(scale)
        return self.scale_activation(scale)

    def forward(self, input):
        scale = self._scale(input)
        return scale * input


class SELayer(nn.Module):
    """SENet's squeeze-and-excitation: linear layers and a sigmoid."""

    def __init__(self, channel, squeezed):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(
            nn.Linear(channel, squeezed, bias=False), nn.ReLU(inplace=True),
            nn.Linear(squeezed, channel, bias=False), nn.Sigmoid())

    def forward(self, x):
        b, c, _, _ = x.size()
        y = self.avg_pool(x).view(b, c)
        y = self.fc(y).view(b, c, 1, 1)
        return x * y.expand_as(x)


class InvertedResidual(nn.Module):
    def __init__(self, input_channels, kernel, expanded_channels,
                 out_channels, se_layer, use_hs, stride):
        super().__init__()
        self.use_res_connect = stride == 1 and \
            input_channels == out_channels
        activation_layer = nn.Hardswish if use_hs else nn.ReLU
        layers = []
        if expanded_channels != input_channels:
            layers.append(Conv2dNormActivation(
                input_channels, expanded_channels, kernel_size=1,
                activation_layer=activation_layer))
        layers.append(Conv2dNormActivation(
            expanded_channels, expanded_channels, kernel_size=kernel,
            stride=stride, groups=expanded_channels,
            activation_layer=activation_layer))
        if se_layer is not None:
            squeeze_channels = _make_divisible(expanded_channels // 4, 8)
            layers.append(se_layer(expanded_channels, squeeze_channels))
        layers.append(Conv2dNormActivation(
            expanded_channels, out_channels, kernel_size=1,
            activation_layer=None))
        self.block = nn.Sequential(*layers)

    def forward(self, input):
        result = self.block(input)
        if self.use_res_connect:
            result += input
        return result


class MobileNetV3(nn.Module):
    def __init__(self, num_classes=CLASSES, last_channel=32):
        super().__init__()
        settings = [  # kernel, expanded, out, SE, Hardswish, stride
            (3, 8, 8, SqueezeExcitation, False, 1),
            (3, 16, 8, SELayer, True, 1),
            (5, 24, 16, None, True, 2)]
        layers = [Conv2dNormActivation(CHANNELS, 8, kernel_size=3, stride=2)]
        channels = 8
        for kernel, expanded, out, se, use_hs, stride in settings:
            layers.append(InvertedResidual(channels, kernel, expanded, out,
                                           se, use_hs, stride))
            channels = out
        lastconv_output_channels = 2 * channels
        layers.append(Conv2dNormActivation(channels, lastconv_output_channels,
                                           kernel_size=1))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            nn.Linear(lastconv_output_channels, last_channel),
            nn.Hardswish(inplace=True),
            nn.Linear(last_channel, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


def image_data():
    """Images and int64 labels in [0, CLASSES)."""
    rng = np.random.default_rng(5)
    images = rng.standard_normal((SAMPLES, CHANNELS, SIZE, SIZE), np.float32)
    return [images, rng.integers(0, CLASSES, SAMPLES)]


CASES = [Case(
    "mobilenet", MobileNetV3, F.cross_entropy,
    inputs=[(ROWS, CHANNELS, SIZE, SIZE)], targets=[(ROWS,)],
    data=image_data, stages=(2,), slow_stages=(1, 4), lr=0.1,
    mean_loss=False, refused="mobilenet.py",
    uses=["nn.Conv2d", "depthwise convolution", "nn.BatchNorm2d",
          "nn.Hardswish", "nn.ReLU", "squeeze-and-excitation",
          "nn.Hardsigmoid", "nn.Sigmoid", "nn.AdaptiveAvgPool2d",
          "nn.Linear", "F.cross_entropy"])]
