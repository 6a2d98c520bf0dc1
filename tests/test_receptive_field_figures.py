"""Figures 8-10 of the receptive-field paper, exact from Eq. (6), and the c_m figure."""

import math

import numpy as np
import pytest

from lenex.positions.smoothed_sandwich import smoothed_sandwich_coefficients
from lenex.receptive_field import figures


def test_sandwich_row_is_equation_6_for_h8_dbar128():
    row = figures.sandwich_row(length=100)
    assert row[-1] == 0.0  # m = n: p_m·p_m = d̄/2
    for distance in (1, 7, 99):
        by_hand = (sum(math.cos(distance / 10000 ** (2 * i / 128)) for i in range(1, 65)) - 64) / 8
        assert row[-1 - distance] == pytest.approx(by_hand, abs=1e-12)
    assert np.all(row[:-1] < 0)  # every other key is penalised


def test_sandwich_matrix_is_masked_above_the_diagonal_and_shift_invariant():
    matrix = figures.sandwich_matrix(length=64, stride=4)
    assert np.isnan(matrix[0, 1]) and not np.isnan(matrix[1, 0])
    assert matrix[5, 2] == pytest.approx(matrix[9, 6]) == pytest.approx(figures.sandwich_row(64)[-1 - 12])


def test_footnote_fit_is_the_smoothed_sandwich_of_the_last_head():
    fits = figures.log_fits(figures.sandwich_row())
    # The last head's compression ratio is h = 8 whatever the number of heads.
    assert fits["recent"] == pytest.approx(smoothed_sandwich_coefficients(12)[-1], rel=1e-9)
    a, b = fits["all"]
    assert -1.5 < a < -0.5 and a != pytest.approx(fits["recent"][0], rel=1e-3)


def test_larger_dbar_windows_harder():
    far = [figures.sandwich_row(2048, dbar=d)[0] for d in (32, 128, 512)]
    assert far[0] > far[1] > far[2]


def test_figures_are_written_as_png_and_pdf(tmp_path):
    result = {"variant": "window-40", "c": list(np.linspace(1, 0.1, 127)), "erf": 30, "trf": 30,
              "train_length": 32, "length": 128}
    for name, fig in (("erf", figures.figure_erf([result], "c_m")), ("f10", figures.figure10(length=256))):
        figures.save(fig, tmp_path / f"{name}.png", tmp_path / f"{name}.pdf")
        assert (tmp_path / f"{name}.png").stat().st_size > 1000 and (tmp_path / f"{name}.pdf").stat().st_size > 1000


def test_exact_figure_cells_of_eq_6():
    eight = figures.exact_figure_cells("8", length=1024, train_length=64)["values"]
    assert eight["bias_at_0"] == 0.0  # (p_m . p_m - d̄/2) / h = (d̄/2 - d̄/2) / 8
    row = figures.sandwich_row(1024)
    assert eight["bias_at_ltr"] == pytest.approx(row[-65]) and eight["bias_at_far"] == pytest.approx(row[0])
    ten = figures.exact_figure_cells("10", length=1024, train_length=64)
    assert ten["exact"] and set(ten["values"]) == {f"window_drop_dbar{d}" for d in (32, 64, 128, 256, 512)}


def test_an_erf_figures_cells_list_each_models_erf_and_its_recent_share():
    # c is cumulative from the end: with L_tr = 2 of 4 positions the recent share is c[2].
    records = [{"corpus": "a", "variant": "m", "seed": s, "erf": e, "trf": None, "train_length": 2, "length": 5,
                "segments": 1, "c": [1.0, 0.9, c2, 0.3]} for s, e, c2 in ((1, 4, 0.6), (2, 3, 0.8))]
    cells = figures.erf_figure_cells(records, "6")
    row = cells["extra"]["erf"][0]
    assert cells["figure"] == "6" and row["erf"] == 3.5 and row["recent_share"] == pytest.approx(0.7)
    with pytest.raises(ValueError, match="L_tr 9 outside"):
        figures.recent_share({**records[0], "train_length": 9})
