"""examples/torch-gpt: an idiomatic PyTorch GPT (nn.Embedding of integer
token ids, nn.LayerNorm, causal attention, a GELU MLP, F.cross_entropy on
integer targets) exported with pp.torch.export trains under pp on 4 ranks
(1f1b, 8 micro-batches) with the per-step losses of a PyTorch loop over
the same token windows and initial weights, and the weights pp saves load
back with load_state_dict and give the next step's loss. Skipped where
torch or torch_mlir is not importable."""


import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
pytest.importorskip("numpy")

STEPS = 20


def test_gpt_trains_like_pytorch(pp, torch_gpt, tmp_path):
    example = torch_gpt
    model, exported = example.export(tmp_path)
    text = exported.mlir.read_text()
    assert "xi64>" in text and "tensor.extract" in text
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    tokens = example.write_tokens(tmp_path / "tokens.bin")
    saved = tmp_path / "trained.safetensors"
    run = example.train_with_pp(exported, tmp_path / "tokens.bin", STEPS,
                                saved)
    # One step more in PyTorch: the loss the saved weights must give.
    expected = example.pytorch_losses(model, tokens, STEPS + 1)
    assert run.losses == pytest.approx(expected[:STEPS], rel=1e-5)
    assert expected[-1] < expected[0]

    trained = example.GPT(vocab=example.VOCAB, context=example.CONTEXT)
    trained.load_state_dict(initial)
    weights = exported.state_dict(saved)
    # Buffers (the causal masks) are not trained, so pp does not save them.
    missing = trained.load_state_dict(weights, strict=False).missing_keys
    assert all(key.endswith(".mask") for key in missing), missing
    assert set(weights) == {k for k, _ in trained.named_parameters()}
    assert example.next_loss(trained, tokens, STEPS) == pytest.approx(
        expected[STEPS], rel=1e-5)


def test_gpt_laid_out_by_devices(pp, torch_gpt, tmp_path):
    """README's first command: within 4 MB a process the layout planner
    puts the GPT on 2 pipeline ranks x 2 replicas, and the program trains
    with the losses of a PyTorch loop over both replicas' rows."""
    example = torch_gpt
    model, exported = example.export(tmp_path)
    tokens = example.write_tokens(tmp_path / "tokens.bin")
    program = example.compile_for(exported, schedule="auto", devices=4,
                                  memory_cap=4e6)
    assert (program.ranks, program.tensor_parallel, program.replicas) == (
        2, 1, 2)
    assert "rank 1 |" in program.timeline().to_ascii()
    run = example.run_program(program, exported, tmp_path / "tokens.bin", 5)
    expected = example.pytorch_losses(model, tokens, 5, replicas=2)
    assert run.losses == pytest.approx(expected, rel=1e-5)
