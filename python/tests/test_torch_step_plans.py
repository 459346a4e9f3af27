"""Variable-length training on integer token ids: examples/torch-gpt's GPT
at a vocabulary of 32768, its loss the padded language-model loss
(`padded_loss_fn`: per-token cross-entropy times f32 weights, summed),
exported at three shapes (2 x 16, 4 x 8 and 8 x 4 tokens) and compiled
with `step_plans` on 2 pipeline ranks. The `--sample-lengths` loader fills
ids, next-token targets and weights 1/N at the step's N real target
tokens from a uint16 .npy token file, so each step's loss must be PyTorch's
mean over the step's real tokens with every sample at its own length: the
losses and final weights within 1e-5. The same program runs another
index with --choose-plans (each step on the compiled plan holding it with
the fewest token slots), with PyTorch's losses too, and streamed from a
FIFO a slow writer feeds (--plan-lookahead) with the same losses.
Packed (`packing="always"`), the program trains like PyTorch on the same
packed rows; planned from a cost file's measured per-variant seconds, it
trains to the same losses. Programs whose data arguments do not fit the loader, a sample no shape
holds and a step no compiled plan holds are refused in one line. Skipped where torch or
torch_mlir is not importable."""

import errno
import importlib.util
import json
import os
import pathlib
import re
import threading
import time

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
np = pytest.importorskip("numpy")

REPO = pathlib.Path(__file__).resolve().parents[2]
INDEX = REPO / "test" / "e2e" / "Inputs" / "sample-lengths-plans.txt"
VOCAB, CONTEXT = 32768, 16
SHAPES = [(2, 16), (4, 8), (8, 4)]  # (rows, positions) of each variant
STEPS, LR = 6, 0.5


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """PyTorch on one thread: the reference's small products are ten times
    slower on threads fighting over a loaded machine's cores."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _example():
    spec = importlib.util.spec_from_file_location(
        "torch_gpt_model", REPO / "examples" / "torch-gpt" / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pytorch_losses(model, tokens, spans, steps, lr=LR):
    """SGD on each step's mean cross-entropy over its real tokens, every
    sample (pp.sample_spans) run alone at its own length: no padding."""
    F = torch.nn.functional
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        samples = spans[step % len(spans)]
        count = sum(length for _, length in samples)
        optimizer.zero_grad()
        total = 0.0
        for start, length in samples:
            sample = torch.tensor(tokens[start:start + length + 1])
            logits = model(sample[None, :-1])[0]
            loss = F.cross_entropy(logits, sample[1:],
                                   reduction="sum") / count
            loss.backward()
            total += loss.item()
        optimizer.step()
        losses.append(total)
    return losses


def export(model, out, rows, positions, loss_fn, weights_shape=(),
           targets_only=False, split_points=("blocks.1",)):
    """The step at rows x positions, traced whole (1 micro-batch): ids and
    targets i64, then f32 weights shaped `weights_shape` (default [rows,
    positions]) unless `targets_only`."""
    import pp.torch
    ids = torch.zeros(rows, positions, dtype=torch.int64)
    weights = torch.zeros(weights_shape or (rows, positions))
    data = (ids, ids) if targets_only else (ids, ids, weights)
    return pp.torch.export(
        model, data, loss_fn, out / f"step-{rows}x{positions}.mlir",
        num_targets=len(data) - 1, microbatches=1,
        split_points=split_points)


@pytest.fixture(scope="module")
def gpt(tmp_path_factory):
    """The GPT (vocabulary 32768, context 16, width 16, 2 blocks) and its
    steps at SHAPES, cut before block 1."""
    example = _example()
    torch.manual_seed(0)
    model = example.GPT(vocab=VOCAB, context=CONTEXT, dim=16, heads=2,
                        layers=2)
    out = tmp_path_factory.mktemp("gpt")
    return example, model, [export(model, out, rows, positions,
                                   example.padded_loss_fn)
                            for rows, positions in SHAPES]


@pytest.fixture(scope="module")
def planned(pp, gpt):
    """The GPT's program planned for INDEX, and a fresh GPT with the
    exported weights (the reference trains its own)."""
    example, model, exports = gpt
    initial = {k: v.clone() for k, v in model.state_dict().items()}

    def fresh():
        reference = example.GPT(vocab=VOCAB, context=CONTEXT, dim=16,
                                heads=2, layers=2)
        reference.load_state_dict(initial)
        return reference
    return compile_planned(pp, exports, INDEX), fresh


def compile_planned(pp, exports, index):
    return pp.compile(exports[0].mlir, stages=2, microbatches=1,
                      schedule="greedy", step_plans=str(index), opt_level=0,
                      variant=[str(e.mlir) for e in exports[1:]])


@pytest.fixture(scope="module")
def token_file(tmp_path_factory):
    """4096 ids drawn over the whole vocabulary (its last id included), as
    a uint16 .npy."""
    ids = np.random.default_rng(7).integers(0, VOCAB, 4096).astype("<u2")
    ids[100] = VOCAB - 1
    path = tmp_path_factory.mktemp("tokens") / "tokens.npy"
    np.save(path, ids)
    return path, ids.astype(np.int64)


def test_gpt_trains_on_token_ids_with_step_plans(pp, gpt, planned,
                                                 token_file, tmp_path):
    exports = gpt[2]
    text = exports[0].mlir.read_text()
    assert "tensor<2x16xi64>" in text and "tensor<2x16xf32>" in text
    program, fresh = planned
    model = fresh()
    path, ids = token_file
    saved = tmp_path / "trained.safetensors"
    run = pp.run(program, steps=STEPS, lr=LR,
                 init_weights=exports[0].weights, save=saved,
                 tokens=path, sample_lengths=INDEX)
    expected = pytorch_losses(model, ids, pp.sample_spans(INDEX, len(ids)),
                              STEPS)
    assert run.losses == pytest.approx(expected, rel=1e-5)
    # Step 3 runs step 0's samples again (index line 3 mod 3), trained.
    assert expected[3] < expected[0]
    trained = exports[0].state_dict(saved)
    for name, value in model.named_parameters():
        torch.testing.assert_close(trained[name], value.detach(),
                                   rtol=1e-5, atol=1e-6, msg=name)


def packed_pytorch_losses(model, tokens, spans, steps, lr=LR):
    """SGD on each step's mean cross-entropy over its real tokens, its
    samples packed back to back into rows of CONTEXT tokens, as
    `--packing` does: each token's target is its own sample's next token,
    and a document attends to the ones before it in its row."""
    F = torch.nn.functional
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        samples = spans[step % len(spans)]
        ids = np.concatenate([tokens[s:s + n] for s, n in samples])
        targets = np.concatenate([tokens[s + 1:s + n + 1] for s, n in samples])
        count = len(ids)
        rows = -(-count // CONTEXT)
        weights = torch.zeros(rows * CONTEXT)
        weights[:count] = 1.0 / count

        def row(values):
            padded = np.zeros(rows * CONTEXT, dtype=np.int64)
            padded[:count] = values
            return torch.tensor(padded).view(rows, CONTEXT)
        optimizer.zero_grad()
        logits = model(row(ids))
        loss = (F.cross_entropy(logits.flatten(0, 1), row(targets).flatten(),
                                reduction="none") * weights).sum()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("replicas", [1, 2])
def test_packed_program_trains_like_pytorch_on_packed_rows(pp, gpt, planned,
                                                           token_file,
                                                           tmp_path,
                                                           replicas):
    """pp.compile(packing="always") packs each step's 35 to 68 tokens into
    rows of 16 on 2 pipeline ranks (x 2 replicas, taking every other row):
    the losses and final weights are PyTorch's on the same packed rows,
    run whole in one process, within 1e-5."""
    example, _, exports = gpt
    _, fresh = planned
    path, ids = token_file
    program = pp.compile(exports[0].mlir, stages=2, microbatches=1,
                         schedule="greedy", step_plans=str(INDEX),
                         packing="always", replicas=replicas, opt_level=0,
                         variant=[str(e.mlir) for e in exports[1:]])
    saved = tmp_path / "packed.safetensors"
    run = pp.run(program, steps=STEPS, lr=LR,
                 init_weights=exports[0].weights, save=saved, tokens=path,
                 sample_lengths=INDEX)
    spans = pp.sample_spans(INDEX, len(ids))
    model = fresh()
    expected = packed_pytorch_losses(model, ids, spans, STEPS)
    assert run.losses == pytest.approx(expected, rel=1e-5)
    # Packed, documents see the ones before them: not the plans' losses.
    unpacked = pytorch_losses(fresh(), ids, spans, STEPS)
    assert run.losses[1:] != pytest.approx(unpacked[1:], rel=1e-3)
    trained = exports[0].state_dict(saved)
    for name, value in model.named_parameters():
        torch.testing.assert_close(trained[name], value.detach(),
                                   rtol=1e-5, atol=1e-6, msg=name)


def measured_profile(path, seconds):
    """A pp-profile-v1 file for 2 stages whose `variants` give a
    micro-batch at each shape of SHAPES `seconds[v]` a stage (F and B
    halves)."""
    def costs(time):
        return {"forward": time / 2, "backward_input": time / 2,
                "backward_weight": 0, "activation_memory": 1,
                "stash_memory": 0}
    stages = [dict(stage=s, **costs(seconds[0]),
                   variants=[dict(variant=v, **costs(t))
                             for v, t in enumerate(seconds)])
              for s in range(2)]
    path.write_text(json.dumps({"format": "pp-profile-v1", "time_unit": "s",
                                "memory_unit": "bytes", "transfer": 0,
                                "stages": stages}))
    return path


def test_measured_costs_plan_and_train_like_pytorch(pp, gpt, planned,
                                                    token_file, tmp_path):
    """With a cost file that measured 4 x 8 and 8 x 4 five times slower
    than 2 x 16, every step runs 4 micro-batches at 2 x 16 (the FLOP
    estimates cut 2 of the 3 steps at 4 x 8 or 8 x 4), and the program
    built from those plans trains to PyTorch's losses and weights within
    1e-5."""
    example, _, exports = gpt
    _, fresh = planned
    path, ids = token_file
    profile = measured_profile(tmp_path / "measured.json", [1e-3, 5e-3, 5e-3])
    program = pp.compile(exports[0].mlir, stages=2, microbatches=1,
                         schedule="greedy", step_plans=str(INDEX),
                         opt_level=0, cost_file=str(profile),
                         variant=[str(e.mlir) for e in exports[1:]])
    text = "\n".join(program.remarks)
    assert "seconds measured per variant in" in text
    for step in range(3):
        assert (f"step {step}: plan 0, samples 2+2+2+2 at 2x16, 2x16, 2x16, "
                "2x16") in text
    saved = tmp_path / "measured.safetensors"
    run = pp.run(program, steps=STEPS, lr=LR,
                 init_weights=exports[0].weights, save=saved, tokens=path,
                 sample_lengths=INDEX)
    model = fresh()
    expected = pytorch_losses(model, ids, pp.sample_spans(INDEX, len(ids)),
                              STEPS)
    assert run.losses == pytest.approx(expected, rel=1e-5)
    trained = exports[0].state_dict(saved)
    for name, value in model.named_parameters():
        torch.testing.assert_close(trained[name], value.detach(),
                                   rtol=1e-5, atol=1e-6, msg=name)


def mean_loss(logits, targets):
    """PyTorch's mean cross-entropy: it would count padding as tokens."""
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1),
                                             targets.flatten())


def per_sample_loss(logits, targets, weights):
    """Each sample's summed cross-entropy times its weight: weights [rows]."""
    per_token = torch.nn.functional.cross_entropy(
        logits.flatten(0, 1), targets.flatten(), reduction="none")
    return (per_token.view(targets.shape).sum(1) * weights).sum()


def padded_loss(logits, targets, weights):
    return _example().padded_loss_fn(logits, targets, weights)


SAMPLES = r"--sample-lengths \S+: "


@pytest.mark.parametrize("loss_fn, data, extra, expected", [
    (mean_loss, dict(targets_only=True), [],
     SAMPLES + r"target argument 1 holds token ids, but no f32 \[rows, positions\] "
     r"target argument weighs them: padding would count in the loss "
     r"\(weigh the per-token loss, docs/VariableLength.md\)"),
    (per_sample_loss, dict(weights_shape=(8,)), [],
     SAMPLES + r"target argument 2 is 1-D f32; variable-length samples fill token ids "
     r"\(i32/i64 \[rows, positions\]\) with f32 \[rows, positions\] token "
     r"weights as a target, or one-hot f32 \[rows, positions, vocabulary\] "
     r"tensors"),
    (padded_loss, {}, ["--choose-plans"],
     r"--choose-plans chooses among a program's step plans: compile it "
     r"with pp-compile --step-plans"),
])
def test_loader_refuses_arguments_it_cannot_fill(pp, token_file, tmp_path,
                                                 loss_fn, data, extra,
                                                 expected):
    """Integer targets without weights, and weights of another shape than
    the tokens', are each one line naming the argument; --choose-plans
    needs a program with step plans. A bigram model (an embedding and a
    linear head) at 8 rows, the index's 8 samples a step, on 1 stage."""
    model = torch.nn.Sequential(torch.nn.Embedding(VOCAB, 4),
                                torch.nn.Linear(4, VOCAB))
    exported = export(model, tmp_path, 8, 16, loss_fn, split_points=(),
                      **data)
    program = pp.compile(exported.mlir, opt_level=0)
    with pytest.raises(pp.RunError) as error:
        pp.run(program, steps=1, lr=LR, init_weights=exported.weights,
               tokens=token_file[0], sample_lengths=INDEX,
               extra_args=extra)
    lines = [line for line in error.value.stderr.splitlines()
             if line.startswith("pprt: ")]
    assert len(lines) == 1, error.value.stderr
    assert re.fullmatch(r"pprt: " + expected, lines[0])


# Plans 0, 1, 2 hold 2+2+4 samples at 2x16, 2x16, 4x8; 2+4+8 at 2x16,
# 4x8, 8x4; 4+8 at 4x8, 8x4. Chosen: 1, 0, 0, 1, 2.
OTHER = ("16 4 4 3 2 1 1 1 1 1 1\n8 8 7 6 5 4 3 2\n12 9 5\n"
         "16 16 2 2 2 2 2 2 2 2 2 2 2 2\n8 7 6 5 4 3 2 1 1 1\n")


def test_choose_plans_runs_another_index(pp, gpt, planned, token_file,
                                         tmp_path):
    """--choose-plans: the program planned for INDEX trains on an index it
    was not compiled for (other lengths, 3 to 14 samples a step), each
    step on the compiled plan holding its samples with the fewest token
    slots, with PyTorch's losses; a step no plan holds is one line."""
    program, fresh = planned
    model = fresh()
    other = tmp_path / "other.txt"
    other.write_text(OTHER)
    path, ids = token_file
    exported = gpt[2][0]
    run = pp.run(program, steps=5, lr=LR, init_weights=exported.weights,
                 tokens=path, sample_lengths=other,
                 extra_args=["--choose-plans"])
    assert re.search(r"^pprt: --choose-plans: the 5 steps of \S+ run plans "
                     r"1 0 0 1 2$", run.stdout, re.M), run.stdout
    expected = pytorch_losses(model, ids, pp.sample_spans(other, len(ids)),
                              5)
    assert run.losses == pytest.approx(expected, rel=1e-5)

    other.write_text("16 16 16 16 16\n")
    with pytest.raises(pp.RunError) as error:
        pp.run(program, steps=1, lr=LR, init_weights=exported.weights,
               tokens=path, sample_lengths=other,
               extra_args=["--choose-plans"])
    assert re.search(
        r"^pprt: --sample-lengths \S+: step 0: no plan of the program holds "
        r"replica 0's samples, the longest of 16 tokens \(--choose-plans\): "
        r"compile with an index like this one$", error.value.stderr, re.M)


def feed(fifo, lines, pause, deadline=60.0):
    """A thread writing `lines` into the FIFO `fifo`, `pause` seconds
    apart, as a data loader tokenizing them would, once a reader opens it
    (giving up after `deadline` seconds, or when the reader leaves)."""
    def write():
        end = time.monotonic() + deadline
        while True:
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError as e:
                if e.errno != errno.ENXIO or time.monotonic() > end:
                    return
                time.sleep(0.05)
        os.set_blocking(fd, True)
        try:
            for line in lines:
                time.sleep(pause)
                os.write(fd, line.encode())
        except BrokenPipeError:
            pass
        finally:
            os.close(fd)
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def run_streamed(pp, program, exported, path, fifo, lines, lookahead,
                 steps=5):
    writer = feed(fifo, lines, pause=0.2)
    try:
        return pp.run(program, steps=steps, lr=LR,
                      init_weights=exported.weights, tokens=path,
                      sample_lengths=fifo,
                      extra_args=["--choose-plans", "--plan-lookahead",
                                  str(lookahead)])
    finally:
        writer.join(10)


def test_choose_plans_streams_the_index(pp, gpt, planned, token_file,
                                        tmp_path):
    """--plan-lookahead K reads the index from a FIFO that a slow writer
    feeds a line at a time, K steps ahead of the running one: the losses
    are those of the same index read whole. A step no plan holds is
    refused before it runs, naming it, after the steps before it ran; an
    index ending before the run's steps is refused too, and so are
    --plan-lookahead without --choose-plans and with --first-step."""
    program, _ = planned
    path, _ = token_file
    exported = gpt[2][0]
    other = tmp_path / "other.txt"
    other.write_text(OTHER)
    whole = pp.run(program, steps=5, lr=LR, init_weights=exported.weights,
                   tokens=path, sample_lengths=other,
                   extra_args=["--choose-plans"])
    lines = ["# lengths as they are tokenized\n"] + OTHER.splitlines(True)
    for lookahead in (0, 2):
        fifo = tmp_path / f"stream-{lookahead}"
        os.mkfifo(fifo)
        run = run_streamed(pp, program, exported, path, fifo, lines,
                           lookahead)
        assert run.losses == whole.losses, lookahead

    bad = lines[:3] + ["16 16 16 16 16\n"] + lines[4:]
    fifo = tmp_path / "bad"
    os.mkfifo(fifo)
    with pytest.raises(pp.RunError) as error:
        run_streamed(pp, program, exported, path, fifo, bad, 1)
    assert re.search(
        r"^pprt: --sample-lengths \S+: step 2: no plan of the program holds "
        r"replica 0's samples, the longest of 16 tokens \(--choose-plans\): "
        r"compile with an index like this one$", error.value.stderr, re.M)
    assert re.findall(r"^step (\d+) loss", error.value.stdout, re.M) == ["1"]

    fifo = tmp_path / "short"
    os.mkfifo(fifo)
    with pytest.raises(pp.RunError) as error:
        run_streamed(pp, program, exported, path, fifo, lines[:3], 0)
    assert re.search(
        r"^pprt: --sample-lengths \S+: the index ended after 2 steps; the "
        r"run has 5 \(--steps\)$", error.value.stderr, re.M)
    assert re.findall(r"^step (\d+) loss", error.value.stdout, re.M) == [
        "1", "2"]

    for extra, problem in (
            (["--plan-lookahead", "1"], "--plan-lookahead streams "
             "--sample-lengths to --choose-plans: give both"),
            (["--choose-plans", "--plan-lookahead", "1", "--first-step", "2"],
             "--plan-lookahead trains from the stream's first step: it "
             "excludes --first-step, --resume, --profile and "
             "--check-gradients")):
        with pytest.raises(pp.RunError) as error:
            pp.run(program, steps=1, lr=LR, init_weights=exported.weights,
                   tokens=path, sample_lengths=other, extra_args=extra)
        assert problem in error.value.stderr


def test_sample_longer_than_every_shape_is_refused(pp, gpt, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("16 3 9 12 5 7 2 14\n4 4 17 16 1 8 3 6\n")
    with pytest.raises(pp.CompileError, match=(
            r"step 1: sample 2 has 17 tokens, more than the longest "
            r"micro-batch shape holds \(16\)")):
        compile_planned(pp, gpt[2], bad)
