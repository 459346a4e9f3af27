"""bench/variable_length_train.py's packing and its rule choosing packing
or step plans by cost (docs/VariableLength.md, "Packing or plans"): a
packed row costs the full context's attention, documents mixed; the plans'
micro-batches cost their own shapes'."""

import importlib.util
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location(
        "variable_length_train", REPO / "bench" / "variable_length_train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


def test_row_cost_counts_every_pair_of_positions():
    # 24 dim^2 per token, 4 dim per pair of positions.
    assert BENCH.row_cost(8, 4) == 24 * 16 * 8 + 4 * 4 * 64
    assert BENCH.row_cost(256, 16) == 1572864 + 4194304


def test_pack_fills_rows_of_the_context_and_whole_steps():
    # 12 tokens in rows of 4, 2 rows a step: the last step gets a 1-token
    # row that holds no document.
    assert BENCH.pack([3, 5, 4], 4, 2) == [[4, 4], [4, 1]]
    assert BENCH.pack([3, 6], 4, 1) == [[4], [4], [1]]


def test_plans_that_fit_the_documents_beat_packing():
    # 64 documents of 16 tokens: 4 packed rows of 256 (attention over all
    # 256 positions: 23068672) against 4 steps of 16 x 16 (7340032).
    documents = [16] * 64
    plans = [[(16, 16)]] * 4
    assert not BENCH.packing_is_cheaper(plans, documents, 256, 16)


def test_packing_beats_plans_that_pad_short_documents():
    # The same documents where the only shape is 2 x 256: 32 micro-batches
    # of 2 rows at 256 against 4 packed rows.
    documents = [16] * 64
    plans = [[(2, 256)] * 8] * 4
    assert BENCH.packing_is_cheaper(plans, documents, 256, 16)


def test_a_tie_goes_to_the_plans():
    # Documents as long as the context: packing and plans run the same
    # rows, and the plans keep documents apart.
    documents = [256] * 8
    plans = [[(1, 256)] * 4] * 2
    assert not BENCH.packing_is_cheaper(plans, documents, 256, 16)
