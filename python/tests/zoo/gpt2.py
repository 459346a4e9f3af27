"""A GPT-2 written as Hugging Face's modeling_gpt2 writes it: Conv1D
projections (addmm with [in, out] weights), a boolean causal-mask buffer
applied with torch.where and the dtype's minimum, the tanh GELU
("gelu_new"), heads split with view and permute, learned position
embeddings and an LM head tied to the token embedding."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import Case

VOCAB, CONTEXT, ROWS = 32, 8, 8


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class NewGELUActivation(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(
            math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Attention(nn.Module):
    def __init__(self, dim, heads, context):
        super().__init__()
        self.num_heads, self.head_dim = heads, dim // heads
        self.register_buffer("bias", torch.tril(torch.ones(
            (context, context), dtype=torch.bool)).view(1, 1, context, context),
            persistent=False)
        self.c_attn = Conv1D(3 * dim, dim)
        self.c_proj = Conv1D(dim, dim)

    def _split_heads(self, tensor):
        new_shape = tensor.size()[:-1] + (self.num_heads, self.head_dim)
        return tensor.view(new_shape).permute(0, 2, 1, 3)

    def _merge_heads(self, tensor):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (self.num_heads * self.head_dim,)
        return tensor.view(new_shape)

    def _attn(self, query, key, value):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full(
            [], value.size(-1) ** 0.5, dtype=attn_weights.dtype)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length:key_length,
                                :key_length]
        mask_value = torch.full([], torch.finfo(attn_weights.dtype).min,
                                dtype=attn_weights.dtype)
        attn_weights = torch.where(causal_mask, attn_weights, mask_value)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states):
        query, key, value = self.c_attn(hidden_states).split(
            self.num_heads * self.head_dim, dim=2)
        attn_output = self._attn(self._split_heads(query),
                                 self._split_heads(key),
                                 self._split_heads(value))
        return self.c_proj(self._merge_heads(attn_output))


class GPT2MLP(nn.Module):
    def __init__(self, intermediate, dim):
        super().__init__()
        self.c_fc = Conv1D(intermediate, dim)
        self.c_proj = Conv1D(dim, intermediate)
        self.act = NewGELUActivation()

    def forward(self, hidden_states):
        return self.c_proj(self.act(self.c_fc(hidden_states)))


class GPT2Block(nn.Module):
    def __init__(self, dim, heads, context):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim, eps=1e-5)
        self.attn = GPT2Attention(dim, heads, context)
        self.ln_2 = nn.LayerNorm(dim, eps=1e-5)
        self.mlp = GPT2MLP(4 * dim, dim)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.attn(self.ln_1(hidden_states)) + residual
        residual = hidden_states
        return residual + self.mlp(self.ln_2(hidden_states))


class GPT2LMHeadModel(nn.Module):
    def __init__(self, vocab=VOCAB, dim=16, heads=2, layers=2,
                 context=CONTEXT):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(context, dim)
        self.h = nn.ModuleList(
            GPT2Block(dim, heads, context) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim, eps=1e-5)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, input_ids):
        position_ids = torch.arange(0, input_ids.size(-1), dtype=torch.long,
                                    device=input_ids.device).unsqueeze(0)
        hidden_states = self.wte(input_ids) + self.wpe(position_ids)
        for block in self.h:
            hidden_states = block(hidden_states)
        return self.lm_head(self.ln_f(hidden_states))


def loss(logits, labels):
    return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))


CASES = [Case(
    "gpt2", GPT2LMHeadModel, loss, inputs=[(ROWS, CONTEXT)],
    targets=[(ROWS, CONTEXT)], vocab=VOCAB, slow_stages=(4,), lr=0.1,
    mean_loss=False,
    whole_batch="slow",
    uses=["nn.Embedding", "nn.Linear", "torch.addmm", "torch.where", "nn.LayerNorm",
          "F.softmax", "torch.tanh", "tied embeddings", "F.cross_entropy"])]
