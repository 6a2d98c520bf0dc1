"""Attention resolution (LEX Eq. 4), the analytic curve g_zeta (Eq. 10-11), and s[n] measured
from a model's own attention logits (Eq. 13) against a brute-force loop over every pair."""

import json
import math

import numpy as np
import pytest
import torch

from lenex.config import ModelConfig
from lenex.masks import build_mask
from lenex.model import LanguageModel
from lenex.model.attention import plan_attention
from lenex.lex.resolution import (attention_resolution, estimate_scores, expected_rotary_score, rotary_thetas,
                              summarize, xpos_zeta_hat)

LN2 = math.log(2)


def test_resolution_of_a_monotone_sequence_by_hand():
    # s at distances 0..N+1 with N = 2; e^s = 1, 1/2, 1/4, 1/8.
    # Numerator 1(1 - 1/2) + 1/2(1/2 - 1/4) + 1/4(1/4 - 1/8) = 21/32; denominator (7/4)^2 = 49/16.
    assert attention_resolution([0.0, -LN2, -2 * LN2, -3 * LN2]) == pytest.approx(3 / 14, rel=1e-12)
    # e^s = 1, 1/2, 1/4: (1/2 + 1/8) / (3/2)^2 = 5/18
    assert attention_resolution([0.0, -LN2, -2 * LN2]) == pytest.approx(5 / 18, rel=1e-12)


def test_resolution_of_an_oscillating_sequence_by_hand():
    # e^s = 1, 1/2, 1, 1/2: 1(1/2) + 1/2(-1/2) + 1(1/2) = 3/4 over (5/2)^2: R = 3/25,
    # below the monotone sequence with the same first two values (3/14).
    assert attention_resolution([0.0, -LN2, 0.0, -LN2]) == pytest.approx(3 / 25, rel=1e-12)


def test_resolution_of_increasing_and_flat_sequences_by_hand():
    # e^s = 1/4, 1/2, 1: 1/4(-1/4) + 1/2(-1/2) = -5/16 over (3/4)^2: R = -5/9.
    assert attention_resolution([-2 * LN2, -LN2, 0.0]) == pytest.approx(-5 / 9, rel=1e-12)
    assert attention_resolution(np.zeros(8)) == pytest.approx(0.0)
    assert attention_resolution([0.0, -LN2]) == pytest.approx(0.5)


def test_resolution_is_shift_invariant_bounded_by_one_and_drops_a_tail_without_pairs():
    rng = np.random.default_rng(0)
    s = rng.normal(size=50) * 3
    assert attention_resolution(s + 700.0) == pytest.approx(attention_resolution(s), rel=1e-12)  # no overflow
    assert max(attention_resolution(rng.normal(size=20) * 5) for _ in range(200)) < 1.0
    assert attention_resolution([0.0, -LN2, -2 * LN2, np.nan, np.nan]) == pytest.approx(5 / 18)
    with pytest.raises(ValueError, match="1-D"):
        attention_resolution(np.zeros((2, 2)))
    for bad in ([0.0, -np.inf], [0.0, np.nan, -1.0], [np.nan, np.nan], [1.0]):
        with pytest.raises(ValueError, match="finite scores"):
            attention_resolution(bad)


def test_g_zeta_equals_direct_summation_of_eq_10():
    d, gamma, scale_base = 16, 0.4, 512
    zeta_hat = [(i / (d / 2) + gamma) / (1 + gamma) for i in range(d // 2)]
    thetas = [10000 ** (-2 * i / d) for i in range(d // 2)]
    distances = [0, 1, 2, 7, 100, 1000, 8191]
    for zeta, exponent in ((1.0, 1.0), (zeta_hat, 1.0), (zeta_hat, 1 / scale_base)):
        zetas = [zeta] * (d // 2) if isinstance(zeta, float) else zeta
        direct = [sum(math.cos(n * t) * z ** (n * exponent) for t, z in zip(thetas, zetas)) for n in distances]
        ours = expected_rotary_score(distances, d, np.asarray(zetas) ** exponent)
        np.testing.assert_allclose(ours, direct, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(xpos_zeta_hat(d), zeta_hat)


def test_g_zeta_hand_values():
    # d = 2: one pair with theta_0 = 1, so g_1[n] = cos(n); g[0] = d/2 for any zeta.
    assert expected_rotary_score(3, 2) == pytest.approx(math.cos(3))
    assert expected_rotary_score(0, 64, xpos_zeta_hat(64)) == pytest.approx(32)
    assert expected_rotary_score(2, 2, 0.5) == pytest.approx(math.cos(2) / 4)
    np.testing.assert_allclose(rotary_thetas(4), [1.0, 0.01])
    with pytest.raises(ValueError, match="even head dimension"):
        rotary_thetas(3)


def test_xpos_decay_raises_the_resolution_of_g_over_rope():
    # The paper's argument for zeta_hat (section 3.2): R(g_zeta_hat) > R(g_1) at d = 64, n < 8192.
    n = np.arange(8192)
    rope = attention_resolution(expected_rotary_score(n, 64))
    xpos = attention_resolution(expected_rotary_score(n, 64, xpos_zeta_hat(64) ** (1 / 512)))
    assert xpos > rope


SMALL = dict(n_layer=2, d_model=16, n_head=2, d_ff=32, vocab_size=37, train_length=8)


def brute_force_scores(model, idx, mask):
    """s[n] per layer and head by looping over every allowed pair (i, j) of every text, each
    rotated at its own single position, through a hand-written replay of the forward pass."""
    cfg, scheme = model.config, model.position
    length = idx.shape[1]
    positions = torch.arange(length)
    sums = np.zeros((cfg.n_layer, cfg.n_head, length))
    counts = np.zeros(length)
    allowed = mask.dense(length)
    x = model.tok_emb(idx)
    if scheme.embed(positions) is not None:
        x = x + scheme.embed(positions)
    plan = plan_attention(positions, scheme, mask)
    for layer, block in enumerate(model.blocks):
        q, k, _ = block.attn.heads(block.ln_attn(x))
        for b in range(idx.shape[0]):
            for i in range(length):
                for j in range(length):
                    if not allowed[i, j]:
                        continue
                    qi, kj = scheme.rotate(q[b:b + 1, :, i:i + 1], k[b:b + 1, :, j:j + 1],
                                           torch.tensor([i]), torch.tensor([j]))
                    a = (qi * kj).sum(-1).flatten() / math.sqrt(cfg.head_dim)
                    bias = scheme.bias(torch.tensor([i]), torch.tensor([j]))
                    if bias is not None:
                        a = a + bias.flatten()
                    sums[layer, :, i - j] += a.numpy()
                    if layer == 0:
                        counts[i - j] += 1
        x = block(x, positions, scheme, plan)
    with np.errstate(invalid="ignore"):
        return sums / counts


@pytest.mark.parametrize("position", ["xpos", "alibi", "sinusoidal", "rope"])
@pytest.mark.parametrize("mask_name,options", [("causal", {}), ("blockwise", {"block": 4})])
def test_measured_scores_equal_a_brute_force_loop(position, mask_name, options):
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(**SMALL, position=position)).eval()
    idx = torch.randint(0, 37, (3, 12))  # 12 > 2 x block: BCA hides distances 8 .. 11
    mask = build_mask(mask_name, options)
    with torch.no_grad():
        expected = brute_force_scores(model, idx, mask)
        ours = estimate_scores(model, idx, mask, batch=2)  # two batches: the average spans them
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)
    if mask_name == "blockwise":
        assert np.isnan(ours[..., 8:]).all() and not np.isnan(ours[..., :8]).any()
    summary = summarize(ours)
    assert summary["resolution"] == pytest.approx(
        np.mean([[attention_resolution(h) for h in layer] for layer in expected]))
    json.dumps(summary, allow_nan=False)  # missing distances are written as null, not NaN


def test_entry_point_writes_a_result_table3_renders(tmp_path):
    import yaml
    from corpus_fixture import make_corpus

    from lenex.records.checkpoint import save_checkpoint
    from lenex.lex.resolution import run
    from lenex.tables.paper_results import load_paper_results
    from lenex.tables.table_data import build_table

    data = make_corpus(tmp_path, n_docs=10, words_per_doc=700)
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(n_layer=1, d_model=32, n_head=2, d_ff=64, train_length=32, position="xpos"))
    save_checkpoint(tmp_path / "m.pt", model, step=0)
    extra = {"variant": "xpos", "corpus": "pg22"}
    results = [run(tmp_path / "m.pt", data, length, 256, tmp_path / f"r{length}.json", mask, max_tokens=2048,
                   extra=extra) for length, mask in ((32, "causal"), (64, "blockwise"), (64, "causal"))]
    written = json.loads((tmp_path / "r64.json").read_text())
    assert written["resolution"] == results[2]["resolution"]
    assert written["texts"] * 64 == written["tokens"] == results[0]["texts"] * 32 > 0  # the same scored span
    assert written["s_mean"][63] is not None and results[1]["s_mean"][32] is None  # BCA reaches < L_tr
    spec = yaml.safe_load(open("config/experiments/lex.yaml"))["tables"]["table3"]
    table = build_table(spec, results, load_paper_results(), {"preset": "test"})
    lex, without_bca = table.sections[0].rows[3:5]
    assert [c.ours for c in lex.cells] == pytest.approx([results[0]["resolution"], results[1]["resolution"]])
    assert [c.ours for c in without_bca.cells] == pytest.approx([results[0]["resolution"], results[2]["resolution"]])
    assert lex.cells[1].paper_text == "1.08" and without_bca.cells[1].paper_text == "0.54"
    with pytest.raises(ValueError, match="not divisible"):
        run(tmp_path / "m.pt", data, 40, 320, tmp_path / "bad.json", "blockwise")
