"""The GPT of examples/gpt/gen_gpt.py in numpy: the pprt runtime's weights
and corpus batches (vectorised from examples/gpt/gpt_reference.py), and the
training step (forward, hand-written backward, SGD) in float32."""

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "examples", "gpt"))
import gen_gpt  # noqa: E402
import gpt_reference as ref  # noqa: E402

M64 = np.uint64


def splitmix64_np(x):
    """gpt_reference.splitmix64 on a uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        x = x + M64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> M64(30))) * M64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> M64(27))) * M64(0x94D049BB133111EB)
        return x ^ (x >> M64(31))


def init_param(seed, index, shape):
    """gpt_reference.init_param, vectorised: the runtime's initial weights."""
    prefix = ref.pprt_hash(seed, [ref.TAG_PARAM, index])
    k = np.arange(math.prod(shape), dtype=np.uint64)
    h = splitmix64_np(M64(prefix) ^ k)
    u = ((h >> M64(11)).astype(np.float64) * 2.0 ** -52 - 1.0)
    scale = np.float32(1.0 / math.sqrt(shape[0]))
    return (scale * u.astype(np.float32)).reshape(shape)


def init_weights(args):
    """{name: array} of every weight, as pprt initialises them."""
    sizes = gen_gpt.loop_sizes(args)
    weights = {}
    for i, (name, idx) in enumerate(gen_gpt.parameters(args.layers)):
        shape = [sizes[c] for c in idx]
        weights[name] = init_param(args.seed, i + 2, shape)
    check = weights["wte"].reshape(-1)[:64].tolist()
    if check != ref.init_param(args.seed, 2, [args.vocab, 64])[:64]:
        sys.exit("gpt_numpy.py: vectorised init disagrees with "
                 "gpt_reference.py")
    return weights


class Corpus:
    """The runtime's --corpus batches: vocabulary indices of the windows."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.text = np.frombuffer(f.read(), dtype=np.uint8)
        chars = np.unique(self.text)
        index = np.full(256, -1, dtype=np.int64)
        index[chars] = np.arange(len(chars))
        self.ids = index[self.text]

    def batch(self, seed, step, rows, seq):
        """(inputs, targets), int64 [rows, seq], of 0-based step `step`."""
        starts = np.array([ref.pprt_hash(seed, [ref.TAG_CORPUS, step, r]) %
                           (len(self.ids) - seq) for r in range(rows)])
        pos = starts[:, None] + np.arange(seq)[None, :]
        return self.ids[pos], self.ids[pos + 1]


def check_first_batch(corpus, args):
    """The vectorised batch equals gpt_reference.py's."""
    text = corpus.text.tobytes().decode("latin-1")
    inputs, targets = ref.batch(args.seed, text, 2, args.seq)
    got_in, got_tg = corpus.batch(args.seed, 0, 2, args.seq)
    if got_in.tolist() != inputs or got_tg.tolist() != targets:
        sys.exit("gpt_numpy.py: vectorised batch disagrees with "
                 "gpt_reference.py")


GELU_K0 = np.float32(math.sqrt(2 / math.pi))
GELU_K1 = np.float32(0.044715)


def ln_forward(x, g, b):
    mean = x.mean(-1, keepdims=True)
    xc = x - mean
    r = 1.0 / np.sqrt((xc * xc).mean(-1, keepdims=True) + np.float32(1e-5))
    n = xc * r
    return n * (1 + g) + b, (n, r, g)


def ln_backward(dy, cache):
    n, r, g = cache
    dg = (dy * n).reshape(-1, n.shape[-1]).sum(0)
    db = dy.reshape(-1, n.shape[-1]).sum(0)
    dn = dy * (1 + g)
    dx = r * (dn - dn.mean(-1, keepdims=True) -
              n * (dn * n).mean(-1, keepdims=True))
    return dx, dg, db


class GPT:
    """Forward and backward of one training step; x is [B, T, D]."""

    def __init__(self, args):
        self.L, self.H = args.layers, args.heads
        self.D, self.T, self.V = args.dim, args.seq, args.vocab
        self.E = self.D // self.H
        self.mask = np.tril(np.ones((self.T, self.T), dtype=bool))

    def heads(self, x):  # [B, T, D] -> [B, H, T, E]
        B = x.shape[0]
        return x.reshape(B, self.T, self.H, self.E).transpose(0, 2, 1, 3)

    def merge(self, x):  # [B, H, T, E] -> [B, T, D]
        return x.transpose(0, 2, 1, 3).reshape(x.shape[0], self.T, self.D)

    def attn_forward(self, y, w):
        D = self.D
        q = self.heads(y @ w["wq"].reshape(D, D))
        k = self.heads(y @ w["wk"].reshape(D, D))
        v = self.heads(y @ w["wv"].reshape(D, D))
        s = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1 / math.sqrt(self.E))
        s = np.where(self.mask, s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        o = self.merge(p @ v)
        wo = w["wo"].transpose(1, 0, 2).reshape(D, D)
        return o @ wo, (y, q, k, v, p, o, wo)

    def attn_backward(self, da, cache, w, g):
        y, q, k, v, p, o, wo = cache
        D, N = self.D, da.shape[0] * self.T
        dwo = o.reshape(N, D).T @ da.reshape(N, D)
        g["wo"] = dwo.reshape(self.H, self.E, D).transpose(1, 0, 2)
        do = self.heads(da @ wo.T)
        dp = do @ v.transpose(0, 1, 3, 2)
        dv = p.transpose(0, 1, 3, 2) @ do
        ds = p * (dp - (dp * p).sum(-1, keepdims=True))
        ds *= np.float32(1 / math.sqrt(self.E))
        dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
        yf, dy = y.reshape(N, D), 0
        for name, d in (("wq", dq), ("wk", dk), ("wv", dv)):
            df = self.merge(d).reshape(N, D)
            g[name] = (yf.T @ df).reshape(w[name].shape)
            dy = dy + df @ w[name].reshape(D, D).T
        return dy.reshape(da.shape)

    def mlp_forward(self, y, w):
        a = y @ w["wfc"] + w["bfc"]
        th = np.tanh(GELU_K0 * (a + GELU_K1 * a * a * a))
        h = np.float32(0.5) * a * (1 + th)
        return h @ w["wproj"], (y, a, th, h)

    def mlp_backward(self, dm, cache, w, g):
        y, a, th, h = cache
        N = dm.shape[0] * self.T
        g["wproj"] = h.reshape(N, -1).T @ dm.reshape(N, -1)
        dh = dm @ w["wproj"].T
        dgelu = np.float32(0.5) * (1 + th) + np.float32(0.5) * a * (
            1 - th * th) * GELU_K0 * (1 + 3 * GELU_K1 * a * a)
        da = dh * dgelu
        g["bfc"] = da.reshape(N, -1).sum(0)
        g["wfc"] = y.reshape(N, -1).T @ da.reshape(N, -1)
        return da @ w["wfc"].T

    def step(self, w, tokens, targets, lr):
        """The loss at `w`, then w -= lr * grad (in place)."""
        B, T, V = tokens.shape[0], self.T, self.V
        x = w["wte"][tokens] + w["wpe"]
        caches = []
        for l in range(self.L):
            b = {n[len(f"l{l}_"):]: w[n] for n, _ in gen_gpt.block_params(l)}
            y, c1 = ln_forward(x, b["ln1_g"], b["ln1_b"])
            a, c2 = self.attn_forward(y, b)
            x = x + a + b["bo"]
            y, c3 = ln_forward(x, b["ln2_g"], b["ln2_b"])
            m, c4 = self.mlp_forward(y, b)
            x = x + m + b["bproj"]
            caches.append((b, c1, c2, c3, c4))
        y, cf = ln_forward(x, w["lnf_g"], w["lnf_b"])
        logits = y @ w["whead"]
        mx = logits.max(-1, keepdims=True)
        ex = np.exp(logits - mx)
        z = ex.sum(-1, keepdims=True)
        onehot = np.zeros((B, T, V), dtype=np.float32)
        np.put_along_axis(onehot, targets[..., None], 1.0, -1)
        scale = np.float32(1.0 / (B * T))
        loss = float(((np.log(z) + mx - logits) * onehot).sum() * scale)

        g = {}
        dlogits = (ex / z - onehot) * scale
        N = B * T
        g["whead"] = y.reshape(N, -1).T @ dlogits.reshape(N, V)
        dx, g["lnf_g"], g["lnf_b"] = ln_backward(dlogits @ w["whead"].T, cf)
        for l in reversed(range(self.L)):
            b, c1, c2, c3, c4 = caches[l]
            gb = {}
            gb["bproj"] = dx.reshape(N, -1).sum(0)
            dy = self.mlp_backward(dx, c4, b, gb)
            dn, gb["ln2_g"], gb["ln2_b"] = ln_backward(dy, c3)
            dx = dx + dn
            gb["bo"] = dx.reshape(N, -1).sum(0)
            dy = self.attn_backward(dx, c2, b, gb)
            dn, gb["ln1_g"], gb["ln1_b"] = ln_backward(dy, c1)
            dx = dx + dn
            for name, grad in gb.items():
                g[f"l{l}_{name}"] = grad
        g["wpe"] = dx.sum(0)
        dwte = np.zeros_like(w["wte"])
        np.add.at(dwte, tokens.reshape(-1), dx.reshape(N, -1))
        g["wte"] = dwte
        for name, grad in g.items():
            w[name] -= np.float32(lr) * grad.astype(np.float32)
        return loss
