"""Rank-6 weights in and out of files: test/e2e/Inputs/rank6-cuts.mlir on
3 stages (a 5-D and a 6-D activation crossing stages, a 6-D weight) saves
its weights with their 6-D shapes after 2 steps, and 2 more steps from
that file give steps 3 and 4 of an uninterrupted run, bit for bit; so do
2 steps resumed from a checkpoint (--checkpoint, --resume), and from the
saved weights written again by pp.torch.write_safetensors."""

import pathlib

import pytest

np = pytest.importorskip("numpy")

MODEL = (pathlib.Path(__file__).resolve().parents[2] / "test" / "e2e" /
         "Inputs" / "rank6-cuts.mlir")


def test_rank6_weights_resume(pp, tmp_path):
    import pp.torch
    program = pp.compile(MODEL, stages=3, microbatches=4)
    whole = pp.run(program, steps=4, lr=0.1)
    saved = tmp_path / "step2.safetensors"
    first = pp.run(program, steps=2, lr=0.1, save=saved)
    weights = pp.torch.read_safetensors(saved)
    assert {name: value.shape for name, value in weights.items()} == {
        "param2": (2, 2, 4, 4), "param3": (2, 2, 3, 4, 4, 2)}
    rest = pp.run(program, steps=2, lr=0.1, init_weights=saved,
                  extra_args=["--first-step", "3"])
    assert first.losses + rest.losses == whole.losses
    rewritten = tmp_path / "rewritten.safetensors"
    pp.torch.write_safetensors(rewritten, weights)
    again = pp.run(program, steps=2, lr=0.1, init_weights=rewritten,
                   extra_args=["--first-step", "3"])
    assert again.losses == rest.losses
    checkpoint = tmp_path / "checkpoint"
    pp.run(program, steps=2, lr=0.1, extra_args=["--checkpoint",
                                                 str(checkpoint)])
    resumed = pp.run(program, steps=2, lr=0.1,
                     extra_args=["--resume", str(checkpoint)])
    assert first.losses + resumed.losses == whole.losses
