"""The LEX paper's DAG: the whole paper, and each table or figure building only what it needs."""

import json
import math
import re
import statistics

import pytest
import yaml

from test_workflow import REPO, job_counts, lex_cells, scratch_workflow, snakemake
from tiny_build import finished_tiny


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A scratch copy of the workflow so dry runs never touch the repository's results/."""
    return scratch_workflow(tmp_path_factory.mktemp("lex"))


def dry_run(workdir, *targets):
    run = snakemake("-n", "--forceall", *targets, cwd=workdir)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return run.stdout, job_counts(run.stdout)


def test_whole_paper_trains_six_variants_at_every_seed_and_fills_every_table_and_figure(workdir):
    out, counts = dry_run(workdir, "results/tiny/lex.md")
    # Transformer, ALiBi, RoPE, xPos + the two Table 4 ablations; zeta = 0 reuses RoPE; 2 seeds at tiny.
    assert counts["train"] == 6 * 2 and "models/lex/xpos_no_rotation/seed2.pt" in out and "scalar_zeta/seed1.pt" in out
    # Table 2: 48, Table 6: 40, Table 4: 5 more (2 ablations x 2 lengths, RoPE + BCA at 8x),
    # Table 5: 9 more (Absolute/ALiBi + BCA x 2, RoPE + BCA at 2x, xPos causal x 2, sliding x 2),
    # of each seed's model, in one job per model and corpus: 4 variants x 4 corpora and the 2
    # ablations on PG22, for each seed.
    assert lex_cells(out) == (18 * 2, 102 * 2)
    # Table 3: 4 variants x {1x, 2x}, LEX at 2x with BCA, plus "LEX without BCA" at 2x (causal).
    assert lex_cells(out, "resolution") == (4 * 2, 9 * 2)
    assert "evaluate" not in counts and "resolution" not in counts  # the measures' rules (a cell alone): no table cell
    assert counts["lex_figure1"] == counts["lex_figure2"] == counts["paper_report"] == 1
    assert counts["paper_table"] == 5
    for path in ("resolution/lex/xpos/seed1/pg22/blockwise/L128.json", "resolution/lex/xpos/seed2/pg22/causal/L128.json",
                 "eval/lex/xpos/seed2/pg22/sliding/L512.json", "eval/lex/transformer/seed1/pg22/blockwise/L128.json",
                 "eval/lex/rope/seed2/pg22/blockwise/L512.json", "eval/lex/xpos_scalar_zeta/seed1/pg22/blockwise/L512.json"):
        assert path in out, path
    assert "train_mix/train.bin" in out  # LEX 4.1: trained on the Pile-mix stand-in


def test_table3_reads_only_resolutions_and_figure1_only_pg22(workdir):
    out, counts = dry_run(workdir, "results/tiny/tables/lex/table3.md")
    assert counts["train"] == 4 * 2 and lex_cells(out, "resolution") == (4 * 2, 9 * 2) and lex_cells(out) == (0, 0)
    out, counts = dry_run(workdir, "results/tiny/figures/lex/figure1.png")
    # Figure 1 reads Table 2's PG22 section: the PG22 jobs of its 4 models, which also score the
    # PG22 cells of the other tables (one job per model and corpus), and no other corpus; every seed.
    jobs, cells = lex_cells(out)
    assert jobs == 4 * 2 and cells > 24 * 2 and "/qmsum/" not in out.split("rule lex_figure1")[1]
    out, counts = dry_run(workdir, "results/tiny/figures/lex/figure2.pdf")
    assert counts == {"lex_figure2": 1}


def test_paper_preset_plans_every_job_with_gpu_resources(workdir):
    """At a GPU preset each cell is its own job of its measure's rule (they run side by side, and a
    cluster profile reaches them by name: tests/test_slurm_profile.py); the same 111 cells."""
    out, counts = dry_run(workdir, "results/paper/lex.md")
    assert counts["train"] == 6 and lex_cells(out) == (0, 0) and lex_cells(out, "resolution") == (0, 0)
    assert counts["evaluate"] == 102 and counts["resolution"] == 9
    blocks = out.split("\n\n")
    for rule, gpus in (("train", 8), ("evaluate", 1), ("resolution", 1)):
        jobs = [b for b in blocks if re.search(rf"^(local)?rule {rule}:", b, re.M)]
        assert jobs and all(f"gpu={gpus}" in b for b in jobs), rule
    assert "L8192.json" in out and "resolution/lex/xpos/seed1/pg22/blockwise/L2048.json" in out


def test_paper_preset_is_lex_table_7():
    preset = yaml.safe_load((REPO / "config/presets/paper.yaml").read_text())
    model, train = preset["model"], preset["train"]
    assert (model["n_layer"], model["d_model"], model["d_ff"], model["n_head"], model["train_length"]) == \
        (24, 1024, 4096, 16, 1024)
    assert train["batch_size"] * model["train_length"] == 524288  # 0.5M tokens per batch
    assert (train["steps"], train["lr"], train["warmup"], train["grad_clip"], train["weight_decay"]) == \
        (50000, 3e-4, 20000, 2.0, 0.01)
    assert (train["beta1"], train["beta2"], train["eps"]) == (0.9, 0.98, 1e-6)
    assert train.get("power", 1.0) == 1.0 and train.get("end_lr", 0.0) == 0.0  # polynomial (linear) decay
    assert preset["data"]["tokenizer"] == "gpt2"


def _copied_config(tmp_path):
    """A scratch workflow whose config/ is a copy (the test edits it), the rest linked."""
    (tmp_path / "config").mkdir()
    for path in (REPO / "config").iterdir():
        target = tmp_path / "config" / path.name
        target.symlink_to(path) if path.is_file() else __import__("shutil").copytree(path, target)
    return scratch_workflow(tmp_path)


def _changed_jobs(workdir, edit):
    """Outputs of the LEX paper's jobs whose command or inputs an edit of config/ changes."""
    from test_bring_your_own import dry_run_jobs

    before = dry_run_jobs(workdir, "results/tiny/lex.md")
    edit(workdir / "config")
    after = dry_run_jobs(workdir, "results/tiny/lex.md")
    assert set(after) == set(before)
    return {out: after[out]["rule"] for out in after if after[out] != before[out]}


def test_changing_one_variant_or_the_eval_setting_reruns_only_what_depends_on_it(tmp_path):
    """One evaluation job per model, measure and corpus keeps the granularity of one job per cell:
    a variant's new option changes its training job alone (its evaluations follow from the new
    model), an evaluation setting changes the evaluation jobs alone."""
    workdir = _copied_config(tmp_path)

    def retune_alibi(config):
        path = config / "experiments/lex.yaml"
        spec = yaml.safe_load(path.read_text())
        spec["variants"]["alibi"]["position_options"] = {"shift": 1}
        path.write_text(yaml.safe_dump(spec, sort_keys=False))

    changed = _changed_jobs(workdir, retune_alibi)
    # The claims job reads each variant's scheme (a scale-study point speaks for a claim only where it
    # trained the same scheme), so it follows the variant; no other evaluation or table job does.
    trained = {f"results/tiny/models/lex/alibi/seed{s}.pt, results/tiny/curves/lex/alibi/seed{s}/curve.json": "train"
               for s in (1, 2)}  # the training job writes the model and its curve
    assert changed == {**trained,
                       "results/tiny/claims/lex.md, results/tiny/claims/lex.json": "paper_claims"}, changed

    def score_fewer_tokens(config):
        path = config / "presets/tiny.yaml"
        preset = yaml.safe_load(path.read_text())
        preset["eval"]["max_tokens"] //= 2
        path.write_text(yaml.safe_dump(preset, sort_keys=False))

    changed = _changed_jobs(workdir, score_fewer_tokens)
    assert changed and {rule.split("__")[0] for rule in changed.values()} == {"lex_eval", "lex_resolution"}, changed
    assert len(changed) == 22 * 2  # every evaluation job of the paper (18 perplexity, 4 resolution per seed), nothing else


@pytest.mark.slow
def test_tiny_lex_cells_carry_two_seeds_and_a_claims_interval_is_paired_over_seeds():
    """At tiny every LEX variant trains with 2 seeds, scored on the same tokens: each cell of Table 4
    is the mean of two models (± their std, each seed's value in the cells file), and a claim that
    compares its rows gets a paired t interval over the 2 seeds (lenex.claims.intervals)."""
    from lenex.claims.evaluate import evaluate_claim, load_claims

    workdir = finished_tiny()  # the shared finished tiny run (tests/tiny_build.py)
    table4 = "results/tiny/tables/lex/table4.md"
    for seed in (1, 2):
        assert (workdir / f"results/tiny/models/lex/xpos/seed{seed}.pt").exists()
        result = json.loads((workdir / f"results/tiny/eval/lex/rope/seed{seed}/pg22/blockwise/L512.json").read_text())
        assert result["seed"] == seed and result["span_nll"]
    tokens = {json.loads(p.read_text())["scored_tokens_sha256"]
              for p in (workdir / "results/tiny/eval/lex").glob("*/seed*/pg22/causal/L32.json")}
    assert len(tokens) == 1  # every variant and seed scored the very same tokens
    cells = json.loads((workdir / table4.replace(".md", ".cells.json")).read_text())
    for cell in cells["cells"]:
        seeds = cell["ours_seeds"]
        assert cell["n_seeds"] == 2 and sorted(seeds) == ["1", "2"] and seeds["1"] != seeds["2"], cell
        assert cell["ours"] == pytest.approx(statistics.fmean(seeds.values()))
        assert cell["ours_std"] == pytest.approx(statistics.stdev(seeds.values()))
        assert "ours_pieces" not in cell  # the seeds are the replication of a mean over models
    assert " ± " in (workdir / table4).read_text() and "2 seeds per model" in (workdir / table4).read_text()
    claim = next(c for c in load_claims(REPO / "config/claims/lex.yaml")["claims"]
                 if c["id"] == "lex-ablation-vector-zeta-better")
    record = evaluate_claim(claim, {"4": cells})
    assert record["parts"] and all(part["test"] == "paired t over 2 seeds" for part in record["parts"])
    first = record["parts"][0]  # LEX against zeta = 0 (RoPE) at L_tr: ln(a_s / b_s) over the seeds
    by = {(c["method"], c["multiple"]): c["ours_seeds"] for c in cells["cells"]}
    lex, rope = by[("lex", 1.0)], by[("zeta-0", 1.0)]
    assert first["effect"] == pytest.approx(statistics.fmean(math.log(lex[s] / rope[s]) for s in ("1", "2")))
