"""lenex.claims.scale: a failing claim that names its phenomena is untestable at a preset whose
budget is below the one at which the scale study first sees them (hand-made points), stands as a
failure at or above it, and every phenomenon the claims files name is one the committed study ran."""
import json
import re

import pytest
import yaml

from lenex.claims.evaluate import evaluate_claim, load_claims
from lenex.claims.render import main as claims_main
from lenex.claims.scale import Budget, first_showing, load_points, scale_note
from test_claims import PAPERS, SCHEMA, _tables
from test_workflow import REPO


def _point(phenomenon, tokens, ratio8, tokenizer="gpt2", shape="2x64", params=1000):
    return {"phenomenon": phenomenon, "tokens_seen": tokens, "tokenizer": tokenizer, "shape": shape,
            "params": params, "ratio": {"1": 1.0, "4": 1.0, "8": ratio8}}


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


def test_below_the_first_budget_the_claim_is_untestable_with_the_studys_numbers():
    note = scale_note(SPEC, Budget(2_000, "gpt2", POINTS))
    assert note.untestable
    assert note.why.startswith("untestable at this scale: ")
    assert "2x64, gpt2, 4,000 tokens: ppl(8 L_tr) / ppl(L_tr) = 1.400" in note.why
    assert "this preset trains 2,000 tokens per model (gpt2)" in note.why
    assert note.facts() == {"trained_tokens": 2_000, "first_seen_tokens": 4_000}


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
    with pytest.raises(ValueError, match="no point of 'alibi' at 8 x L_tr scored with the last-token protocol"):
        first_showing(points + (_point("alibi", 1_000, 1.0),), "alibi", 8, 1.25, "gpt2", protocol="last-token")
    with pytest.raises(ValueError, match="unknown protocol 'sliding'"):
        first_showing(points, "rope-blowup", 8, 1.25, "gpt2", protocol="sliding")


def test_at_the_first_budget_the_failure_stands():
    note = scale_note(SPEC, Budget(4_000, "gpt2", POINTS))
    assert not note.untestable and note.why.startswith("a failure at a budget the study sees it at")
    assert note.facts() == {"trained_tokens": 4_000, "first_seen_tokens": 4_000}


def test_a_phenomenon_never_seen_is_untestable_up_to_the_studys_largest_budget_only():
    spec = {"phenomena": ["alibi-shift-6"], "multiples": [8], "threshold": "explodes"}
    note = scale_note(spec, Budget(8_000, "gpt2", POINTS))  # no gpt2 point: the bpe ones speak
    assert note.untestable and note.first_seen_tokens is None
    assert "never sees alibi-shift-6 reach `explodes`" in note.why
    assert "at its largest budget, 2x64, bpe-4096, 8,000 tokens: ppl(8 L_tr) / ppl(L_tr) = 0.950" in note.why
    assert not scale_note(spec, Budget(8_001, "gpt2", POINTS)).untestable


def test_a_phenomenon_never_seen_up_to_beyond_the_studys_budgets_is_a_failure_said_so():
    spec = {"phenomena": ["alibi-shift-6"], "multiples": [8], "threshold": "rises"}  # ratios 0.99, 0.95: never >= 1.02
    note = scale_note(spec, Budget(16_000, "bpe-4096", POINTS))
    assert not note.untestable and note.first_seen_tokens is None
    assert note.why.startswith("a failure beyond every budget the study ran, none of which shows it: ")
    assert "never sees alibi-shift-6 reach `rises` (ratio >= 1.02)" in note.why


def test_with_two_phenomena_one_below_its_first_budget_is_enough():
    spec = {"phenomena": ["rope-blowup", "alibi-shift-6"], "multiples": [8], "threshold": "explodes"}
    note = scale_note(spec, Budget(6_000, "gpt2", POINTS))  # rope shows from 4,000; alibi-shift-6 not up to 8,000
    assert note.untestable and note.first_seen_tokens is None  # one never seen: no budget shows both
    assert not scale_note(spec, Budget(20_000, "gpt2", POINTS)).untestable


def test_the_first_budget_of_several_phenomena_is_the_latest_of_theirs():
    points = POINTS + (_point("sinusoidal-blowup", 500, 1.3), _point("sinusoidal-blowup", 9_000, 2.0))
    spec = {"phenomena": ["sinusoidal-blowup", "rope-blowup"], "multiples": [8], "threshold": "explodes"}
    assert scale_note(spec, Budget(2_000, "gpt2", points)).first_seen_tokens == 4_000


def test_a_phenomenon_the_study_never_ran_is_an_error_naming_it():
    with pytest.raises(ValueError, match="no point of 'windowed-w60' at 8 x L_tr"):
        first_showing(POINTS, "windowed-w60", 8, 1.25, "gpt2")


def test_a_claim_that_names_its_variants_is_judged_at_their_budget():
    budget = Budget(1_000, "gpt2", POINTS, {"shallow": {"tokens": 1_000, "shape": "2x64"},
                                            "deep": {"tokens": 4_000, "shape": "2x64"}})
    note = scale_note(SPEC, budget)  # the paper's smallest: below rope's first 4,000
    assert note.untestable and "this preset trains 1,000 tokens per model (gpt2)" in note.why
    note = scale_note({**SPEC, "variants": ["deep"]}, budget)
    assert not note.untestable and note.why.endswith("the models it reads (deep) train 4,000 tokens each at 2x64 (gpt2)")
    assert note.trained_tokens == 4_000
    assert scale_note({**SPEC, "variants": ["deep", "shallow"]}, budget).untestable  # the fewest of theirs
    with pytest.raises(ValueError, match="scale.variants names 'deeep', not a variant of this paper; known: deep, shallow"):
        scale_note({**SPEC, "variants": ["deeep"]}, budget)


def test_the_study_is_read_at_the_shapes_of_the_models_the_claim_reads():
    points = POINTS + (_point("rope-blowup", 2_000, 1.30, shape="8x64"), _point("rope-blowup", 64_000, 1.1, shape="4x128"))
    first, runs = first_showing(points, "rope-blowup", 8, 1.25, "gpt2", {"8x64"})
    assert first["tokens_seen"] == 2_000 and len(runs) == 1  # the 2x64 points (first at 4,000) do not speak
    _, runs = first_showing(points, "rope-blowup", 8, 1.25, "gpt2", {"8x64", "4x128"})
    assert len(runs) == 2  # both shapes' points
    assert len(first_showing(points, "rope-blowup", 8, 1.25, "gpt2", {"12x768"})[1]) == 5  # none there: all
    budget = Budget(3_000, "gpt2", points, shape="8x64")
    note = scale_note(SPEC, budget)  # at 8x64 rope shows from 2,000: a failure, not the budget
    assert not note.untestable and "this preset trains 3,000 tokens per model at 8x64 (gpt2)" in note.why
    deep = scale_note({**SPEC, "variants": ["big"]}, Budget(3_000, "gpt2", points, {"big": {"tokens": 3_000, "shape": "4x128"}}))
    assert deep.untestable and "at its largest budget, 4x128, gpt2, 64,000 tokens" in deep.why  # never there
    wide = scale_note({**SPEC, "variants": ["w"]}, Budget(3_000, "gpt2", points, {"w": {"tokens": 3_000, "shape": "12x768"}}))
    assert "(it has no such point at 12x768; its other shapes speak)" in wide.why


def test_the_budget_comes_from_the_rules_json():
    budget = Budget.from_dict({"tokens": 5, "shape": "8x64", "by_variant": {"a": {"tokens": 9, "shape": "2x64"}}},
                              "bpe-4096", POINTS)
    assert (budget.tokens, budget.shape, budget.for_variants(["a"])[:2]) == (5, "8x64", (9, {"2x64"}))


def test_evaluate_claim_marks_only_a_failing_claim():
    failing = {"id": "f", "statement": "rope explodes", "source": "T2", "scale": SPEC,
               "check": {"less": ["t2/pg22/lex@2", "t2/pg22/lex@1"]}}  # paper 25.5 < 26.6; ours 20.2, 20.0
    holding = dict(failing, id="h", check={"ratio_at_least": ["t2/pg22/rope@2", "t2/pg22/rope@1", "explodes"]})
    low = Budget(2_000, "gpt2", POINTS)
    record = evaluate_claim(failing, _tables(), low)
    assert record["on_paper"] is True and record["on_ours"] is None
    assert "untestable at this scale" in record["evidence"]
    assert record["scale"] == {"trained_tokens": 2_000, "first_seen_tokens": 4_000}
    assert evaluate_claim(failing, _tables(), Budget(4_000, "gpt2", POINTS))["on_ours"] is False
    assert evaluate_claim(failing, _tables())["on_ours"] is False  # no budget: no study note
    record = evaluate_claim(holding, _tables(), low)
    assert record["on_ours"] is True and "scale study" not in record["evidence"] and "scale" not in record


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
    for claim, phenomenon, multiple, protocol in named:
        assert phenomenon in study["phenomena"], (claim, phenomenon)
        assert protocol in study["phenomena"][phenomenon].get("protocols", ["lex"]), (claim, phenomenon, protocol)
        # raises if the study has no such point scored with the claim's protocol
        first_showing(points, phenomenon, multiple, 1.25, "gpt2", protocol=protocol)


@pytest.mark.parametrize("paper", PAPERS)
def test_a_claims_scale_multiple_is_one_it_reads(paper):
    """The study is asked at the multiple of L_tr the claim reads (its smallest beyond L_tr where
    the phenomenon must show), or at the study's largest when the claim reads only farther ones."""
    largest = max(m for p in yaml.safe_load((REPO / "config/scale-study.yaml").read_text())["phenomena"].values()
                  for m in p["multiples"])
    for claim in load_claims(REPO / "config/claims" / f"{paper}.yaml", SCHEMA)["claims"]:
        if claim.get("scale"):
            read = {float(m) for ref in re.findall(r"@([0-9.,]+)", str(claim["check"])) for m in ref.split(",")}
            for multiple in claim["scale"]["multiples"]:
                assert multiple in read or (multiple == largest and min(read - {1.0}) > largest), (claim["id"], read)


def test_the_studys_shape_names_are_its_models_layers_and_width():
    for point in load_points(REPO / "results/scale-study/points.jsonl"):
        config = point["model_config"]
        assert point["shape"] == f"{config['n_layer']}x{config['d_model']}", point["key"]
