"""The receptive-field paper's DAG: every job the paper needs at the `paper` preset, with GPUs,
and (slow) Table 2 end to end at `tiny`."""

import re

import pytest

from test_workflow import job_counts, snakemake, trained_models, workdir  # noqa: F401  (workdir is a fixture)
from tiny_build import finished_tiny

PAGE = "results/{preset}/receptive-field.md"
TABLE2 = "results/tiny/tables/receptive-field/table2.md"


def test_paper_preset_lists_every_model_of_the_paper_with_gpus(workdir):  # noqa: F811
    run = snakemake("-n", "-p", "--forceall", PAGE.format(preset="paper"), cwd=workdir)
    assert run.returncode == 0, run.stderr[-3000:]
    counts = job_counts(run.stdout)
    # 17 models x 2 corpora (Tables 1, 4; Δ = 0 is its own model, apart from Table 3's ALiBi, so that
    # the two may have different budgets) + 2 x 2 (Table 2) + 7 x 3 corpora x 5 seeds (Table 3)
    # + Sinusoidal at L_tr / 4 (Figure 7) = 144 trainings.
    trained = [path for path in trained_models(run.stdout) if "/models/receptive-field/" in path]
    assert len(trained) == 17 * 2 + 4 + 7 * 3 * 5 + 1 == counts["receptive_field_evaluate"]
    assert counts["receptive_field_cache_window"] == 2 * 3 * 5 and counts["paper_table"] == 5 and counts["receptive_field_figure"] == 10
    train_jobs = [job for job in run.stdout.split("rule train:")[1:] if "/models/receptive-field/" in job.split("\n\n")[0]]
    assert len(train_jobs) == len(trained) and all("gpu=1" in job.split("\n\n")[0] for job in train_jobs)
    # Table 7's model; windows at the paper's own size; Table 2's longer L_tr.
    assert '"d_model": 768' in run.stdout and '"n_head": 12' in run.stdout and '"lr": 0.0006' in run.stdout
    assert '"mask_options": {"window": 320}' in run.stdout and '"train_length": 2048' in run.stdout


def test_one_table_builds_only_what_it_needs(workdir):  # noqa: F811
    run = snakemake("-n", "--forceall", TABLE2, cwd=workdir)
    assert run.returncode == 0, run.stderr[-3000:]
    counts = job_counts(run.stdout)
    # 2 models x 2 corpora, every seed of their budget group (2 at tiny)
    assert (len(trained_models(run.stdout)), counts["receptive_field_evaluate"], counts["paper_table"]) == (8, 8, 1)
    assert "receptive_field_cache_window" not in counts and "receptive_field_figure" not in counts


@pytest.mark.slow
def test_tiny_table2_end_to_end_then_nothing_to_do():
    """On the shared finished tiny run (tests/tiny_build.py: the one `make run` builds)."""
    workdir = finished_tiny()
    table = (workdir / TABLE2).read_text()
    assert "preset `tiny`" in table and "NOT the paper's scale" in table and "w 160 → 40" in table
    for section in table.split("## ")[1:3]:  # arXiv, OpenWebText2: 2 rows x 3 lengths of means ± std over 2 seeds
        assert len(re.findall(r"\| [\d.]+ / [\d.]+ ± [\d.]+ / [+-][\d.]+", section)) == 2 * 3, section[:300]
    erf = re.findall(r"\| (arxiv|openwebtext2) \| (\S+) \| (\d+) \| (\S+) \| ([\d.]+)(?: ± [\d.]+)? \|", table)
    assert len(erf) == 4
    for _corpus, variant, _train_length, trf, measured in erf:
        if variant.startswith("window"):
            assert float(measured) <= int(trf)  # ERF (a mean over seeds) never exceeds w·R
    assert (workdir / "results/tiny/figures/receptive-field/figure9.pdf").stat().st_size > 1000
    again = snakemake("-n", TABLE2, cwd=workdir)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
