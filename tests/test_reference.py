"""lenex.reference: the reference-run page is generated from the runs file and the claims files alone."""
import json
from pathlib import Path

import pytest
import yaml

from lenex.reference import held_share, main, reference_page

REPO = Path(__file__).resolve().parents[1]
RUN = {"paper": "lex", "title": "LEX", "command": "snakemake x", "wall_time": "1 min", "revision": "`abc`"}


def test_the_committed_workstation_page_is_what_the_generator_writes():
    root = REPO / "results" / "workstation"
    assert (root / "REFERENCE.md").read_text(encoding="utf-8") == reference_page(root)


def claim(on_paper, on_ours, n=0):
    return {"id": f"c{n}", "statement": f"claim {n}", "source": "Table 2", "on_paper": on_paper,
            "on_ours": on_ours, "evidence": ""}


def test_held_share_counts_only_claims_that_hold_on_the_paper():
    claims = [claim(True, True), claim(True, False), claim(True, None), claim(None, True), claim(False, True)]
    assert held_share(claims) == (1, 3)


def test_a_paper_with_claims_gets_its_table_and_one_without_says_so(tmp_path):
    (tmp_path / "runs.yaml").write_text(yaml.safe_dump({"preset": "p", "machine": "a machine.", "runs": [
        RUN, {**RUN, "paper": "segmented", "title": "Segmented"}]}))
    (tmp_path / "claims").mkdir()
    doc = {"paper": "lex", "preset": "p", "claims": [claim(True, True, 1), claim(True, False, 2), claim(None, None, 3)]}
    (tmp_path / "claims" / "lex.json").write_text(json.dumps(doc))
    main(["--preset", ".", "--results", str(tmp_path)])
    page = (tmp_path / "REFERENCE.md").read_text()
    lex, segmented = page.split("## Segmented")
    assert "3 claims; on ours 1 hold, 1 fail, 1 untestable" in lex and "1 of 2 hold on ours" in lex
    assert "| claim 2 | Table 2 | holds | fails |" in lex
    assert "not checked by machine" in segmented and "| claim" not in segmented


def test_a_run_without_its_revision_is_an_error_naming_the_file(tmp_path):
    bad = {k: v for k, v in RUN.items() if k != "revision"}
    (tmp_path / "runs.yaml").write_text(yaml.safe_dump({"preset": "p", "machine": "m", "runs": [bad]}))
    with pytest.raises(ValueError, match=r"runs\.yaml: run 1 lacks revision"):
        reference_page(tmp_path)
