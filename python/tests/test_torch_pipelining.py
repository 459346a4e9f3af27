"""pp against PyTorch's own pipeline parallelism: a 4-block MLP exported
with pp.torch.export trains under pp (4 ranks, 1f1b, 8 micro-batches) with
the per-step losses of torch.distributed.pipelining's Schedule1F1B on 4
gloo processes, from the same initial weights and data, and the weights pp
saves load into the module and give the peer's next-step loss.

pp sums the micro-batches' losses and gradients; the peer does the same
with `scale_grads=False` and a loss that divides by the whole batch's
element count, as the exported `.mean()` over the whole batch does in pp.
Skipped where torch, torch_mlir or gloo is missing."""

import multiprocessing

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
pytest.importorskip("numpy")
dist = pytest.importorskip("torch.distributed")
pipelining = pytest.importorskip("torch.distributed.pipelining")

from test_torch import synthetic_batch  # noqa: E402

RANKS = 4
MICROBATCHES = 8
STEPS = 20
LR = 0.05
SEED = 1
BATCH, DIN, HIDDEN, DOUT = 32, 16, 32, 4


def blocks():
    """The model as the peer cuts it: one block per rank."""
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Sequential(torch.nn.Linear(DIN, HIDDEN), torch.nn.ReLU()),
        torch.nn.Sequential(torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.Tanh()),
        torch.nn.Sequential(torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU()),
        torch.nn.Linear(HIDDEN, DOUT))


def mean_squared_error(y, t):
    return ((y - t) ** 2).mean()


def microbatch_loss(y, t):
    """A micro-batch's share of the whole batch's mean."""
    return ((y - t) ** 2).sum() / (BATCH * DOUT)


def batch(step):
    return synthetic_batch(step, (BATCH, DIN), (BATCH, DOUT))


def peer_rank(rank, directory, initial):
    """One rank of torch.distributed.pipelining's 1F1B; it saves its
    per-step losses (the last rank's are the step's) and its block's
    weights to `directory`."""
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{directory}/rendezvous",
                            rank=rank, world_size=RANKS)
    model = blocks()
    model.load_state_dict(initial)
    block = model[rank]
    stage = PipelineStage(block, rank, RANKS, torch.device("cpu"))
    schedule = Schedule1F1B(stage, MICROBATCHES, loss_fn=microbatch_loss,
                            scale_grads=False)
    optimizer = torch.optim.SGD(block.parameters(), lr=LR)
    losses = []
    for step in range(STEPS):
        x, t = batch(step)
        optimizer.zero_grad()
        if rank == 0:
            schedule.step(x)
        elif rank == RANKS - 1:
            parts = []
            schedule.step(target=t, losses=parts)
            losses.append(sum(part.item() for part in parts))
        else:
            schedule.step()
        optimizer.step()
    torch.save((losses, {f"{rank}.{k}": v
                         for k, v in block.state_dict().items()}),
               f"{directory}/rank{rank}.pt")
    dist.destroy_process_group()


def run_peer(initial, directory):
    context = multiprocessing.get_context("spawn")
    ranks = [context.Process(target=peer_rank,
                             args=(rank, directory, initial))
             for rank in range(RANKS)]
    for process in ranks:
        process.start()
    try:
        for rank, process in enumerate(ranks):
            process.join(timeout=300)
            assert process.exitcode == 0, f"peer rank {rank}: {process.exitcode}"
    finally:  # a rank that failed leaves the others waiting in gloo
        for process in ranks:
            process.kill()
    reports = [torch.load(directory / f"rank{rank}.pt")
               for rank in range(RANKS)]
    weights = {k: v for _, state in reports for k, v in state.items()}
    return reports[-1][0], weights


def test_trains_like_torch_pipelining(pp, tmp_path):
    import pp.torch
    model = blocks()
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    exported = pp.torch.export(
        model, (torch.zeros(BATCH, DIN), torch.zeros(BATCH, DOUT)),
        mean_squared_error, tmp_path / "mlp.mlir", whole_batch=True)
    program = pp.compile(exported.mlir, stages=RANKS,
                         microbatches=MICROBATCHES, schedule="1f1b")
    saved = tmp_path / "trained.safetensors"
    run = pp.run(program, steps=STEPS, lr=LR, seed=SEED,
                 init_weights=exported.weights, save=saved)

    peer_losses, peer_weights = run_peer(initial, tmp_path)
    assert len(run.losses) == STEPS
    assert run.losses == pytest.approx(peer_losses, rel=1e-5)
    # Training moved the loss, so equal curves are not equal constants.
    assert peer_losses[-1] < 0.9 * peer_losses[0]

    x, t = batch(STEPS)
    with torch.no_grad():
        model.load_state_dict(exported.state_dict(saved))
        pp_next = mean_squared_error(model(x), t).item()
        model.load_state_dict(peer_weights)
        peer_next = mean_squared_error(model(x), t).item()
    assert pp_next == pytest.approx(peer_next, rel=1e-5)
