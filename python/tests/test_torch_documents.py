"""Documents as samples (docs/VariableLength.md, "Documents"): the PyTorch
GPT of test_torch_step_plans.py (vocabulary 32768, shapes 2 x 16, 4 x 8
and 8 x 4) compiled with step plans trains on a token file of documents,
each ending with an end-of-document id (`--document-end`), as on the same
documents given by their lengths (`--sample-lengths FILE.npy`) and by the
equivalent index of sample lengths (`--sample-lengths FILE.txt`): the same
losses, bit for bit, and PyTorch's on each document alone within 1e-5; on
1 process, and on 2 stages x 2 replicas with the documents read a step
ahead. With `--long-documents split`, documents longer than every shape
train as their pieces of 17 tokens (16 predicted), the last the rest and
a piece of one token dropped: as the index of the pieces, bit for bit,
and as PyTorch on each piece alone. An end id or a token outside the
vocabulary, a step of documents no plan holds, a document longer than
every shape, lengths past the tokens, a token file ending mid-document
and `--document-end` without `--choose-plans` or without step plans are
each one line. Skipped where torch or torch_mlir is not importable."""

import re

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
np = pytest.importorskip("numpy")

from test_torch_step_plans import (INDEX, LR, VOCAB, export,  # noqa: E402
                                   gpt, one_thread, planned, pytorch_losses)

END = VOCAB - 1  # the end-of-document id: the vocabulary's last
# Each step's documents' predicted tokens (a document has one more token,
# its end id); 8 documents a step, as the compiled index's steps.
LINES = [[16, 3, 9, 12, 5, 7, 2, 14], [4, 4, 2, 16, 1, 8, 3, 6],
         [8, 8, 7, 6, 5, 4, 3, 2], [8, 1, 2, 7, 3, 3, 6, 5]]
STEPS = len(LINES) + 1  # the last step begins the documents again
# Documents of up to 38 predicted tokens whose pieces of 17 tokens make 4
# steps of 8 samples, the index's lines in another order: a document of
# 38 (pieces 16, 16 and 4) across steps 0 and 1, one of exactly 16.
LONG = [3, 9, 12, 5, 7, 2, 14, 38, 4, 2, 1, 8, 3, 6, 8, 1, 2, 7, 3, 3, 6, 5,
        16, 3, 9, 12, 5, 7, 2, 14]
PIECE = 17  # tokens of a piece: the longest shape's 16 positions, plus one

__all__ = ["gpt", "one_thread", "planned"]  # fixtures used here


def write_documents(directory, lines, seed=3):
    """The documents of `lines` back to back (ids below END, then END; a
    length 0 is an empty document, END alone), as a uint16 .npy; with
    their lengths (.npy) and the equivalent index of sample lengths
    (.txt). Returns the three paths, the ids and each step's (start,
    predicted tokens) of its documents."""
    rng = np.random.default_rng(seed)
    ids, spans = [], []
    for line in lines:
        spans.append([])
        for length in line:
            if length:
                spans[-1].append((len(ids), length))
            ids += list(rng.integers(0, END, length)) + [END]
    tokens = directory / "documents.npy"
    np.save(tokens, np.array(ids, dtype="<u2"))
    lengths = directory / "lengths.npy"
    np.save(lengths, np.array([n + 1 for line in lines for n in line]))
    index = directory / "index.txt"
    index.write_text("".join(" ".join(map(str, line)) + "\n"
                             for line in lines))
    return tokens, lengths, index, np.array(ids, dtype=np.int64), spans


def pieces(spans, per_step):
    """Each step's (start, predicted tokens) of the documents' `spans`
    cut into pieces of PIECE tokens, the last the rest; a piece of one
    token predicts nothing and is dropped."""
    out = []
    for start, length in spans:
        for at in range(start, start + length + 1, PIECE):
            tokens = min(PIECE, start + length + 1 - at)
            if tokens > 1:
                out.append((at, tokens - 1))
    assert len(out) % per_step == 0
    return [out[k:k + per_step] for k in range(0, len(out), per_step)]


def write_long_documents(directory, documents, per_step=8):
    """`write_documents` of the `documents` (predicted tokens), their
    pieces as each step's spans, and the index of the pieces' lengths."""
    tokens, lengths, _, ids, spans = write_documents(directory, [documents])
    steps = pieces(spans[0], per_step)
    index = directory / "pieces.txt"
    index.write_text("".join(" ".join(str(n) for _, n in step) + "\n"
                             for step in steps))
    return tokens, lengths, index, ids, steps


def train_three_ways(pp, program, exported, files, lookahead):
    """The losses of the documents by end id and by .npy lengths, read
    `lookahead` steps ahead, and by the equivalent index read whole."""
    tokens, lengths, index = files[:3]
    common = dict(steps=STEPS, lr=LR, init_weights=exported.weights,
                  tokens=tokens, choose_plans=True)
    return [pp.run(program, document_end=END, plan_lookahead=lookahead,
                   **common).losses,
            pp.run(program, sample_lengths=lengths, plan_lookahead=lookahead,
                   **common).losses,
            pp.run(program, sample_lengths=index, **common).losses]


def compile_plans(pp, exports, ranks, replicas):
    """The program of test_torch_step_plans.py: 2 stages on `ranks`."""
    return pp.compile(exports[0].mlir, stages=2, ranks=ranks,
                      replicas=replicas,
                      microbatches=1, schedule="greedy",
                      step_plans=str(INDEX), opt_level=0,
                      variant=[str(e.mlir) for e in exports[1:]])


@pytest.mark.parametrize("ranks, replicas, lookahead", [(1, 1, None),
                                                        (2, 2, 1)])
def test_documents_train_as_their_index(pp, gpt, planned, tmp_path, ranks,
                                        replicas, lookahead):
    exports = gpt[2]
    program = compile_plans(pp, exports, ranks, replicas)
    files = write_documents(tmp_path, LINES)
    by_end, by_lengths, by_index = train_three_ways(
        pp, program, exports[0], files, lookahead)
    assert by_end == by_index and by_lengths == by_index
    model = planned[1]()
    expected = pytorch_losses(model, files[3], files[4], STEPS)
    assert by_end == pytest.approx(expected, rel=1e-5)
    assert by_end[4] < by_end[0]  # step 4 trains step 0's documents again


def test_long_documents_train_as_their_pieces(pp, gpt, planned, tmp_path):
    """--long-documents split on 2 stages x 2 replicas, read a step ahead:
    the pieces' losses by end id and by .npy lengths are the index's of
    the pieces, bit for bit, and PyTorch's on each piece within 1e-5."""
    exports = gpt[2]
    program = compile_plans(pp, exports, 2, 2)
    files = write_long_documents(tmp_path, LONG)
    common = dict(steps=STEPS, lr=LR, init_weights=exports[0].weights,
                  tokens=files[0], choose_plans=True)
    by_end = pp.run(program, document_end=END, plan_lookahead=1,
                    long_documents="split", **common).losses
    by_lengths = pp.run(program, sample_lengths=files[1], plan_lookahead=1,
                        long_documents="split", **common).losses
    by_index = pp.run(program, sample_lengths=files[2], **common).losses
    assert by_end == by_index and by_lengths == by_index
    expected = pytorch_losses(planned[1](), files[3], files[4], STEPS)
    assert by_end == pytest.approx(expected, rel=1e-5)


def test_one_token_pieces_are_dropped(pp, gpt, planned, tmp_path):
    """A document of 17 predicted tokens (18 tokens) is a piece of 16 and
    one of its end alone, which predicts nothing and is no sample: the
    next document follows in the step. 8 pieces a step counted by
    --samples-per-step, against PyTorch, by end id and by lengths."""
    exported = gpt[2][0]
    documents = [17, 3, 9, 12, 5, 7, 2, 14, 4, 4, 2, 17, 1, 8, 3, 6]
    tokens, lengths, _, ids, steps = write_long_documents(tmp_path,
                                                          documents)
    common = dict(steps=3, lr=LR, init_weights=exported.weights,
                  tokens=tokens, choose_plans=True, samples_per_step=8,
                  long_documents="split")
    by_end = pp.run(planned[0], document_end=END, **common).losses
    by_lengths = pp.run(planned[0], sample_lengths=lengths, **common).losses
    assert by_end == by_lengths
    expected = pytorch_losses(planned[1](), ids, steps, 3)
    assert by_end == pytest.approx(expected, rel=1e-5)


def test_empty_documents_are_skipped(pp, gpt, planned, tmp_path):
    """Documents of the end id alone predict nothing and are no samples;
    10 documents a step (--samples-per-step) on 2 ranks, against PyTorch,
    from the end ids and from the lengths."""
    exported = gpt[2][0]
    lines = [[0, 12, 9, 8, 0, 0, 6, 4, 3, 2, 2, 1, 1],
             [1, 1, 2, 2, 3, 4, 6, 8, 9, 0, 12]]
    tokens, lengths, _, ids, spans = write_documents(tmp_path, lines)
    common = dict(steps=3, lr=LR, init_weights=exported.weights,
                  tokens=tokens, choose_plans=True, samples_per_step=10)
    by_end = pp.run(planned[0], document_end=END, **common).losses
    by_lengths = pp.run(planned[0], sample_lengths=lengths, **common).losses
    assert by_end == by_lengths
    expected = pytorch_losses(planned[1](), ids, spans, 3)
    assert by_end == pytest.approx(expected, rel=1e-5)


def test_packed_documents_train_as_their_index(pp, gpt, tmp_path):
    """A packed program (pp-compile --packing=always) packs a step's
    documents into rows as it packs the index's samples: the same losses,
    bit for bit, by end id and by .npy lengths with 8 documents a step
    (--samples-per-step); without it, its plans count rows, not documents,
    and the run is refused."""
    exports = gpt[2]
    program = pp.compile(exports[0].mlir, stages=2, microbatches=1,
                         schedule="greedy", step_plans=str(INDEX),
                         packing="always", opt_level=0,
                         variant=[str(e.mlir) for e in exports[1:]])
    tokens, lengths, index = write_documents(tmp_path, LINES)[:3]
    common = dict(steps=STEPS, lr=LR, init_weights=exports[0].weights,
                  tokens=tokens, choose_plans=True)
    by_index = pp.run(program, sample_lengths=index, **common).losses
    assert pp.run(program, document_end=END, samples_per_step=8,
                  **common).losses == by_index
    assert pp.run(program, sample_lengths=lengths, samples_per_step=8,
                  **common).losses == by_index
    # Long documents' pieces count as samples and are packed as the
    # index of the pieces.
    tokens, _, index = write_long_documents(tmp_path, LONG)[:3]
    common["tokens"] = tokens
    assert pp.run(program, document_end=END, samples_per_step=8,
                  long_documents="split", **common).losses == pp.run(
                      program, sample_lengths=index, **common).losses
    line, _ = refusal(pp, program, exports[0], tokens, document_end=END,
                      choose_plans=True)
    assert line == (f"pprt: --document-end {END}: the program packs samples "
                    "into rows (pp-compile --packing): give the documents a "
                    "step with --samples-per-step")


def refusal(pp, program, exported, tokens, extra=(), **options):
    """The run's one `pprt:` line, and the steps it trained."""
    with pytest.raises(pp.RunError) as error:
        pp.run(program, steps=3, lr=LR, init_weights=exported.weights,
               tokens=tokens, extra_args=list(extra), **options)
    lines = [line for line in error.value.stderr.splitlines()
             if line.startswith("pprt: ")]
    assert len(lines) == 1, error.value.stderr
    return lines[0], re.findall(r"^step (\d+) loss", error.value.stdout,
                                re.M)


def test_bad_documents_are_refused(pp, gpt, planned, tmp_path):
    exported = gpt[2][0]
    program = planned[0]
    documents = dict(document_end=END, choose_plans=True)

    tokens = write_documents(tmp_path, LINES)[0]
    line, _ = refusal(pp, program, exported, tokens, document_end=VOCAB,
                      choose_plans=True)
    assert line == (f"pprt: --document-end {VOCAB}: the end-of-document id "
                    f"is not in the program's vocabulary: input argument 0 "
                    f"holds ids below {VOCAB}")

    ids = np.load(tokens)
    ids[5] = VOCAB + 1
    np.save(tokens, ids)
    line, _ = refusal(pp, program, exported, tokens, **documents)
    assert line == (f"pprt: --tokens {tokens}: the largest id is {VOCAB + 1}, "
                    f"but input argument 0 indexes a table of {VOCAB} rows: "
                    f"ids must be below {VOCAB} (token 5 is {VOCAB + 1})")

    # Step 1's five documents of 16 tokens fit no plan: step 0 trains.
    tokens = write_documents(tmp_path, [LINES[0], [16] * 5 + [1] * 3])[0]
    line, trained = refusal(pp, program, exported, tokens, **documents)
    assert line == (f"pprt: --document-end {END}: step 1: no plan of the "
                    f"program holds replica 0's samples, the longest of 16 "
                    f"tokens (--choose-plans): compile with an index like "
                    f"this one")
    assert trained == ["1"]

    # Document 9 (step 1's second) has 18 tokens, 17 of them predicted.
    tokens, lengths = write_documents(tmp_path,
                                      [LINES[0], [4, 17] + [1] * 6])[:2]
    start = sum(LINES[0]) + 8 + 5
    advice = "(give --long-documents split, or compile a longer shape)"
    line, _ = refusal(pp, program, exported, tokens, **documents)
    assert line == (f"pprt: --document-end {END}: the document at token "
                    f"{start} (document 9) is longer than 17 tokens: the "
                    f"program's longest micro-batch has 16 positions "
                    f"{advice}")
    assert refusal(pp, program, exported, tokens, long_documents="refuse",
                   **documents)[0] == line
    line, _ = refusal(pp, program, exported, tokens, sample_lengths=lengths,
                      choose_plans=True)
    assert line == (f"pprt: --sample-lengths {lengths}: the document at "
                    f"token {start} (document 9) has 18 tokens: the "
                    f"program's longest micro-batch has 16 positions "
                    f"{advice}")
    with pytest.raises(ValueError, match="long_documents must be"):
        pp.run(program, steps=1, long_documents="cut")

    lengths = tmp_path / "long.npy"
    np.save(lengths, np.array([5000, 3]))
    line, _ = refusal(pp, program, exported, tokens, sample_lengths=lengths,
                      choose_plans=True)
    assert line == (f"pprt: --sample-lengths {lengths}: document 0 ends at "
                    f"token 5000, past the {len(np.load(tokens))} tokens of "
                    f"--tokens: the lengths are not those of its documents")

    ids = np.load(tokens)[:-1]
    np.save(tokens, ids)
    line, _ = refusal(pp, program, exported, tokens, **documents)
    assert line == (f"pprt: --document-end {END}: --tokens {tokens} ends "
                    f"mid-document: its last token (at {len(ids) - 1}) is "
                    f"{ids[-1]}, not the end-of-document id")

    with pytest.raises(pp.RunError) as error:
        pp.run(program, steps=1, tokens=tokens, document_end=END)
    assert error.value.stderr.splitlines()[0].endswith(
        ": documents (--document-end, --sample-lengths FILE.npy) are placed "
        "into a program's step plans: give --choose-plans, with a program "
        "compiled by pp-compile --step-plans")
    with pytest.raises(pp.RunError) as error:
        pp.run(program, steps=1, tokens=tokens, long_documents="split")
    assert error.value.stderr.splitlines()[0].endswith(
        ": --long-documents treats the documents of --document-end or "
        "--sample-lengths FILE.npy")

    # A program without step plans: the bigram model at 8 x 16, 1 stage.
    bigram = torch.nn.Sequential(torch.nn.Embedding(VOCAB, 4),
                                 torch.nn.Linear(4, VOCAB))
    plain = export(bigram, tmp_path, 8, 16,
                   gpt[0].padded_loss_fn, split_points=())
    line, _ = refusal(pp, pp.compile(plain.mlir, opt_level=0), plain,
                      tokens, **documents)
    assert line == ("pprt: --choose-plans chooses among a program's step "
                    "plans: compile it with pp-compile --step-plans")
