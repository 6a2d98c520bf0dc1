"""A table's re-run beside the committed run (lenex.tables.rerun, rule table_rerun): hand-computed
differences and rises, the corpus checks that refuse a comparison, and the files a re-run records."""
import json
import math

import pytest
from scipy import stats

from lenex.pipeline.recorded import of_seeds, rerun_seeds
from lenex.records.stored import write_text
from lenex.tables import rerun
from lenex.tables.raw_results import text_of

CORPUS_DIGEST = "a" * 64


def record(variant, seed, length, nll, scored=None, corpus="pg22", digest=CORPUS_DIGEST, mask="causal"):
    r = {"nll": nll, "ppl": math.exp(nll), "tokens": 2048, "length": length, "train_length": 256, "mask": mask,
         "corpus": corpus, "variant": variant, "seed": seed, "identity": {"corpus_meta_sha256": digest}}
    if scored:
        r["scored"] = scored
    return r


def path(variant, seed, length, corpus="pg22", mask="causal"):
    return f"results/ws/eval/lex/{variant}/seed{seed}/{corpus}/{mask}/L{length}.json"


SCORED = {"rule": "across-documents", "spans": 16, "span": 2048, "documents": 68, "eligible": 60,
          "documents_scored": 16, "token_share": 0.0372, "document_ids": list(range(16))}
# per seed: (committed nll at 256, at 2048), (re-run nll at 256, at 2048)
VALUES = {1: ((4.0, 4.1), (4.2, 4.4)), 2: ((4.1, 4.3), (4.2, 4.5)), 3: ((3.9, 4.0), (4.1, 4.3))}


def files(which):
    out = {}
    for seed, pair in VALUES.items():
        for length, nll in zip((256, 2048), pair[which]):
            out[path("rope", seed, length)] = record("rope", seed, length, nll, SCORED if which else None)
    return out


def t_interval(values):
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def test_cells_pair_seed_by_seed_with_hand_values():
    cells = rerun.compare_cells(rerun.cell_records(files(1)), rerun.cell_records(files(0)))
    assert [(c.length, c.seeds) for c in cells] == [(256, [1, 2, 3]), (2048, [1, 2, 3])]
    at_ltr = cells[0]
    # differences 0.2, 0.1, 0.2 at L 256
    mean, low, high = t_interval([0.2, 0.1, 0.2])
    assert at_ltr.difference.mean == pytest.approx(mean)
    assert (at_ltr.difference.low, at_ltr.difference.high) == pytest.approx((low, high))
    assert at_ltr.ppl_committed == pytest.approx(math.exp((4.0 + 4.1 + 3.9) / 3))
    assert at_ltr.ppl_rerun == pytest.approx(math.exp((4.2 + 4.2 + 4.1) / 3))
    assert at_ltr.difference.reading == "higher"
    assert "first test documents in id order" in at_ltr.scored_committed
    assert at_ltr.scored_rerun == "16 spans of 2048 from 16 of 68 test documents (3.7% of the split)"


def test_rise_from_ltr_to_longest_old_beside_new():
    (rise,) = rerun.compare_rises(rerun.cell_records(files(1)), rerun.cell_records(files(0)))
    assert (rise.from_length, rise.to_length) == (256, 2048)
    # committed rises 0.1, 0.2, 0.1; re-run 0.2, 0.3, 0.2; paired differences 0.1 each
    assert rise.committed.mean == pytest.approx(0.4 / 3)
    assert rise.rerun.mean == pytest.approx(0.7 / 3)
    assert rise.difference.mean == pytest.approx(0.1)
    # every seed moved by the same 0.1: no spread, a degenerate interval that excludes 0
    assert rise.difference.low == pytest.approx(0.1) and rise.difference.reading == "higher"


def test_a_difference_inside_its_interval_is_inconclusive_either_way():
    assert rerun.interval_of([0.3, -0.1, 0.05]).reading == "inconclusive"
    assert rerun.interval_of([-0.3, 0.1, -0.05]).reading == "inconclusive"
    assert rerun.interval_of([0.3]).reading == "inconclusive (one seed)"


def test_refused_when_a_committed_seed_is_missing():
    committed = files(0)
    del committed[path("rope", 3, 2048)]
    with pytest.raises(ValueError, match="no pg22 rope L=2048 record of seed 3"):
        rerun.compare_cells(rerun.cell_records(files(1)), rerun.cell_records(committed))


def test_models_trained_on_other_text_are_named_and_their_pairing_refused():
    moved = files(1)
    moved[path("rope", 2, 256)]["identity"]["corpus_meta_sha256"] = "b" * 64
    new, old = rerun.cell_records(moved), rerun.cell_records(files(0))
    assert rerun.other_models(new, old) == [rerun.ModelChange("rope", 2, "b" * 64, CORPUS_DIGEST)]
    assert rerun.other_models(rerun.cell_records(files(1)), old) == []
    cells = rerun.compare_cells(new, old, paired=False)
    assert [c.difference for c in cells] == [None, None]
    assert cells[0].ppl_rerun == pytest.approx(math.exp((4.2 + 4.2 + 4.1) / 3))  # each run's mean still shown
    (rise,) = rerun.compare_rises(new, old, paired=False)
    assert rise.difference is None and rise.rerun.mean == pytest.approx(0.7 / 3)
    paired = rerun.pairing(new, old)  # no training meta recorded by the re-run: the digest rule
    assert paired.rule == rerun.DIGEST_RULE and not paired.same
    page = rerun.render("T", cells, [rise], {"rerun": "r", "committed": ["c"]}, "", paired)
    assert "paired by their identities' `corpus_meta_sha256`" in page
    assert "**Refused: not the same models.**" in page and "b" * 64 in page and "rope seed 2" in page
    assert "| refused | refused (other models) |" in page


TRAIN_META = "results/ws/data/train_mix/meta.json"
MIX = {"tokenizer": "bpe-1", "splits": {"train": {"n_docs": 900, "n_tokens": 4_000_000}},
       "components": {"pg22": {"tokens": 3_000_000}}, "sources": {"pkg": {"version": "1-1", "sha256": "e" * 64,
                                                                         "fetched_at": "2026-11-01"}}}


def test_shared_facts_pair_models_whose_meta_digests_differ():
    """A re-run's training mix prepared again by today's code has another meta digest (meta.json
    gained facts), so its models pair when the two recorded metas agree on every fact both record."""
    rebuilt = {**MIX, "meta_sha256": "f" * 64,
               "sources": {"pkg": {**MIX["sources"]["pkg"], "fetched_at": "2026-12-03"}}}
    moved = files(1)
    for r in moved.values():
        r["identity"]["corpus_meta_sha256"] = "b" * 64
    paired = rerun.pairing(rerun.cell_records(moved), rerun.cell_records(files(0)), rebuilt, MIX)
    assert paired.rule == rerun.SHARED_FACTS_RULE and paired.same and paired.why == ()
    # tokenizer, train n_docs and n_tokens, the component's tokens, the package's version and sha256
    assert paired.facts_compared == 6
    page = rerun.render("T", [], [], {"rerun": "r", "committed": ["c"]}, "", paired)
    assert "paired by the training corpus's recorded facts" in page and "compared on the 6 facts" in page
    assert "Refused" not in page


def test_shared_facts_refuse_another_package_version_or_models_of_two_corpora():
    other = {**MIX, "sources": {"pkg": {**MIX["sources"]["pkg"], "version": "1-2"}}}
    new, old = rerun.cell_records(files(1)), rerun.cell_records(files(0))
    paired = rerun.pairing(new, old, other, MIX)
    assert not paired.same and [c.seed for c in paired.changes] == [1, 2, 3]
    assert paired.why == ("training corpus sources.pkg.version: 1-2 rebuilt, 1-1 committed",)
    page = rerun.render("T", [], [], {"rerun": "r", "committed": ["c"]}, "", paired)
    assert "**Refused: not the same models.**" in page and "- training corpus sources.pkg.version" in page
    split = files(1)
    split[path("rope", 3, 256)]["identity"]["corpus_meta_sha256"] = "b" * 64
    paired = rerun.pairing(rerun.cell_records(split), old, MIX, MIX)
    assert paired.why == ("the re-run's models name 2 training corpora, not one",)
    with pytest.raises(ValueError, match="committed run records no meta of the training corpus"):
        rerun.pairing(new, old, MIX, None)


def test_the_training_meta_is_not_held_to_the_evaluation_corpus_check():
    other = {**MIX, "splits": {"train": {"n_docs": 901, "n_tokens": 4_000_000}}}
    rerun.check_same_corpora({TRAIN_META: other}, {TRAIN_META: MIX}, TRAIN_META)
    with pytest.raises(ValueError, match="not the same corpus"):
        rerun.check_same_corpora({TRAIN_META: other}, {TRAIN_META: MIX})


def test_refused_when_an_evaluation_corpus_differs():
    meta = {"tokenizer": "bpe-1", "vocab_size": 4096, "splits": {"test": {"n_docs": 68, "n_tokens": 881018}}}
    rerun.check_same_corpora({"results/ws/data/pg22/meta.json": meta}, {"results/ws/data/pg22/meta.json": dict(meta)})
    other = {**meta, "splits": {"test": {"n_docs": 67, "n_tokens": 880000}}}
    with pytest.raises(ValueError, match="splits differs .*test.n_docs 67 against 68"):
        rerun.check_same_corpora({"results/ws/data/pg22/meta.json": other}, {"results/ws/data/pg22/meta.json": meta})
    with pytest.raises(ValueError, match="records no"):
        rerun.check_same_corpora({"results/ws/data/qmsum/meta.json": meta}, {})


def test_a_split_digest_is_compared_only_where_both_metas_record_one():
    old = {"tokenizer": "bpe-1", "vocab_size": 4096, "splits": {"test": {"n_docs": 68, "n_tokens": 881018}}}
    new = {**old, "splits": {"test": {"n_docs": 68, "n_tokens": 881018, "sha256": "c" * 64}}}
    assert rerun.corpus_differences(new, old) == []  # the committed meta was written before digests
    assert rerun.corpus_differences(new, {**old, "splits": {"test": {**new["splits"]["test"], "sha256": "d" * 64}}}) \
        == [f"test.sha256 {'c' * 64!r} against {'d' * 64!r}"]
    assert rerun.corpus_differences({**new, "splits": {}}, old) == ["split test only in the committed run's"]


def reproduce_cells(committed_files, reproduced):
    """lenex.scoring.reproduce's `cells`: each committed cell's NLL again on its re-trained model."""
    return {p: {"rule": "first-documents", "committed_nll": r["nll"], "reproduced_nll": reproduced[p],
                "same_tokens": True} for p, r in committed_files.items()}


def test_a_change_splits_into_the_rules_effect_and_the_models_by_hand():
    committed = files(0)
    # the re-trained models by the committed rule: committed + 0.05 at L_tr, + 0.02 / 0.04 / 0.06 at 2048
    moved = {1: 0.02, 2: 0.04, 3: 0.06}
    again = {path("rope", s, 256): committed[path("rope", s, 256)]["nll"] + 0.05 for s in VALUES}
    again |= {path("rope", s, 2048): committed[path("rope", s, 2048)]["nll"] + moved[s] for s in VALUES}
    cells, rises = rerun.split_changes(rerun.cell_records(files(1)), rerun.cell_records(committed),
                                       reproduce_cells(committed, again))
    at_ltr = cells[0]
    assert at_ltr.lengths == "256" and at_ltr.models.mean == pytest.approx(0.05)
    # re-run - reproduced at 256: (4.2 - 4.05, 4.2 - 4.15, 4.1 - 3.95) = (0.15, 0.05, 0.15)
    mean, low, high = t_interval([0.15, 0.05, 0.15])
    assert (at_ltr.rule.mean, at_ltr.rule.low, at_ltr.rule.high) == pytest.approx((mean, low, high))
    (rise,) = rises
    # models' change of the rise: moved - 0.05 = (-0.03, -0.01, +0.01); the rule's: re-run rise - reproduced rise
    assert rise.lengths == "256 -> 2048" and rise.models.mean == pytest.approx(-0.01)
    assert rise.rule.mean == pytest.approx(0.1 - (-0.01))
    assert rise.same_tokens


def test_a_reproduce_check_of_other_scoring_or_other_raw_results_is_refused():
    committed = files(0)
    cells = reproduce_cells(committed, {p: r["nll"] for p, r in committed.items()})
    cells[path("rope", 1, 256)]["rule"] = "across-documents"
    with pytest.raises(ValueError, match="reproduced by rule 'across-documents'"):
        rerun.split_changes(rerun.cell_records(files(1)), rerun.cell_records(committed), cells)
    cells = reproduce_cells(committed, {p: r["nll"] for p, r in committed.items()})
    cells[path("rope", 1, 256)]["committed_nll"] += 0.5
    with pytest.raises(ValueError, match="it read other raw results"):
        rerun.split_changes(rerun.cell_records(files(1)), rerun.cell_records(committed), cells)


def test_page_and_numbers_from_raw_results(tmp_path):
    new, old = tmp_path / "rerun.jsonl.xz", tmp_path / "committed.jsonl.xz"
    write_text(new, text_of(files(1)))
    write_text(old, text_of(files(0)))
    out_md, out_json = tmp_path / "page.md", tmp_path / "page.json"
    rerun.main(["--rerun", str(new), "--committed", str(old), "--title", "LEX Table 2", "--train-meta", TRAIN_META,
                "--out-md", str(out_md), "--out-json", str(out_json)])
    page = out_md.read_text()
    assert page.startswith("# LEX Table 2\n")
    assert "| pg22 | rope | 256 -> 2048 | +0.133" in page
    numbers = json.loads(out_json.read_text())
    assert [c["length"] for c in numbers["cells"]] == [256, 2048]
    assert numbers["rises"][0]["difference"]["mean"] == pytest.approx(0.1)
    assert numbers["same_models"] and numbers["pairing_rule"] == rerun.DIGEST_RULE
    assert numbers["split"] == {"cells": [], "rises": []}
    assert "Added after the re-run" not in page


def test_the_page_adds_the_reproduce_split_where_given_and_pairs_by_path(tmp_path):
    new, old, check = tmp_path / "rerun.jsonl.xz", tmp_path / "committed.jsonl.xz", tmp_path / "reproduce.json"
    committed = files(0)
    # an ablation's record of the same corpus, variant and length under another mask: another cell
    committed[path("rope", 1, 2048, mask="sliding")] = record("rope", 1, 2048, 9.0, mask="sliding")
    write_text(new, text_of(files(1)))
    write_text(old, text_of(committed))
    check.write_text(json.dumps({"cells": reproduce_cells(files(0), {p: r["nll"] for p, r in files(0).items()})}))
    out_md, out_json = tmp_path / "page.md", tmp_path / "page.json"
    rerun.main(["--rerun", str(new), "--committed", str(old), "--reproduce", str(check), "--title", "T",
                "--train-meta", TRAIN_META,
                "--out-md", str(out_md), "--out-json", str(out_json)])
    numbers = json.loads(out_json.read_text())
    assert numbers["rises"][0]["committed"]["mean"] == pytest.approx(0.4 / 3)  # not the sliding record's
    # reproduced = committed: the models' change is nil, the rule's effect is the whole difference
    assert numbers["split"]["rises"][0]["rule"]["mean"] == pytest.approx(0.1)
    assert numbers["split"]["rises"][0]["models"]["mean"] == pytest.approx(0.0)
    assert "## Added after the re-run (not in its plan)" in out_md.read_text()


def test_seeds_of_a_rerun_path():
    assert rerun_seeds("1-3") == [1, 2, 3]
    assert rerun_seeds("4-4") == [4]
    for bad in ("3-1", "0-2", "1,2", "seeds1-3"):
        with pytest.raises(ValueError, match="<first>-<last>"):
            rerun_seeds(bad)
    chosen = of_seeds([path("rope", s, 256) for s in (1, 2, 4, 12)], [1, 2])
    assert chosen == [path("rope", 1, 256), path("rope", 2, 256)]


def test_the_page_says_how_the_rerun_was_made():
    record = {"command": "snakemake --cores 2 x", "wall_s": 4000, "jobs": 60, "complete": True,
              "parts": [{"wall_s": 4000}]}
    assert rerun.run_line(record, ["1e3352b"]) == (
        "Its run: `snakemake --cores 2 x`, 66 min 40 s (4000 s), 60 jobs, at revision `1e3352b`.")
    assert rerun.run_line(None, []) == ("Its run is not recorded (no run record beside it); its evaluations were "
                                        "made at revision not recorded.")


def test_the_retrained_models_curves_are_read_from_the_rerun_and_a_curveless_trainer_is_named():
    from lenex.tables.rerun import rerun_curves

    curve = {"points": [], "summary": {}}
    files = {"results/w/curves/lex/alibi/seed1/curve.json": curve,
             "results/w/curves/lex/rope/seed1/curve.json": {"none": "trained by fairseq"},
             "results/w/eval/lex/alibi/seed1/pg22/causal/L256.json": {"nll": 1.0}}
    found, missing = rerun_curves(files)
    assert found == {"results/w/curves/lex/alibi/seed1/curve.json": curve}
    assert missing == ["results/w/curves/lex/rope/seed1/curve.json"]
