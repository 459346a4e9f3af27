"""The GPT of examples/gpt/gen_gpt.py in PyTorch (float32, autograd, SGD),
on the weights and batches of bench/gpt_numpy.py, eager or torch.compile'd."""

import math

import torch

import gen_gpt


def forward(w, tokens, targets, layers, heads):
    """The loss: gen_gpt.py's model with embeddings by index (the one-hot
    contraction picks the same rows)."""
    B, T = tokens.shape
    D = w["wte"].shape[1]
    E = D // heads
    mask = torch.ones(T, T, dtype=torch.bool).tril()

    def ln(x, g, b):
        xc = x - x.mean(-1, keepdim=True)
        r = torch.rsqrt((xc * xc).mean(-1, keepdim=True) + 1e-5)
        return xc * r * (1 + g) + b

    def split(x):
        return x.view(B, T, heads, E).transpose(1, 2)

    x = w["wte"][tokens] + w["wpe"]
    for l in range(layers):
        p = lambda n: w[f"l{l}_{n}"]
        y = ln(x, p("ln1_g"), p("ln1_b"))
        q = split(y @ p("wq").view(D, D))
        k = split(y @ p("wk").view(D, D))
        v = split(y @ p("wv").view(D, D))
        s = (q @ k.transpose(-1, -2)) * (1 / math.sqrt(E))
        s = s.masked_fill(~mask, float("-inf")).softmax(-1)
        o = (s @ v).transpose(1, 2).reshape(B, T, D)
        x = x + o @ p("wo").transpose(0, 1).reshape(D, D) + p("bo")
        y = ln(x, p("ln2_g"), p("ln2_b"))
        h = y @ p("wfc") + p("bfc")
        h = 0.5 * h * (1 + torch.tanh(math.sqrt(2 / math.pi) *
                                      (h + 0.044715 * h * h * h)))
        x = x + h @ p("wproj") + p("bproj")
    logits = ln(x, w["lnf_g"], w["lnf_b"]) @ w["whead"]
    return torch.nn.functional.cross_entropy(
        logits.view(B * T, -1), targets.view(-1), reduction="mean")


class Trainer:
    """One SGD training step on torch tensors of the numpy weights."""

    def __init__(self, weights, args, compiled):
        self.w = {n: torch.tensor(a, requires_grad=True)
                  for n, a in weights.items()}
        self.layers, self.heads = args.layers, args.heads
        self.fn = torch.compile(forward) if compiled else forward

    def step(self, tokens, targets, lr):
        tokens = torch.from_numpy(tokens)
        targets = torch.from_numpy(targets)
        loss = self.fn(self.w, tokens, targets, self.layers, self.heads)
        loss.backward()
        loss = loss.detach()
        with torch.no_grad():
            for p in self.w.values():
                p -= lr * p.grad
                p.grad = None
        return loss.item()
