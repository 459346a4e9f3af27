#!/usr/bin/env python3
"""An independent, plain-Python GPT forward pass: computes the loss of the
first training step of a model gen_gpt.py emits, from the weights the pprt
runtime initialises and the batch its --corpus loader draws (or, with
--sample-lengths, the first step's samples of a length index, each at its
own length, no padding), so that the compiled program's `step 1 loss` can
be checked against it.

  gpt_reference.py [gen_gpt.py options] [--seed N] [--check TRAIN]

With --check, runs `TRAIN --steps 1 --corpus ... --seed N` (a 1-process
program compiled from the same options) and fails unless its loss agrees
to --rtol. Standard library only; meant for small models."""

import argparse
import math
import struct
import subprocess
import sys

import gen_gpt

MASK64 = (1 << 64) - 1
TAG_PARAM = 0x50415241   # runtime/lib/data.c
TAG_CORPUS = 0x434F5250  # runtime/lib/corpus.c


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def pprt_hash(seed, keys):
    h = splitmix64(seed)
    for k in keys:
        h = splitmix64(h ^ k)
    return h


def init_param(seed, index, shape):
    """The runtime's init, flattened: element k of argument `index` is
    uniform in +-1/sqrt(dims[0]) from a hash of (seed, index, k)."""
    scale = f32(1.0 / math.sqrt(shape[0]))
    count = math.prod(shape)
    return [f32(scale * f32((pprt_hash(seed, [TAG_PARAM, index, k]) >> 11) *
                            2.0 ** -52 - 1.0)) for k in range(count)]


def nested(flat, shape):
    if len(shape) == 1:
        return flat
    step = len(flat) // shape[0]
    return [nested(flat[i * step:(i + 1) * step], shape[1:])
            for i in range(shape[0])]


def batch(seed, text, rows, seq):
    """The vocabulary indices of step 0's input and target windows."""
    vocab = {c: i for i, c in enumerate(sorted(set(text)))}
    inputs, targets = [], []
    for row in range(rows):
        start = pprt_hash(seed, [TAG_CORPUS, 0, row]) % (len(text) - seq)
        inputs.append([vocab[c] for c in text[start:start + seq]])
        targets.append([vocab[c] for c in text[start + 1:start + seq + 1]])
    return inputs, targets


def first_step_samples(path, text):
    """Step 0's samples of a length index as the runtime lays them out:
    back to back from the start, each its tokens plus the last target."""
    with open(path) as f:
        for line in f:
            lengths = [int(v) for v in
                       line.split("#")[0].replace(",", " ").split()]
            if lengths:
                break
    vocab = {c: i for i, c in enumerate(sorted(set(text)))}
    inputs, targets, at = [], [], 0
    for length in lengths:
        if at + length + 1 > len(text):
            at = 0
        inputs.append([vocab[c] for c in text[at:at + length]])
        targets.append([vocab[c] for c in text[at + 1:at + length + 1]])
        at += length + 1
    return inputs, targets


def layer_norm(x, gain, bias):
    mean = sum(x) / len(x)
    var = sum((a - mean) ** 2 for a in x) / len(x)
    r = 1.0 / math.sqrt(var + 1e-5)
    return [(a - mean) * r * (1.0 + g) + c for a, g, c in zip(x, gain, bias)]


def gelu(a):
    return 0.5 * a * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) *
                                      (a + 0.044715 * a ** 3)))


def attention(ys, w, heads):
    """Causal multi-head attention over the positions `ys` of one row."""
    dim = len(ys[0])
    e = dim // heads
    proj = lambda m, y, h: [sum(y[d] * m[d][h][k] for d in range(dim))
                            for k in range(e)]
    out = [[0.0] * dim for _ in ys]
    for h in range(heads):
        q = [proj(w["wq"], y, h) for y in ys]
        k = [proj(w["wk"], y, h) for y in ys]
        v = [proj(w["wv"], y, h) for y in ys]
        for t in range(len(ys)):
            s = [sum(a * b for a, b in zip(q[t], k[u])) / math.sqrt(e)
                 for u in range(t + 1)]
            m = max(s)
            p = [math.exp(a - m) for a in s]
            z = sum(p)
            o = [sum(p[u] * v[u][j] for u in range(t + 1)) / z
                 for j in range(e)]
            for d in range(dim):
                out[t][d] += sum(o[j] * w["wo"][j][h][d] for j in range(e))
    return out


def block(xs, w, heads):
    ys = [layer_norm(x, w["ln1_g"], w["ln1_b"]) for x in xs]
    att = attention(ys, w, heads)
    xs = [[a + b + c for a, b, c in zip(x, y, w["bo"])]
          for x, y in zip(xs, att)]
    out = []
    for x in xs:
        y = layer_norm(x, w["ln2_g"], w["ln2_b"])
        h = [gelu(sum(y[d] * w["wfc"][d][f] for d in range(len(y))) + b)
             for f, b in enumerate(w["bfc"])]
        out.append([x[d] + sum(h[f] * w["wproj"][f][d] for f in range(len(h)))
                    + w["bproj"][d] for d in range(len(x))])
    return out


def loss(args, text):
    sizes = gen_gpt.loop_sizes(args)
    w = {}
    for i, (name, idx) in enumerate(gen_gpt.parameters(args.layers)):
        shape = [sizes[c] for c in idx]
        w[name] = nested(init_param(args.seed, i + 2, shape), shape)
    if args.sample_lengths:
        inputs, targets = first_step_samples(args.sample_lengths, text)
    else:
        inputs, targets = batch(args.seed, text, args.batch, args.seq)
    total = 0.0
    for row, target in zip(inputs, targets):
        xs = [[a + b for a, b in zip(w["wte"][c], w["wpe"][t])]
              for t, c in enumerate(row)]
        for l in range(args.layers):
            xs = block(xs, {n[len(f"l{l}_"):]: w[n]
                            for n, _ in gen_gpt.block_params(l)}, args.heads)
        for x, c in zip(xs, target):
            y = layer_norm(x, w["lnf_g"], w["lnf_b"])
            logits = [sum(y[d] * w["whead"][d][v] for d in range(len(y)))
                      for v in range(args.vocab)]
            m = max(logits)
            lse = m + math.log(sum(math.exp(a - m) for a in logits))
            total += lse - logits[c]
    if args.loss == "token-weighted":
        # The loader weighs each target 1/N without an index, 1.
        return total / sum(map(len, targets)) if args.sample_lengths else total
    return total / (args.batch * args.seq)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    gen_gpt.add_model_options(parser)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", metavar="TRAIN",
                        help="compiled 1-process program to compare with")
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--sample-lengths", metavar="INDEX",
                        help="a length index (the program's "
                        "--sample-lengths): step 1's samples")
    args = gen_gpt.parse_model_options(parser)
    with open(args.corpus, "rb") as f:
        text = f.read().decode("latin-1")
    expected = loss(args, text)
    print(f"reference step 1 loss {expected:.9g}")
    if not args.check:
        return 0
    index = (["--sample-lengths", args.sample_lengths]
             if args.sample_lengths else [])
    out = subprocess.run([args.check, "--steps", "1", "--seed",
                          str(args.seed), "--corpus", args.corpus] + index,
                         capture_output=True, text=True, check=True).stdout
    got = float(out.split("step 1 loss ")[1].split()[0])
    ok = abs(got - expected) <= args.rtol * abs(expected)
    print(f"{'PASS' if ok else 'FAIL'}: compiled step 1 loss {got:.9g}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
