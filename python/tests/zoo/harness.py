"""The model zoo's shared harness (README.md): a `Case` names a model
written as people write it, its loss and its data; `check` exports it with
pp.torch.export at the micro-batch shape, trains it under pp and with a
PyTorch loop from the same weights and data, compares the per-step losses
and loads the weights pp saved back into the module."""

from __future__ import annotations

import dataclasses
import functools
import math
import pathlib
from typing import Callable, Dict, Optional, Sequence, Tuple

import numpy as np
import torch

SEED = 1
MASK = (1 << 64) - 1
TAG_DATA = 0x44415441     # runtime/lib/driver/data.c
TAG_TEACHER = 0x54434852
TAG_CORPUS = 0x434F5250   # runtime/lib/driver/corpus.c
TOKENS = 4096             # length of the token file of token models
MICROBATCHES = 4
RTOL = 1e-5


@dataclasses.dataclass(frozen=True)
class Case:
    """One zoo model. `make` builds it (called under torch.manual_seed(0));
    `inputs` and `targets` are the whole batch's shapes; with `vocab` they
    are [rows, positions] int64 token ids and next-token targets from a
    token file (`--tokens`), otherwise f32 from the runtime's synthetic
    generator. `stages` lists the pipeline depths to train on in CI,
    `slow_stages` more for the full zoo (`PP_ZOO_FULL=1`, ctest -L slow);
    `compile_options` go to pp.compile; `uses` lists the rows of
    docs/PyTorch.md's table the model exercises. `whole_batch` ("ci" or
    "slow") adds a 2-stage run exported at the whole batch's shape, which
    pp-split-microbatches splits (in the full zoo one on each depth);
    `refused` instead says that the split is refused, with an error whose
    location or notes name the file `refused` names (the model's); `mean_loss` says that the loss divides by a count the shapes
    fix (a mean), which such a run keeps the whole batch's. `data` returns
    the data set instead (numpy arrays, samples along dimension 0, one per
    input and target), which pp trains on from `.npy` files (`--data`)."""

    name: str
    make: Callable[[], torch.nn.Module]
    loss: Callable
    inputs: Sequence[Tuple[int, ...]]
    targets: Sequence[Tuple[int, ...]]
    uses: Sequence[str]
    vocab: Optional[int] = None
    stages: Sequence[int] = (2,)
    slow_stages: Sequence[int] = ()
    steps: int = 5
    lr: float = 0.05
    split_points: Sequence[str] = ()
    whole_batch: Optional[str] = None
    mean_loss: bool = True
    data: Optional[Callable[[], Sequence[np.ndarray]]] = None
    refused: Optional[str] = None
    compile_options: Dict[str, object] = dataclasses.field(
        default_factory=dict)


def _splitmix64(x):
    """The runtime's hash step (pprt_math.h), on uint64 arrays."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _hash(keys):
    """pprt_hash(SEED, keys), for scalar keys."""
    h = _splitmix64(np.uint64(SEED))
    for key in keys:
        h = _splitmix64(h ^ np.uint64(key & MASK))
    return h


def _uniform(keys, rows, cols):
    """uniform_pm1(pprt_hash(SEED, keys + [row, col])) on a grid."""
    h = _hash(keys)
    r = np.arange(rows, dtype=np.uint64)[:, None]
    c = np.arange(cols, dtype=np.uint64)[None, :]
    h = _splitmix64(_splitmix64(h ^ r) ^ c)
    return ((h >> np.uint64(11)).astype(np.float64) * 2.0 ** -52 -
            1.0).astype(np.float32)


def synthetic_batch(case: Case, step: int):
    """The runtime's synthetic data of a step (runtime/lib/driver/data.c):
    argument i's row r, element c is uniform(SEED, DATA, step, i, r, c);
    a 2-D target is tanh(x0 @ teacher) where a 2-D input x0 exists."""
    shapes = list(case.inputs) + list(case.targets)
    arrays = []
    for index, shape in enumerate(shapes):
        cols = math.prod(shape[1:])
        arrays.append(_uniform([TAG_DATA, step, index], shape[0], cols)
                      .reshape(shape))
    x0 = next((i for i, s in enumerate(case.inputs) if len(s) == 2), None)
    if x0 is not None:
        din = case.inputs[x0][1]
        for j, shape in enumerate(case.targets):
            if len(shape) != 2:
                continue
            teacher = _uniform([TAG_TEACHER], din, shape[1]) / np.float32(
                math.sqrt(din))
            arrays[len(case.inputs) + j] = np.tanh(
                arrays[x0].astype(np.float64) @ teacher.astype(np.float64)
            ).astype(np.float32)
    return [torch.from_numpy(a) for a in arrays]


def write_tokens(case: Case, path: pathlib.Path) -> np.ndarray:
    """A token file (uint16 ids below `case.vocab`) for `--tokens`."""
    ids = np.random.default_rng(0).integers(0, case.vocab, TOKENS)
    ids.astype("<u2").tofile(path)
    return ids.astype(np.int64)


def token_batch(case: Case, tokens: np.ndarray, step: int):
    """The runtime's --tokens windows of a step: row r starts at a hash of
    (SEED, CORP, step, r); targets are the next tokens."""
    rows, positions = case.inputs[0]
    starts = len(tokens) - positions
    ids, targets = [], []
    for row in range(rows):
        start = int(_hash([TAG_CORPUS, step, row])) % starts
        ids.append(tokens[start:start + positions])
        targets.append(tokens[start + 1:start + 1 + positions])
    return [torch.tensor(np.array(ids)), torch.tensor(np.array(targets))]


def example_inputs(case: Case):
    shapes = list(case.inputs) + list(case.targets)
    if case.data:
        return tuple(torch.zeros(shape, dtype=torch.from_numpy(a).dtype)
                     for shape, a in zip(shapes, case.data()))
    dtype = torch.int64 if case.vocab else torch.float32
    return tuple(torch.zeros(shape, dtype=dtype) for shape in shapes)


def write_data(case: Case, directory: pathlib.Path):
    """The data set as `.npy` files for `--data`, and the arrays."""
    arrays = case.data()
    paths = []
    for i, array in enumerate(arrays):
        paths.append(str(directory / f"data{i}.npy"))
        np.save(paths[-1], array)
    return paths, arrays


def data_batch(pp, case: Case, arrays, step: int):
    """The rows `--data` trains on at `step` (pp.sample_order)."""
    order = pp.sample_order(len(arrays[0]), step, case.inputs[0][0], SEED)
    return [torch.from_numpy(a[order]) for a in arrays]


def training_data(pp, case: Case, directory: pathlib.Path, steps: int):
    """The whole batches of `steps` steps of any case, and pp.run's
    arguments that train on the same."""
    if case.vocab:
        tokens = write_tokens(case, directory / "tokens.bin")
        return ([token_batch(case, tokens, s) for s in range(steps)],
                {"extra_args": ["--tokens", str(directory / "tokens.bin")]})
    if case.data:
        paths, arrays = write_data(case, directory)
        return ([data_batch(pp, case, arrays, s) for s in range(steps)],
                {"data": paths})
    return [synthetic_batch(case, s) for s in range(steps)], {}


def pytorch_losses(case: Case, model, batches, scale):
    """SGD as the exported step defines it: each micro-batch's loss times
    `scale`, gradients accumulated over the micro-batches."""
    optimizer = torch.optim.SGD(model.parameters(), lr=case.lr)
    losses = []
    for batch in batches:
        optimizer.zero_grad()
        total = 0.0
        parts = [t.chunk(MICROBATCHES) for t in batch]
        for mb in zip(*parts):
            inputs, targets = mb[:len(case.inputs)], mb[len(case.inputs):]
            loss = case.loss(model(*inputs), *targets) * scale
            loss.backward()
            total += loss.item()
        optimizer.step()
        losses.append(total)
    return losses


@dataclasses.dataclass(frozen=True)
class Result:
    """What `check` measured: pp's and PyTorch's losses per step, or the
    error that refused the split."""

    case: str
    stages: int
    pp_losses: Sequence[float] = ()
    torch_losses: Sequence[float] = ()
    refused: Optional[str] = None

    @property
    def max_relative_difference(self) -> Optional[float]:
        if self.refused:
            return None
        return max(abs(a - b) / abs(b)
                   for a, b in zip(self.pp_losses, self.torch_losses))


def assert_refused_at(error, filename: str):
    """The split's refusal is located, and at or called from `filename`."""
    diagnostic = error.diagnostics[0]
    assert diagnostic.location, error
    lines = [diagnostic.location] + [n.location for n in diagnostic.notes]
    assert any(filename in line for line in lines), error


def check(pp, case: Case, stages: int, directory: pathlib.Path,
          whole_batch: bool = False) -> Result:
    """Exports `case` for MICROBATCHES micro-batches (or at the whole
    batch's shape), trains it `steps` steps under 1f1b on `stages` ranks
    and with PyTorch's loop, asserts the losses agree within RTOL and that
    the weights pp saves load into the module with the loop's values."""
    import pp.torch
    torch.manual_seed(0)
    model = case.make()
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    exported = pp.torch.export(
        model, example_inputs(case), case.loss, directory / f"{case.name}.mlir",
        num_targets=len(case.targets),
        microbatches=None if whole_batch else MICROBATCHES,
        whole_batch=whole_batch,
        split_points=case.split_points)
    # A mean over the whole batch is the micro-batches' scaled sum; a loss
    # whose divisor comes from the data is per micro-batch (docs/PyTorch.md).
    scale = 1 / MICROBATCHES if case.mean_loss or not whole_batch else 1.0
    # -O0: the zoo checks numbers, and it halves the compile time.
    options = {"opt_level": 0, **case.compile_options}
    compile = functools.partial(pp.compile, exported.mlir, stages=stages,
                                microbatches=MICROBATCHES, schedule="1f1b",
                                **options)
    if whole_batch and case.refused:
        import pytest
        with pytest.raises(pp.CompileError) as error:
            compile()
        assert_refused_at(error.value, case.refused)
        return Result(case.name, stages, refused=str(error.value))
    program = compile()
    batches, flags = training_data(pp, case, directory, case.steps)
    saved = directory / "trained.safetensors"
    run = pp.run(program, steps=case.steps, lr=case.lr, seed=SEED,
                 init_weights=exported.weights, save=saved, timeout=300,
                 **flags)
    expected = pytorch_losses(case, model, batches, scale)
    result = Result(case.name, stages, list(run.losses), expected)
    assert len(run.losses) == case.steps
    assert run.losses == pytest_approx(expected), result
    # Training moved the loss, so equal curves are not equal constants.
    assert expected[-1] != expected[0]

    trained = model.state_dict()
    model.load_state_dict(initial)
    saved_state = exported.state_dict(saved)
    missing, unexpected = model.load_state_dict(saved_state, strict=False)
    assert not unexpected
    # What pp does not save: constant buffers, and weights tied to a saved
    # one. Batch norm's running statistics are state pp updates and saves.
    tied = {name for name, p in model.named_parameters(remove_duplicate=False)
            if name not in exported.names.values()}
    buffers = {name for name, _ in model.named_buffers()}
    assert set(missing) <= tied | (buffers - set(exported.states)), missing
    assert not exported.frozen_buffers, exported.frozen_buffers
    for name, value in model.state_dict().items():
        assert torch.allclose(value, trained[name], rtol=1e-5, atol=1e-6), \
            name
    return result


def pytest_approx(expected):
    import pytest
    return pytest.approx(expected, rel=RTOL)
