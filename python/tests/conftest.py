"""Shared fixtures of the pp package tests: the package itself (skipped
where it is not built), and pp-opt and pp-compile for the numbers to
compare against."""

import importlib.util
import os
import pathlib
import shutil

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def pp():
    return pytest.importorskip(
        "pp", reason="the pp package is not built (PP_ENABLE_PYTHON=OFF) or "
        "not on PYTHONPATH (build/python_packages)")


@pytest.fixture(scope="session")
def pp_opt():
    path = os.environ.get("PP_OPT") or shutil.which("pp-opt")
    if not path:
        path = REPO / "build" / "bin" / "pp-opt"
    if not pathlib.Path(path).exists():
        pytest.skip("pp-opt not found (set PP_OPT)")
    return str(path)


@pytest.fixture(scope="session")
def pp_compile():
    path = os.environ.get("PP_COMPILE") or shutil.which("pp-compile")
    if not path:
        path = REPO / "build" / "bin" / "pp-compile"
    if not pathlib.Path(path).exists():
        pytest.skip("pp-compile not found (set PP_COMPILE)")
    return str(path)


@pytest.fixture(scope="module")
def torch_gpt():
    """examples/torch-gpt/train.py as a module: the GPT, its --tokens data
    emulation and its PyTorch loop."""
    spec = importlib.util.spec_from_file_location(
        "torch_gpt_train", REPO / "examples" / "torch-gpt" / "train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
