"""LEX Figures 1 and 2: what they plot, and that both formats are written."""

import numpy as np
import pytest
import yaml

from lenex.lex.figures import figure1, figure2, figure2_curves, main, perplexity_curves
from lenex.lex.resolution import expected_rotary_score, xpos_zeta_hat

SPEC = yaml.safe_load(open("config/experiments/lex.yaml"))["tables"]["table2"]


def fake_results(train_length=64):
    """One result per Table 2 PG22 cell: the row's mask, ppl = variant index + length / 1000."""
    results = []
    for k, row in enumerate(SPEC["sections"][0]["rows"]):
        for multiple in SPEC["columns"]:
            length = int(multiple * train_length)
            mask = row.get("mask_beyond_train", row["mask"]) if length > train_length else row["mask"]
            results.append({"variant": row["variant"], "corpus": "pg22", "mask": mask, "length": length,
                            "train_length": train_length, "ppl": 10.0 * (k + 1) + length / 1000})
    return results


def test_figure1_plots_each_row_with_its_table_mask_beside_the_paper(tmp_path):
    label, curves = perplexity_curves(SPEC, fake_results(), "pg22", "tiny")
    assert label == "PG22" and list(curves) == ["Transformer", "ALiBi", "RoFormer", "LEX"]
    assert curves["LEX"]["ours"][-1] == (512, pytest.approx(40.512))  # LEX at 8 x L_tr: the BCA result
    assert curves["LEX"]["paper"][-1] == (8192, 24.89) and curves["Transformer"]["paper"][0] == (256, 38.1)
    figure1(SPEC, fake_results(), "pg22", "tiny", tmp_path / "f.png", tmp_path / "f.pdf")
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG" and (tmp_path / "f.pdf").read_bytes()[:4] == b"%PDF"
    with pytest.raises(ValueError, match="no section 'arxiv'"):
        perplexity_curves(SPEC, fake_results(), "arxiv", "tiny")
    with pytest.raises(ValueError, match="nothing to plot"):
        perplexity_curves(SPEC, [], "pg22", "tiny")


def test_figure2_draws_eq_10_for_rope_and_xpos(tmp_path):
    curves = figure2_curves(64, 100, 0.4, 512)
    (rope_n, rope, _), (_, xpos, _), (_, literal, _) = curves.values()
    np.testing.assert_allclose(rope, expected_rotary_score(np.arange(101), 64))
    np.testing.assert_allclose(xpos, expected_rotary_score(np.arange(101), 64, xpos_zeta_hat(64) ** (1 / 512)))
    assert rope[0] == xpos[0] == literal[0] == 32 and len(rope_n) == 101
    figure2(64, 100, 0.4, 512, tmp_path / "g.png", tmp_path / "g.pdf")
    assert (tmp_path / "g.png").stat().st_size > 1000 and (tmp_path / "g.pdf").stat().st_size > 1000


def test_figure2_refuses_an_odd_head_dimension(tmp_path, capsys):
    with pytest.raises(ValueError, match="even --head-dim"):
        main(["figure2", "--head-dim", "7", "--out-png", str(tmp_path / "a.png"), "--out-pdf", str(tmp_path / "a.pdf")])
