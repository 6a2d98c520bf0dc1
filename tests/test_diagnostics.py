"""lenex.tables.diagnostics: the beyond-L_tr ratios by hand, the loss-by-position curves over seeds, the page."""

import json
import math

import pytest

from lenex.tables.diagnostics import beyond_rows, coarse, last_token_curves, main, panels, position_curves, tail_ppl
from lenex.tables.report import build_page


def cell(row, multiple, ours, paper, section="PG22"):
    return {"section": section, "row": row, "multiple": multiple, "ours": ours, "paper": paper}


def test_beyond_ratios_by_hand():
    # k = 2: beyond = exp(2 ln ppl(2L) - ln ppl(L)) = ppl(2L)^2 / ppl(L): 20^2 / 10 = 40 -> 4x ppl(L)
    cells = {"metric": "ppl", "table": "2", "cells": [cell("RoPE", 1, 10.0, 26.68), cell("RoPE", 2, 20.0, 68.86),
                                                       cell("RoPE", 4, None, 100.0)]}
    rows = {r["multiple"]: r for r in beyond_rows(cells)}
    assert rows[2.0]["ours_whole"] == pytest.approx(2.0)
    assert rows[2.0]["ours_beyond"] == pytest.approx(4.0)
    # the paper's RoPE at 2x (the figure): 68.86^2 / 26.68 / 26.68 = 6.66
    assert rows[2.0]["paper_beyond"] == pytest.approx(68.86**2 / 26.68 / 26.68)
    # k = 4: (4 ln 100 - ln 26.68) / 3
    assert rows[4.0]["paper_beyond"] * 26.68 == pytest.approx(math.exp((4 * math.log(100) - math.log(26.68)) / 3))
    assert rows[4.0]["ours_whole"] is None and rows[4.0]["ours_beyond"] is None


def test_beyond_rows_skip_other_metrics_and_rows_without_l_tr():
    assert beyond_rows({"metric": "resolution", "table": "3", "cells": [cell("x", 1, 1.0, 1.0)]}) == []
    assert beyond_rows({"metric": "ppl", "table": "2", "cells": [cell("x", 2, 1.0, 1.0)]}) == []


def record(seed, nll, length=8, train_length=4, variant="rope", **extra):
    return {"variant": variant, "corpus": "pg22", "mask": "causal", "seed": seed, "length": length,
            "train_length": train_length, "position_bins": [0, 2, 4, 6, 8], "position_nll": nll, **extra}


def test_position_curves_mean_over_seeds_at_the_longest_length_beyond_l_tr():
    records = [record(1, [4.0, 3.0, 5.0, 7.0]), record(2, [2.0, 3.0, 3.0, 5.0]),
               record(1, [9.0, 9.0], length=4, train_length=4),  # at L_tr: not beyond it
               {"variant": "rope", "corpus": "pg22", "length": 8, "train_length": 4, "nll": 1.0}]  # no profile
    curves = position_curves(records)
    curve = curves[("pg22", "rope", "causal")]
    assert curve["nll"] == [3.0, 3.0, 4.0, 6.0] and curve["seeds"] == 2
    assert curve["x"] == [0.25, 0.75, 1.25, 1.75]
    before, beyond = tail_ppl(curve)
    assert before == pytest.approx(math.exp(3.0)) and beyond == pytest.approx(math.exp(5.0))


def test_seeds_binned_differently_are_an_error():
    odd = record(2, [1.0, 1.0, 1.0])
    odd["position_bins"] = [0, 3, 6, 8]
    with pytest.raises(ValueError, match="bin"):
        position_curves([record(1, [1.0] * 4), odd])


def test_last_token_curves_put_each_length_at_its_position():
    rows = [{"variant": "alibi", "corpus": "arxiv", "protocol": "last-token", "length": n, "train_length": 64,
             "nll": nll, "seed": s} for n, nll, s in [(64, 3.0, 1), (64, 5.0, 2), (128, 4.0, 1)]]
    curve = last_token_curves(rows + [{"variant": "alibi", "erf": 3}])[("arxiv", "alibi", "causal")]
    assert curve["x"] == [1.0, 2.0] and curve["nll"] == [4.0, 4.0] and curve["seeds"] == 2


def test_the_page_and_figure_are_written_and_the_paper_page_links_the_figure(tmp_path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps([record(1, [4.0, 3.0, 5.0, 7.0])]))
    cells = tmp_path / "table2.cells.json"
    cells.write_text(json.dumps({"metric": "ppl", "table": "2",
                                 "cells": [cell("RoPE", 1, 10.0, 26.68), cell("RoPE", 2, 20.0, 68.86)]}))
    out = tmp_path / "diagnostics" / "lex.md"
    main(["--paper", "lex", "--preset", "tiny", "--protocol", "whole-piece", "--same-tokens",
          "--cells", str(cells), "--results", str(results), "--out-md", str(out),
          "--out-png", str(out.with_suffix(".png")), "--out-pdf", str(out.with_suffix(".pdf")),
          "--out-curves-png", str(tmp_path / "diagnostics" / "lex.curves.png")])
    text = out.read_text()
    assert "| 2 | PG22 | RoPE | 2 | 2.581 | 6.661 | 2.000 | 4.000 |" in text
    assert "exact here" in text and out.with_suffix(".png").stat().st_size > 0
    # before L_tr: bins 4, 3 -> e^3.5; beyond: 5, 7 -> e^6; ratio e^2.5
    assert "| pg22 | rope | causal | 2 | 1 | 33.12 | 403.43 | 12.182 |" in text
    # no curve given: the training-curves section says so (tests/test_training_curves.py has curves)
    assert text.endswith("## Training curves\n\nNo training curve recorded for this run.\n")
    page = tmp_path / "lex.md"
    built = build_page({"paper": "lex", "tables": {}, "figures": {}}, "tiny", [], [], page, diagnostics=out)
    assert "![loss by position](diagnostics/lex.png)" in built


def test_no_evaluation_beyond_l_tr_is_an_error(tmp_path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps([record(1, [1.0, 1.0], length=4, train_length=4)]))
    out = tmp_path / "d.md"
    with pytest.raises(ValueError, match="beyond its model's L_tr"):
        main(["--paper", "lex", "--preset", "tiny", "--protocol", "whole-piece", "--results", str(results),
              "--out-md", str(out), "--out-png", str(tmp_path / "d.png"), "--out-pdf", str(tmp_path / "d.pdf"),
              "--out-curves-png", str(tmp_path / "d.curves.png")])
    assert not out.exists()


def test_panels_follow_the_tables_rows_then_the_rest_by_corpus():
    curves = {("pg22", "rope", "causal"): {}, ("pg22", "xpos", "blockwise"): {}, ("arxiv", "rope", "causal"): {}}
    cells = {"table": "2", "metric": "ppl", "cells": [
        {"section": "PG22", "row": "RoPE", "corpus": "pg22", "variant": "rope", "mask": "causal", "multiple": 2},
        {"section": "PG22", "row": "LEX", "corpus": "pg22", "variant": "xpos", "mask": "causal", "multiple": 1},
        {"section": "PG22", "row": "LEX", "corpus": "pg22", "variant": "xpos", "mask": "blockwise", "multiple": 8},
        {"section": "PG22", "row": "Absent", "corpus": "pg22", "variant": "alibi", "mask": "causal", "multiple": 8}]}
    resolution = {**cells, "table": "3", "metric": "resolution"}  # no loss to draw for its rows
    assert panels([cells, resolution], curves) == [
        ("Table 2, PG22", [(("pg22", "rope", "causal"), "RoPE"), (("pg22", "xpos", "blockwise"), "LEX")]),
        ("arxiv: evaluations no table shows", [(("arxiv", "rope", "causal"), "rope")])]


def test_coarse_bins_are_width_weighted():
    x, nll = coarse({"x": [0.1, 0.3, 0.5, 0.7, 0.9], "nll": [1.0, 3.0, 2.0, 2.0, 5.0], "widths": [1, 1, 2, 2, 1]}, 2)
    assert nll == pytest.approx([2.0, 2.0, 5.0]) and x == pytest.approx([0.2, 0.6, 0.9])
