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
            if case.whole_batch == "ci" or (case.whole_batch and FULL):
                yield pytest.param(case, 2, True,
                                   id=f"{name}-2stages-whole-batch")


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
                                "pp": result.pp_losses,
                                "torch": result.torch_losses}) + "\n")
