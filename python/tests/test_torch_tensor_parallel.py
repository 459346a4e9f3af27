"""Tensor parallelism for PyTorch models: `pp.torch.export`'s
parallelize_plan (torch.distributed.tensor.parallel's vocabulary) becomes
`pp.split` on the weights, bad plans are ValueErrors naming the module,
and examples/torch-gpt's GPT trained at T=2 x P=2 (4 processes, 1f1b)
gives its PyTorch loop's per-step losses and final weights. The run with
pp's default Megatron plan is slow (PP_TORCH_TP_FULL=1, ctest label slow).
Skipped where torch or torch_mlir is not importable."""

import os
import re

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
pytest.importorskip("numpy")

STEPS = 4
FULL = bool(os.environ.get("PP_TORCH_TP_FULL"))


def _splits(mlir_text):
    """The `pp.split` of each weight of the exported step, by name."""
    return dict(re.findall(
        r'pp.name = "([^"]*)", pp.param, pp.split = (\[[^}]*\])', mlir_text))


def _styles():
    parallel = pytest.importorskip("torch.distributed.tensor.parallel")
    return parallel.ColwiseParallel, parallel.RowwiseParallel


def test_plan_marks_linear_and_embedding_weights(pp, torch_gpt, tmp_path):
    colwise, rowwise = _styles()
    plan = {"blocks.*.attn.qkv": colwise(), "blocks.*.attn.proj": rowwise(),
            "blocks.0.mlp.0": "colwise", "blocks.0.mlp.2": "rowwise",
            "tokens": "vocab", "positions": colwise()}
    _, exported = torch_gpt.export(tmp_path, plan, 2)
    splits = _splits(exported.mlir.read_text())
    assert splits == {
        "blocks.0.attn.qkv.weight": "[[0]]", "blocks.0.attn.qkv.bias": "[[0]]",
        "blocks.1.attn.qkv.weight": "[[0]]", "blocks.1.attn.qkv.bias": "[[0]]",
        "blocks.0.attn.proj.weight": "[[], [0]]",
        "blocks.1.attn.proj.weight": "[[], [0]]",
        "blocks.0.mlp.0.weight": "[[0]]", "blocks.0.mlp.0.bias": "[[0]]",
        "blocks.0.mlp.2.weight": "[[], [0]]",
        "tokens.weight": "[[0]]", "positions.weight": "[[], [0]]"}
    assert exported.splits == splits


@pytest.mark.parametrize("plan,message", [
    ({"blocks.*.attn.c_attn": "colwise"},
     "'blocks.*.attn.c_attn' matches no submodule of GPT"),
    ({"blocks.0.mlp": "colwise"},
     "module 'blocks.0.mlp' (Sequential) has no weight for colwise"),
    ({"blocks.0.ln1": "rowwise"},
     "rowwise applies to nn.Linear and nn.Embedding; module 'blocks.0.ln1' "
     "is LayerNorm"),
    ({"blocks.0.mlp.0": "colwise", "blocks.*.mlp.0": "rowwise"},
     "module 'blocks.0.mlp.0' is given both colwise and rowwise"),
    ({"blocks.0.mlp.0": "sequence"}, "style 'sequence' is not one pp takes"),
])
def test_bad_plans_name_the_module(pp, torch_gpt, tmp_path, plan, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        torch_gpt.export(tmp_path, plan, 2)


def test_split_the_group_does_not_divide(pp, torch_gpt, tmp_path):
    # 2 heads of width 16: the fused projection's 96 outputs over 5.
    with pytest.raises(ValueError, match=re.escape(
            "colwise splits dimension 0 of 'blocks.0.attn.qkv.weight' "
            "(size 96) over 5 processes, which does not divide it")):
        torch_gpt.export(tmp_path, {"blocks.0.attn.qkv": "colwise"}, 5)


def _train_tp2_pp2(torch_gpt, tmp_path, plan):
    """pp's losses and saved weights at T=2 x P=2 against PyTorch's loop
    from the same weights and token windows."""
    example = torch_gpt
    model, exported = example.export(tmp_path, plan, 2)
    tokens = example.write_tokens(tmp_path / "tokens.bin")
    saved = tmp_path / "trained.safetensors"
    run = example.train_with_pp(exported, tmp_path / "tokens.bin", STEPS,
                                saved, stages=2, tensor_parallel=2)
    expected = example.pytorch_losses(model, tokens, STEPS)
    assert run.losses == pytest.approx(expected, rel=1e-5)
    trained = exported.state_dict(saved)
    for name, value in model.named_parameters():
        torch.testing.assert_close(trained[name], value.detach(),
                                   rtol=1e-5, atol=1e-6, msg=name)
    return exported


def test_gpt_tp2_pp2_with_dtensor_plan(pp, torch_gpt, tmp_path):
    colwise, rowwise = _styles()
    plan = {"blocks.*.attn.qkv": colwise(), "blocks.*.attn.proj": rowwise(),
            "blocks.*.mlp.0": colwise(), "blocks.*.mlp.2": rowwise()}
    exported = _train_tp2_pp2(torch_gpt, tmp_path, plan)
    assert len(exported.splits) == 12


@pytest.mark.skipif(not FULL, reason="slow: set PP_TORCH_TP_FULL=1")
def test_gpt_tp2_pp2_with_default_plan(pp, torch_gpt, tmp_path):
    _train_tp2_pp2(torch_gpt, tmp_path, None)


@pytest.mark.skipif(not FULL, reason="slow: set PP_TORCH_TP_FULL=1")
def test_llama_heads_tp2_pp2_like_one_process_per_rank(pp, tmp_path):
    """The zoo's LLaMA (rotary embeddings' `torch.cat`, grouped-query
    F.scaled_dot_product_attention, SwiGLU) with its attention split by
    heads and its feed-forward column then row: T=2 x P=2 gives pp's
    losses at T=1."""
    import importlib
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).parent / "zoo"))
    try:
        llama = importlib.import_module("llama")
    finally:
        sys.path.pop(0)
    torch.manual_seed(0)
    ids = torch.zeros(llama.ROWS, llama.CONTEXT, dtype=torch.int64)
    plan = {"layers.*.attention.wq": "colwise",
            "layers.*.attention.wk": "colwise",
            "layers.*.attention.wv": "colwise",
            "layers.*.attention.wo": "rowwise",
            "layers.*.feed_forward.w1": "colwise",
            "layers.*.feed_forward.w3": "colwise",
            "layers.*.feed_forward.w2": "rowwise"}
    export = importlib.import_module("pp.torch").export
    exported = export(llama.Llama(), (ids, ids), llama.loss,
                      tmp_path / "llama.mlir", microbatches=4,
                      parallelize_plan=plan, tensor_parallel=2)
    args = dict(steps=STEPS, lr=0.1, init_weights=exported.weights,
                extra_args=["--classes", str(llama.VOCAB)])
    split = pp.run(pp.compile(exported.mlir, stages=2, microbatches=4,
                              tensor_parallel=2), **args)
    whole = pp.run(pp.compile(exported.mlir, stages=2, microbatches=4),
                   **args)
    assert split.losses == pytest.approx(whole.losses, rel=1e-5)
