"""The tests' split check: pp.torch.check_split (docs/PyTorch.md), whose
split, unless refused, must match PyTorch's loop over the micro-batches:
a loss or a gradient that differs is an AssertionError, whatever the exit
status of the run."""

from __future__ import annotations


def check_split(pp, module, batch, loss_fn, microbatches, directory,
                **options):
    import pp.torch
    result = pp.torch.check_split(module, batch, loss_fn, microbatches,
                                  directory, **options)
    assert result.refused is not None or result.exact, result
    return result
