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


def test_far_variation_by_hand():
    # g = [2, 1, 3, 2, 2]: the far half is g[2:] = [3, 2, 2], variation |2-3| + |2-2| = 1, over |g[0]| = 2.
    from lenex.lex.figures import far_variation
    assert far_variation([2.0, 1.0, 3.0, 2.0, 2.0]) == pytest.approx(0.5)
    assert far_variation([1.0, 1.0, 1.0]) == 0.0
    with pytest.raises(ValueError, match="g\\[0\\] != 0"):
        far_variation([0.0, 1.0, 2.0])


def test_exact_numbers_keep_twelve_significant_digits():
    from lenex.lex.figures import exact_digits
    assert exact_digits(108.31680688698373) == exact_digits(108.31680688698327) == 108.316806887
    assert exact_digits(1.861113937931907e-42) == 1.86111393793e-42
    assert exact_digits(0.0) == 0.0


def test_figure2_cells_are_exact_and_named_as_the_claims_read_them(tmp_path):
    from lenex.lex.figures import figure2_cells
    from lenex.lex.targets import FIGURE2_VALUES
    cells = figure2_cells(8, 64, 0.4, 512)
    assert cells["exact"] is True and cells["figure"] == "2" and tuple(cells["values"]) == FIGURE2_VALUES
    n = np.arange(65)
    rope = expected_rotary_score(n, 8, 1.0)
    assert cells["values"]["rope_far_variation"] == pytest.approx(np.abs(np.diff(rope[32:])).sum() / 4.0)


def test_figure2s_gamma_and_scale_base_are_xpos_own_defaults(tmp_path, monkeypatch):
    """The Figure 2 rule wrote `--gamma 0.4 --scale-base 512` beside xPos's defaults; it now reads
    them from XPosOptions (lenex.pipeline.settings.Settings.scheme_defaults), kept per content of
    the registry's code so a DAG build imports no torch when it did not change."""
    import dataclasses
    from pathlib import Path

    import lenex.pipeline.settings as settings_module
    from lenex.positions.xpos import XPosOptions

    repo = Path(__file__).resolve().parents[1]
    config = yaml.safe_load((repo / "config/config.yaml").read_text())
    settings = settings_module.Settings(config, repo, stamps=tmp_path)
    with pytest.raises(ValueError, match="^unknown position scheme 'xpoz'; known: "):
        settings.scheme_defaults("xpoz")
    defaults = settings.scheme_defaults("xpos")
    assert defaults == dataclasses.asdict(XPosOptions()) and (defaults["gamma"], defaults["scale_base"]) == (0.4, 512)
    monkeypatch.setattr(settings_module, "_scheme_defaults", lambda scheme: pytest.fail("read again"))
    assert settings.scheme_defaults("xpos") == defaults  # kept: the registry's code is unchanged
    rule = (repo / "workflow/rules/lex.smk").read_text().split("rule lex_figure2:")[1].split("\nrule ")[0]
    assert "--gamma {params.gamma} --scale-base {params.scale_base}" in rule and "0.4" not in rule
