"""The dimensionless groups of docs/dimensions.md against hand computations and the papers' numbers."""

import math

import pytest

from lenex.experiment import dimensions as D
from lenex.scale_study.dimensions_report import rewrite_page
from lenex.positions import xpos_zeta


def test_rotary_geometry_by_hand():
    # Heads of 16, base 10^4, L_tr 64: wavelengths 2 pi 10^(i/2), i = 0..7: 6.28, 19.9, 62.8, 199, 628, ...
    geometry = D.rotary_geometry(16, 10000.0, 64)
    assert geometry["pairs_per_octave"] == pytest.approx(16 / (2 * math.log2(10000)))
    assert geometry["unseen_share"] == 5 / 8  # i = 3..7 exceed 64 tokens
    assert geometry["wraps_within_reach"] == 1  # only 2 pi 10^1.5 = 198.7 <= 512
    assert geometry["first_unseen_wrap"] == pytest.approx(2 * math.pi * 10**1.5 / 64)
    # The LEX paper's heads of 64 at L_tr 1024: the first unseen wrap just past L_tr, 2.4 pairs an octave.
    paper = D.rotary_geometry(64, 10000.0, 1024)
    assert paper["first_unseen_wrap"] == pytest.approx(2 * math.pi * 10000 ** (36 / 64) / 1024)
    assert paper["pairs_per_octave"] == pytest.approx(2.408, abs=1e-3)
    with pytest.raises(ValueError, match="even rotary dimension"):
        D.rotary_geometry(15, 10000.0, 64)


def test_xpos_decay_matches_eq_11():
    # zeta_0 of Eq. 11 (i = 0) is gamma / (1 + gamma); at L_tr / B = 2 it falls to its square.
    zeta0 = float(xpos_zeta(64, 0.4)[0])
    decay = D.xpos_decay(0.4, 512, 1024)
    assert decay["train_over_base"] == 2
    assert decay["fastest_decay_over_train"] == pytest.approx(zeta0**2, rel=1e-6)
    assert D.xpos_decay(0.4, 512, 64)["fastest_decay_over_train"] == pytest.approx(zeta0**0.125, rel=1e-6)


def test_alibi_extent_spans_the_papers_products():
    assert D.alibi_extent(16, 1024) == pytest.approx({"largest_slope_x_train": 2**-0.5 * 1024,
                                                      "smallest_slope_x_train": 4.0})
    # 4 heads at L_tr = 256 with slopes x 4 keep the smallest product, 4.
    assert D.alibi_extent(4, 256, slope_scale=4)["smallest_slope_x_train"] == pytest.approx(4.0)
    # Delta = 6 divides every slope by 64; every h = 8 is slope 1/256.
    assert D.alibi_extent(4, 64, shift=6, slope_scale=8)["smallest_slope_x_train"] == pytest.approx(2 / 64)
    assert D.alibi_extent(12, 512, same_h=8)["smallest_slope_x_train"] == pytest.approx(2.0)


def test_window_and_curve_extents():
    assert D.window_extent(40, 12, 512) == pytest.approx({"trf_over_train": 480 / 512, "window_over_train": 40 / 512})
    assert D.curve_extent(8, 64, 512) == 1
    assert D.curve_extent(1, 64, 512) == 0.125


def test_early_token_discount_and_the_whole_piece_protocol():
    # LEX Table 2, ALiBi on PG22: 30.01 at 512, 27.34 at 1024.
    discount = D.early_token_discount(30.01, 27.34)
    assert discount == pytest.approx(math.log(30.01 / 27.34))
    # A model with mean NLL l + S/L: D = S/L_tr, and the 2 L_tr piece scores e^(-D/2) of the L_tr one.
    level, start_up, length = 3.0, 20.0, 256
    nll = lambda n: level + start_up / n  # noqa: E731
    d = D.early_token_discount(math.exp(nll(length / 2)), math.exp(nll(length)))
    assert d == pytest.approx(start_up / length)
    assert 1 - math.exp(nll(2 * length)) / math.exp(nll(length)) == pytest.approx(D.whole_piece_discount(d, 2))
    with pytest.raises(ValueError, match="positive"):
        D.early_token_discount(0, 1)


def test_beyond_train_ppl_recovers_the_second_half():
    # A 2L piece whose first half scores 20 and second half 80: whole-piece ppl = sqrt(20 * 80) = 40.
    assert D.beyond_train_ppl(20.0, 40.0, 2) == pytest.approx(80.0)
    # LEX's RoPE on PG22 (26.68 at 1024, 68.86 at 2048): the 68.86^2 / 26.68.
    assert D.beyond_train_ppl(26.68, 68.86, 2) == pytest.approx(68.86**2 / 26.68)
    with pytest.raises(ValueError, match="exceed 1"):
        D.beyond_train_ppl(1.0, 1.0, 1)


def test_training_groups():
    assert D.passes(6_291_456, 3_145_728) == 2
    # 4 x 128, d_ff 512: 4 (4 x 128^2 + 2 x 128 x 512) = 786,432 non-embedding parameters.
    assert D.tokens_per_parameter(786_432, 4, 128, 512) == 1
    assert D.median_discount([]) is None


def test_rewrite_page_replaces_only_between_markers():
    page = "intro\n<!-- dimensions:lex -->\nold\n<!-- /dimensions:lex -->\nend\n"
    assert rewrite_page(page, {"lex": ["| a |", "|---|"]}) == (
        "intro\n<!-- dimensions:lex -->\n| a |\n|---|\n<!-- /dimensions:lex -->\nend\n")
    with pytest.raises(ValueError, match="no <!-- dimensions:segmented -->"):
        rewrite_page(page, {"segmented": []})
