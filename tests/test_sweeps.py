"""Emergence sweeps (issue 49): the config, the points, the cost model, the parts, the rules'
inputs and the reading of recorded points, on small synthetic inputs."""
import copy
import json
import math

import pytest

from corpus_fixture import make_corpus
from lenex.files import read_json
from lenex.scale_study import emergence_report as er
from lenex.scale_study.emergence import Crossing, fit_trend
from lenex.scale_study import sweep_rules, sweep_run
from lenex.scale_study.studies import sweep_point_spec
from lenex.scale_study.study import point_settings
from lenex.training import train as trainer
from lenex.scale_study import sweeps as sw


@pytest.fixture(scope="module")
def config():
    return sw.load_sweeps()


def test_committed_sweeps_vary_one_variable_with_three_seeds(config):
    assert len(config["seeds"]) >= 3
    for name, sweep in config["sweeps"].items():
        points = sw.sweep_points(config, name)
        assert len(points) == len(sw.sweep_values(sweep)) * len(sweep["models"]) * len(config["seeds"])
        fixed = {k for k in ("train_tokens", "corpus") if k != sweep["variable"]["name"]}
        for field in fixed:  # everything but the variable is the setting's
            assert {p[field] for p in points} == {config["settings"][sweep["setting"]][field]}, (name, field)


def test_check_names_what_is_wrong(config):
    claims, corpora = sw.claim_ids(), sw.corpus_names(config)
    bad = copy.deepcopy(config)
    bad["sweeps"]["lex-budget"]["effects"][0]["claim"] = "no-such-claim"
    with pytest.raises(ValueError, match="effects/0/claim: 'no-such-claim'"):
        sw.check_sweeps(bad, claims, corpora)
    bad = copy.deepcopy(config)
    bad["sweeps"]["lex-budget"]["effects"][0]["numerator"] = 16
    with pytest.raises(ValueError, match="numerator: 16 is not one of the setting's multiples"):
        sw.check_sweeps(bad, claims, corpora)


def test_variable_checks():
    with pytest.raises(ValueError, match="each twice the one before"):
        sw.check_variable({"name": "train_tokens", "values": [1, 2, 4, 16]}, set(), "v")
    with pytest.raises(ValueError, match="at least four"):
        sw.check_variable({"name": "train_tokens", "values": [1, 2, 4]}, set(), "v")
    with pytest.raises(ValueError, match="needs head_dim"):
        sw.check_variable({"name": "n_head", "values": [1, 2]}, set(), "v")
    with pytest.raises(ValueError, match="'books' is not a corpus"):
        sw.check_variable({"name": "corpus", "values": ["pg22", "books"]}, {"pg22"}, "v")


def test_paper_effect_from_the_printed_cells():
    cells = {"paper": "lex", "table": 2, "dataset": "pg22", "method": "alibi", "numerator": 8192, "denominator": 4096}
    assert sw.paper_cells_effect(cells) == pytest.approx(math.log(32.8 / 28.46))
    with pytest.raises(ValueError, match="prints no alibi at 9999"):
        sw.paper_cells_effect({**cells, "numerator": 9999})


def test_heads_keep_the_head_dimension_and_the_ff_ratio(config):
    sweep = {"setting": "lex", "variable": {"name": "n_head", "values": [8], "head_dim": 32}}
    model = sw.point_model(config, sweep, "lex-alibi", 8)
    assert (model["n_head"], model["d_model"], model["d_ff"]) == (8, 256, 1024)
    assert model["position_options"] == {"slope_scale": 4}


def test_point_ids_round_trip():
    ident = sw.point_id("lex-alibi", "train_tokens", 4194304, 2)
    assert sw.parse_point_id(ident) == {"model": "lex-alibi", "variable": "train_tokens", "value": "4194304", "seed": "2"}
    with pytest.raises(ValueError, match="is not a sweep point"):
        sw.parse_point_id("lex-alibi-4194304")


def test_training_rate_measured_or_scaled_by_weights():
    rates = {(4, 128, 256, "bpe-4096"): 1000.0}
    model = {"n_layer": 4, "d_model": 128, "train_length": 256}
    assert sw.training_rate(model, "bpe-4096", rates) == (1000.0, "measured")
    # 4 x 256: 4096 x 256 + 12 x 4 x 256^2 = 4,194,304 weights a token against 4 x 128's 1,310,720
    rate, basis = sw.training_rate({**model, "d_model": 256}, "bpe-4096", rates)
    assert rate == pytest.approx(312.5) and basis == "scaled from 4x128"
    with pytest.raises(ValueError, match="no scale-study point at L_tr 64"):
        sw.training_rate({**model, "train_length": 64}, "bpe-4096", rates)


def test_eval_tokens_by_hand():
    point = {"model": {"train_length": 10}, "multiples": [1, 2, 4, 8], "protocols": ["lex"]}
    config = {"eval": {"max_tokens": 100}, "last_token": {"segments": 3}}
    assert sw.eval_forward_tokens(point, config) == 400  # 4 lengths x 100
    assert sw.eval_forward_tokens({**point, "protocols": ["lex", "last-token"]}, config) == 400 + 3 * 150


def test_makespan_and_packing_by_hand():
    assert sw.makespan([3, 2, 2, 1], 2) == 4
    seconds = {"a": 3, "b": 2, "c": 2, "d": 1}
    assert sw.pack_parts(seconds, 2, 4) == [["a", "b", "c", "d"]]
    assert sw.pack_parts(seconds, 2, 3) == [["a", "b", "d"], ["c"]]
    with pytest.raises(ValueError, match="point a alone"):
        sw.pack_parts(seconds, 2, 2)


def test_committed_plan_covers_every_point_once_within_the_limit(config):
    plan = read_json(sw.ROOT / sw.OUT / "plan.json")
    cap = config["part_hours"] * 3600 * config["margin"]["value"]
    for name in config["sweeps"]:
        ids = sorted(i for part in plan["sweeps"][name]["parts"].values() for i in part)
        assert ids == sorted(p["id"] for p in sw.sweep_points(config, name)), name
        assert max(plan["sweeps"][name]["part_seconds"].values()) <= cap


def test_rule_inputs(config, tmp_path):
    (tmp_path / "plan.json").write_text(json.dumps({"sweeps": {"s": {"parts": {"p1": ["m__n_head-2__seed1"]}}}}))
    assert sweep_rules.part_inputs("s", "p1", str(tmp_path)) == [f"{tmp_path}/s/points/m__n_head-2__seed1.json"]
    assert sweep_rules.report_inputs("s", str(tmp_path)) == [f"{tmp_path}/s/parts/p1.json"]
    with pytest.raises(ValueError, match="no part 'p9'"):
        sweep_rules.part_inputs("s", "p9", str(tmp_path))
    assert "resources/sotu/SOURCE.json" in sweep_rules.corpus_inputs(config, "pg22", "bpe-4096")
    with pytest.raises(ValueError, match="not gpt2"):
        sweep_rules.corpus_inputs(config, "pg22", "gpt2")
    assert sweep_rules.sweeps_config(sw.ROOT) is sweep_rules.sweeps_config(sw.ROOT)  # read once
    ident = sw.sweep_points(config, "lex-corpus")[-1]["id"]
    assert sweep_rules.point_inputs(config, "lex-corpus", ident) == {
        "model": f"results/scale-study/models/sweeps/lex-corpus/{ident}.pt",
        "data": f"{sw.WORK}/corpora/arxiv/data/bpe-4096/meta.json"}
    spec = sweep_point_spec(f"lex-corpus/{ident}", sw.ROOT)
    point = sw.find_point(config, "lex-corpus", ident)
    assert (spec.output, spec.data_inputs, spec.workdir, spec.train["seed"]) == (
        f"results/scale-study/models/sweeps/lex-corpus/{ident}.pt", (f"{sw.WORK}/corpora/arxiv/data/bpe-4096/meta.json",),
        f"{sw.WORK}/train/lex-corpus__{ident}", point["seed"])
    with pytest.raises(ValueError, match="its models lie at models/sweeps/<sweep>/<point>.pt"):
        sweep_point_spec(ident, sw.ROOT)


def _record(model, value, seed, ppl2, ppl1, length=64):
    return {"phenomenon": model, "value": value, "seed": seed, "train_length": length,
            "ppl": {str(length): ppl1, str(2 * length): ppl2}}


def test_reading_a_budget_sweep_and_a_corpus_sweep():
    effect = {"model": "m", "numerator": 2, "denominator": 1}
    e = math.e
    records = [_record("m", v, s, e ** (0.1 * i + 0.01 * s), 1.0) for i, v in enumerate([1, 2, 4]) for s in (1, 2)]
    records.append(_record("other", 1, 1, 5.0, 1.0))
    by_value = er.seed_effects(records, effect)
    assert by_value[2] == {1: pytest.approx(0.11), 2: pytest.approx(0.12)}
    reading = er.read_effect([1, 2, 4, 8], by_value, paper=0.5, variable="train_tokens")
    assert reading["values"] == [1, 2, 4]  # 8 not measured yet
    # by the rule each seed's own line (slope 0.1 in both), and beside it the old pooled line
    assert reading["trend"].slope.mean == pytest.approx(0.1) and reading["class"] == "grows"
    assert reading["pooled"]["trend"].slope == pytest.approx(0.1) and reading["pooled"]["class"] == "grows"
    # a corpus sweep: the paired difference over the seeds both corpora have
    corpus = er.read_effect(["a", "b"], {"a": {1: 0.1, 2: 0.3}, "b": {1: 0.4, 2: 0.4, 3: 0.9}}, 0.5, "corpus")
    assert corpus["contrast"].mean == pytest.approx(0.2) and corpus["contrast"].seeds == 2
    assert corpus["trend"] is None and corpus["class"] == "no difference resolved"  # differences 0.3 and 0.1: t-interval holds 0
    apart = er.read_effect(["a", "b"], {"a": {1: 0.1, 2: 0.2, 3: 0.3}, "b": {1: 0.6, 2: 0.71, 3: 0.79}}, 0.5, "corpus")
    assert apart["contrast"].low > 0 and apart["class"] == "differs"
    single = er.read_effect(["a", "b"], {"a": {1: 0.1}, "b": {1: 0.4}}, 0.5, "corpus")
    assert single["class"] is None and "one common seed" in single["note"]


def test_scale_study_series_need_three_budgets():
    effect = {"phenomenon": "m", "numerator": 2, "denominator": 1}
    records = [{**_record("m", None, None, 1.1 + t, 1.0), "train_tokens": t, "tokenizer": "bpe", "shape": s}
               for s, budgets in (("2x64", [1, 2, 4]), ("4x128", [1, 2])) for t in budgets]
    series = er.scale_study_series(records, [effect])
    assert [where for _, where, _ in series] == [{"tokenizer": "bpe", "shape": "2x64"}]


# Three seeds whose own lines rise 0.05, 0.10 and 0.15 a doubling from 0 at values 1, 2, 4, 8 (u = 0..3).
# By the rule (each seed alone): mean 0.1, sd 0.05, half-width t(0.975, 2) 0.05 / sqrt 3 = 0.1242, so
# [-0.0242, +0.2242] holds 0: flat. Pooled as 12 independent points: the same slope 0.1, residuals
# +-0.05 u in two seeds, SSE 2 x 0.0025 x 14 = 0.07 (df 10), Sxx 3 x 5 = 15, se sqrt(0.007 / 15) =
# 0.0216, half-width t(0.975, 10) 0.0216 = 0.0481: [+0.052, +0.148], "grows" (the old rule's error).
SPREAD = {v: {s: slope * math.log2(v) for s, slope in ((1, 0.05), (2, 0.10), (3, 0.15))} for v in (1, 2, 4, 8)}


def test_page_from_synthetic_points(tmp_path):
    reading = er.read_effect([1, 2, 4, 8], SPREAD, 0.51, "train_tokens")
    about = {"claim": "claim-x", "source": "sweep s", "subject": "m"}
    er.write_page("t", ["intro"], [("claim-x", "train_tokens", reading, about)], tmp_path / "e.md", tmp_path / "e.png",
                  forecasts="../predictions.md")
    text = (tmp_path / "e.md").read_text()
    assert "interval [-0.0242, +0.2242]: **flat**" in text
    assert "Old rule, replaced after these data were seen (one least-squares line pooling all 12 effects" in text
    assert "interval [+0.0519, +0.1481]: grows." in text
    assert "[predictions.md](../predictions.md)" in text and "≈" not in text  # no crossing drawn here
    assert (tmp_path / "e.png").stat().st_size > 0
    (record,) = json.loads((tmp_path / "e.json").read_text())["effects"]
    assert {k: record[k] for k in about} == about and record["class"] == "flat" and "crossing" not in record
    assert record["trend"]["slope"] == pytest.approx(0.1) and record["trend"]["seeds"] == 3
    assert record["trend"]["high"] == pytest.approx(0.1 + 4.302653 * 0.05 / math.sqrt(3), rel=1e-5)
    assert record["pooled"]["class"] == "grows" and record["pooled"]["trend"]["effects"] == 12
    assert record["pooled"]["trend"]["high"] - 0.1 == pytest.approx(2.228139 * math.sqrt(0.007 / 15), rel=1e-5)
    # the old line reaches 0.51 at u = 5.1 (intercept 0): kept in the record for the old rule's reading
    assert record["pooled"]["crossing"]["value"] == pytest.approx(2 ** 5.1)
    assert record["forecast"] == er.PREDICTIONS
    assert [p["seeds"] for p in record["points"]] == [3, 3, 3, 3] and record["points"][1]["mean"] == pytest.approx(0.1)


def test_one_seed_with_two_values_has_a_slope_but_no_class():
    reading = er.read_effect([1, 2, 4], {1: {1: 0.0, 2: 0.1}, 2: {1: 0.2}}, 0.5, "train_tokens")
    assert reading["pooled"] is not None and reading["class"] is None
    assert reading["trend"].slope.mean == pytest.approx(0.2) and "no interval" in reading["note"]
    apart = er.read_effect([1, 2], {1: {1: 0.0, 2: 0.1}, 2: {3: 0.2}}, 0.5, "train_tokens")
    assert apart["trend"] is None and apart["note"] == "no seed has two values: no per-seed trend"


def test_an_unbounded_crossing_is_recorded_as_none():
    """JSON has no infinity: the old rule's crossing interval open above is written with high = None."""
    pooled = {"class": "grows", "trend": fit_trend([1, 2, 4], [0.0, 0.1, 0.2]), "crossing": Crossing(64.0, 8.0, math.inf)}
    reading = {"trend": None, "pooled": pooled, "values": [], "points": [],
               "class": None, "paper": 1.0, "contrast": None, "note": ""}
    record = er.reading_record({"claim": "c"}, "train_tokens", reading)
    assert record["pooled"]["crossing"] == {"value": 64.0, "low": 8.0, "high": None}


def test_generated_block_replaces_only_itself():
    page = f"# P\nbefore\n{sweep_run.BEGIN}\nold\n{sweep_run.END}\nafter\n"
    assert sweep_run.with_block(page, "NEW") == "# P\nbefore\nNEW\nafter\n"
    with pytest.raises(ValueError, match="needs one"):
        sweep_run.with_block("no markers", "NEW")


def test_docs_block_is_the_committed_plans(config):
    record = read_json(sw.ROOT / sw.OUT / "plan.json")
    assert sweep_run.summary_block(config, record) in sweep_run.DOCS.read_text(encoding="utf-8")


def _tiny_config(tmp_path) -> dict:
    """One budget sweep of a 1 x 16 RoPE model on a made-up corpus (seconds to run)."""
    make_corpus(tmp_path / "corpus")
    corpora = tmp_path / "corpora.yaml"
    corpora.write_text(json.dumps({"corpora": {"tiny": {"source": "text_dir", "path": str(tmp_path / "corpus" / "texts")}}}))
    effect = {"claim": "c", "model": "rope", "numerator": 2, "denominator": 1, "paper": {}}
    return {"seeds": [1, 2, 3], "tokenizer": "bpe-300", "corpora": str(corpora),
            "data": {"seed": 1, "valid_fraction": 0.2, "test_fraction": 0.2},
            "train": {"batch_size": 4, "lr": 0.003, "warmup_fraction": 0.25},
            "eval": {"max_tokens": 64, "batch_tokens": 256}, "last_token": {"segments": 4},
            "settings": {"tiny": {"corpus": "tiny", "train_tokens": 128, "multiples": [1, 2], "protocols": ["lex"],
                                  "model": {"n_layer": 1, "d_model": 16, "n_head": 2, "d_ff": 32, "train_length": 16}}},
            "models": {"rope": {"position": "rope"}},
            "sweeps": {"s": {"setting": "tiny", "models": ["rope"], "effects": [effect],
                             "variable": {"name": "train_tokens", "values": [128, 256, 512, 1024]}}}}


@pytest.mark.slow  # trains and scores a tiny model: several seconds on a shared machine
def test_a_point_runs_once_and_a_part_records_its_points(tmp_path, monkeypatch):
    config, out, work, models = _tiny_config(tmp_path), tmp_path / "sweeps", tmp_path / "work", tmp_path / "models"
    ident = "rope__train_tokens-128__seed2"
    sweep_run.prepare_corpus(config, "tiny", work, "resources")  # rule sweep_corpus
    point = sw.find_point(config, "s", ident)
    model, train = point_settings(point, sw.point_study(config, point))  # rule train, by the point's spec
    files = sw.point_files(point, work, models)
    trainer.main(["--model-config", json.dumps(model), "--train-config", json.dumps(train), "--threads", "1",
                  "--data", str(sw.corpus_folder(config, "tiny", work)), "--out", str(files.model),
                  "--workdir", str(files.workdir), "--device", "cpu"])
    record = sweep_run.score_sweep_point(config, "s", ident, out, work, models, "cpu", "test")
    assert (record["sweep"], record["value"], record["seed"], record["corpus"]) == ("s", 128, 2, "tiny")
    assert record["tokens_seen"] == 128 and set(record["ppl"]) == {"16", "32"}
    assert (work / "corpora" / "tiny" / "data" / "bpe-300" / "meta.json").is_file()

    assert record["training_curve"]["points"][-1]["tokens"] == 128

    def no_scoring(*args, **kwargs):
        raise AssertionError("a recorded point was scored again")

    monkeypatch.setattr("lenex.scale_study.study.score_point", no_scoring)
    assert sweep_run.score_sweep_point(config, "s", ident, out, work, models, "cpu", "test") == record
    (out / "plan.json").write_text(json.dumps({"sweeps": {"s": {"parts": {"p1": [ident]}, "part_seconds": {"p1": 9.0}}}}))
    part = sweep_run.record_part(out, "s", "p1", "test")
    assert part["points"] == [ident] and part["predicted_seconds"] == 9.0
    (out / "plan.json").write_text(json.dumps({"sweeps": {"s": {"parts": {"p1": [ident, "rope__train_tokens-256__seed1"]},
                                                                "part_seconds": {"p1": 9.0}}}}))
    with pytest.raises(ValueError, match="not recorded yet: rope__train_tokens-256__seed1"):
        sweep_run.record_part(out, "s", "p1", "test")


def test_a_sweeps_page_from_synthetic_records(config, tmp_path):
    """rf-shift-budget's effect (last-token ln ppl(2 L_tr) / ppl(L_tr)) rising 0.1 a doubling over
    three seeds: the page reads it as growing and names the crossing; an empty sweep says so."""
    points = sw.sweep_points(config, "rf-shift-budget")
    for p in points:
        e = 0.1 * math.log2(p["value"] / 2097152) + 0.01 * p["seed"]
        record = {"phenomenon": p["phenomenon"], "value": p["value"], "seed": p["seed"], "train_length": 64,
                  "ppl": {"64": 1.0, "128": 1.0}, "last_token": {"ppl": {"64": 10.0, "128": 10.0 * math.exp(e)}}}
        path = tmp_path / "rf-shift-budget" / "points" / f"{p['id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record))
    sweep_run.report_sweep(config, "rf-shift-budget", tmp_path)
    text = (tmp_path / "rf-shift-budget" / "emergence.md").read_text()
    assert "18 points recorded of 18" in text and "slope +0.1000 per doubling" in text and "**grows**" in text
    effects = json.loads((tmp_path / "rf-shift-budget" / "emergence.json").read_text())["effects"]
    assert [(e["claim"], e["source"], e["class"]) for e in effects] == [
        (e["claim"], "sweep rf-shift-budget", "grows") for e in config["sweeps"]["rf-shift-budget"]["effects"]]
    sweep_run.report_sweep(config, "lex-corpus", tmp_path)
    assert "not yet measured" in (tmp_path / "lex-corpus" / "emergence.md").read_text()


def test_an_extension_keeps_the_fixed_parts_and_names_its_own_round(config):
    """Values added to a sweep after its first round ran are packed into parts of their own,
    numbered on; the merged plan keeps the committed parts and seconds point for point, names the
    extension's revision and date, and refuses a recomputation that would move a fixed point."""
    rates = {(8, 64, 64, "bpe-4096"): 20000.0}
    base = {**config, "sweeps": {"rf-shift-budget": {**config["sweeps"]["rf-shift-budget"], "extensions": []}}}
    first = sweep_run.plan_record(base, rates, {"git_rev": "aaa", "date": "2026-01-01"})
    second = sweep_run.plan_record({**config, "sweeps": {"rf-shift-budget": config["sweeps"]["rf-shift-budget"]}},
                                   rates, {"git_rev": "bbb", "date": "2026-02-02"})
    merged = sweep_run.extend_plan(first, second)
    fixed, now = first["sweeps"]["rf-shift-budget"], merged["sweeps"]["rf-shift-budget"]
    assert {p: now["parts"][p] for p in fixed["parts"]} == fixed["parts"]
    added = sorted(set(now["parts"]) - set(fixed["parts"]))
    assert added and all(sw.parse_point_id(i)["value"] in ("33554432", "67108864") for p in added for i in now["parts"][p])
    assert merged["git_rev"] == "aaa" and merged["extensions"] == [
        {"sweep": "rf-shift-budget", "values": [33554432, 67108864], "parts": added, "git_rev": "bbb", "date": "2026-02-02"}]
    assert sweep_run.extend_plan(merged, second) == merged  # planning again adds nothing
    moved = json.loads(json.dumps(first))
    moved["sweeps"]["rf-shift-budget"]["parts"]["p1"] = moved["sweeps"]["rf-shift-budget"]["parts"]["p1"][1:]
    with pytest.raises(ValueError, match="would change part rf-shift-budget/p1"):
        sweep_run.extend_plan(moved, second)


def test_a_value_measured_twice_across_rounds_is_refused(config):
    sweep = config["sweeps"]["rf-shift-budget"]
    twice = {**config, "sweeps": {"rf-shift-budget": {**sweep, "extensions": [{"values": [16777216], "why": "x" * 20}]}}}
    with pytest.raises(ValueError, match="measured twice"):
        sw.check_sweeps(twice, sw.claim_ids(), sw.corpus_names(config))
