"""A check that splitting a step into micro-batches kept its meaning: the
step exported at the whole batch's shape, compiled for M micro-batches (so
pp-split-microbatches rewrites it), runs one step on one batch, and its
loss and gradients are compared with PyTorch's loop over the same M
micro-batches. The split must either match or be refused (a
pp.CompileError at the model's line); a loss or a gradient that differs
is an AssertionError, whatever the exit status of the run."""

from __future__ import annotations

import copy
import dataclasses
import warnings
from typing import Callable, Optional, Sequence

import numpy as np
import torch

# SGD's step is the gradient times the rate: a large rate keeps the
# weights' rounding out of the gradient read back from the saved weights.
LR = 1024.0


@dataclasses.dataclass
class SplitCheck:
    """A refusal (`refused`, the CompileError), or the step's loss under pp
    and PyTorch and the largest gradient difference relative to the
    largest gradient of the same weight."""

    refused: Optional[Exception] = None
    pp_loss: Optional[float] = None
    torch_loss: Optional[float] = None
    gradient_difference: Optional[float] = None


def check_split(pp, module: torch.nn.Module, batch: Sequence[torch.Tensor],
                loss_fn: Callable, microbatches: int, directory, *,
                num_targets: int = 1, mean_loss: bool = True,
                rtol: float = 1e-5) -> SplitCheck:
    """Exports `module` at the whole shape of `batch` (inputs then
    targets), compiles it for `microbatches` micro-batches on one stage and
    runs one step on `batch`; compares with PyTorch's loop over the same
    micro-batches, each loss divided by their count when `mean_loss` (a
    loss over the whole batch with a fixed divisor is the whole batch's
    loss), or summed (a divisor taken from the data, F.cross_entropy's:
    each micro-batch's own, docs/PyTorch.md)."""
    import pp.torch
    module = copy.deepcopy(module)
    with warnings.catch_warnings():
        # Buffers updated in place (running statistics) stay as they are.
        warnings.simplefilter("ignore", UserWarning)
        exported = pp.torch.export(module, tuple(batch), loss_fn,
                                   directory / "whole.mlir",
                                   num_targets=num_targets, whole_batch=True)
    try:
        program = pp.compile(exported.mlir, stages=1,
                             microbatches=microbatches, opt_level=0)
    except pp.CompileError as error:
        return SplitCheck(refused=error)
    rows = batch[0].shape[0]
    paths = []
    for i, x in enumerate(batch):
        paths.append(str(directory / f"batch{i}.npy"))
        np.save(paths[-1], x.numpy())
    saved = directory / "stepped.safetensors"
    run = pp.run(program, steps=1, lr=LR, init_weights=exported.weights,
                 data=paths, save=saved, timeout=300)

    order = torch.as_tensor(pp.sample_order(rows, 0, rows))
    parts = [x[order].chunk(microbatches) for x in batch]
    scale = 1 / microbatches if mean_loss else 1.0
    total = 0.0
    module.zero_grad()
    inputs = len(batch) - num_targets
    for micro in zip(*parts):
        loss = loss_fn(module(*micro[:inputs]), *micro[inputs:]) * scale
        loss.backward()
        total += loss.item()
    stepped = exported.state_dict(saved)
    difference = 0.0
    for name, parameter in module.named_parameters():
        if not parameter.requires_grad:
            continue
        gradient = (parameter.detach() - stepped[name]) / LR
        # A parameter the loss does not read gets no gradient (None).
        expected = (parameter.grad if parameter.grad is not None else
                    torch.zeros_like(parameter))
        scale_of = max(expected.abs().max().item(), 1e-30)
        difference = max(difference,
                         (gradient - expected).abs().max().item() / scale_of)
    result = SplitCheck(pp_loss=run.losses[0], torch_loss=total,
                        gradient_difference=difference)
    assert abs(result.pp_loss - total) <= rtol * abs(total), result
    assert difference <= 1e-4, result
    return result
