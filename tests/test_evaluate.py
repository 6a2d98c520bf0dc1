"""The LEX evaluation protocol: every length scores the same tokens."""

import json

import numpy as np
import pytest
from corpus_fixture import scored_model

from lenex.scoring.evaluate import pieces, position_profile, run, scored_span, span_means


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    return scored_model(tmp_path_factory.mktemp("eval"), "xpos")


def test_pieces_score_every_token_once():
    tokens = np.arange(12)
    inputs, targets = pieces(tokens, 4, 12, bos=99)
    assert targets.flatten().tolist() == list(range(12))
    assert inputs.tolist() == [[99, 0, 1, 2], [99, 4, 5, 6], [99, 8, 9, 10]]


def test_span_takes_whole_spans_per_document_and_counts_short_ones():
    docs = [np.arange(10), np.arange(3), np.arange(100, 108)]
    tokens, skipped = scored_span(docs, span=4, max_tokens=100)
    assert tokens.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 100, 101, 102, 103, 104, 105, 106, 107]
    assert skipped == 1
    with pytest.raises(ValueError, match="no test document has 50 tokens"):
        scored_span(docs, span=50, max_tokens=100)


def test_every_length_scores_the_same_tokens(setup, tmp_path):
    root, data = setup
    results = [run(root / "m.pt", data, length, 128, tmp_path / f"L{length}.json", max_tokens=1024) for length in (16, 32, 64, 128)]
    assert len({r["scored_tokens_sha256"] for r in results}) == 1
    assert {r["tokens"] for r in results} == {1024}
    assert json.loads((tmp_path / "L64.json").read_text())["ppl"] == pytest.approx(results[2]["ppl"])


def test_every_length_scores_the_same_spans_and_their_mean_is_the_cells_nll(setup, tmp_path):
    root, data = setup
    results = [run(root / "m.pt", data, length, 128, tmp_path / f"S{length}.json", max_tokens=1024) for length in (32, 128)]
    for r in results:
        assert len(r["span_nll"]) == 1024 // 128
        assert np.mean(r["span_nll"]) == pytest.approx(r["nll"], abs=1e-6)
    assert results[0]["position_bins"] == list(range(0, 33, 2))  # L_tr = 32: bins of 2 tokens, 16 of them
    assert len(results[1]["position_nll"]) == 64 and results[1]["position_bins"][-1] == 128
    # Tokens scored with more context than L_tr = 32 differ, so the 128-token pieces give other span NLLs.
    assert results[0]["span_nll"] != results[1]["span_nll"]


def test_span_means_and_position_bins_by_hand():
    nll = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])  # two pieces of 4 tokens
    assert span_means(nll.reshape(-1), 8) == [4.5]
    assert span_means(nll.reshape(-1), 4) == [2.5, 6.5]
    with pytest.raises(ValueError, match="not a whole number of spans of 3"):
        span_means(nll.reshape(-1), 3)
    # L_tr = 32: bins of 2 positions; position means 3, 4, 5, 6
    assert position_profile(nll, 4, 32) == ([0, 2, 4], [3.5, 5.5])
    # L_tr = 40: bins of 2.5 positions rounded (0, 2, 5, 8 ...), the last cut at the piece's length
    assert position_profile(nll, 4, 40) == ([0, 2, 4], [3.5, 5.5])
    assert position_profile(np.arange(6.0).reshape(1, 6), 6, 40)[0] == [0, 2, 5, 6]


def test_blockwise_equals_causal_within_the_training_length_and_differs_beyond(setup, tmp_path):
    root, data = setup
    within = [run(root / "m.pt", data, 32, 128, tmp_path / f"{m}.json", mask_name=m, max_tokens=512)["ppl"] for m in ("causal", "blockwise")]
    assert within[0] == pytest.approx(within[1], rel=1e-6)
    beyond = [run(root / "m.pt", data, 128, 128, tmp_path / f"b{m}.json", mask_name=m, max_tokens=512)["ppl"] for m in ("causal", "blockwise")]
    assert beyond[0] != pytest.approx(beyond[1], rel=1e-6)


def test_lengths_the_protocol_cannot_use_are_named(setup, tmp_path):
    root, data = setup
    with pytest.raises(ValueError, match="length 48 does not divide the scored span 128"):
        run(root / "m.pt", data, 48, 128, tmp_path / "x.json", max_tokens=512)
    with pytest.raises(ValueError, match="length 40 is not divisible by the block size 16"):
        run(root / "m.pt", data, 40, 80, tmp_path / "y.json", mask_name="blockwise", max_tokens=512)
    assert not (tmp_path / "x.json").exists()


def _strip_timing(result: dict) -> dict:
    # The file's content digest covers its timing too, so it differs with it.
    return {k: v for k, v in result.items() if k not in ("seconds", "content_sha256")}


def test_one_job_per_model_writes_each_cell_as_the_one_cell_entry_points_do(setup, tmp_path):
    """lenex.lex.evaluate_model: one load, every cell its own file, byte for byte the numbers of
    lenex.scoring.evaluate and lenex.lex.resolution run once per cell (only the timing differs)."""
    from lenex.lex import evaluate_model, resolution

    root, data = setup
    cells = [{"stage": "eval", "data": str(data), "mask": mask, "length": length, "out": str(tmp_path / f"{mask}{length}.json"),
              "extra": {"variant": "xpos"}} for mask, length in (("causal", 32), ("blockwise", 64), ("causal", 64))]
    cells.append({"stage": "resolution", "data": str(data), "mask": "blockwise", "length": 64,
                  "out": str(tmp_path / "r64.json"), "extra": {"variant": "xpos"}})
    evaluate_model.main(["--checkpoint", str(root / "m.pt"), "--cells", json.dumps(cells), "--span", "64",
                         "--max-tokens", "512", "--batch-tokens", "256", "--threads", "1"])
    for cell in cells[:3]:
        alone = run(root / "m.pt", data, cell["length"], 64, tmp_path / "alone.json", mask_name=cell["mask"],
                    max_tokens=512, batch_tokens=256, extra={"variant": "xpos"})
        assert _strip_timing(json.loads(open(cell["out"]).read())) == _strip_timing(alone)
    alone = resolution.run(root / "m.pt", data, 64, 64, tmp_path / "alone.json", "blockwise", max_tokens=512,
                           batch_tokens=256, extra={"variant": "xpos"})
    assert _strip_timing(json.loads((tmp_path / "r64.json").read_text())) == _strip_timing(json.loads(json.dumps(alone)))


def test_one_job_per_model_names_a_bad_cell_before_loading_anything():
    from lenex.lex.evaluate_model import check_cells

    with pytest.raises(ValueError, match="cell 1 .* lacks length, out"):
        check_cells([{"stage": "eval", "data": "d", "mask": "causal", "length": 8, "out": "o"},
                     {"stage": "eval", "data": "d", "mask": "causal"}])
    with pytest.raises(ValueError, match="unknown stage 'ppl'; known: eval, resolution"):
        check_cells([{"stage": "ppl", "data": "d", "mask": "causal", "length": 8, "out": "o"}])
    with pytest.raises(ValueError, match="non-empty JSON list"):
        check_cells([])
