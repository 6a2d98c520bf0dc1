"""The cells files carry what the claims' intervals need: each seed's value of a mean over seeds
(`ours_seeds`) and a single model's per-piece NLLs (`ours_pieces`); a result that records neither
(an older recorded file) gives cells without them."""
import json

import pytest

from lenex.receptive_field.table import table_records
from lenex.tables.cells import table_cells
from lenex.tables.paper_results import load_paper_results
from lenex.tables.table_data import build_table
from test_receptive_field_tables import HEADER as RF_HEADER, TABLES, _record
from test_tables import HEADER, RESULTS, SPEC


def _cells(table, **match):
    return [c for c in table_cells(table)["cells"] if all(c[k] == v for k, v in match.items())]


def test_a_mean_over_seeds_carries_each_seeds_value():
    records = []
    for seed, (sandwich, kerple) in enumerate([(30.0, 28.0), (31.0, 28.9), (29.0, 27.2)], 1):
        records += [{**_record("sandwich", seed, sandwich), "segment_nll": [3.0, 3.5]},
                    _record("kerple", seed, kerple)]
    spec = TABLES["table3"]
    table = build_table(spec, table_records(spec, records), load_paper_results(), RF_HEADER)
    kerple = _cells(table, method="kerple", dataset="openwebtext2", multiple=1)[0]
    assert kerple["ours_seeds"] == {"1": 28.0, "2": 28.9, "3": 27.2}
    assert kerple["ours"] == pytest.approx(sum(kerple["ours_seeds"].values()) / 3)
    # A mean over seeds has no one model's pieces: the seeds are its replication.
    sandwich = _cells(table, method="sandwich", dataset="openwebtext2", multiple=1)[0]
    assert "ours_pieces" not in sandwich and sandwich["ours_seeds"]["2"] == 31.0


def test_a_single_models_cell_carries_its_pieces_and_an_older_result_none():
    spans = {"span_nll": [3.1, 3.5, 3.2], "scored_tokens_sha256": "abc"}
    results = [{**r, **spans} if r["variant"] == "xpos" and r["mask"] == "blockwise" and r["length"] == 128 else r
               for r in RESULTS]
    table = build_table(SPEC, results, load_paper_results(), HEADER)
    xpos_2x = _cells(table, dataset="pg22", method="lex", multiple=2)[0]
    assert xpos_2x["ours_pieces"] == {"unit": "span", "nll": [3.1, 3.5, 3.2], "tokens_sha256": "abc"}
    older = [c for c in _cells(table, dataset="pg22") if c["ours"] is not None and (c["method"], c["multiple"]) != ("lex", 2)]
    assert older and not any("ours_pieces" in c or "ours_seeds" in c for c in older)
    json.dumps(table_cells(table))  # JSON-ready


def test_segmented_cells_carry_their_pieces():
    from lenex.segmented.tables import build_segmented_table

    spec = {"table": 2, "title": "t", "metric": "ppl", "columns": [1],
            "sections": [{"label": "arXiv", "dataset": "arxiv", "corpus": "arxiv",
                          "rows": [{"label": "GPT-2", "method": "gpt2-small:ootb", "variant": "gpt2-small"}]}]}
    result = {"model": "gpt2-small", "run": "ootb", "length": 64, "base_train_length": 64, "ppl": 40.0,
              "piece_nll": [3.6, 3.8], "scored_tokens_sha256": "p"}
    table = build_segmented_table(spec, [result], load_paper_results(),
                                  {"scale_statement": "s", "lines": [], "stand_in": None})
    cell = table_cells(table)["cells"][0]
    assert cell["ours"] == 40.0 and cell["ours_pieces"] == {"unit": "piece", "nll": [3.6, 3.8], "tokens_sha256": "p"}
