"""Parameters with requires_grad=False (a frozen layer) are constants of
the exported step, not weights: pp trains the others with the losses of
PyTorch's loop, and `Exported.state_dict` gives the frozen ones back as
they were, so the module loads whole. Skipped without torch and
torch_mlir."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")

ROWS, MICROBATCHES, STEPS, LR = 8, 4, 4, 0.1


def test_frozen_parameters_are_constants(pp, tmp_path):
    import pp.torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.Tanh(),
                                torch.nn.Linear(12, 3))
    for p in model[0].parameters():
        p.requires_grad_(False)
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    exported = pp.torch.export(
        model, (torch.zeros(ROWS, 6), torch.zeros(ROWS, 3)),
        torch.nn.functional.mse_loss, tmp_path / "frozen.mlir",
        microbatches=MICROBATCHES)
    assert sorted(exported.names.values()) == ["2.bias", "2.weight"]
    assert sorted(exported.frozen_params) == ["0.bias", "0.weight"]
    text = exported.mlir.read_text()
    assert text.count("pp.param") == 2
    assert '"0.weight"' not in text

    program = pp.compile(exported.mlir, stages=1)
    saved = tmp_path / "trained.safetensors"
    rng = torch.Generator().manual_seed(1)
    x = torch.randn(ROWS, 6, generator=rng)
    t = torch.randn(ROWS, 3, generator=rng)
    paths = [tmp_path / "x.npy", tmp_path / "t.npy"]
    import numpy as np
    np.save(paths[0], x.numpy())
    np.save(paths[1], t.numpy())
    run = pp.run(program, steps=STEPS, lr=LR, init_weights=exported.weights,
                 data=[str(p) for p in paths], save=saved, timeout=120)

    optimizer = torch.optim.SGD(
        [p for p in model.parameters() if p.requires_grad], lr=LR)
    expected = []
    for step in range(STEPS):
        order = torch.as_tensor(pp.sample_order(ROWS, step, ROWS))
        optimizer.zero_grad()
        total = 0.0
        for xs, ts in zip(x[order].chunk(MICROBATCHES),
                          t[order].chunk(MICROBATCHES)):
            loss = torch.nn.functional.mse_loss(model(xs), ts) / MICROBATCHES
            loss.backward()
            total += loss.item()
        optimizer.step()
        expected.append(total)
    assert run.losses == pytest.approx(expected, rel=1e-5)

    state = exported.state_dict(saved)
    assert torch.equal(state["0.weight"], initial["0.weight"])
    fresh = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.Tanh(),
                                torch.nn.Linear(12, 3))
    fresh.load_state_dict(state)   # strict: every key is there
    for name, value in model.state_dict().items():
        assert torch.allclose(fresh.state_dict()[name], value, rtol=1e-5,
                              atol=1e-6), name
