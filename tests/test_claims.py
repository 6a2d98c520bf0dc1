"""lenex.claims: the predicate kinds on hand-made cells (a missing cell included), every claims file
on the paper's own numbers, the claims CLI on hand-made cells files, schema errors, and the cells
file the table renderer writes."""
import json
from fractions import Fraction

import pytest
import yaml

from lenex.claims import predicates as P
from lenex.claims.evaluate import BASIS, evaluate, evaluate_claim, load_claims, references, thresholds_of
from paper_cells import paper_tables
from lenex.claims.render import main as claims_main
from lenex.claims.summary import against_bar, verdict_counts
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
    # Where the paper's own numbers contradict part of a claim, the claim lists those cells (paper_fails,
    # which the evaluation holds equal to where it fails): no other claim fails on the paper.
    assert not [r["id"] for r in records if r["on_paper"] is False and not r.get("paper_fails")]
    assert all(r["paper_fails_on"] for r in records if r.get("paper_fails"))
    for r in records:  # null only with the reason said, false only where listed
        assert r["on_paper"] is True or "not testable on paper" in r["evidence"] or r.get("paper_fails_on"), r["id"]
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


def _one_claim(tmp_path, **fields):
    path = tmp_path / "one.yaml"
    claim = {"id": "c", "statement": "a statement", "source": "T2",
             "check": {"ratio_at_least": ["t2/pg22/rope@2", "t2/pg22/rope@1", "explodes"]}, **fields}
    path.write_text(yaml.safe_dump({"paper": "lex", "claims": [claim]}))
    return path


def test_a_claims_threshold_override_is_used_by_its_predicates_and_only_its(tmp_path):
    why = "the paper's exploding rows rise 9-60x at 16x"
    claims = load_claims(_one_claim(tmp_path, thresholds={"explodes": {"value": 3.0, "why": why}}), SCHEMA)
    claim = claims["claims"][0]
    assert thresholds_of(claim)["explodes"] == 3.0 and thresholds_of(claim)["flat"] == P.THRESHOLDS["flat"]
    # ours: 80 / 20 = 4 >= 3; the paper's 69 / 26 = 2.65: holds at its own cells' sqrt(2.65), not at 3.0
    assert evaluate_claim(claim, _tables())["on_paper"] is False
    made = {k: v for k, v in claim.items() if k != BASIS}  # by hand: derived from _tables(), not LEX's own
    assert evaluate_claim({**made, "thresholds": None}, _tables())["on_paper"] is True
    assert P.THRESHOLDS["explodes"] == 1.25  # the default is untouched


@pytest.mark.parametrize("fields, error", [
    ({"thresholds": {"explodes": {"value": 3.0}}}, "'why' is a required property"),
    ({"thresholds": {"rescues": {"value": 3.0, "why": "the paper's own rescues"}}},
     "threshold override 'rescues' is used by none of its predicates"),
    ({"scale": {"phenomena": ["rope-blowup"], "multiple": 2, "threshold": "explodes"}}, "'multiples' is a required"),
    ({"by_construction": "why"}, "too short"),
])
def test_schema_v2_errors_name_the_claim(tmp_path, fields, error):
    with pytest.raises(ValueError, match="claim 'c'") as err:
        load_claims(_one_claim(tmp_path, **fields), SCHEMA)
    assert error in str(err.value)


def test_schema_v2_fields_load(tmp_path):
    fields = {"by_construction": "every column is the same model output", "narrowed": "drops the 2048 column",
              "scale": {"phenomena": ["rope-blowup"], "multiples": [2, 4, 8], "threshold": "explodes"},
              "thresholds": {"explodes": {"value": 2.5, "why": "the paper's mildest explosion is 2.6x"}}}
    claim = load_claims(_one_claim(tmp_path, **fields), SCHEMA)["claims"][0]
    assert claim["scale"]["multiples"] == [2, 4, 8] and claim["by_construction"].startswith("every")


def test_claims_cli_on_hand_made_cells_files(tmp_path):
    claims = tmp_path / "lex.yaml"
    claims.write_text(yaml.safe_dump({"paper": "lex", "claims": [
        {"id": "falls", "statement": "perplexity falls", "source": "Table 2",
         "check": {"decreasing": ["t2/pg22/lex@1,2,8"]}},
        {"id": "rope-8x", "statement": "rope explodes at 8x", "source": "Table 2",
         "thresholds": {"explodes": {"value": 3.0, "why": "the paper's own words, 'at least 3x'"}},
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
    # Hand-made cells record no seeds and no pieces: ours cannot be more than inconclusive.
    assert [(c["id"], c["on_paper"], c["verdict"], c["on_ours"]) for c in document["claims"]] == [
        ("falls", True, "inconclusive", None), ("rope-8x", True, "untestable", None), ("fig", None, "untestable", None)]
    fields = {"id", "statement", "source", "on_paper", "verdict", "outcome", "interval", "level", "adjustment", "test",
              "direction", "significant", "effect_fraction", "parts", "on_ours", "evidence"}
    # An inconclusive claim also says what would decide it (lenex.claims.power).
    # A claim naming a threshold word records the value it used and how (lenex.claims.thresholds).
    assert all(set(c) == fields | ({"power"} if c["verdict"] == "inconclusive" else set())
               | ({"thresholds", "thresholds_used"} if c["id"] == "rope-8x" else set()) for c in document["claims"])
    used = document["claims"][1]["thresholds_used"]["explodes"]
    assert used == {"value": 3.0, "source": "words", "why": "the paper's own words, 'at least 3x'"}
    falls = document["claims"][0]
    assert falls["test"] == "none: no replication recorded" and falls["interval"] is None and len(falls["parts"]) == 2
    page = out_md.read_text()
    assert "| falls | perplexity falls | Table 2 | holds | inconclusive; no paired replicate: no n decides it | " in page
    assert "0 holds, 0 contradicted, 1 inconclusive, 2 untestable, 0 by-construction" in page
    summary = tmp_path / "claims.md"
    run_cli(claims_main, ["summary", "--preset", "tiny", "--claims-json", str(out_json), "--out", str(summary)])
    text = summary.read_text()
    # falls' effect fractions: ln(20.2/20)/ln(25.5/26.6) = -0.236 and ln(19.9/20.2)/ln(24.9/25.5) = 0.628: median 0.196
    assert "| [lex](claims/lex.md) | 3 | 0 | 0 | 1 | 2 | 0 | 0.20 | 2 | 0 | 1 |" in text
    assert falls["effect_fraction"] == pytest.approx((-0.2357 + 0.6281) / 2, abs=1e-3)
    assert "Untestable on ours in `lex`: rope-8x (t2/pg22/rope@8: not computed); fig (no data)." in text
    # 2 hold on the paper, 0 of them on ours; bar ceil(1.6) = 2; rope-8x untestable: at most 1 could hold.
    assert "| lex | 2 | 0 | 2 | 0 | 1 | 1 | 0 | 1 | no (out of reach at this scale) |" in text


def _record(paper, verdict, never=False):
    record = {"on_paper": paper, "verdict": verdict}
    if never:
        record["scale"] = {"trained_tokens": 1000, "first_seen_tokens": None, "quoted": None,
                           "never_seen_budgets": [10, 100]}
    return record


def test_against_bar_counts_by_hand_and_by_construction_never_counts():
    records = ([_record(True, "holds")] * 7 + [_record(True, "contradicted"), _record(True, "contradicted", never=True)]
               + [_record(True, "inconclusive"), _record(True, "untestable")]
               + [_record(True, "by-construction")] * 3  # hold on the paper, yet never counted
               + [_record(None, "untestable"), _record(False, "holds")])  # not holding on the paper: not counted
    assert against_bar(records) == {"on_paper": 11, "hold": 7, "bar": 9, "contradicted": 2, "inconclusive": 1,
                                    "untestable": 1, "never_seen": 1, "reachable": 10}
    assert against_bar(records, share=Fraction(9, 10))["bar"] == 10
    assert against_bar(records[:7])["bar"] == 6  # 5.6 claims: 6 are needed
    assert verdict_counts(records)["by-construction"] == 3 and verdict_counts(records)["holds"] == 8
    with pytest.raises(ValueError, match="share"):
        against_bar(records, share=0)


def test_a_by_construction_claim_is_checked_shown_and_kept_apart():
    claim = {"id": "bc", "statement": "the window is covered", "source": "T2", "by_construction": "one model output",
             "check": {"less": ["t2/pg22/lex@8", "t2/pg22/lex@1"]}}
    record = evaluate_claim(claim, _tables())
    assert record["verdict"] == "by-construction" and record["on_ours"] is None and record["outcome"] == "inconclusive"
    assert record["by_construction"] == "one model output" and "by construction: one model output" in record["evidence"]
    assert against_bar([record])["on_paper"] == 0


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
