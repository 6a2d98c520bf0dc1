"""scripts/gpu/phenomena.sh, the papers' phenomena on one GPU (docs/gpu-phenomena.md): its dry run
trains, scores and judges end to end on the CPU; results.json is written after every model; the
wall-clock guard is recorded honestly; the carried corpus matches its digests; and the committed
predictions are what the script writes from the committed records."""

import hashlib
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts/gpu/phenomena.sh"
CORPUS = REPO / "scripts/gpu/phenomena-corpus"
VERDICTS = {"holds", "contradicted", "inconclusive", "untestable", "by-construction"}


def _module(name: str = "phenomena"):
    """scripts/gpu/phenomena.py (or its predictions module), imported as the script imports them."""
    if str(REPO / "scripts/gpu") not in sys.path:
        sys.path.insert(0, str(REPO / "scripts/gpu"))
    return importlib.import_module(name)


def test_the_carried_corpus_unpacks_to_its_digests_and_travels_small(tmp_path):
    from lenex.data.store import check_corpus, load_split

    carried = sorted(p.name for p in CORPUS.iterdir())
    assert carried == ["SHA256SUMS", "meta.json", "test.u16.xz", "train.u16.xz", "valid.u16.xz"]
    assert sum((CORPUS / n).stat().st_size for n in carried) <= 2 * 2 ** 20  # what travels
    corpus = _module("phenomena").unpack_corpus(CORPUS, tmp_path / "corpus")
    sums = dict(reversed(line.split("  ")) for line in (CORPUS / "SHA256SUMS").read_text().splitlines())
    assert set(sums) == {"meta.json", "train.u16", "valid.u16", "test.u16"}
    for name, digest in sums.items():
        assert hashlib.sha256((corpus / name).read_bytes()).hexdigest() == digest
    meta = check_corpus(corpus)
    assert meta["dtype"] == "uint16" and meta["vocab_size"] == 4096
    test = load_split(corpus, "test")
    # Every test document is whole spans of 8 x L_tr = 512 tokens (the scored protocol's span).
    assert all(len(doc) % 512 == 0 and 0 < len(doc) <= 4096 for doc in test.documents())
    train_ids, test_ids = (set(meta["splits"][s]["doc_ids"]) for s in ("train", "test"))
    assert not train_ids & test_ids
    # A carried file changed after packing is refused before any training.
    broken = tmp_path / "broken"
    shutil.copytree(CORPUS, broken)
    (broken / "SHA256SUMS").write_text((CORPUS / "SHA256SUMS").read_text().replace(sums["test.u16"], "0" * 64))
    with pytest.raises(SystemExit, match="test.u16 does not match its SHA256SUMS"):
        _module("phenomena").unpack_corpus(broken, tmp_path / "again")


def test_the_predictions_file_is_what_the_script_writes():
    assert (REPO / "scripts/gpu/phenomena-predictions.md").read_text() == _module("phenomena_predict").predictions_page()


def test_a_line_per_seed_predicts_and_refuses_beyond_one_doubling():
    module = _module("phenomena_predict")
    # y = 2x + 1 exactly: at x = 3 the line gives 7 with no spread; one doubling past x = 2 is allowed.
    one = module.predict_leaf([("1", [(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)])], 3.0)
    assert one["predicted"] == pytest.approx(7.0) and one["interval"] == pytest.approx([7.0, 7.0])
    assert module.predict_leaf([("1", [(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)])], 3.01)["predicted"] is None
    # Two seeds (lines reaching 7 and 9 at x = 3): mean 8, se = sd / sqrt(2) = 1, half-width t(0.975, 1) = 12.706.
    two = module.predict_leaf([("1", [(0.0, 1.0), (2.0, 5.0)]), ("2", [(0.0, 3.0), (2.0, 7.0)])], 3.0)
    assert two["predicted"] == pytest.approx(8.0)
    assert two["interval"][1] - 8.0 == pytest.approx(12.7062, rel=1e-4)
    assert module.leaf_verdict({"predicted": math.log(2.0), "interval": [math.log(1.6), math.log(2.5)]},
                               "ratio_at_least", 1.55) == "holds"
    assert module.leaf_verdict({"predicted": 0.1, "interval": [0.0, 0.2]}, "ratio_at_least", 1.55) == "contradicted"
    assert module.leaf_verdict({"predicted": 0.1, "interval": [-0.1, 0.2]}, "less", 1.0) == "inconclusive"


def test_the_stage_is_forecast_on_tokens_per_non_embedding_parameter_with_the_papers_point():
    module = _module("phenomena_predict")
    found = module.predictions(362_240)
    # 2 x 64, d_ff 256: 2 (4 x 64^2 + 2 x 64 x 256) = 98,304 non-embedding parameters, 2^23 tokens
    assert found["x_stage"] == pytest.approx(math.log2(2 ** 23 / 98_304))
    assert found["x_old"] == pytest.approx(math.log2(2 ** 23 / 362_240))  # the old rule's, all parameters
    shift = [leaf for leaf in found["leaves"] if leaf["claim"] == "rf-shift-large-explodes"]
    # the paper's models: 12 x 768, d_ff 3072 (84,934,656), 50,000 steps of 32 x 512 tokens
    assert shift and all(leaf["forecast"]["anchor"]["x"] == pytest.approx(math.log2(50_000 * 32 * 512 / 84_934_656))
                         for leaf in shift)
    assert all(leaf["old"]["verdict"] in VERDICTS | {"cannot extrapolate"} for leaf in found["leaves"])
    assert module.base_verdict("inconclusive: the forms disagree") == "inconclusive"
    assert module.base_verdict("holds (by the interpolation toward the paper's point)") == "holds"


def test_a_check_is_narrowed_to_the_cells_produced():
    module = _module()
    check = {"all": [{"less": ["t2/pg22/alibi@4", "t2/pg22/alibi@8"]},
                     {"less": ["t2/qmsum/alibi@4", "t2/qmsum/alibi@8"]},
                     {"any": [{"less": ["t2/pg22/alibi@1", "t2/pg22/alibi@2"]}, {"less": ["t2/qmsum/alibi@1", "t2/qmsum/alibi@2"]}]}]}
    produced = {f"t2/pg22/alibi@{k}" for k in (1, 2, 4, 8)}
    assert module.narrowed(check, produced) == {"all": [{"less": ["t2/pg22/alibi@4", "t2/pg22/alibi@8"]}]}
    assert module.narrowed({"less": ["t2/qmsum/alibi@4", "t2/qmsum/alibi@8"]}, produced) is None


def test_results_json_is_written_after_every_model_and_a_guard_stop_is_recorded(tmp_path, monkeypatch):
    module = _module()
    seen = []
    write = module.write_results
    monkeypatch.setattr(module, "write_results",
                        lambda out, results: (seen.append(sorted(results["models"])), write(out, results)))
    # A guard of 0 s stops RoPE before its first chunk: recorded, with its cells left empty.
    guarded = module.train_guarded
    monkeypatch.setattr(module, "train_guarded", lambda name, plan, *rest: guarded(
        name, {**plan, "guard_s": 0.0} if name == "rope" else plan, *rest))
    results = module.run(tmp_path, dry_run=True, device="cpu", only=["sinusoidal", "rope"])
    assert seen[:2] == [["sinusoidal"], ["rope", "sinusoidal"]]
    rope = results["models"]["rope"]["train"]
    assert rope["status"] == "stopped at guard" and rope["tokens_seen"] == 0 and "scores" not in results["models"]["rope"]
    cells = json.loads((tmp_path / "table2.cells.json").read_text())["cells"]
    roformer = [c for c in cells if c["method"] == "roformer"]
    assert all(c["ours"] is None and c["status"].startswith("not computed: stopped at guard after 0 of")
               for c in roformer)
    claims = {c["id"]: c for c in results["claims"]}
    assert claims["lex-absolute-rope-blow-up"]["verdict"] == "untestable"
    assert "stopped at guard" in claims["lex-absolute-rope-blow-up"]["evidence"]


@pytest.mark.slow  # ~20-45 s on 2 busy cores: five toy trainings and their scores
def test_the_dry_run_trains_scores_and_judges_end_to_end(tmp_path):
    env = {**os.environ, "LENEX_PHENOMENA_DRY_RUN": "1", "OUT": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (tmp_path / "phenomena.log").read_text()[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status"] == "finished"
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["dry_run"] and sorted(results["models"]) == sorted(["sinusoidal", "alibi", "rope", "xpos", "alibi-shift-6"])
    for name, record in results["models"].items():
        assert record["train"]["status"] == "finished"
        assert record["train"]["tokens_seen"] == results["plan"]["train_tokens"]
        assert record["train"]["compile"] == {"compiled": False, "why": "LENEX_COMPILE=0"}
        assert record["train"]["attention_kernel"] == "reference"
        assert sorted(record["scores"]["last_token"]) == ["1", "2", "4", "8"]
    table2 = json.loads((tmp_path / "table2.cells.json").read_text())
    cell = next(c for c in table2["cells"] if c["method"] == "transformer" and c["multiple"] == 1)
    assert cell["paper"] == 30.54 and cell["paper_length"] == 1024  # LEX Table 2, PG22, 1024 (paper_results.csv)
    assert cell["ours"] > 0 and len(cell["ours_pieces"]["nll"]) == 2048 // 128  # scored tokens / span
    table1 = json.loads((tmp_path / "table1.cells.json").read_text())
    shift = next(c for c in table1["cells"] if c["multiple"] == 2)
    assert shift["paper"] == 55.4 and shift["ours_pieces"]["unit"] == "segment"
    assert {c["id"] for c in results["claims"]} == {"lex-absolute-rope-blow-up", "lex-alibi-rises-beyond-4x",
                                                    "rf-shift-large-explodes"}
    assert all(c["verdict"] in VERDICTS for c in results["claims"])
    page = (tmp_path / "phenomena.md").read_text()
    assert "DRY RUN" in page and "no Snakemake on the GPU machine" in page
    for row in ("Sinusoidal (Transformer) (transformer)", "RoPE (RoFormer) (roformer)", "(alibi-shift-delta=6)"):
        assert row in page
    assert "| lex-absolute-rope-blow-up |" in page
