"""A top-k Mixture-of-Experts layer from PyTorch trains under pp with
PyTorch's losses: torch.topk routes each row to 2 of 4 experts, whose
outputs are mixed by a softmax over the selected router logits (the
gradient reaches the router through the selected values only), and
torch.sort orders a row. pp.torch.export gives torch.export top-k and
sort as max reductions, which torch-mlir lowers to linalg (it would emit
`tm_tensor.sort`). Trained on 2 stages with 4 micro-batches (1f1b).
Skipped where torch or torch_mlir is not importable."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
nn = torch.nn
F = torch.nn.functional

from test_torch import SEED, microbatch_losses, synthetic_batch  # noqa: E402

STEPS = 5
LR = 0.1
BATCH, DIM, OUT = 16, 8, 4


class MoE(nn.Module):
    def __init__(self, experts=4, k=2, hidden=12):
        super().__init__()
        self.k = k
        self.router = nn.Linear(DIM, experts)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(DIM, hidden), nn.GELU(),
                          nn.Linear(hidden, DIM)) for _ in range(experts))
        self.head = nn.Linear(2 * DIM, OUT)

    def forward(self, x):
        weights, chosen = torch.topk(self.router(x), self.k, dim=-1)
        weights = F.softmax(weights, dim=-1)
        mixed = x
        for e, expert in enumerate(self.experts):
            gate = (weights * (chosen == e)).sum(-1, keepdim=True)
            mixed = mixed + gate * expert(x)
        ordered, _ = torch.sort(mixed, dim=-1, descending=True)
        return self.head(torch.cat([mixed, ordered], dim=-1))


def pytorch_losses(model, initial, microbatches=1):
    """PyTorch's losses of STEPS SGD steps from `initial` on the synthetic
    batches, in `microbatches` micro-batches."""
    return microbatch_losses(
        model, initial,
        lambda step: synthetic_batch(step, (BATCH, DIM), (BATCH, OUT)), STEPS,
        LR, microbatches)


def test_topk_moe_trains_like_pytorch(pp, pp_compile, tmp_path):
    import subprocess
    import pp.torch
    torch.manual_seed(0)
    model = MoE()
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    exported = pp.torch.export(
        model, (torch.zeros(BATCH, DIM), torch.zeros(BATCH, OUT)), F.mse_loss,
        tmp_path / "moe.mlir", whole_batch=True)
    text = exported.mlir.read_text()
    assert "tm_tensor" not in text and "linalg.generic" in text
    program = pp.compile(exported.mlir, stages=2, microbatches=4)
    saved = tmp_path / "trained.safetensors"
    run = pp.run(program, steps=STEPS, lr=LR, seed=SEED,
                 init_weights=exported.weights, save=saved)
    losses = pytorch_losses(model, initial)
    assert run.losses == pytest.approx(losses, rel=1e-5)
    trained = exported.state_dict(saved)
    for name, value in model.state_dict().items():
        assert torch.allclose(trained[name], value, rtol=1e-5,
                              atol=1e-6), name


class DenseGates(nn.Module):
    """Mixtral-style routing written the usual way: the top-2 probabilities
    scattered into dense gates (`zeros_like(probs).scatter(...)`, that is
    Tensor.scatter), whose lowering by torch-mlir itself crashes; pp.torch
    decomposes scatter."""

    def __init__(self, experts=4):
        super().__init__()
        self.router = nn.Linear(DIM, experts)
        self.experts = nn.Linear(DIM, experts * OUT)

    def forward(self, x):
        probs = F.softmax(self.router(x), dim=-1)
        weights, chosen = torch.topk(probs, 2, dim=-1)
        gates = torch.zeros_like(probs).scatter(-1, chosen, weights)
        outputs = self.experts(x).view(x.shape[0], -1, OUT)
        return (gates.unsqueeze(-1) * outputs).sum(1)


def test_scatter_gates_train_like_pytorch(pp, tmp_path):
    import pp.torch
    torch.manual_seed(1)
    model = DenseGates()
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    exported = pp.torch.export(
        model, (torch.zeros(BATCH, DIM), torch.zeros(BATCH, OUT)), F.mse_loss,
        tmp_path / "gates.mlir", microbatches=4)
    program = pp.compile(exported.mlir, stages=2)
    run = pp.run(program, steps=STEPS, lr=LR, seed=SEED,
                 init_weights=exported.weights)
    losses = pytorch_losses(model, initial, microbatches=4)
    assert run.losses == pytest.approx(losses, rel=1e-5)


def test_lowering_crash_is_an_export_error(pp):
    """A crash where torch-mlir lowers (a child process) is pp.ExportError
    naming the step's ops and lines; this interpreter lives on."""
    import os
    import signal
    import pp.torch
    program = torch.export.export(DenseGates(), (torch.zeros(2, DIM),))
    with pytest.raises(pp.ExportError, match=r"crashed \(SIGSEGV\).*"
                       r"aten\.scatter\.src \(.*test_torch_moe\.py:\d+\)"):
        pp.torch._isolated(lambda: os.kill(os.getpid(), signal.SIGSEGV),
                           program, 60)
    assert pp.torch._isolated(lambda: "text", program, 60) == "text"
    with pytest.raises(ValueError, match="raised in the child"):
        pp.torch._isolated(
            lambda: (_ for _ in ()).throw(ValueError("raised in the child")),
            program, 60)


def test_lowering_child_dies_with_the_interpreter(pp, tmp_path):
    """An interpreter killed while its lowering runs (a batch system's
    SIGKILL) leaves no child computing on."""
    import os
    import signal
    import subprocess
    import sys
    import time
    pid_file = tmp_path / "child.pid"
    script = f"""
import os, time, torch, pp.torch
program = torch.export.export(torch.nn.Linear(2, 2), (torch.zeros(1, 2),))
def lower():
    open({str(pid_file)!r}, "w").write(str(os.getpid()))
    time.sleep(600)
pp.torch._isolated(lower, program, 600)
"""
    parent = subprocess.Popen([sys.executable, "-c", script])
    for _ in range(600):
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.1)
    child = int(pid_file.read_text())
    parent.kill()
    parent.wait()
    for _ in range(100):   # gone, or a zombie its new parent has not reaped
        try:
            state = open(f"/proc/{child}/stat").read().split(")")[1].split()[0]
        except FileNotFoundError:
            return
        if state == "Z":
            return
        time.sleep(0.1)
    os.kill(child, signal.SIGKILL)
    raise AssertionError(f"child {child} outlived its interpreter")
