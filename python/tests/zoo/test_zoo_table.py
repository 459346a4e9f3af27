"""docs/PyTorch.md's table of PyTorch ops and layers agrees with the zoo:
every row marked supported is exercised by the zoo models it lists (their
`uses`), and no others, or, used by none, names a test of python/tests/
that uses the op; every op a zoo model uses has a supported row."""

import importlib
import pathlib
import re

import pytest

pytest.importorskip("torch")

HERE = pathlib.Path(__file__).resolve().parent
DOC = HERE.parents[2] / "docs" / "PyTorch.md"


def table():
    """{row: (status, [zoo models], notes)} from the doc's table."""
    text = DOC.read_text().split("## Supported ops and layers", 1)[1]
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        name = cells[0].split("`")[1]
        models = re.findall(r"`([^`]*)`", cells[2])
        rows[name] = (cells[1], models, cells[3])
    return rows


def uses():
    """{row: [zoo models using it]} from the family files."""
    used = {}
    for path in sorted(HERE.glob("*.py")):
        if path.stem == "harness" or path.stem.startswith("test_"):
            continue
        for case in importlib.import_module(path.stem).CASES:
            for name in case.uses:
                used.setdefault(name, []).append(case.name)
    return used


def assert_tested_outside_zoo(name, notes):
    """A supported row no zoo model uses names a test file that uses it."""
    tests = [HERE.parent / f for f in re.findall(r"`(test_\w+\.py)`", notes)]
    assert tests, f"{name}: supported, but no zoo model or test names it"
    for test in tests:
        assert test.is_file(), f"{name}: {test} does not exist"
        assert name in test.read_text(), f"{name}: {test} does not use it"


def test_table_matches_zoo():
    rows, used = table(), uses()
    assert rows, "no table under '## Supported ops and layers'"
    for name, models in used.items():
        assert name in rows, f"{name} (used by {models}) has no row"
    for name, (status, models, notes) in rows.items():
        assert status in ("yes", "no"), (name, status)
        if status == "yes":
            assert sorted(models) == sorted(used.get(name, [])), name
            if not models:
                assert_tested_outside_zoo(name, notes)
        else:
            assert name not in used, f"{name} trains in the zoo: mark it yes"
