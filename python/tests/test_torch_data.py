"""Training on a user's own arrays: a PyTorch classifier (nn.CrossEntropyLoss
over integer class labels) exported with pp.torch trains on 2 stages (1f1b,
4 micro-batches) from float32 features and int64 labels written by numpy
(`pp.run(data=...)`, the program's --data), with the losses of a PyTorch
loop over the same samples (pp.sample_order); synthetic integer labels
(--classes) do too; arrays that do not fit the step are one-line errors
before training. Skipped where torch or torch_mlir is not importable."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
np = pytest.importorskip("numpy")

ROWS, FEATURES, CLASSES, SAMPLES = 16, 12, 5, 40
MICROBATCHES, STEPS, LR, SEED = 4, 6, 0.2, 3
MASK = (1 << 64) - 1
TAG_DATA = 0x44415441     # runtime/lib/driver/data.c
TAG_CLASSES = 0x434C5353  # runtime/lib/driver/samples.c


def pprt_hash(seed, keys):
    def splitmix64(x):
        x = (x + 0x9E3779B97F4A7C15) & MASK
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
        return x ^ (x >> 31)
    h = splitmix64(seed)
    for key in keys:
        h = splitmix64(h ^ key)
    return h


def uniform_pm1(h):
    return np.float32((h >> 11) * 2.0 ** -52 - 1.0)


@pytest.fixture(scope="module")
def classifier(pp, tmp_path_factory):
    import pp.torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 24),
                                torch.nn.Tanh(),
                                torch.nn.Linear(24, CLASSES))
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    path = tmp_path_factory.mktemp("classifier") / "classifier.mlir"
    exported = pp.torch.export(
        model, (torch.zeros(ROWS, FEATURES),
                torch.zeros(ROWS, dtype=torch.int64)),
        torch.nn.CrossEntropyLoss(), path, whole_batch=True)
    program = pp.compile(exported.mlir, stages=2, microbatches=MICROBATCHES,
                         schedule="1f1b")
    return model, initial, exported, program


def torch_losses(model, initial, batches):
    """SGD with gradients accumulated over the micro-batches: pp's step
    loss is the sum of the micro-batches' mean cross-entropies
    (docs/PyTorch.md)."""
    model.load_state_dict(initial)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    criterion = torch.nn.CrossEntropyLoss()
    losses = []
    for x, t in batches:
        optimizer.zero_grad()
        total = 0.0
        for xm, tm in zip(x.chunk(MICROBATCHES), t.chunk(MICROBATCHES)):
            loss = criterion(model(xm), tm)
            loss.backward()
            total += loss.item()
        optimizer.step()
        losses.append(total)
    return losses


def test_trains_from_numpy_arrays(pp, classifier, tmp_path):
    model, initial, exported, program = classifier
    rng = np.random.default_rng(7)
    features = rng.standard_normal((SAMPLES, FEATURES)).astype(np.float32)
    labels = rng.integers(0, CLASSES, SAMPLES).astype(np.int64)
    np.save(tmp_path / "features.npy", features)
    np.save(tmp_path / "labels.npy", labels)
    run = pp.run(program, steps=STEPS, lr=LR, seed=SEED,
                 init_weights=exported.weights,
                 data=[tmp_path / "features.npy", tmp_path / "labels.npy"])
    batches = []
    for step in range(STEPS):
        order = pp.sample_order(SAMPLES, step, ROWS, seed=SEED)
        batches.append((torch.from_numpy(features[order]),
                        torch.from_numpy(labels[order])))
    # An epoch of 40 samples is 2 steps of 16 rows, 32 different samples
    # (the 8 last of its shuffled order are left out: drop_last); the next
    # epoch has an order of its own.
    firsts = [pp.sample_order(SAMPLES, s, ROWS, seed=SEED) for s in range(4)]
    epochs = [firsts[0] + firsts[1], firsts[2] + firsts[3]]
    assert all(len(set(e)) == 2 * ROWS for e in epochs)
    assert epochs[0] != epochs[1]
    with pytest.raises(ValueError, match="must be at least batch"):
        pp.sample_order(ROWS - 1, 0, ROWS)
    assert run.losses == pytest.approx(torch_losses(model, initial, batches),
                                       rel=1e-5)


def test_trains_from_safetensors(pp, classifier, tmp_path):
    """FILE.safetensors:NAME entries: both arrays in one file."""
    import pp.torch
    model, initial, exported, program = classifier
    rng = np.random.default_rng(11)
    features = rng.standard_normal((SAMPLES, FEATURES)).astype(np.float32)
    labels = rng.integers(0, CLASSES, SAMPLES).astype(np.int64)
    path = tmp_path / "samples.safetensors"
    pp.torch.write_safetensors(path, {"x": features, "y": labels})
    run = pp.run(program, steps=2, lr=LR, seed=SEED,
                 init_weights=exported.weights,
                 data=[f"{path}:x", f"{path}:y"])
    batches = []
    for step in range(2):
        order = pp.sample_order(SAMPLES, step, ROWS, seed=SEED)
        batches.append((torch.from_numpy(features[order]),
                        torch.from_numpy(labels[order])))
    assert run.losses == pytest.approx(torch_losses(model, initial, batches),
                                       rel=1e-5)


def test_synthetic_class_ids(pp, classifier):
    """--classes: labels hashed from (seed, step, argument, row) into
    [0, CLASSES); features uniform in [-1, 1) as for any f32 input."""
    model, initial, exported, program = classifier
    run = pp.run(program, steps=3, lr=LR, seed=SEED,
                 init_weights=exported.weights,
                 extra_args=["--classes", str(CLASSES)])
    batches = []
    for step in range(3):
        x = np.array([[uniform_pm1(pprt_hash(SEED, [TAG_DATA, step, 0, r, j]))
                       for j in range(FEATURES)] for r in range(ROWS)])
        t = np.array([pprt_hash(SEED, [TAG_CLASSES, step, 1, r, 0]) % CLASSES
                      for r in range(ROWS)], dtype=np.int64)
        batches.append((torch.from_numpy(x), torch.from_numpy(t)))
    assert run.losses == pytest.approx(torch_losses(model, initial, batches),
                                       rel=1e-5)


@pytest.mark.parametrize("features,labels,message", [
    ((SAMPLES, FEATURES), np.int32,
     "labels.npy holds i32; target argument 1 is i64"),
    ((SAMPLES, FEATURES + 1), np.int64,
     f"features.npy has shape [{SAMPLES}, {FEATURES + 1}]; input argument 0 "
     f"needs [samples] + [{FEATURES}]"),
    ((SAMPLES + 1, FEATURES), np.int64,
     f"has {SAMPLES} samples but"),
])
def test_mismatch_is_one_line(pp, classifier, tmp_path, features, labels,
                              message):
    _, _, exported, program = classifier
    np.save(tmp_path / "features.npy", np.zeros(features, np.float32))
    np.save(tmp_path / "labels.npy", np.zeros(SAMPLES, labels))
    with pytest.raises(pp.RunError) as failure:
        pp.run(program, steps=1, init_weights=exported.weights,
               data=[tmp_path / "features.npy", tmp_path / "labels.npy"])
    lines = [line for line in failure.value.stderr.splitlines() if line]
    assert len(lines) == 1 and message in lines[0], failure.value.stderr


def test_integer_data_needs_a_source(pp, classifier):
    _, _, exported, program = classifier
    with pytest.raises(pp.RunError) as failure:
        pp.run(program, steps=1, init_weights=exported.weights)
    assert ("target argument 1 holds i64: synthetic data fills f32 "
            "arguments, and integer ones with --classes N"
            in failure.value.stderr)


def test_labels_checked_against_the_classes(pp, classifier, tmp_path):
    """A label at or past the loss's classes picks nothing (the pick is a
    one-hot sum) and would train silently: it is refused before training,
    named by sample. Labels of ignore_index (-100) count for nothing, as
    in PyTorch, and are accepted."""
    _, _, exported, program = classifier
    features = np.zeros((SAMPLES, FEATURES), np.float32)
    np.save(tmp_path / "features.npy", features)
    labels = np.zeros(SAMPLES, np.int64)
    labels[17] = CLASSES
    np.save(tmp_path / "past.npy", labels)
    with pytest.raises(pp.RunError) as failure:
        pp.run(program, steps=1, init_weights=exported.weights,
               data=[tmp_path / "features.npy", tmp_path / "past.npy"])
    lines = [line for line in failure.value.stderr.splitlines() if line]
    assert len(lines) == 1 and (
        f"past.npy: sample 17 holds id {CLASSES} at position 0, but target "
        f"argument 1 indexes a table of {CLASSES} rows: ids must be in "
        f"[0, {CLASSES}) (or -100, which it ignores)" in lines[0]), \
        failure.value.stderr
    labels[17] = -100
    np.save(tmp_path / "ignored.npy", labels)
    run = pp.run(program, steps=1, init_weights=exported.weights,
                 data=[tmp_path / "features.npy", tmp_path / "ignored.npy"])
    assert len(run.losses) == 1
