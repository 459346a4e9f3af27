#!/usr/bin/env python3
"""Generates gpt.mlir: the training step of a character-level GPT (token and
position embeddings, pre-norm decoder blocks with causal self-attention and a
GELU MLP, final layer norm, LM head, softmax cross-entropy) in upstream
linalg, following pp's model conventions (see examples/gpt/README.md).

Every op is a linalg.generic whose operands are indexed by projected
permutations, so that pp-split-microbatches and pp-derive-backward handle the
whole model. Standard library only."""

import argparse
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def corpus_vocab_size(path):
    """The vocabulary of the runtime's --corpus loader: distinct bytes."""
    with open(path, "rb") as f:
        return len(set(f.read()))


def f32(x):
    """`x` as an MLIR float literal (repr, with the '.' MLIR needs)."""
    text = repr(float(x))
    if "e" in text and "." not in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"
    return text


class Model:
    """Emits the body of @train_step; each method returns an SSA name."""

    def __init__(self, sizes):
        # Loop letters: b batch, t query position, u key position, h head,
        # e head dim, d model dim, f MLP hidden dim, v vocabulary.
        self.sizes = sizes
        self.lines = []

    def type(self, idx):
        dims = "".join(f"{self.sizes[c]}x" for c in idx)
        return f"tensor<{dims}f32>"

    def emit(self, line):
        self.lines.append("  " + line)

    def comment(self, text):
        self.lines.append("")
        self.emit(f"// {text}")

    def init(self, name, out, value):
        """A fresh destination for `name`, filled with `value` if given."""
        t = self.type(out)
        self.emit(f"%{name}_e = tensor.empty() : {t}")
        if value is None:
            return f"%{name}_e"
        self.emit(f"%{name}_i = linalg.fill ins(%{value} : f32) "
                  f"outs(%{name}_e : {t}) -> {t}")
        return f"%{name}_i"

    def generic(self, name, loops, ins, out, body, combine=None, fill=None):
        """%name[out] = combine(out, body(ins)) over `loops`; `ins` are
        (value, index letters) pairs, `body` maps the block argument names
        to (lines, result) and `combine` (an arith op) reduces over the
        loops `out` does not index, starting from the constant `fill`."""
        dims = ", ".join(loops)
        maps = ", ".join(f"affine_map<({dims}) -> ({', '.join(idx)})>"
                         for idx in [i for _, i in ins] + [out])
        iters = ", ".join('"parallel"' if c in out else '"reduction"'
                          for c in loops)
        dest = self.init(name, out, fill)
        args = [f"%in{k}" for k in range(len(ins))]
        lines, result = body(*args)
        if combine:
            lines = lines + [f"%acc = {combine} %out, {result} : f32"]
            result = "%acc"
        operands = ", ".join(v for v, _ in ins)
        types = ", ".join(self.type(i) for _, i in ins)
        block = ", ".join(f"{a}: f32" for a in args + ["%out"])
        self.emit(f"%{name} = linalg.generic {{indexing_maps = [{maps}], "
                  f"iterator_types = [{iters}]}}")
        self.emit(f"    ins({operands} : {types}) "
                  f"outs({dest} : {self.type(out)}) {{")
        self.emit(f"  ^bb0({block}):")
        for line in lines:
            self.emit(f"    {line}")
        self.emit(f"    linalg.yield {result} : f32")
        self.emit(f"}} -> {self.type(out)}")
        return f"%{name}"

    def sum(self, name, loops, ins, out, body):
        return self.generic(name, loops, ins, out, body, "arith.addf",
                            "cst_zero")

    def contract(self, name, loops, a, b, out, scale=None):
        """%name[out] = sum a * b (* scale) over the loops out lacks."""
        def body(x, y):
            if scale is None:
                return [f"%p = arith.mulf {x}, {y} : f32"], "%p"
            return [f"%c = arith.constant {f32(scale)} : f32",
                    f"%p0 = arith.mulf {x}, {y} : f32",
                    "%p = arith.mulf %p0, %c : f32"], "%p"
        return self.sum(name, loops, [a, b], out, body)

    def map(self, name, loops, ins, body):
        return self.generic(name, loops, ins, loops, body)

    def add(self, name, loops, ins):
        """%name[loops] = the sum of `ins`, broadcast along missing loops."""
        def body(*args):
            lines, acc = [], args[0]
            for k, arg in enumerate(args[1:]):
                lines.append(f"%s{k} = arith.addf {acc}, {arg} : f32")
                acc = f"%s{k}"
            return lines, acc
        return self.map(name, loops, ins, body)

    def layer_norm(self, name, x, gain, bias, eps=1e-5):
        """(x - mean) / sqrt(var + eps) * (1 + gain) + bias over d. The gain
        is stored as an offset from 1 so that the runtime's zero-centred
        initialisation starts every norm near the identity."""
        inv_d = 1.0 / self.sizes["d"]
        scaled = lambda x: ([f"%c = arith.constant {f32(inv_d)} : f32",
                             f"%m = arith.mulf {x}, %c : f32"], "%m")
        mean = self.sum(f"{name}_mean", "btd", [(x, "btd")], "bt", scaled)
        xc = self.map(f"{name}_xc", "btd", [(x, "btd"), (mean, "bt")],
                      lambda a, m: ([f"%c = arith.subf {a}, {m} : f32"], "%c"))
        var = self.sum(f"{name}_var", "btd", [(xc, "btd")], "bt",
                       lambda a: ([f"%sq = arith.mulf {a}, {a} : f32"] +
                                  scaled("%sq")[0], "%m"))
        rstd = self.map(f"{name}_rstd", "bt", [(var, "bt")], lambda v: ([
            f"%eps = arith.constant {f32(eps)} : f32",
            "%one = arith.constant 1.0 : f32",
            f"%ve = arith.addf {v}, %eps : f32",
            "%sd = math.sqrt %ve : f32",
            "%r = arith.divf %one, %sd : f32"], "%r"))
        return self.map(
            f"{name}", "btd",
            [(xc, "btd"), (rstd, "bt"), (gain, "d"), (bias, "d")],
            lambda a, r, g, c: ([
                "%one = arith.constant 1.0 : f32",
                f"%n = arith.mulf {a}, {r} : f32",
                f"%g1 = arith.addf {g}, %one : f32",
                "%ng = arith.mulf %n, %g1 : f32",
                f"%y = arith.addf %ng, {c} : f32"], "%y"))

    def softmax_rows(self, name, loops, x, out, visible=None):
        """exp(x - max) along the loops `out` lacks, and its sum; entries
        where `visible` (lines, i1 value) is false are left out."""
        def keep(lines, value, fallback):
            """`value`, or the constant `fallback` where not visible."""
            if visible is None:
                return lines, value
            cond_lines, cond = visible
            return lines + cond_lines + [
                f"%fb = arith.constant {fallback} : f32",
                f"%sel = arith.select {cond}, {value}, %fb : f32"], "%sel"
        shift = self.generic(f"{name}_max", loops, [(x, loops)], out,
                             lambda a: keep([], a, "0xFF800000"),
                             "arith.maximumf", "cst_ninf")
        exps = self.map(
            f"{name}_exp", loops, [(x, loops), (shift, out)],
            lambda a, m: keep([f"%xs = arith.subf {a}, {m} : f32",
                               "%ex = math.exp %xs : f32"], "%ex", "0.0"))
        total = self.sum(f"{name}_sum", loops, [(exps, loops)], out,
                         lambda a: ([], a))
        return shift, exps, total

    def attention(self, name, y, wq, wk, wv, wo):
        scale = 1.0 / math.sqrt(self.sizes["e"])
        q = self.contract(f"{name}_q", "bhted", (y, "btd"), (wq, "dhe"), "bhte")
        k = self.contract(f"{name}_k", "bhued", (y, "bud"), (wk, "dhe"), "bhue")
        v = self.contract(f"{name}_v", "bhued", (y, "bud"), (wv, "dhe"), "bhue")
        s = self.contract(f"{name}_s", "bhtue", (q, "bhte"), (k, "bhue"),
                          "bhtu", scale)
        # Key u is visible to query t iff u <= t (loops b, h, t, u).
        causal = (["%ti = linalg.index 2 : index",
                   "%ui = linalg.index 3 : index",
                   "%vis = arith.cmpi ule, %ui, %ti : index"], "%vis")
        _, p, z = self.softmax_rows(f"{name}_p", "bhtu", s, "bht", causal)
        o = self.sum(f"{name}_o", "bhteu", [(p, "bhtu"), (v, "bhue"),
                                           (z, "bht")], "bhte",
                     lambda a, b, c: ([f"%pv = arith.mulf {a}, {b} : f32",
                                       f"%w = arith.divf %pv, {c} : f32"],
                                      "%w"))
        return self.contract(f"{name}_proj", "btdhe", (o, "bhte"),
                             (wo, "ehd"), "btd")

    def mlp(self, name, y, wfc, bfc, wproj):
        h = self.contract(f"{name}_fc", "btfd", (y, "btd"), (wfc, "df"), "btf")
        # GELU, tanh form: 0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3))).
        g = self.map(f"{name}_gelu", "btf", [(h, "btf"), (bfc, "f")],
                     lambda a, c: ([
                         f"%a = arith.addf {a}, {c} : f32",
                         "%half = arith.constant 0.5 : f32",
                         "%one = arith.constant 1.0 : f32",
                         f"%k0 = arith.constant {f32(math.sqrt(2 / math.pi))} "
                         ": f32",
                         "%k1 = arith.constant 0.044715 : f32",
                         "%a2 = arith.mulf %a, %a : f32",
                         "%a3 = arith.mulf %a2, %a : f32",
                         "%c3 = arith.mulf %a3, %k1 : f32",
                         "%inner = arith.addf %a, %c3 : f32",
                         "%z = arith.mulf %inner, %k0 : f32",
                         "%th = math.tanh %z : f32",
                         "%op = arith.addf %th, %one : f32",
                         "%ha = arith.mulf %a, %half : f32",
                         "%g = arith.mulf %ha, %op : f32"], "%g"))
        return self.contract(f"{name}_proj", "btdf", (g, "btf"),
                             (wproj, "fd"), "btd")



    def cross_entropy(self, logits, targets, scale):
        """sum over b, t, v of -target * log_softmax(logits), times scale."""
        m, _, z = self.softmax_rows("ce", "btv", logits, "bt")
        return self.sum(
            "loss", "btv", [(targets, "btv"), (logits, "btv"), (m, "bt"),
                            (z, "bt")], "",
            lambda y, x, mx, s: ([
                f"%lz = math.log {s} : f32",
                f"%lse = arith.addf %lz, {mx} : f32",
                f"%nl = arith.subf %lse, {x} : f32",
                f"%yl = arith.mulf {y}, %nl : f32",
                f"%c = arith.constant {f32(scale)} : f32",
                "%l = arith.mulf %yl, %c : f32"], "%l"))


def block_params(l):
    """(name, index letters) of the weights of decoder block `l`."""
    return [(f"l{l}_{n}", i) for n, i in [
        ("ln1_g", "d"), ("ln1_b", "d"), ("wq", "dhe"), ("wk", "dhe"),
        ("wv", "dhe"), ("wo", "ehd"), ("bo", "d"), ("ln2_g", "d"),
        ("ln2_b", "d"), ("wfc", "df"), ("bfc", "f"), ("wproj", "fd"),
        ("bproj", "d")]]


def parameters(layers):
    """(name, index letters) of every weight, in argument order."""
    params = [("wte", "vd"), ("wpe", "pd")]
    for l in range(layers):
        params += block_params(l)
    return params + [("lnf_g", "d"), ("lnf_b", "d"), ("whead", "dv")]


def loop_sizes(args):
    """The size of each loop letter (see Model)."""
    return {"b": args.batch, "t": args.seq, "u": args.seq, "h": args.heads,
            "e": args.dim // args.heads, "d": args.dim, "f": 4 * args.dim,
            "v": args.vocab, "p": getattr(args, "positions", None) or args.seq}


def generate(args):
    if args.dim % args.heads:
        sys.exit(f"gen_gpt.py: --dim {args.dim} is not divisible by "
                 f"--heads {args.heads}")
    m = Model(loop_sizes(args))
    params = parameters(args.layers)

    m.comment("token embedding (one-hot contraction) plus positions")
    tok = m.contract("emb_tok", "btdv", ("%tokens", "btv"), ("%wte", "vd"),
                     "btd")
    wpe = "%wpe"
    if m.sizes["p"] != args.seq:
        # A table longer than the context: its first `seq` rows, so that
        # programs of several context lengths share one weight.
        wpe = "%wpe_t"
        m.emit(f"{wpe} = tensor.extract_slice %wpe[0, 0] [{args.seq}, "
               f"{args.dim}] [1, 1] : {m.type('pd')} to {m.type('td')}")
    x = m.add("x0", "btd", [(tok, "btd"), (wpe, "td")])
    for l in range(args.layers):
        p = {n[len(f"l{l}_"):]: f"%{n}" for n, _ in block_params(l)}
        m.comment(f"decoder block {l}: attention")
        y = m.layer_norm(f"l{l}_ln1", x, p["ln1_g"], p["ln1_b"])
        a = m.attention(f"l{l}_attn", y, p["wq"], p["wk"], p["wv"], p["wo"])
        x = m.add(f"l{l}_x1", "btd", [(x, "btd"), (a, "btd"), (p["bo"], "d")])
        m.comment(f"decoder block {l}: MLP")
        y = m.layer_norm(f"l{l}_ln2", x, p["ln2_g"], p["ln2_b"])
        h = m.mlp(f"l{l}_mlp", y, p["wfc"], p["bfc"], p["wproj"])
        x = m.add(f"l{l}_x2", "btd", [(x, "btd"), (h, "btd"),
                                      (p["bproj"], "d")])
        if l in (getattr(args, "stage_ends", None) or []):
            m.emit(f"%l{l}_end = pp.boundary {x} : {m.type('btd')}")
            x = f"%l{l}_end"
    m.comment("final norm, LM head, cross-entropy over next characters")
    y = m.layer_norm("lnf", x, "%lnf_g", "%lnf_b")
    logits = m.contract("logits", "btvd", (y, "btd"), ("%whead", "dv"), "btv")
    token_weighted = getattr(args, "loss", "mean") == "token-weighted"
    loss = m.cross_entropy(
        logits, "%targets",
        1.0 if token_weighted else 1.0 / (args.batch * args.seq))

    t = m.type
    arg_lines = [f"%tokens: {t('btv')}", f"%targets: {t('btv')} {{pp.target}}"]
    arg_lines += [f"%{n}: {t(i)} {{pp.param}}" for n, i in params]
    indent = " " * len("func.func @train_step(")
    head = [
        "// Generated by examples/gpt/gen_gpt.py (do not edit) with",
        f"//   {options_text(args)}",
        f"// A {args.layers}-block character-level GPT training step "
        f"(d_model {args.dim}, {args.heads} heads,",
        f"// context {args.seq}, vocabulary {args.vocab}, batch "
        f"{args.batch}). Tokens and targets are one-hot",
        "// [batch, position, char]; the loss is the summed cross-entropy "
        "times",
        "// 1/(batch*context): a batch sum times a constant, so "
        "micro-batch losses add up." if not token_weighted else
        "// the targets' weights (token-weighted: the data gives each real "
        "token 1/N,\n// N the step's tokens, and padding 0), so "
        "micro-batch losses add up.",
        "func.func @train_step(" + (",\n" + indent).join(arg_lines) +
        ") -> tensor<f32> {",
        "  %cst_zero = arith.constant 0.0 : f32",
        "  %cst_ninf = arith.constant 0xFF800000 : f32",
    ]
    return "\n".join(head + m.lines + [f"  return {loss} : tensor<f32>",
                                        "}"]) + "\n"


def options_text(args):
    text = (f"--layers {args.layers} --dim {args.dim} --heads {args.heads} "
            f"--seq {args.seq} --batch {args.batch} --vocab {args.vocab}")
    if getattr(args, "positions", None):
        text += f" --positions {args.positions}"
    if getattr(args, "loss", "mean") != "mean":
        text += f" --loss {args.loss}"
    if getattr(args, "stage_ends", None):
        text += " --stage-ends " + ",".join(map(str, args.stage_ends))
    return text


# Model sizes by name: the small example and the benchmark size (a byte
# vocabulary, 3.3 million weights; bench/compute_speed.py).
PRESETS = {
    "small": {"layers": 4, "dim": 32, "heads": 2, "seq": 16, "batch": 16,
              "vocab": None},
    "bench": {"layers": 4, "dim": 256, "heads": 8, "seq": 128, "batch": 8,
              "vocab": 256},
}
SIZE_OPTIONS = ("layers", "dim", "heads", "seq", "batch", "vocab")


def add_model_options(parser):
    """The model options, shared with gpt_reference.py; each defaults to
    its --preset's value."""
    parser.add_argument("--preset", choices=sorted(PRESETS), default="small",
                        help="model size whose values the size options "
                        "default to (default: small)")
    parser.add_argument("--layers", type=int)
    parser.add_argument("--dim", type=int)
    parser.add_argument("--heads", type=int)
    parser.add_argument("--seq", type=int, help="context length T")
    parser.add_argument("--batch", type=int,
                        help="sequences per step (all micro-batches)")
    parser.add_argument("--vocab", type=int,
                        help="vocabulary size V (default: the distinct "
                        "characters of --corpus)")
    parser.add_argument("--corpus", default=os.path.join(HERE, "corpus.txt"))
    parser.add_argument("--positions", type=int,
                        help="rows of the position table (default: --seq); "
                        "longer lets programs of several context lengths "
                        "share the weights")
    parser.add_argument("--stage-ends", metavar="L[,L...]",
                        type=lambda v: [int(x) for x in v.split(",")],
                        help="end a pipeline stage after these decoder "
                        "blocks (pp.boundary markers): the same cut at every "
                        "shape")
    parser.add_argument("--loss", choices=["mean", "token-weighted"],
                        default="mean",
                        help="mean: the cross-entropy's mean over every "
                        "position; token-weighted: its sum weighted by the "
                        "targets, which the runtime's --sample-lengths "
                        "loader fills with 1/N per real token and 0 for "
                        "padding (default: mean)")


def resolve_model_options(args):
    """Fills the size options --preset leaves to `args`, and checks them."""
    for name in SIZE_OPTIONS:
        if getattr(args, name) is None:
            setattr(args, name, PRESETS[args.preset][name])
    # Callers that build their own options (bench/compute_speed.py) may
    # leave out the variable-length ones.
    for name, default in (("positions", None), ("loss", "mean"),
                          ("stage_ends", None)):
        if not hasattr(args, name):
            setattr(args, name, default)
    if args.vocab is None:
        args.vocab = corpus_vocab_size(args.corpus)
    for name in SIZE_OPTIONS:
        if getattr(args, name) < 1:
            sys.exit(f"gen_gpt.py: --{name} must be at least 1")
    if args.positions is not None and args.positions < args.seq:
        sys.exit(f"gen_gpt.py: --positions {args.positions} is shorter than "
                 f"--seq {args.seq}")
    return args


def parse_model_options(parser):
    return resolve_model_options(parser.parse_args())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_model_options(parser)
    parser.add_argument("-o", "--output", default="-")
    args = parse_model_options(parser)
    text = generate(args)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
