"""The power reruns' plan (lenex.pipeline.power_plan) and the measured job times it reads
(lenex.pipeline.job_times): a hand-made Snakemake log, the rule by hand, and the committed
workstation preset against its committed plan."""
from pathlib import Path

import pytest
import yaml

from lenex.pipeline.job_times import job_spans, model_of_output, model_seed_seconds, parent_seconds
from lenex.pipeline.power_plan import BUDGET_JOB_HOURS, claim_entry, markdown, plan, power_seeds, refused_replan
from lenex.files import read_json

ROOT = Path(__file__).resolve().parents[1]

LOG = """\
[Fri Nov 27 03:34:48 2026]
localrule train:
    input: results/w/data/train_mix/train.bin
    output: results/w/models/lex/alibi/seed1.pt
    log: results/w/logs/train/lex/alibi/seed1.log
    jobid: 7
    wildcards: preset=w, paper=lex, variant=alibi, seed=1
[Fri Nov 27 03:34:48 2026]
localrule lex_eval__w_alibi_s1_pg22:
    output: results/w/eval/lex/alibi/seed1/pg22/causal/L256.json, results/w/eval/lex/alibi/seed1/pg22/causal/L512.json
    jobid: 9
[Fri Nov 27 03:44:48 2026]
Finished jobid: 7 (Rule: train)
[Fri Nov 27 03:45:18 2026]
localrule fetch_debian:
    output: resources/debian/x/SOURCE.json
    jobid: 11
[Fri Nov 27 03:46:18 2026]
Finished jobid: 9 (Rule: lex_eval__w_alibi_s1_pg22)
"""


def test_job_spans_pair_each_start_with_its_finish_and_drop_unfinished_jobs():
    jobs = job_spans(LOG)
    assert [(j["jobid"], j["rule"], j["seconds"]) for j in jobs] == [(7, "train", 600.0),
                                                                   (9, "lex_eval__w_alibi_s1_pg22", 690.0)]
    assert len(jobs[1]["outputs"]) == 2  # job 11 never finished in this log: not counted


def test_a_models_jobs_are_those_writing_its_seeds_files():
    assert model_of_output("results/w/models/lex/alibi/seed1.pt", "lex") == ("alibi", 1)
    assert model_of_output("results/w/eval/receptive-field/arxiv/window-40/seed2/erf.json",
                           "receptive-field") == ("arxiv/window-40", 2)
    assert model_of_output("results/w/models/segmented/pretrained/gpt2.pt", "segmented") is None
    assert model_of_output("resources/debian/x/SOURCE.json", "lex") is None
    assert model_seed_seconds(job_spans(LOG), "lex") == {"alibi": {1: 1290.0}}


def _record(claim, needed, n, models, decides="holds", unit="seed"):
    return {"id": claim, "verdict": "inconclusive",
            "power": {"decides": decides, "needed": needed, "n": n, "unit": unit, "models": models}}


def test_the_rule_by_hand():
    """Two models at 1,800 s a seed: one more seed of both is 1 job-hour (affordable); three more of
    both 3 job-hours (at the budget, affordable alone), but with the first in the part it passes
    it and waits; a claim no seed count decides is not run."""
    measured = {"lex": {"a": {1: 1800.0, 2: 1800.0}, "b": {1: 1800.0}, "c": {1: 3600.0}}}
    claims = {"lex": {"claims": [_record("cheap", 4, 3, ["a", "b"]), _record("dear", 6, 3, ["a", "c"]),
                                 _record("never", None, 3, ["a"]),
                                 {"id": "held", "verdict": "holds"}]}}
    assert BUDGET_JOB_HOURS == pytest.approx(3.0)
    got = {e["id"]: e for e in plan(claims, measured)["claims"]}
    assert got["cheap"]["job_hours"] == pytest.approx(1.0) and got["cheap"]["run"]
    assert got["dear"]["job_hours"] == pytest.approx(3 * 1.5) and not got["dear"]["affordable"]
    assert not got["never"]["affordable"] and "no number of seeds" in got["never"]["why"]
    assert "held" not in got
    assert power_seeds(list(got.values())) == {"lex": {"a": 4, "b": 4}}
    measured["lex"]["c"] = {1: 1800.0}
    both = {e["id"]: e for e in plan(claims, measured)["claims"]}
    assert both["dear"]["affordable"] and not both["dear"]["run"] and "waits for a later part" in both["dear"]["why"]


PARENT_LOG = """\
[Fri Nov 27 07:19:37 2026]
localrule segmented_pretrain:
    output: results/w/models/segmented/pretrained/gpt2.pt
    jobid: 3
[Fri Nov 27 07:37:37 2026]
Finished jobid: 3 (Rule: segmented_pretrain)
"""


def test_a_seedless_parent_is_priced_once_per_model_a_part_trains():
    """A segmented model's pretrained parent (1,080 s here) is trained again by a part run from a
    clean checkout: once per model, however many claims or seeds of it the part runs."""
    parents = parent_seconds(job_spans(PARENT_LOG), "segmented")
    assert parents == {"gpt2": 1080.0} and parent_seconds(job_spans(PARENT_LOG), "lex") == {}
    measured = {"segmented": {"gpt2": {1: 360.0}}}
    claims = {"segmented": {"claims": [_record("one", 4, 3, ["gpt2"]), _record("two", 5, 3, ["gpt2"])]}}
    got = plan(claims, measured, {"segmented": parents})
    by_id = {e["id"]: e for e in got["claims"]}
    assert by_id["one"]["job_hours"] == pytest.approx(0.1 + 0.3) and by_id["two"]["job_hours"] == pytest.approx(0.2 + 0.3)
    assert got["part_job_hours"]["segmented"] == pytest.approx(0.2 + 0.3)  # the parent once, the most seeds
    assert "seedless parent" in markdown({"preset": "w", "planned": {}, **got})
    assert plan(claims, measured)["part_job_hours"]["segmented"] == pytest.approx(0.2)  # no parents measured


def test_a_plan_written_before_parents_were_counted_renders_as_committed():
    committed = read_json(ROOT / "results/workstation/power/plan.json")
    assert markdown(committed) == (ROOT / "results/workstation/power/plan.md").read_text(encoding="utf-8")


def test_a_paper_that_cannot_add_seeds_to_one_model_is_listed_not_run(monkeypatch):
    import lenex.pipeline.power_plan as power_plan

    monkeypatch.setitem(power_plan.NOT_BUILT, "other", "its seeds are not per model")
    entry = claim_entry("other", _record("s", 4, 3, ["gpt2"]), {"gpt2": {1: 60.0}})
    assert entry["affordable"] and not entry["run"] and entry["why"] == "affordable, not run: its seeds are not per model"
    assert claim_entry("segmented", _record("s", 4, 3, ["gpt2"]), {"gpt2": {1: 60.0}})["run"]


def test_the_workstation_preset_runs_exactly_the_seeds_its_committed_plan_names():
    """The preset's power_seeds are the plan's, never edited apart from it; a paper's seeds go into
    the preset when its power part starts (the plan may name a part not started yet)."""
    committed = read_json(ROOT / "results/workstation/power/plan.json")
    preset = yaml.safe_load((ROOT / "config/presets/workstation.yaml").read_text(encoding="utf-8"))
    in_preset = {paper: view["experiment"]["power_seeds"] for paper, view in preset["papers"].items()
                 if (view.get("experiment") or {}).get("power_seeds")}
    assert in_preset and in_preset == {p: s for p, s in committed["power_seeds"].items() if p in in_preset}


def test_planning_one_paper_keeps_every_other_papers_rows_as_decided():
    from lenex.pipeline.power_plan import merged

    previous = {"revision": "r1", "written": "d1", "power_seeds": {"lex": {"a": 4}}, "part_job_hours": {"lex": 1.0},
                "claims": [{"paper": "lex", "id": "x"}, {"paper": "rf", "id": "y", "why": "not built"}]}
    fresh = {"rule": {}, "claims": [{"paper": "rf", "id": "y", "why": "run"}],
             "power_seeds": {"rf": {"arxiv/w": 5}}, "part_job_hours": {"rf": 0.5}}
    got = merged(previous, fresh, ["rf"], {"revision": "r2", "written": "d2"})
    assert [(e["paper"], e.get("why")) for e in got["claims"]] == [("lex", None), ("rf", "run")]
    assert got["power_seeds"] == {"lex": {"a": 4}, "rf": {"arxiv/w": 5}}
    assert got["planned"] == {"lex": {"revision": "r1", "written": "d1"}, "rf": {"revision": "r2", "written": "d2"}}
    first = merged(None, fresh, [], {"revision": "r0", "written": "d0"})
    assert first["planned"] == {"rf": {"revision": "r0", "written": "d0"}}


def test_each_paper_gets_one_power_round():
    """A planned paper is never planned again (optional stopping); a paper not yet planned may be."""
    previous = {"planned": {"lex": {"revision": "b5b7087", "written": "2026-11-29"}}}
    assert refused_replan(None, []) is None
    assert refused_replan(previous, ["segmented"]) is None
    assert "lex's power round was planned at b5b7087" in refused_replan(previous, ["segmented", "lex"])
    assert "optional stopping" in refused_replan(previous, [])
    committed = read_json(ROOT / "results/workstation/power/plan.json")
    assert set(committed["planned"]) == {"lex", "receptive-field", "segmented"}  # each paper's one round
