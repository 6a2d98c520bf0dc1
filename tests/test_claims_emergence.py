"""The claims read the committed emergence records (issue 49): each claim's trends beside its
verdict, and a contradicted claim that a sweep of its own models measured grouped by that trend."""
import json
import math
from pathlib import Path

import pytest
import yaml

from lenex.claims import emergence as em
from lenex.claims.summary import reason_of

ROOT = Path(__file__).resolve().parents[1]


def _reading(claim="c", source="sweep s", cls="flat", slope=-0.0021, low=-0.01, high=0.0058, old="flat"):
    return {"claim": claim, "source": source, "subject": "rf-alibi", "variable": "train_tokens", "paper": 0.03,
            "class": cls, "trend": {"slope": slope, "low": low, "high": high, "seeds": 3, "how": "h"},
            "pooled": {"class": old, "trend": {"slope": slope, "low": -0.004, "high": 0.0001, "effects": 12},
                       "crossing": None},
            "forecast": "results/scale-study/sweeps/predictions.md", "note": "", "values": [1, 2], "points": []}


def test_files_are_found_under_the_root_and_sorted(tmp_path):
    assert em.emergence_files(tmp_path) == []
    for rel in ("results/scale-study/sweeps/b/emergence.json", "results/scale-study/sweeps/a/emergence.json",
                "results/scale-study/emergence.json", "results/scale-study/sweeps/a/emergence.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
    assert em.emergence_files(tmp_path) == ["results/scale-study/emergence.json",
                                            "results/scale-study/sweeps/a/emergence.json",
                                            "results/scale-study/sweeps/b/emergence.json"]


def test_readings_are_grouped_by_claim_in_file_order(tmp_path):
    first, second = tmp_path / "1.json", tmp_path / "2.json"
    first.write_text(json.dumps({"effects": [_reading("a", "the scale study's budget series"), _reading("b")]}))
    second.write_text(json.dumps({"effects": [_reading("a", "sweep s2")]}))
    found = em.readings_by_claim([first, second])
    assert [r["source"] for r in found["a"]] == ["the scale study's budget series", "sweep s2"]
    assert list(found) == ["a", "b"] and "points" not in found["b"][0]  # the per-value rows stay on the page


def test_a_non_finite_slope_is_one_error_naming_file_and_claim(tmp_path):
    bad = tmp_path / "e.json"
    bad.write_text(json.dumps({"effects": [_reading("a", slope=math.nan)]}))
    with pytest.raises(ValueError, match=r"e\.json: the reading of 'a': trend\.slope is nan: not a finite number"):
        em.readings_by_claim([bad])


def test_reading_text_by_hand():
    assert em.reading_text(_reading()) == (
        "sweep s, rf-alibi: flat with train_tokens (slope -0.0021 per doubling, 95% [-0.0100, +0.0058], 3 seeds "
        "fitted alone; old rule, one pooled line: flat, 95% [-0.0040, +0.0001]); forecast toward the claim's "
        "threshold: results/scale-study/sweeps/predictions.md")
    # the rule changed after the data: where the old pooled line said otherwise, both stay visible
    moved = _reading(slope=0.035, low=-0.005, high=0.076, old="grows")
    assert "flat with train_tokens (slope +0.0350 per doubling, 95% [-0.0050, +0.0760]" in em.reading_text(moved)
    assert "old rule, one pooled line: grows" in em.reading_text(moved)
    one = {**_reading(cls=None, low=None, high=None), "trend": {"slope": 0.2, "low": None, "high": None, "seeds": 1}}
    assert em.reading_text(one).startswith("sweep s, rf-alibi: no class with train_tokens (slope +0.2000 per "
                                           "doubling, no interval, 1 seed fitted alone;")
    assert em.reading_text({**_reading(), "trend": None, "note": "not yet measured"}) == "sweep s, rf-alibi: not yet measured"


def _corpus_reading(cls="differs"):
    return {**_reading(cls=cls), "variable": "corpus", "values": ["pg22", "arxiv"], "trend": None,
            "contrast": {"mean": -0.21, "low": -0.3, "high": -0.12, "seeds": 3}}


def test_a_corpus_sweep_reads_as_its_paired_difference():
    assert em.reading_text(_corpus_reading()) == (
        "sweep s, rf-alibi: differs between corpora (e(arxiv) − e(pg22) = -0.2100, 95% [-0.3000, -0.1200], "
        "3 paired seeds)")
    # without an interval it says its note, as a trend too short to fit does
    assert em.reading_text({**_corpus_reading(cls=None), "note": "one common seed"}) == "sweep s, rf-alibi: one common seed"
    both = {"verdict": "contradicted", "emergence": [_reading(), _corpus_reading("no difference resolved")]}
    assert reason_of(both) == ("contradicted; a train_tokens sweep measured it: trend flat; "
                               "a corpus sweep measured it: no difference resolved between corpora")


def test_only_a_sweep_of_the_claims_own_models_gives_a_measured_reason():
    contradicted = {"verdict": "contradicted", "sweep": {"variables": ["budget"], "why": "w"}}
    study = {**contradicted, "emergence": [_reading(source="the scale study's budget series", cls="shrinks")]}
    assert reason_of(study) == "contradicted, not yet measured: a budget sweep would"
    swept = {**contradicted, "emergence": [_reading(), _reading(cls="flat"), _reading(cls="shrinks", old="shrinks")]}
    assert reason_of(swept) == "contradicted; a train_tokens sweep measured it: trend flat / shrinks"
    # the old pooled line's class stays beside the rule's where it differs
    moved = {**contradicted, "emergence": [_reading(old="grows")]}
    assert reason_of(moved) == "contradicted; a train_tokens sweep measured it: trend flat (old rule, pooled line: grows)"


def test_the_committed_records_name_claims_that_exist():
    """Every committed reading is of a claim in config/claims/ (a renamed claim would lose its trend)."""
    ids = {c["id"] for p in (ROOT / "config" / "claims").glob("*.yaml")
           for c in yaml.safe_load(p.read_text(encoding="utf-8"))["claims"]}
    files = em.emergence_files(ROOT)
    assert "results/scale-study/emergence.json" in files
    found = em.readings_by_claim([ROOT / f for f in files])
    assert found and set(found) <= ids, sorted(set(found) - ids)


def test_the_committed_records_class_is_the_forecasts_rule_from_the_points():
    """Each committed sweep reading's class and slope are forecast.seed_trend's over the sweep's
    committed points (a record written by the old pooled rule, or from fewer points, fails here)."""
    from lenex.scale_study import forecast, predictions
    from lenex.files import read_json

    config = yaml.safe_load((ROOT / "config" / "sweeps.yaml").read_text(encoding="utf-8"))
    checked = 0
    for path in em.emergence_files(ROOT):
        for r in read_json(ROOT / path)["effects"]:
            if not r["source"].startswith(em.SWEEP) or r["variable"] != "train_tokens":
                continue
            name = r["source"][len(em.SWEEP):]
            effect = next(e for e in config["sweeps"][name]["effects"] if e["model"] == r["subject"])
            points = [read_json(p) for p in sorted((ROOT / "results/scale-study/sweeps" / name / "points").glob("*.json"))]
            trend = forecast.seed_trend(predictions.series_of(points, effect, r["subject"]), r["paper"])
            assert (r["class"], len(trend.fits)) == (trend.label, r["trend"]["seeds"]), path
            assert r["trend"]["slope"] == pytest.approx(trend.slope.mean), path
            checked += 1
    assert checked >= 3  # rf-budget's two effects and rf-shift-budget's


def test_the_verdict_carries_the_trend():
    from lenex.claims.render import verdict_text

    record = {"verdict": "contradicted", "emergence": [_reading()]}
    assert verdict_text(record) == "contradicted; emergence: " + em.reading_text(_reading())


@pytest.mark.parametrize("paper", ["lex", "receptive-field", "segmented"])
def test_every_committed_contradiction_at_workstation_names_its_sweep_or_its_measurement(paper):
    """Issue 49: a contradicted claim carries a measured reason or the sweep that would give one
    (a claim that turns contradicted, say after a power rerun, needs its `sweep` in the claims file)."""
    records = json.loads((ROOT / f"results/workstation/claims/{paper}.json").read_text(encoding="utf-8"))["claims"]
    unnamed = [r["id"] for r in records if reason_of(r) == "contradicted, no sweep named"]
    assert unnamed == []
