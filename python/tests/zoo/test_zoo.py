"""The model zoo (README.md): every model of every family file trains under
pp (1f1b, 4 micro-batches) with the per-step losses of a PyTorch loop from
the same weights and data, on each of its pipeline depths, exported at the
micro-batch shape and (some) at the whole batch's, and the weights pp
saves load back with load_state_dict. Skipped without torch and
torch_mlir."""

import importlib
import json
import os
import pathlib

import pytest

pytest.importorskip("torch")
pytest.importorskip("torch_mlir")

HERE = pathlib.Path(__file__).resolve().parent
FAMILIES = sorted(p.stem for p in HERE.glob("*.py")
                  if p.stem != "harness" and not p.stem.startswith("test_"))


FULL = os.environ.get("PP_ZOO_FULL") == "1"


def cases():
    """CI's runs, or with PP_ZOO_FULL=1 (ctest -L slow) all of them."""
    for family in FAMILIES:
        for case in importlib.import_module(family).CASES:
            name = f"{family}-{case.name}"
            stages = list(case.stages) + list(case.slow_stages if FULL else [])
            for depth in stages:
                yield pytest.param(case, depth, False,
                                   id=f"{name}-{depth}stages")
            whole = []
            if FULL and (case.whole_batch or case.refused):
                whole = stages or [2]
            elif case.whole_batch == "ci":
                whole = [2]
            for depth in whole:
                yield pytest.param(case, depth, True,
                                   id=f"{name}-{depth}stages-whole-batch")


@pytest.mark.parametrize("case,stages,whole_batch", list(cases()))
def test_trains_like_pytorch(pp, case, stages, whole_batch, tmp_path):
    import harness
    result = harness.check(pp, case, stages, tmp_path, whole_batch)
    report = os.environ.get("PP_ZOO_REPORT")
    if report:
        with open(report, "a") as f:
            f.write(json.dumps({"model": case.name, "stages": stages,
                                "whole_batch": whole_batch,
                                "max_rel": result.max_relative_difference,
                                "refused": result.refused,
                                "pp": result.pp_losses,
                                "torch": result.torch_losses}) + "\n")


def split_cases():
    """Every model in the full zoo; in CI those with a whole-batch run in
    CI, and those whose split is refused."""
    for family in FAMILIES:
        for case in importlib.import_module(family).CASES:
            if FULL or case.whole_batch == "ci" or case.refused:
                yield pytest.param(case, id=f"{family}-{case.name}")


@pytest.mark.parametrize("case", list(split_cases()))
def test_whole_batch_split_is_exact_or_refused(pp, case, tmp_path):
    """The step exported at the whole batch's shape and split into 4
    micro-batches has PyTorch's loss and gradients on one batch, or is
    refused at the model's line (split_check.py); the models the zoo
    trains at that shape split."""
    import sys

    import harness
    import torch
    sys.path.insert(0, str(HERE.parent))
    from split_check import check_split
    torch.manual_seed(0)
    model = case.make()
    batch = harness.training_data(pp, case, tmp_path, 1)[0][0]
    result = check_split(pp, model, batch, case.loss, harness.MICROBATCHES,
                         tmp_path, num_targets=len(case.targets),
                         mean_loss=case.mean_loss)
    if case.whole_batch:
        assert result.refused is None, result
    if case.refused:
        assert result.refused is not None, result
        harness.assert_refused_at(result.refused, case.refused)
    elif result.refused is not None:
        assert result.refused.diagnostics[0].location, result
