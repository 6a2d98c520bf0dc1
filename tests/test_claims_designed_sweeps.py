"""lenex.claims.designed_sweeps: which designed sweep measures a claim, its planned cost and parts
run, by hand and on the committed design and plan; its place on a claim's page line and in the
summary's reasons."""
from pathlib import Path

import pytest

from lenex.claims.designed_sweeps import DESIGN, PLAN, awaiting, designed_by_claim, designed_text, part_files
from lenex.claims.render import verdict_text
from lenex.claims.summary import reason_of
from lenex.files import read_json, read_yaml

ROOT = Path(__file__).resolve().parents[1]

DESIGN_DOC = {"sweeps": {
    "b": {"variable": {"name": "train_tokens", "values": [1024, 2048]},
          "effects": [{"claim": "c1"}, {"claim": "c2"}, {"claim": "c1"}]},
    "h": {"variable": {"name": "n_head", "values": [1, 2]}, "effects": [{"claim": "c1"}]}}}
PLAN_DOC = {"sweeps": {"b": {"cpu_seconds": 7200.0, "parts": {"p1": [], "p2": []}},
                       "h": {"cpu_seconds": 1800.0, "parts": {"p1": []}}}}


def test_a_claims_designed_sweeps_by_hand():
    found = designed_by_claim(DESIGN_DOC, PLAN_DOC, ["results/scale-study/sweeps/b/parts/p2.json"])
    assert [e["sweep"] for e in found["c1"]] == ["b", "h"] and [e["sweep"] for e in found["c2"]] == ["b"]
    b = found["c1"][0]
    assert b["cpu_hours"] == pytest.approx(2.0) and b["parts"] == ["p1", "p2"] and b["parts_run"] == ["p2"]
    assert designed_text([b]) == ("designed sweep b (train_tokens 1,024 to 2,048, 2.0 CPU hours planned in "
                                  "2 parts, 1 run)")
    assert awaiting(found["c1"]) == ["b", "h"]
    one = {**b, "parts": ["p1"], "parts_run": ["p1"]}
    assert designed_text([one]).endswith("planned in 1 part, 1 run)")


def test_a_sweep_missing_from_the_plan_is_named():
    with pytest.raises(ValueError, match="sweep 'h' of config/sweeps.yaml is not in results/scale-study"):
        designed_by_claim(DESIGN_DOC, {"sweeps": {"b": PLAN_DOC["sweeps"]["b"]}}, [])


def test_the_committed_design_and_plan_agree_and_name_the_swept_claims():
    found = designed_by_claim(read_yaml(ROOT / DESIGN), read_json(ROOT / PLAN), part_files(ROOT))
    assert {"lex-alibi-rises-beyond-4x", "rf-alibi-rises-beyond-ltr", "lex-absolute-rope-blow-up"} <= set(found)
    assert all(set(e["parts_run"]) <= set(e["parts"]) for entries in found.values() for e in entries)


def test_a_contradicted_claim_not_yet_measured_says_its_designed_sweep():
    entry = designed_by_claim(DESIGN_DOC, PLAN_DOC, [])["c2"]
    record = {"id": "c2", "verdict": "contradicted", "evidence": "", "designed_sweeps": entry}
    assert verdict_text(record).endswith("designed sweep b (train_tokens 1,024 to 2,048, 2.0 CPU hours planned "
                                         "in 2 parts, 0 run)")
    assert reason_of(record) == "contradicted, not yet measured: a sweep designed for it is planned (config/sweeps.yaml)"
