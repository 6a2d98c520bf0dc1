"""lenex.claims.scale: a contradicted claim that names its phenomena is untestable at this scale
only with a quoted point that shows a phenomenon beyond the run's budget or shape (hand-made
points); a phenomenon the study shows within the run's scale, or never at any budget it ran, leaves
the contradiction standing (with those budgets). Every phenomenon the claims files name is one the
committed study ran, and every claim's scale multiples are those its check reads."""
import json
import re

import pytest
import yaml

from lenex.claims.evaluate import evaluate_claim, load_claims
from lenex.claims.render import main as claims_main
from lenex.claims.scale import Budget, first_showing, load_points, scale_note, study_points
from test_claims import PAPERS, SCHEMA, _tables
from test_workflow import REPO


def _point(phenomenon, tokens, ratio8, tokenizer="gpt2", shape="2x64", params=1000):
    return {"key": f"{phenomenon}/{tokenizer}/{shape}/{tokens}", "phenomenon": phenomenon, "tokens_seen": tokens,
            "tokenizer": tokenizer, "shape": shape, "params": params, "ratio": {"1": 1.0, "4": 1.0, "8": ratio8}}


POINTS = (_point("rope-blowup", 1_000, 1.10), _point("rope-blowup", 4_000, 1.40),
          _point("rope-blowup", 16_000, 1.90), _point("rope-blowup", 2_000, 3.0, tokenizer="bpe-4096"),
          _point("alibi-shift-6", 1_000, 0.99, tokenizer="bpe-4096"),
          _point("alibi-shift-6", 8_000, 0.95, tokenizer="bpe-4096"))
SPEC = {"phenomena": ["rope-blowup"], "multiples": [8], "threshold": "explodes"}


def test_the_first_budget_is_the_fewest_tokens_reaching_the_threshold_with_the_presets_tokenizer():
    first, runs = first_showing(POINTS, "rope-blowup", 8, 1.25, "gpt2")
    assert first["tokens_seen"] == 4_000 and len(runs) == 3  # the bpe-4096 point at 2,000 is not gpt2's
    first, _ = first_showing(POINTS, "rope-blowup", 8, 2.0, "gpt2")
    assert first is None


def test_untestable_only_with_a_quoted_point_that_shows_it_beyond_the_runs_budget():
    note = scale_note(SPEC, Budget(2_000, "gpt2", POINTS))  # gpt2 rope first reaches 1.25 at 4,000 tokens
    assert note.untestable and note.why.startswith("untestable at this scale: ")
    assert ("the scale study sees rope-blowup reach `explodes` (ratio >= 1.25) at 8 x L_tr only beyond this run's "
            "budget or shape: `rope-blowup/gpt2/2x64/4000`: 2x64, gpt2, 4,000 tokens: ppl(8 L_tr) / ppl(L_tr) = 1.400") in note.why
    assert "this preset trains 2,000 tokens per model (gpt2)" in note.why
    assert note.facts() == {"trained_tokens": 2_000, "first_seen_tokens": 4_000, "never_seen_budgets": None,
                            "quoted": {"key": "rope-blowup/gpt2/2x64/4000", "tokens": 4_000, "shape": "2x64",
                                       "tokenizer": "gpt2", "multiple": 8, "ratio": 1.4}}


def test_shown_within_the_runs_budget_the_contradiction_stands():
    note = scale_note(SPEC, Budget(4_000, "gpt2", POINTS))
    assert not note.untestable and note.quoted is None
    assert note.why.startswith("contradicted within the scale at which the study shows its phenomenon: ")
    assert note.facts()["first_seen_tokens"] == 4_000


@pytest.mark.parametrize("tokens", [500, 8_000, 16_000])
def test_never_seen_at_any_budget_is_contradicted_at_every_budget_tried(tokens):
    spec = {"phenomena": ["alibi-shift-6"], "multiples": [8], "threshold": "explodes"}  # 0.99, 0.95: never
    note = scale_note(spec, Budget(tokens, "bpe-4096", POINTS))
    assert not note.untestable and note.first_seen_tokens is None
    assert note.why.startswith("contradicted at every budget tried: the scale study never sees alibi-shift-6 reach "
                               "`explodes` (ratio >= 1.25) at 8 x L_tr at any budget it ran (1,000, 8,000 tokens)")
    assert note.facts()["never_seen_budgets"] == [1_000, 8_000]


def test_with_two_phenomena_one_shown_only_beyond_is_enough():
    spec = {"phenomena": ["rope-blowup", "alibi-shift-6"], "multiples": [8], "threshold": "explodes"}
    note = scale_note(spec, Budget(2_000, "gpt2", POINTS))  # rope beyond 2,000; alibi-shift-6 never
    assert note.untestable and note.first_seen_tokens is None and note.never_seen_budgets == (1_000, 8_000)
    assert note.quoted["key"] == "rope-blowup/gpt2/2x64/4000"
    note = scale_note(spec, Budget(6_000, "gpt2", POINTS))  # rope within 6,000: no excuse left
    assert not note.untestable and note.why.startswith("contradicted within the scale")


def test_every_tokenizers_points_speak_and_a_quote_prefers_the_presets():
    gpt2 = (_point("rope-blowup", 1_000, 1.1), _point("rope-blowup", 8_000, 1.2))  # never 1.25
    bpe_late = (_point("rope-blowup", 16_000, 2.0, tokenizer="bpe-4096"),)
    note = scale_note(SPEC, Budget(4_000, "gpt2", gpt2 + bpe_late))  # shown, with another tokenizer, beyond 4,000
    assert note.untestable and note.quoted["key"] == "rope-blowup/bpe-4096/2x64/16000"
    bpe_early = (_point("rope-blowup", 2_000, 1.3, tokenizer="bpe-4096"),)  # shown within 4,000 tokens
    assert not scale_note(SPEC, Budget(4_000, "gpt2", gpt2 + bpe_late + bpe_early)).untestable
    both = gpt2 + bpe_late + (_point("rope-blowup", 32_000, 1.5),)
    assert scale_note(SPEC, Budget(4_000, "gpt2", both)).quoted["key"] == "rope-blowup/gpt2/2x64/32000"
    never = scale_note(SPEC, Budget(4_000, "gpt2", gpt2))
    assert not never.untestable and never.never_seen_budgets == (1_000, 8_000)


def test_the_first_budget_of_several_phenomena_is_the_latest_of_theirs():
    points = POINTS + (_point("sinusoidal-blowup", 500, 1.3), _point("sinusoidal-blowup", 9_000, 2.0))
    spec = {"phenomena": ["sinusoidal-blowup", "rope-blowup"], "multiples": [8], "threshold": "explodes"}
    assert scale_note(spec, Budget(2_000, "gpt2", points)).first_seen_tokens == 4_000


def test_every_multiple_is_read_and_one_beyond_the_studys_at_its_largest_below():
    points = tuple(p | {"ratio": {"1": 1.0, "2": 1.0, "4": 1.3, "8": 1.0}} for p in POINTS[:1])  # shows at 4 only
    note = scale_note({**SPEC, "multiples": [2, 4, 8]}, Budget(500, "gpt2", points))
    assert note.untestable and note.quoted["multiple"] == 4 and "at 2, 4, 8 x L_tr" in note.why
    assert not scale_note({**SPEC, "multiples": [8]}, Budget(500, "gpt2", points)).untestable  # 8 alone: never
    note = scale_note({**SPEC, "multiples": [16]}, Budget(2_000, "gpt2", POINTS))
    assert note.untestable and "at 16 (read at the study's 8) x L_tr" in note.why and note.quoted["multiple"] == 8


def test_a_larger_shape_that_shows_it_is_positive_evidence():
    points = POINTS + (_point("rope-blowup", 2_000, 1.30, shape="8x64"),)
    # ours: 3,000 tokens at 2x64; gpt2 2x64 shows from 4,000 (beyond), 8x64 at 2,000 (a larger shape)
    note = scale_note(SPEC, Budget(3_000, "gpt2", points, shape="2x64"))
    assert note.untestable and note.quoted["key"] == "rope-blowup/gpt2/8x64/2000"
    # ours at 8x64: the 8x64 point at 2,000 tokens is within our scale, the failure stands
    note = scale_note(SPEC, Budget(3_000, "gpt2", points, shape="8x64"))
    assert not note.untestable and "within this run's scale: `rope-blowup/gpt2/8x64/2000`" in note.why
    with pytest.raises(ValueError, match="a shape is <layers>x<width>, got 'wide'"):
        scale_note(SPEC, Budget(3_000, "gpt2", points, shape="wide"))


def test_a_claim_that_names_its_variants_is_judged_at_their_budget():
    budget = Budget(1_000, "gpt2", POINTS, {"shallow": {"tokens": 1_000, "shape": "2x64"},
                                            "deep": {"tokens": 4_000, "shape": "2x64"}})
    note = scale_note(SPEC, budget)  # the paper's smallest: rope shows only beyond 1,000
    assert note.untestable and "this preset trains 1,000 tokens per model (gpt2)" in note.why
    note = scale_note({**SPEC, "variants": ["deep"]}, budget)
    assert not note.untestable and note.why.endswith("the models it reads (deep) train 4,000 tokens each at 2x64 (gpt2)")
    assert note.trained_tokens == 4_000
    assert scale_note({**SPEC, "variants": ["deep", "shallow"]}, budget).untestable  # the fewest of theirs
    with pytest.raises(ValueError, match="scale.variants names 'deeep', not a variant of this paper; known: deep, shallow"):
        scale_note({**SPEC, "variants": ["deeep"]}, budget)


def test_the_last_token_protocol_reads_the_points_scored_with_it():
    # The LEX protocol never sees RoPE explode at 2 x L_tr here; the last-token one does at 4,000.
    points = (_point("rope-blowup", 1_000, 1.0) | {"last_token": {"ratio": {"1": 1.0, "8": 1.10}}},
              _point("rope-blowup", 4_000, 1.0) | {"last_token": {"ratio": {"1": 1.0, "8": 1.60}}},
              _point("rope-blowup", 16_000, 1.0))  # scored with the LEX protocol only
    first, runs = first_showing(points, "rope-blowup", 8, 1.25, "gpt2", protocol="last-token")
    assert first["tokens_seen"] == 4_000 and len(runs) == 2
    assert first_showing(points, "rope-blowup", 8, 1.25, "gpt2")[0] is None
    note = scale_note({**SPEC, "protocol": "last-token"}, Budget(2_000, "gpt2", points))
    assert note.untestable and "ppl(8 L_tr) / ppl(L_tr) (the last-token protocol) = 1.600" in note.why
    assert note.quoted["ratio"] == 1.60
    # A multiple the study never scored with the claim's protocol is no evidence: said, never guessed.
    unscored = scale_note({**SPEC, "phenomena": ["alibi"], "protocol": "last-token"},
                          Budget(2_000, "gpt2", points + (_point("alibi", 1_000, 1.0),)))
    assert not unscored.untestable and "8 (not measured by the study)" in unscored.why
    with pytest.raises(ValueError, match="unknown protocol 'sliding'"):
        first_showing(points, "rope-blowup", 8, 1.25, "gpt2", protocol="sliding")


def test_a_phenomenon_the_study_never_ran_is_an_error_naming_it():
    with pytest.raises(ValueError, match="no point of 'windowed-w60' at 8 x L_tr"):
        first_showing(POINTS, "windowed-w60", 8, 1.25, "gpt2")


def test_the_budget_comes_from_the_rules_json():
    budget = Budget.from_dict({"tokens": 5, "shape": "8x64", "by_variant": {"a": {"tokens": 9, "shape": "2x64"}}},
                              "bpe-4096", POINTS)
    assert (budget.tokens, budget.shape, budget.for_variants(["a"])[:2]) == (5, "8x64", (9, {"2x64"}))


def _seeded_tables():
    """Table 2 with seeded cells: lex at 2x is clearly above lex at 1x (ours), below on the paper."""
    seeds = lambda c: {s: c * (1 + 0.002 * i) for i, s in enumerate("123")}  # noqa: E731
    def cell(method, multiple, paper, centre):
        return {"dataset": "pg22", "method": method, "variant": method, "multiple": multiple, "paper": paper,
                "ours": centre, "status": "ok", "paper_mark": None, "ours_mark": None, "ours_seeds": seeds(centre)}
    return {"2": {"paper": "lex", "table": "2", "extra": {},
                  "cells": [cell("lex", 1, 26.6, 20.0), cell("lex", 2, 25.5, 24.0),
                            cell("rope", 1, 26.0, 20.0), cell("rope", 2, 69.0, 80.0)]}}


def test_evaluate_claim_asks_the_study_only_of_a_contradicted_claim():
    contradicted = {"id": "f", "statement": "rope explodes", "source": "T2", "scale": SPEC,
                    "check": {"less": ["t2/pg22/lex@2", "t2/pg22/lex@1"]}}  # paper 25.5 < 26.6; ours 24 > 20
    holding = dict(contradicted, id="h", check={"ratio_at_least": ["t2/pg22/rope@2", "t2/pg22/rope@1", "explodes"]})
    low = Budget(2_000, "gpt2", POINTS)
    record = evaluate_claim(contradicted, _seeded_tables(), low)
    assert record["on_paper"] is True and record["verdict"] == "untestable" and record["on_ours"] is None
    assert record["outcome"] == "contradicted" and "untestable at this scale" in record["evidence"]
    assert record["scale"]["quoted"]["tokens"] == 4_000 and record["scale"]["first_seen_tokens"] == 4_000
    record = evaluate_claim(contradicted, _seeded_tables(), Budget(4_000, "gpt2", POINTS))
    assert record["verdict"] == "contradicted" and record["on_ours"] is False
    assert evaluate_claim(contradicted, _seeded_tables())["verdict"] == "contradicted"  # no budget: no study note
    record = evaluate_claim(holding, _seeded_tables(), low)
    assert record["verdict"] == "holds" and "scale study" not in record["evidence"] and "scale" not in record


def test_load_points_names_the_bad_line(tmp_path):
    path = tmp_path / "points.jsonl"
    path.write_text(json.dumps(POINTS[0]) + "\n\n{not json\n")
    with pytest.raises(ValueError, match=r"points.jsonl:3: not valid JSON"):
        load_points(path)


def test_the_cli_wants_the_scale_arguments_together(tmp_path, capsys):
    cells = tmp_path / "t2.cells.json"
    cells.write_text(json.dumps(_tables()["2"]))
    with pytest.raises(SystemExit):
        claims_main(["paper", "--claims", str(REPO / "config/claims/lex.yaml"), "--preset", "tiny",
                     "--cells", str(cells), "--out-md", str(tmp_path / "c.md"), "--out-json", str(tmp_path / "c.json"),
                     "--budget", '{"tokens": 100}'])
    assert "go together" in capsys.readouterr().err


@pytest.mark.parametrize("paper", PAPERS)
def test_every_phenomenon_a_claim_names_is_in_the_committed_study(paper):
    study = yaml.safe_load((REPO / "config/scale-study.yaml").read_text())
    points = load_points(REPO / "results/scale-study/points.jsonl")
    claims = load_claims(REPO / "config/claims" / f"{paper}.yaml", SCHEMA)
    named = [(c["id"], p, m, c["scale"].get("protocol", "lex")) for c in claims["claims"]
             if c.get("scale") for p in c["scale"]["phenomena"] for m in c["scale"]["multiples"]]
    assert named, f"{paper}: no claim names a scale-study phenomenon"
    variants = yaml.safe_load((REPO / "config/experiments" / f"{paper}.yaml").read_text())["variants"]
    for claim in claims["claims"]:
        assert set(claim.get("scale", {}).get("variants", [])) <= set(variants), claim["id"]
    readable = {}
    for claim, phenomenon, multiple, protocol in named:
        assert phenomenon in study["phenomena"], (claim, phenomenon)
        assert protocol in study["phenomena"][phenomenon].get("protocols", ["lex"]), (claim, phenomenon, protocol)
        try:  # a point scored with the claim's protocol at the multiple or below it
            study_points(points, phenomenon, multiple, protocol)
            readable[claim, phenomenon] = True
        except ValueError:
            readable.setdefault((claim, phenomenon), False)
    # every phenomenon a claim names speaks at one multiple at least (the others are said unmeasured)
    assert all(readable.values()), [key for key, ok in readable.items() if not ok]


# The study measures windows, shifted (Δ = 6) and equal (h = 6, 8) slopes at 4 and 8 L_tr only, and
# the lookup cannot read a multiple below a phenomenon's smallest: the receptive-field claims that read
# those rows at 2 L_tr list 4, 8, 16 (docs/claims-coverage.md, "What the engine or the pipeline lacks").
@pytest.mark.parametrize("paper", ["lex", "receptive-field", "segmented"])
def test_a_claims_scale_multiples_are_the_multiples_its_check_reads(paper):
    """A claim is looked up at every multiple of L_tr its check reads beyond L_tr, and only those:
    never at the one multiple that decides its label."""
    for claim in load_claims(REPO / "config/claims" / f"{paper}.yaml", SCHEMA)["claims"]:
        if claim.get("scale"):
            read = {float(m) for ref in re.findall(r"@([0-9.,]+)", str(claim["check"])) for m in ref.split(",")}
            assert set(map(float, claim["scale"]["multiples"])) == read - {1.0}, (claim["id"], sorted(read))


def test_the_studys_shape_names_are_its_models_layers_and_width():
    for point in load_points(REPO / "results/scale-study/points.jsonl"):
        config = point["model_config"]
        assert point["shape"] == f"{config['n_layer']}x{config['d_model']}", point["key"]


def test_a_study_point_speaks_only_for_models_of_its_own_scheme():
    from lenex.claims.scale import same_scheme
    from lenex.experiment.presets import SCHEME_FIELDS
    rope = {"position": "rope", "position_options": {}, "mask": "causal", "mask_options": {}, "train_length": 256}
    point = {"model_config": {**rope, "n_layer": 4, "position_options": {}}}
    assert same_scheme(point, [rope]) and same_scheme(point, [])
    assert not same_scheme(point, [{**rope, "train_length": 64}])  # RoPE at another L_tr is another model
    alibi = {**rope, "position": "alibi", "position_options": {"slope_scale": 4.0}}
    assert not same_scheme({"model_config": {**alibi, "position_options": {}}}, [alibi])  # other slopes
    assert same_scheme({"model_config": alibi}, [rope, alibi])
    assert set(rope) == set(SCHEME_FIELDS)


@pytest.mark.parametrize("paper", ["lex", "receptive-field", "segmented"])
def test_every_scale_claim_names_the_variants_whose_scheme_the_study_must_match(paper):
    claims = yaml.safe_load((REPO / "config" / "claims" / f"{paper}.yaml").read_text())["claims"]
    for claim in claims:
        if claim.get("scale"):
            assert claim["scale"].get("variants"), claim["id"]


def test_a_phenomenon_with_no_point_of_the_models_scheme_is_never_seen_with_no_budget():
    from lenex.claims.scale import find
    point = {"phenomenon": "rope", "model_config": {"position": "rope", "train_length": 64}, "shape": "4x128",
             "tokenizer": "bpe-4096", "tokens_seen": 10, "params": 1, "ratio": {"1": 1.0, "2": 3.0}}
    scheme = {"position": "rope", "position_options": {}, "mask": None, "mask_options": {}, "train_length": 256}
    finding = find([point], "rope", [2], 1.25, "explodes", "bpe-4096", 100, {"4x128"}, schemes=[scheme])
    assert finding.status == "never" and finding.budgets == () and "no point of rope" in finding.why
    assert find([point], "rope", [2], 1.25, "explodes", "bpe-4096", 5, {"4x128"}).status == "beyond"
