"""The model zoo (README.md): every model of every family file trains under
pp (1f1b, 4 micro-batches) with the per-step losses of a PyTorch loop from
the same weights and data, on each of its pipeline depths, and the weights
pp saves load back with load_state_dict. Skipped without torch and
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


def cases():
    for family in FAMILIES:
        for case in importlib.import_module(family).CASES:
            for stages in case.stages:
                yield pytest.param(case, stages,
                                   id=f"{family}-{case.name}-{stages}stages")


@pytest.mark.parametrize("case,stages", list(cases()))
def test_trains_like_pytorch(pp, case, stages, tmp_path):
    import harness
    result = harness.check(pp, case, stages, tmp_path)
    report = os.environ.get("PP_ZOO_REPORT")
    if report:
        with open(report, "a") as f:
            f.write(json.dumps({"model": case.name, "stages": stages,
                                "max_rel": result.max_relative_difference,
                                "pp": result.pp_losses,
                                "torch": result.torch_losses}) + "\n")
