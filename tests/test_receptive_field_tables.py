"""The receptive-field tables: mean ± std and significance markers (optional spec fields of the
shared table builder), rows trained at a multiple of L_tr, the same-tokens check, the ERF list."""

import pytest
import yaml

from lenex.receptive_field.table import check_same_tokens, erf_markdown, erf_rows, table_records
from lenex.tables.paper_results import load_paper_results
from lenex.tables.render import render_markdown
from lenex.tables.table_data import build_table
from test_workflow import REPO

TABLES = yaml.safe_load((REPO / "config/experiments/receptive-field.yaml").read_text())["tables"]
HEADER = {"preset": "tiny", "train_length": 32}


def _record(variant, seed, ppl, length=32, corpus="openwebtext2", train_length=32, digest="d"):
    return {"variant": variant, "corpus": corpus, "mask": "causal", "length": length, "seed": seed, "ppl": ppl,
            "train_length": train_length, "scored_tokens_sha256": digest, "segments": 8}


def test_table3_cells_show_mean_std_and_both_markers():
    records = []
    for seed, (sandwich, kerple, alibi) in enumerate([(30.0, 28.0, 30.5), (31.0, 28.9, 31.0), (29.0, 27.2, 29.9)], 1):
        records += [_record("sandwich", seed, sandwich), _record("kerple", seed, kerple), _record("alibi", seed, alibi)]
    spec = TABLES["table3"]
    table = build_table(spec, table_records(spec, records), load_paper_results(), HEADER)
    rows = {r.method: r.cells[0] for r in table.sections[0].rows}  # OpenWebText2, 1 x L_tr
    assert rows["sandwich"].text == "23.5 ± 3.8 / 30.00 ± 1.00 / +6.50"
    # KERPLE is lower on every seed: Sandwich significantly worse (*), as the paper marks it at 512.
    assert rows["kerple"].text.startswith("22.6 ± 3.5* / 28.03 ± 0.85* / ")
    assert rows["alibi"].ours_text == "30.47 ± 0.55"  # 30.5, 31.0, 29.9 vs 30, 31, 29: p > 0.05
    assert rows["sinusoidal"].text == "26.0 ± 1† / not computed / —"
    assert "± " in render_markdown(table)


def test_rows_trained_longer_read_only_results_of_their_own_train_length():
    spec = TABLES["table2"]
    records = [_record("alibi-shift-6-ltr4", 1, 9.0, length=128, corpus="arxiv", train_length=128),
               _record("alibi-shift-6-ltr4", 1, 99.0, length=128, corpus="arxiv", train_length=32),
               _record("window-160-ltr2", 1, 7.0, length=128, corpus="arxiv", train_length=64)]
    records[2]["mask"] = "windowed"
    table = build_table(spec, table_records(spec, records), load_paper_results(), HEADER)
    shift, window = table.sections[0].rows
    assert shift.cells[0].text == "4.4 / 9.00 / +4.60" and window.cells[0].text == "6.2 / 7.00 / +0.80"


def test_a_corpus_scored_on_different_tokens_is_refused():
    check_same_tokens([_record("a", 1, 1.0), _record("a", 1, 1.0, length=64)])
    with pytest.raises(ValueError, match="openwebtext2: the evaluations do not all score the same tokens"):
        check_same_tokens([_record("a", 1, 1.0), _record("a", 1, 1.0, length=64, digest="other")])


def test_erf_list_shows_trf_beside_erf():
    rows = erf_rows([{"corpus": "arxiv", "variant": "window-40", "erf": 25, "trf": 30, "train_length": 32,
                      "length": 128, "segments": 2},
                     {"corpus": "arxiv", "variant": "alibi", "erf": 100, "trf": None, "train_length": 32,
                      "length": 128, "segments": 2}])
    text = erf_markdown(rows)
    assert "| arxiv | window-40 | 32 | 30 | 25 | yes |" in text and "| arxiv | alibi | 32 | — | 100 | no |" in text


def test_table5_header_states_the_cache_window_checks():
    from lenex.receptive_field.table import cache_summary, header_for

    spec = TABLES["table5"]
    experiment = yaml.safe_load((REPO / "config/experiments/receptive-field.yaml").read_text())
    preset = yaml.safe_load((REPO / "config/presets/tiny.yaml").read_text())
    raw = []
    for seed, speedup in ((1, 3.0), (2, 5.0)):
        check = {"max_abs_diff_vs_sliding_mask": 2e-6 * seed, "timed_tokens": 64, "speedup": speedup}
        for variant in ("sandwich", "alibi"):
            raw.append({**_record(variant, seed, 40.0, length=256), "mask": "cache-window", "window": 128,
                        "check": check, "checkpoint": f"{variant}{seed}.pt"})
    records = table_records(spec, raw)
    header = {**header_for(preset, experiment, spec, {}, {}, records, {}), **cache_summary(raw)}
    assert "w̄ = 128" in header["protocol"] and header["seeds"].startswith("2 seeds per model")
    assert "4.0e-06 over 4 models" in header["cache_window_check"]
    assert "3.0× to 5.0× faster" in header["cache_window_speed"]
    table = build_table(spec, records, load_paper_results(), header)
    assert table.sections[0].rows[0].cells[0].text == "23.9 / 40.00 ± 0.00 / +16.10"


def _erf(variant, seed, erf, trf=None):
    return {"corpus": "arxiv", "variant": variant, "seed": seed, "erf": erf, "trf": trf, "train_length": 32,
            "length": 128, "segments": 2}


def test_erf_rows_are_the_mean_over_seeds_with_each_seeds_erf():
    rows = erf_rows([_erf("window-40", 2, 26, trf=30), _erf("window-40", 1, 24, trf=30), _erf("alibi", 1, 100)])
    window = next(r for r in rows if r["variant"] == "window-40")
    assert (window["erf"], window["n_seeds"], window["erf_seeds"]) == (25.0, 2, {"1": 24, "2": 26})
    assert window["erf_std"] == pytest.approx(2 ** 0.5)
    text = erf_markdown(rows)
    assert "| arxiv | window-40 | 32 | 30 | 25 ± 1.4 | yes |" in text and "mean ± std over 1/2 seeds" in text
    with pytest.raises(ValueError, match="two different ERFs of alibi on arxiv seed 1"):
        erf_rows([_erf("alibi", 1, 100), _erf("alibi", 1, 90)])


def test_an_erf_over_seeds_gets_an_interval_against_its_exact_trf_and_pairs_with_another_erf():
    """ERF rows carry each seed's ERF, so ERF claims get intervals: against an exact TRF or L_tr a
    t over the seeds, against another model's ERF paired seed by seed."""
    import math

    from lenex.claims.intervals import log_ratio
    from lenex.claims.refs import describe, sample

    rows = erf_rows([_erf("window-40", 1, 24, trf=30), _erf("window-40", 2, 26, trf=30), _erf("window-40", 3, 28, trf=30),
                     _erf("window-80", 1, 40, trf=60), _erf("window-80", 2, 44, trf=60), _erf("window-80", 3, 45, trf=60)])
    tables = {"1": {"table": "1", "cells": [], "extra": {"erf": rows}}}
    erf, trf = sample("t1/erf/arxiv/window-40", tables), sample("t1/trf/arxiv/window-40", tables)
    assert erf.seeds == {"1": 24.0, "2": 26.0, "3": 28.0} and trf.exact and not erf.exact
    against_trf = log_ratio(erf, trf)
    assert against_trf.test == "t over 3 seeds against an exact value" and against_trf.df == 2
    assert against_trf.effect == pytest.approx(sum(math.log(e / 30) for e in (24, 26, 28)) / 3)
    paired = log_ratio(erf, sample("t1/erf/arxiv/window-80", tables))
    assert paired.test == "paired t over 3 seeds"
    assert paired.effect == pytest.approx(sum(math.log(a / b) for a, b in ((24, 40), (26, 44), (28, 45))) / 3)
    assert "ours 26" in describe("t1/erf/arxiv/window-40", tables)
    single = {"1": {"table": "1", "cells": [], "extra": {"erf": erf_rows([_erf("window-40", 1, 24, trf=30)])}}}
    # One model's ERF is one measurement, no replicate: not exact (its comparisons are inconclusive).
    assert sample("t1/erf/arxiv/window-40", single).single and not sample("t1/erf/arxiv/window-40", single).exact
