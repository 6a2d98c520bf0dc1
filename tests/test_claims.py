"""lenex.claims: the predicate kinds on hand-made cells (a missing cell included), every claims file
on the paper's own numbers, the claims CLI on hand-made cells files, schema errors, and the cells
file the table renderer writes."""
import json
from fractions import Fraction

import pytest
import yaml

from lenex.claims import predicates as P
from lenex.claims.evaluate import evaluate, evaluate_claim, load_claims, references
from paper_cells import paper_tables
from lenex.claims.render import against_bar, main as claims_main
from lenex.cli import run_cli
from lenex.tables.cells import table_cells
from lenex.tables.paper_results import load_paper_results
from lenex.tables.render import build_table, main as render_main, render_markdown
from test_workflow import REPO

PAPERS = ["lex", "receptive-field", "segmented"]
SCHEMA = REPO / "workflow/schemas/claims.schema.yaml"


def _cell(method, multiple, paper, ours, dataset="pg22", ours_mark=None, status=None):
    return {"section": dataset, "dataset": dataset, "corpus": dataset, "row": method, "method": method,
            "variant": method, "mask": "causal", "multiple": multiple, "paper_length": int(multiple * 1024),
            "our_length": int(multiple * 64), "paper": paper, "ours": ours,
            "status": status or ("ok" if ours is not None else "not computed"), "paper_std": None,
            "paper_mark": None, "ours_std": None, "ours_mark": ours_mark, "n_seeds": None}


def _tables():
    """Hand-made Table 2 (a rising row, a falling row, one cell not computed) and a Table 5 check."""
    cells = [_cell("rope", 1, 26.0, 20.0), _cell("rope", 2, 69.0, 80.0), _cell("rope", 8, 459.0, None),
             _cell("lex", 1, 26.6, 20.0), _cell("lex", 2, 25.5, 20.2), _cell("lex", 8, 24.9, 19.9),
             _cell("alibi", 1, 27.3, 20.2, ours_mark="better")]
    return {"2": {"paper": "lex", "table": "2", "cells": cells, "extra": {}},
            "5": {"paper": "x", "table": "5", "cells": [],
                  "extra": {"cache_window": {"max_abs_diff_vs_sliding_mask": 2e-6, "min_speedup": 3.5},
                            "erf": [{"corpus": "arxiv", "variant": "window-40", "erf": 30, "trf": 60,
                                     "train_length": 32}]}},
            "f3": {"figure": "3", "values": {"before_mean_median": 0.5, "after_mean_median": 0.7}}}


# Each predicate kind, true and false, on plain numbers.
@pytest.mark.parametrize("func, args, expected", [
    (P.increasing, ([1, 2, 3],), True), (P.increasing, ([1, 3, 3],), False),
    (P.decreasing, ([3, 2, 1],), True), (P.decreasing, ([3, 2, 2.5],), False),
    (P.nondecreasing, ([1, 1, 2],), True), (P.nondecreasing, ([2, 1],), False),
    (P.less, (1, 2), True), (P.less, (2, 2), False), (P.at_most, (2, 2), True), (P.at_most, (3, 2), False),
    (P.ratio_at_least, (25, 20, 1.25), True), (P.ratio_at_least, (24.9, 20, 1.25), False),
    (P.ratio_below, (24.9, 20, 1.25), True), (P.ratio_below, (25, 20, 1.25), False),
    (P.flat, ([100, 101.9, 101], 0.02), True), (P.flat, ([100, 102.1], 0.02), False),
    (P.comparable, (104.9, 100, 0.05), True), (P.comparable, (94.9, 100, 0.05), False),
    (P.value_at_most, (1e-5, 1e-4), True), (P.value_at_most, (2e-4, 1e-4), False),
    (P.value_above, (1.5, 1.0), True), (P.value_above, (1.0, 1.0), False),
    (P.mark_is, ("better", "better"), True), (P.mark_is, (None, "none"), True), (P.mark_is, (None, "worse"), False),
])
def test_predicate_kinds(func, args, expected):
    assert func(*args) is expected


def test_bad_predicate_input_is_an_error():
    with pytest.raises(ValueError, match="at least two"):
        P.increasing([1])
    with pytest.raises(ValueError, match="unknown threshold 'huge'"):
        P.threshold("huge")


@pytest.mark.parametrize("check, paper, ours", [
    ({"decreasing": ["t2/pg22/lex@1,2,8"]}, True, False),                     # ours rises at 2x
    ({"ratio_at_least": ["t2/pg22/rope@2", "t2/pg22/rope@1", "explodes"]}, True, True),
    ({"comparable": ["t2/pg22/lex@1", "t2/pg22/rope@1"]}, True, True),
    ({"flat": ["t2/pg22/lex@1,2,8"]}, False, True),
    ({"not": {"less": ["t2/pg22/rope@1", "t2/pg22/lex@1"]}}, False, True),    # ours: 20.0 < 20.0 is false
    ({"any": [{"less": ["t2/pg22/lex@8", "t2/pg22/lex@1"]}, {"less": ["t2/pg22/lex@2", "t2/pg22/lex@1"]}]}, True, True),
    ({"mark": ["t2/pg22/alibi@1", "better"]}, False, True),
    ({"value_at_most": ["t5/check/max_abs_diff_vs_sliding_mask", "identical"]}, None, True),
    ({"at_most": ["t5/erf/arxiv/window-40", "t5/trf/arxiv/window-40"]}, None, True),
    ({"less": ["t5/ltr/arxiv/window-40", "t5/erf/arxiv/window-40"]}, None, False),
    ({"less": ["f3/before_mean_median", "f3/after_mean_median"]}, None, True),
])
def test_checks_on_hand_made_cells(check, paper, ours):
    tables = _tables()
    assert evaluate(check, tables, "paper").holds is paper
    assert evaluate(check, tables, "ours").holds is ours


def test_a_missing_cell_makes_the_verdict_null_and_names_the_cell():
    check = {"all": [{"less": ["t2/pg22/lex@8", "t2/pg22/rope@8"]}, {"less": ["t2/pg22/rope@1", "t2/pg22/lex@1"]}]}
    verdict = evaluate(check, _tables(), "ours")
    assert verdict.holds is None
    assert verdict.reasons == ["t2/pg22/rope@8: not computed"]
    record = evaluate_claim({"id": "x", "statement": "s", "source": "T2", "check": check}, _tables())
    assert record["on_paper"] is True and record["on_ours"] is None
    assert "t2/pg22/rope@8: paper 459.00, ours —" in record["evidence"]
    assert "not testable on ours: t2/pg22/rope@8: not computed" in record["evidence"]


def test_a_reference_to_no_cell_is_an_error_naming_it():
    with pytest.raises(ValueError, match="t2/pg22/xpos@1: no cell"):
        evaluate({"less": ["t2/pg22/xpos@1", "t2/pg22/lex@1"]}, _tables(), "paper")
    with pytest.raises(ValueError, match="no cells file for table 7"):
        evaluate({"less": ["t7/pg22/lex@1", "t2/pg22/lex@1"]}, _tables(), "paper")


@pytest.mark.parametrize("paper", PAPERS)
def test_every_claim_holds_on_the_papers_own_numbers(paper):
    claims = load_claims(REPO / "config/claims" / f"{paper}.yaml", SCHEMA)
    tables = paper_tables(REPO / "config/experiments" / f"{paper}.yaml")
    records = [evaluate_claim(c, tables) for c in claims["claims"]]
    assert len(records) >= 10
    assert not [r["id"] for r in records if r["on_paper"] is False]
    for r in records:  # null only with the reason said
        assert r["on_paper"] is True or "not testable on paper" in r["evidence"], r["id"]
    assert sum(r["on_paper"] is True for r in records) >= 10
    # With no run of ours, nothing of ours may hold or fail.
    assert {r["on_ours"] for r in records} == {None}


@pytest.mark.parametrize("paper", PAPERS)
def test_every_table_has_a_claim(paper):
    experiment = yaml.safe_load((REPO / "config/experiments" / f"{paper}.yaml").read_text())
    claims = load_claims(REPO / "config/claims" / f"{paper}.yaml", SCHEMA)["claims"]
    used = {ref.split("/")[0][1:] for c in claims for ref in references(c.get("check")) if ref.startswith("t")}
    assert used == {str(t["table"]) for t in experiment["tables"].values()}


def test_figure3_cells_are_the_means_the_figure_shows():
    from lenex.segmented.figures import figure3_cells

    cells = figure3_cells({"medians_times_keys": [0.2, 0.4]}, {"run": "chunk-0.25-x4", "medians_times_keys": [0.5, 1.0, 0.9]})
    assert cells["figure"] == "3" and cells["after_run"] == "chunk-0.25-x4"
    assert cells["values"] == pytest.approx({"before_mean_median": 0.3, "after_mean_median": 0.8})


def test_schema_errors_name_the_file_and_the_claim(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"paper": "lex", "claims": [
        {"id": "fine", "statement": "a statement", "source": "T2", "check": {"less": ["t2/a/b@1", "t2/a/c@1"]}},
        {"id": "broken-one", "statement": "a statement", "source": "T2", "check": {"smaller": ["t2/a/b@1"]}}]}))
    with pytest.raises(ValueError) as err:
        load_claims(bad, SCHEMA)
    assert str(bad) in str(err.value) and "claim 'broken-one'" in str(err.value)
    bad.write_text(yaml.safe_dump({"paper": "lex", "claims": [
        {"id": "thr", "statement": "a statement", "source": "T2",
         "check": {"ratio_at_least": ["t2/a/b@1", "t2/a/c@1", "huge"]}}]}))
    with pytest.raises(ValueError, match="claim 'thr': unknown threshold 'huge'"):
        load_claims(bad, SCHEMA)
    bad.write_text(yaml.safe_dump({"paper": "lex", "claims": [
        {"id": "ref", "statement": "a statement", "source": "T2", "check": {"less": ["t2/pg22/lex", "t2/a/c@1"]}}]}))
    with pytest.raises(ValueError, match="claim 'ref': bad cell reference 't2/pg22/lex'"):
        load_claims(bad, SCHEMA)


def test_claims_cli_on_hand_made_cells_files(tmp_path):
    claims = tmp_path / "lex.yaml"
    claims.write_text(yaml.safe_dump({"paper": "lex", "claims": [
        {"id": "falls", "statement": "perplexity falls", "source": "Table 2",
         "check": {"decreasing": ["t2/pg22/lex@1,2,8"]}},
        {"id": "rope-8x", "statement": "rope explodes at 8x", "source": "Table 2",
         "check": {"ratio_at_least": ["t2/pg22/rope@8", "t2/pg22/rope@1", "explodes"]}},
        {"id": "fig", "statement": "a figure's message", "source": "Figure 9", "untestable": {"ours": "no data"}}]}))
    cells = []
    for key, table in _tables().items():
        cells.append(tmp_path / f"table{key}.cells.json")
        cells[-1].write_text(json.dumps(table))
    out_md, out_json = tmp_path / "claims/lex.md", tmp_path / "claims/lex.json"
    run_cli(claims_main, ["paper", "--claims", str(claims), "--schema", str(SCHEMA), "--preset", "tiny",
                          "--cells", *map(str, cells), "--out-md", str(out_md), "--out-json", str(out_json)])
    document = json.loads(out_json.read_text())
    assert document["paper"] == "lex" and document["preset"] == "tiny"
    assert [(c["id"], c["on_paper"], c["on_ours"]) for c in document["claims"]] == [
        ("falls", True, False), ("rope-8x", True, None), ("fig", None, None)]
    assert all(set(c) == {"id", "statement", "source", "on_paper", "on_ours", "evidence"} for c in document["claims"])
    assert "| falls | perplexity falls | Table 2 | holds | FAILS |" in out_md.read_text()
    summary = tmp_path / "claims.md"
    run_cli(claims_main, ["summary", "--preset", "tiny", "--claims-json", str(out_json), "--out", str(summary)])
    text = summary.read_text()
    assert "| [lex](claims/lex.md) | 3 | 0 | 1 | 2 | 2 | 0 | 1 |" in text
    assert "Failing on ours in `lex`: falls." in text
    # 2 hold on the paper, 0 of them on ours; bar ceil(1.6) = 2; rope-8x untestable (no scale facts,
    # so not "never seen"); at most 1 could hold, below the bar.
    assert "| lex | 2 | 0 | 2 | 1 | 0 | 1 | no (out of reach at this scale) |" in text


def _record(paper, ours, first_seen="absent"):
    record = {"on_paper": paper, "on_ours": ours}
    if first_seen != "absent":
        record["scale"] = {"trained_tokens": 1000, "first_seen_tokens": first_seen}
    return record


def test_against_bar_counts_by_hand():
    records = ([_record(True, True)] * 7 + [_record(True, False)]
               + [_record(True, None, None), _record(True, None, 4000)]  # never seen; seen beyond the budget
               + [_record(None, None), _record(False, True)])  # not holding on the paper: not counted
    assert against_bar(records) == {"on_paper": 10, "hold": 7, "bar": 8, "untestable": 2, "never_seen": 1,
                                    "reachable": 8}
    assert against_bar(records, share=Fraction(9, 10))["bar"] == 9
    assert against_bar(records[:7])["bar"] == 6  # 5.6 claims: 6 are needed
    with pytest.raises(ValueError, match="share"):
        against_bar(records, share=0)


def test_render_writes_cells_beside_an_unchanged_table(tmp_path):
    from test_tables import HEADER, RESULTS, SPEC
    spec_file, header = tmp_path / "exp.yaml", tmp_path / "header.json"
    spec_file.write_text(yaml.safe_dump({"tables": {"table2": SPEC}}))
    header.write_text(json.dumps(HEADER))
    results = []
    for i, r in enumerate(RESULTS):
        results.append(tmp_path / f"r{i}.json")
        results[-1].write_text(json.dumps(r))
    out = tmp_path / "out"
    run_cli(render_main, ["--spec", str(spec_file), "--table-key", "table2", "--header", str(header),
                          "--out-md", str(out / "t.md"), "--out-tex", str(out / "t.tex"),
                          "--out-cells", str(out / "t.cells.json"), "--results", *map(str, results)])
    table = build_table(SPEC, RESULTS, load_paper_results(), HEADER)
    assert (out / "t.md").read_text() == render_markdown(table)
    cells = json.loads((out / "t.cells.json").read_text())
    assert cells == json.loads(json.dumps(table_cells(table)))
    lex_2x = [c for c in cells["cells"] if c["dataset"] == "pg22" and c["method"] == "lex" and c["multiple"] == 2]
    assert lex_2x == [{**lex_2x[0], "paper": 25.53, "ours": 26.0, "mask": "blockwise", "our_length": 128,
                       "paper_length": 2048, "status": "ok"}]
    qmsum = [c for c in cells["cells"] if c["dataset"] == "qmsum"]
    assert {c["ours"] for c in qmsum} == {None} and {c["status"] for c in qmsum} == {"not computed yet"}


def test_receptive_field_cells_carry_std_seeds_and_both_marks():
    from lenex.receptive_field.table import cache_checks, table_records
    from test_receptive_field_tables import HEADER as RF_HEADER, TABLES, _record

    records = []
    for seed, (sandwich, kerple) in enumerate([(30.0, 28.0), (31.0, 28.9), (29.0, 27.2)], 1):
        records += [_record("sandwich", seed, sandwich), _record("kerple", seed, kerple)]
    spec = TABLES["table3"]
    cells = table_cells(build_table(spec, table_records(spec, records), load_paper_results(), RF_HEADER))
    kerple = next(c for c in cells["cells"] if c["method"] == "kerple" and c["dataset"] == "openwebtext2"
                  and c["multiple"] == 1)
    assert kerple["paper"] == 22.6 and kerple["paper_std"] == 3.5 and kerple["paper_mark"] == "worse"
    assert kerple["ours"] == pytest.approx(28.033, abs=1e-3) and kerple["n_seeds"] == 3
    assert kerple["ours_mark"] == "worse" and kerple["ours_std"] == pytest.approx(0.85, abs=1e-2)
    sinusoidal = next(c for c in cells["cells"] if c["method"] == "sinusoidal" and c["multiple"] == 2)
    assert sinusoidal["paper_mark"] == "better" and sinusoidal["ours"] is None
    checks = [{"checkpoint": f"m{i}", "check": {"max_abs_diff_vs_sliding_mask": d, "speedup": s}}
              for i, (d, s) in enumerate([(1e-6, 3.0), (4e-6, 2.5)])]
    assert cache_checks(checks) == {"max_abs_diff_vs_sliding_mask": 4e-6, "min_speedup": 2.5, "n_models": 2}
    assert cache_checks(records) is None
