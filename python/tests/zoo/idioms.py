"""Small models written the way PyTorch tutorials and forum answers write
them: scalar parameters and buffers (a learned temperature
`nn.Parameter(torch.tensor(1.0))`, `register_buffer("scale",
torch.tensor(0.5))`), an f64 buffer, `nn.Sequential` with `nn.Flatten`, a
residual `x = x + self.block(x)` over `nn.LayerNorm(elementwise_affine=
False)`, `F.scaled_dot_product_attention` beside a score mask from a
boolean buffer, weight tying `self.head.weight = self.embed.weight` with
an integer position buffer, a frozen layer (`requires_grad=False`) with
`torch.where` on a boolean buffer and `view(-1)`, in-place ops
(`out += x`, `nn.ReLU(inplace=True)`), `nn.LogSoftmax` under
`F.nll_loss`, and a `padding="same"` reflected convolution with
`nn.AdaptiveMaxPool2d` and a bilinear `nn.Upsample`."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case


class Scaled(nn.Module):
    """A learned temperature and a fixed scale, both 0-d tensors."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 16)
        self.fc2 = nn.Linear(16, 4)
        self.temperature = nn.Parameter(torch.tensor(1.0))
        self.register_buffer("scale", torch.tensor(0.5))
        self.register_buffer("gain", torch.linspace(0.5, 1.5, 16,
                                                    dtype=torch.float64))

    def forward(self, x):
        h = torch.tanh(self.fc1(x * self.gain.float())) * self.scale
        return self.fc2(h) / self.temperature


class Flattened(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(2 * 8, 16),
                                 nn.ReLU(), nn.Linear(16, 4))

    def forward(self, x):
        return self.net(x)


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(16, 16)
        self.block = nn.Sequential(nn.LayerNorm(16, elementwise_affine=False),
                                   nn.Linear(16, 16), nn.GELU())
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        x = self.inp(x)
        x = x + self.block(x)
        return self.out(x)


class Attention(nn.Module):
    """Self-attention twice: through F.scaled_dot_product_attention, and
    written out with a causal mask from a boolean buffer."""

    def __init__(self, dim=16, heads=2, positions=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 4)
        self.register_buffer("causal", torch.tril(
            torch.ones(positions, positions, dtype=torch.bool)))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for y in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v)
        scores = (q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5
        scores = scores.masked_fill(~self.causal, float("-inf"))
        y = y + scores.softmax(dim=-1) @ v
        y = y.transpose(1, 2).reshape(b, t, d)
        return self.head(self.proj(y)).mean(dim=1)


class TiedLM(nn.Module):
    def __init__(self, vocab=20, dim=16, positions=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(positions, dim)
        self.mlp = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.embed.weight
        self.register_buffer("positions", torch.arange(positions))

    def forward(self, ids):
        h = self.embed(ids) + self.pos(self.positions[:ids.shape[1]])
        return self.head(torch.tanh(self.mlp(h)))


def lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           targets.reshape(-1))


class Frozen(nn.Module):
    """A frozen first layer, half its features kept by a boolean buffer,
    scaled by an integer one."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 16)
        self.fc1.weight.requires_grad_(False)
        self.fc2 = nn.Linear(16, 4)
        self.register_buffer("keep", torch.tensor([True, False] * 8))
        self.register_buffer("count", torch.tensor(3))

    def forward(self, x):
        h = torch.where(self.keep, torch.relu(self.fc1(x)), x)
        h = h.view(-1).reshape(x.shape[0], -1) * self.count
        return self.fc2(h)


class InPlace(nn.Module):
    """ResNet's `out += identity` before `nn.ReLU(inplace=True)`, and one
    layer called twice."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.relu = nn.ReLU(inplace=True)
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        out = self.fc(x)
        out += x
        out = self.relu(out)
        return self.out(self.relu(self.fc(out)))


class LogSoftmaxClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 16), nn.Tanh(),
                                 nn.Linear(16, 4), nn.LogSoftmax(dim=1))

    def forward(self, x):
        return self.net(x)


def labelled():
    rng = np.random.default_rng(3)
    return [rng.standard_normal((32, 16)).astype(np.float32),
            rng.integers(0, 4, (32,)).astype(np.int64)]


class Upsampler(nn.Module):
    """A `padding="same"` convolution with reflected borders, a global max
    pool and a bilinear upsampling."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding="same", padding_mode="reflect")
        self.up = nn.Upsample(scale_factor=2, mode="bilinear",
                              align_corners=False)
        self.pool = nn.AdaptiveMaxPool2d(1)
        self.fc = nn.Linear(4 + 4 * 8 * 8, 4)

    def forward(self, x):
        h = F.relu(self.conv(x))
        pooled = self.pool(h).view(x.size(0), -1)
        return self.fc(torch.cat([pooled, self.up(h).flatten(1)], dim=1))


CASES = [
    Case("scaled", Scaled, F.mse_loss, inputs=[(8, 16)], targets=[(8, 4)],
         slow_stages=(1,),
         uses=["nn.Linear", "torch.tanh", "learned temperature",
               "scalar buffer", "f64 buffer", "F.mse_loss"]),
    Case("flattened", Flattened, F.mse_loss, inputs=[(8, 2, 8)],
         targets=[(8, 4)], stages=(), slow_stages=(1, 2),
         uses=["nn.Linear", "nn.Flatten", "nn.ReLU", "F.mse_loss"]),
    Case("residual", Residual, F.mse_loss, inputs=[(8, 16)],
         targets=[(8, 4)], stages=(), slow_stages=(1, 2),
         uses=["nn.Linear", "nn.LayerNorm", "nn.GELU", "residual",
               "F.mse_loss"]),
    Case("attention", Attention, F.mse_loss, inputs=[(8, 4, 16)],
         targets=[(8, 4)], slow_stages=(1,),
         uses=["nn.Linear", "F.scaled_dot_product_attention",
               "Tensor.masked_fill", "causal mask", "Tensor.mean",
               "F.mse_loss"]),
    Case("tied", TiedLM, lm_loss, inputs=[(8, 8)], targets=[(8, 8)],
         vocab=20, stages=(), slow_stages=(1, 2), mean_loss=False,
         uses=["nn.Linear", "nn.Embedding", "tied embeddings",
               "integer buffer", "torch.tanh", "F.cross_entropy"]),
    Case("frozen", Frozen, F.mse_loss, inputs=[(8, 16)], targets=[(8, 4)],
         slow_stages=(1,),
         uses=["nn.Linear", "frozen parameters", "torch.where",
               "integer buffer", "F.mse_loss"]),
    Case("in-place", InPlace, F.mse_loss, inputs=[(8, 16)],
         targets=[(8, 4)], stages=(), slow_stages=(1, 2),
         uses=["nn.Linear", "in-place ops", "nn.ReLU", "F.mse_loss"]),
    Case("log-softmax", LogSoftmaxClassifier, F.nll_loss, inputs=[(8, 16)],
         targets=[(8,)], data=labelled, stages=(), slow_stages=(1, 2),
         mean_loss=False,
         uses=["nn.Linear", "nn.Tanh", "nn.LogSoftmax", "F.nll_loss"]),
    Case("upsampler", Upsampler, F.mse_loss, inputs=[(8, 1, 4, 4)],
         targets=[(8, 4)], stages=(), slow_stages=(1, 2),
         uses=["nn.Conv2d", "padding=\"same\"", "nn.AdaptiveMaxPool2d",
               "nn.Upsample", "torch.cat", "F.relu", "nn.Linear",
               "F.mse_loss"]),
]
