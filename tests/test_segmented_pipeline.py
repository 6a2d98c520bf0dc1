"""Segmented-sequences paper: continued pretraining (compute equivalence, exact resume, APE
extension), Section 4.5 evaluation, Figure 3's attention statistic, tables and file lists."""

import json
import math

import numpy as np
import pytest
import torch
import yaml
from corpus_fixture import make_corpus

from lenex.records.checkpoint import load_model, read_checkpoint, save_checkpoint
from lenex.config import ModelConfig
from lenex.model import LanguageModel
from lenex.positions import contiguous_positions
from lenex.experiment.presets import seed_list
from lenex.segmented import continued, evaluate, targets
from lenex.segmented.attention import median_attention, median_over_keys
from lenex.segmented.models import extended
from lenex.segmented.tables import build_segmented_table, run_name
from lenex.tables.paper_results import load_paper_results

L_T = 16
SMALL = dict(n_layer=1, d_model=32, n_head=2, d_ff=64, train_length=L_T)
CONTINUED = {"batch_size": 4, "lr": 1e-3, "warmup_fraction": 0.1, "log_every": 1, "checkpoint_every": 3,
             "eval_batches": 1}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("corpus"))


def base_checkpoint(tmp_path, position):
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(position=position, **SMALL))
    path = tmp_path / f"{position}.pt"
    save_checkpoint(path, model)
    return path


def test_compute_equivalence_plan():
    # Same tokens per step and in total: chunk/prefix run beta epochs of L_t sequences, full
    # one epoch of L_e pieces with beta times fewer sequences per batch.
    assert continued.plan("chunk-0.25", 4, 8) == (4, 8)
    assert continued.plan("prefix-0.5", 2, 8) == (2, 8)
    assert continued.plan("full", 4, 8) == (1, 2)
    assert continued.plan("full", 1, 8) == (1, 8)  # domain adaptation: one epoch at L_t
    with pytest.raises(ValueError, match="not divisible by extend 3"):
        continued.plan("full", 3, 8)
    with pytest.raises(ValueError, match="extend must be at least 2"):
        continued.plan("chunk-0.5", 1, 8)


@pytest.mark.parametrize("method,extend", [("chunk-0.25", 4), ("full", 4), ("prefix-0.5", 2), ("full", 1)])
def test_every_method_sees_the_same_tokens(corpus, tmp_path, method, extend):
    torch.set_num_threads(1)
    init = base_checkpoint(tmp_path, "rope")
    summary = continued.run(init, method, extend, CONTINUED, corpus, tmp_path / "m.pt", tmp_path / "w",
                            epoch_tokens=1024)
    # 1024 tokens per epoch's worth of text: 16 steps of 4 x 16 sampled tokens (full x4: 1 x 64).
    # Each sequence of n sampled tokens feeds n - 1 inputs (tokens_seen counts inputs).
    sequences = summary["step"] * summary["train_config"]["batch_size"]
    assert summary["step"] == 16 and summary["tokens_seen"] + sequences == 1024
    assert read_checkpoint(tmp_path / "m.pt")["model_config"]["train_length"] == extend * L_T


def test_continued_resume_is_exact(corpus, tmp_path):
    torch.set_num_threads(1)
    init = base_checkpoint(tmp_path, "learned")
    whole = continued.run(init, "chunk-0.5", 2, CONTINUED, corpus, tmp_path / "a.pt", tmp_path / "wa", 512)
    assert continued.run(init, "chunk-0.5", 2, CONTINUED, corpus, tmp_path / "b.pt", tmp_path / "wb", 512,
                         stop_after=5) is None
    resumed = continued.run(init, "chunk-0.5", 2, CONTINUED, corpus, tmp_path / "b.pt", tmp_path / "wb", 512)
    assert resumed["final_loss"] == whole["final_loss"]
    a, b = read_checkpoint(tmp_path / "a.pt")["model"], read_checkpoint(tmp_path / "b.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    # A different method in the same workdir must not resume from this state.
    other = continued.run(init, "prefix-0.5", 2, CONTINUED, corpus, tmp_path / "c.pt", tmp_path / "wa", 512)
    assert other["final_loss"] != whole["final_loss"]


def test_extended_learned_table_is_interpolated_and_trained_positions_reach_le(tmp_path):
    model, _ = load_model(base_checkpoint(tmp_path, "learned"))
    longer = extended(model, 4 * L_T)
    assert longer.config.train_length == 4 * L_T
    torch.testing.assert_close(longer.position.table.weight[::4], model.position.table.weight)
    torch.testing.assert_close(longer.position.table.weight[1], 0.75 * model.position.table.weight[0]
                               + 0.25 * model.position.table.weight[1])
    rope, _ = load_model(base_checkpoint(tmp_path, "rope"))
    same = extended(rope, 4 * L_T)
    assert all(torch.equal(a, b) for a, b in zip(same.state_dict().values(), rope.state_dict().values()))


def test_evaluation_rule_and_interpolated_ootb(corpus, tmp_path):
    torch.set_num_threads(1)
    path = base_checkpoint(tmp_path, "learned")
    result = evaluate.run(path, corpus, 2 * L_T, tmp_path / "r.json", max_tokens=20 * 2 * L_T,
                          extra={"model": "m", "run": "ootb", "base_train_length": L_T})
    assert result["interpolated_beta"] == 2 and result["pieces"] == 20 and result["train_length"] == L_T
    # Mean of per-piece perplexities, recomputed by hand from the same pieces.
    model, _ = load_model(path)
    model, _ = evaluate.ready_for(model, 2 * L_T)
    from lenex.data.store import load_split
    pieces = evaluate.test_pieces(load_split(corpus, "test"), 2 * L_T, 20 * 2 * L_T)
    with torch.no_grad():
        x = torch.from_numpy(pieces.astype(np.int64))
        logits = model(x[:, :-1])[0]
        nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), x[:, 1:], reduction="none").mean(1)
    assert result["ppl"] == pytest.approx(nll.exp().mean().item(), rel=1e-5)
    assert result["corpus_ppl"] == pytest.approx(math.exp(nll.mean().item()), rel=1e-5)
    assert result["piece_nll"] == pytest.approx(nll.tolist(), abs=1e-5)  # per piece, for paired comparisons
    assert result["scored_tokens_sha256"] == evaluate.pieces_digest(pieces)
    assert json.loads((tmp_path / "r.json").read_text())["run"] == "ootb"
    with pytest.raises(ValueError, match="integral beta"):
        evaluate.ready_for(model.__class__(model.config), 40)


@pytest.mark.parametrize("position", ["learned", "rope", "alibi"])
def test_median_attention_reads_the_forwards_weights(position):
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(position=position, **SMALL)).eval()
    assert model.config.n_layer == 1  # the hand computation below reads the embeddings as the layer's input
    pieces = np.random.default_rng(0).integers(0, 1000, (2, L_T))
    block, scheme, positions = model.blocks[0], model.position, contiguous_positions(0, L_T)
    expected = []
    for piece in pieces:  # the weights by hand: causal softmax of q.k/sqrt(d) + bias
        x = model.tok_emb(torch.from_numpy(piece)[None])
        x = x if scheme.embed(positions) is None else x + scheme.embed(positions)
        q, k, _ = block.attn.heads(block.ln_attn(x))
        q, k = scheme.rotate(q, k, positions, positions)
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        bias = scheme.bias(positions, positions)
        scores = scores if bias is None else scores + bias
        weights = scores.masked_fill(~torch.ones(L_T, L_T, dtype=torch.bool).tril(), float("-inf")).softmax(-1)
        expected.append(median_over_keys(weights, L_T // 2))
    medians = median_attention(model, pieces, L_T // 2)
    assert medians.shape == (2 * 2 * L_T // 2,)  # pieces x heads x queries past L_t / 2
    np.testing.assert_allclose(medians, torch.cat(expected).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_median_over_keys_by_hand():
    # Query 2 sees keys 0..2 with (0.5, 0.3, 0.2): median 0.3, times 3 keys = 0.9.
    # Query 3 sees 4 keys, uniform: median 0.25 x 4 = 1.0.
    w = torch.zeros(1, 1, 4, 4)
    w[0, 0, 2, :3] = torch.tensor([0.5, 0.3, 0.2])
    w[0, 0, 3] = 0.25
    torch.testing.assert_close(median_over_keys(w, 2), torch.tensor([0.9, 1.0]))


def test_run_names():
    assert run_name("gpt2:ootb", 2) == "ootb" and run_name("gpt2-small:out-of-the-box", 1) == "ootb"
    assert run_name("bloom:domain-adaptation", 4) == "da"
    assert run_name("pythia-small:chunk-0.125", 4) == "chunk-0.125-x4"


def test_table3_cells_from_results_and_paper_csv():
    spec = yaml.safe_load(open("config/experiments/segmented.yaml"))["tables"]["table3"]
    results = [{"model": "gpt2-small", "run": "chunk-0.25-x2", "length": 64, "base_train_length": 32, "ppl": 9.0},
               {"model": "pythia-small", "run": "ootb", "length": 128, "base_train_length": 32, "ppl": 300.0}]
    header = {"scale_statement": "Ours: test", "lines": [], "stand_in": "arXiv stand-in"}
    table = build_segmented_table(spec, results, load_paper_results(), header)
    ape, rope = table.sections
    chunk = next(r for r in ape.rows if r.label == "chunk-0.25")
    assert chunk.cells[0].text == "8.471 / 9.00 / +0.53"
    assert chunk.cells[1].ours_text == "not computed"
    ootb = next(r for r in rope.rows if r.label == "OOTB")
    assert ootb.cells[1].paper_text == "176.244" and ootb.cells[1].ours == 300.0
    full = next(r for r in rope.rows if r.label == "full")
    assert full.cells[1].paper_text == "—"  # the paper prints no RoPE full at 4 L_t
    assert table.columns[0].paper_length == "2048, 4096" and table.columns[0].our_length == "64"


def test_workflow_file_lists():
    experiment = yaml.safe_load(open("config/experiments/segmented.yaml"))
    view = {"model": {"train_length": 32, "n_layer": 2, "d_model": 64}, "train": {"steps": 5, "batch_size": 2},
            "experiment": {"large_variants": ["gpt2"], "large_model": {"n_layer": 3}}}
    paths = targets.table_results("tiny", view, experiment, "table5")
    assert "results/tiny/eval/segmented/gpt2/seed1/da/L128.json" in paths
    assert "results/tiny/eval/segmented/bloom/seed1/chunk-0.25-x4/L128.json" in paths
    seeded = {**view, "experiment": {**view["experiment"], "seeds": 2}}
    assert seed_list(seeded) == [1, 2] and seed_list(view) == [1]
    two = targets.table_results("tiny", seeded, experiment, "table5")
    assert len(two) == 2 * len(paths) and "results/tiny/eval/segmented/bloom/seed2/chunk-0.25-x4/L128.json" in two
    assert all("/seed1/" in p for p in targets.figure2_results("tiny", seeded, experiment))  # figures: seed 1
    assert targets.continued_train_config(seeded, 2)["seed"] == 2  # the continued runs' seed + s - 1
    assert targets.continued_train_config({"experiment": {"continued": {"seed": 7}}}, 3)["seed"] == 9
    assert targets.model_config(view, experiment, "gpt2")["n_layer"] == 3
    assert targets.model_config(view, experiment, "gpt2-small")["n_layer"] == 2
    hf = {**view, "experiment": {"hf_checkpoints": {"pythia": "EleutherAI/pythia-1.4b", "gpt2": "openai-community/gpt2-xl"},
                                 "train_lengths": {"pythia": 2048}}}
    assert targets.domain_data("paper", hf, "pythia") == "results/paper/data/segmented/arxiv-pythia"
    assert targets.domain_data("paper", hf, "gpt2") == "results/paper/data/arxiv"
    assert targets.figure3_results("paper", hf, experiment)[1].endswith("pythia/seed1/chunk-0.25-x4/attention_L8192.json")
    with pytest.raises(ValueError, match="unknown model 'gpt3'"):
        targets.model_config(view, experiment, "gpt3")


def test_a_hugging_face_model_goes_through_continued_training_and_evaluation(corpus, tmp_path):
    """One loader for both formats: an HF checkpoint is extended, trained, written in its own
    format by lenex.training.train, loaded back by lenex.records.checkpoint.load_model and evaluated."""
    pytest.importorskip("transformers")
    from lenex.hf.models import HFLanguageModel, tiny_random

    torch.set_num_threads(1)
    save_checkpoint(tmp_path / "hf.pt", tiny_random("gpt2", vocab_size=50257, n_positions=L_T))
    summary = continued.run(tmp_path / "hf.pt", "chunk-0.5", 2, {**CONTINUED, "checkpoint_every": 100},
                            corpus, tmp_path / "m.pt", tmp_path / "w", epoch_tokens=256)
    model, payload = load_model(tmp_path / "m.pt")
    assert isinstance(model, HFLanguageModel) and payload["format"] == "lenex-hf-checkpoint-v1"
    assert payload["step"] == summary["step"] > 0 and model.hf.config.n_positions == 2 * L_T
    assert evaluate.table_length(model) == 2 * L_T
    result = evaluate.run(tmp_path / "m.pt", corpus, 4 * L_T, tmp_path / "r.json", max_tokens=4 * 4 * L_T)
    assert result["interpolated_beta"] == 2 and math.isfinite(result["ppl"])
