"""The segmented-sequences paper's DAG: the whole paper, one table building only what it needs,
the paper preset's Hugging Face path, and (slow) Table 5 end to end on synthetic corpora."""

import re
import shutil

import pytest
import yaml

from test_workflow import REPO, job_counts, scratch_workflow, segmented_trainings, snakemake, trained_models
from tiny_build import finished_tiny


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A scratch copy of the workflow so runs never touch the repository's results/."""
    return scratch_workflow(tmp_path_factory.mktemp("segmented"))


def dry_run(workdir, *targets, extra=()):
    run = snakemake("-n", "-p", "--forceall", *targets, *extra, cwd=workdir)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return run.stdout, job_counts(run.stdout)


def test_whole_paper_plan(workdir):
    out, counts = dry_run(workdir, "results/tiny/segmented.md")
    # 5 stand-ins pretrained and adapted (OOTB) + 2 extra adaptations (Table 5); Table 3: 2 models x
    # 6 methods x 2 lengths; Table 4: 3 models x chunk-0.25 x 2 (Table 5 reuses them).
    assert segmented_trainings(out) == {"pretrained": 5, "adapted": 7, "continued": 24 + 6}
    assert counts["paper_table"] == 4 and counts["segmented_figure2"] == counts["segmented_figure3"] == 1
    assert counts["segmented_attention"] == 2 and counts["paper_report"] == 1
    for path in ("eval/segmented/gpt2/seed1/ootb/L160.json", "eval/segmented/bloom/seed1/da/L128.json",
                 "models/segmented/pythia-small/seed1/prefix-0.5-x4.pt",
                 "eval/segmented/pythia/seed1/chunk-0.25-x4/attention_L128.json"):
        assert path in out, path
    assert "lex_table_header" not in counts  # no other paper's rules
    assert all(path.startswith("results/tiny/models/segmented/") for path in trained_models(out))


def test_seeds_repeat_everything_after_the_one_pretrained_model(workdir, tmp_path):
    """With 2 seeds the costly parent stays one model per stand-in; its domain adaptation and every
    continued run (their data sampling and order) are trained once per seed, each seed's runs
    continuing its own OOTB model, each with its own training seed."""
    one_out, one = dry_run(workdir, "results/tiny/tables/segmented/table5.md")
    seeded = scratch_workflow(tmp_path)
    (seeded / "config").unlink()
    shutil.copytree(REPO / "config", seeded / "config")
    preset_file = seeded / "config/presets/tiny.yaml"
    preset = yaml.safe_load(preset_file.read_text())
    preset["papers"]["segmented"]["experiment"]["seeds"] = 2
    preset_file.write_text(yaml.safe_dump(preset, sort_keys=False))
    out, counts = dry_run(seeded, "results/tiny/tables/segmented/table5.md")
    trained, trained_once = segmented_trainings(out), segmented_trainings(one_out)
    assert trained["pretrained"] == trained_once["pretrained"] == 2
    for kind in ("adapted", "continued"):
        assert trained[kind] == 2 * trained_once[kind], kind
    assert counts["segmented_evaluate"] == 2 * one["segmented_evaluate"]
    assert "--init results/tiny/models/segmented/gpt2/seed2/ootb.pt --method chunk-0.25" in out
    assert "--init results/tiny/models/segmented/gpt2/pretrained" not in out
    assert out.count("--init results/tiny/models/segmented/pretrained/gpt2.pt") == 2  # each seed's OOTB
    assert '"seed": 2' in out and '"seed": 1' in out


def test_one_table_builds_only_what_it_needs(workdir):
    out, counts = dry_run(workdir, "results/tiny/tables/segmented/table2.md")
    counts = {rule: n for rule, n in counts.items() if rule.startswith(("segmented_", "paper_"))}  # data rules aside
    assert counts == {"segmented_evaluate": 5, "paper_table": 1}
    assert segmented_trainings(out) == {"pretrained": 5, "adapted": 5, "continued": 0}
    out, counts = dry_run(workdir, "results/tiny/tables/segmented/table5.md")
    assert segmented_trainings(out) == {"pretrained": 2, "adapted": 4, "continued": 4}


def test_paper_preset_uses_released_models_and_their_tokenizers(workdir):
    out, counts = dry_run(workdir, "results/paper/segmented.md")
    assert counts["segmented_fetch_hf"] == 5 and segmented_trainings(out)["pretrained"] == 0
    assert counts["segmented_retokenize"] == 3  # Pythia x 2 and Bloom; GPT-2 reads the GPT-2 tokens
    for name in ("openai-community/gpt2-xl", "EleutherAI/pythia-1.4b", "bigscience/bloom-1b1"):
        assert name in out
    assert "torchrun --standalone --nproc_per_node 4 -m lenex.segmented.continued" in out
    assert "eval/segmented/pythia/seed1/chunk-0.25-x4/L8192.json" in out  # Pythia: L_t 2048
    assert "eval/segmented/gpt2/seed1/chunk-0.25-x4/L4096.json" in out  # GPT-2: L_t 1024
    blocks = out.split("\n\n")
    jobs = [b for b in blocks if re.search(r"^(local)?rule train:", b, re.M) and re.search(r"-x\d+\.pt(,|$)", b, re.M)]
    assert jobs and all("gpu=4" in b for b in jobs)


@pytest.mark.slow
def test_table5_end_to_end_then_nothing_to_do():
    """On the shared finished tiny run (tests/tiny_build.py: the one `make run` builds); it was a
    scratch run on synthetic corpora, which the shared run's stand-ins replace."""
    workdir = finished_tiny()
    target = "results/tiny/tables/segmented/table5.md"
    table = (workdir / target).read_text()
    assert "preset `tiny`" in table and "NOT the paper's scale" in table
    cells = re.findall(r"\| ([\d.]+) / ([\d.]+) / ([+-][\d.]+)", table)
    assert len(cells) == 2 * 3 * 2  # every cell: paper / ours / delta
    assert "6.125 /" in table  # GPT-2 DA at 2 L_t, from the paper's csv
    again = snakemake("-n", target, cwd=workdir)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
