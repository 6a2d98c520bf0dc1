"""Issue 36, the rules: what the workflow checks when it builds the DAG (a training's configs and
its corpus's split sizes, every claims reference), what each job is told about its model
(`--identity` at training, `--expect` wherever a checkpoint or a result file is read) and that
no rule's command names where the checkout lies. Each test fails on the code before issue 36's
rule phase. The end-to-end ones (a swapped checkpoint, a result of another model, an edited
scheme) run the rules on a small LEX run: four models of 8 steps on a prepared stand-in of PG22
and Table 3 (attention resolution) built from them."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from corpus_fixture import WORDS

from test_workflow import REPO, scratch_workflow, short_tiny_trainings
from subprocess_env import env_with_venv
from tiny_build import tiny_copy

SRC = REPO / "src"
TABLE3 = "results/tiny/tables/lex/table3.md"
TABLE3_VARIANTS = ("alibi", "rope", "transformer", "xpos")


def snakemake(work, *args, src=SRC, timeout=900):
    """Snakemake in `work`, the rules' `python -m lenex...` importing lenex from `src`."""
    env = env_with_venv(PYTHONPATH=str(src))
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=work, env=env, capture_output=True,
                          text=True, timeout=timeout)


def said(run) -> str:
    return run.stdout + run.stderr  # Snakemake reports workflow errors on stdout, job errors on stderr


def prepare_stand_in(work: Path, corpus: str, n_docs: int = 30, words: int = 900) -> Path:
    """A prepared corpus at results/tiny/data/<corpus>, prepared as the tiny preset prepares its
    corpora (tokenizer, seed, fractions, shortest document), from synthetic English texts."""
    import random

    from lenex.data.prepare import prepare

    preset = yaml.safe_load((work / "config/presets/tiny.yaml").read_text())
    texts = work / "texts" / corpus
    texts.mkdir(parents=True)
    rng = random.Random(corpus)
    for i in range(n_docs):
        (texts / f"book{i:02d}.txt").write_text(" ".join(rng.choice(WORDS) for _ in range(words)) + ".\n")
    out = work / "results/tiny/data" / corpus
    data = preset["data"]
    prepare({"source": "text_dir", "path": str(texts)}, work / "texts-resources", out, tokenizer=data["tokenizer"],
            seed=data["seed"], valid_fraction=data["valid_fraction"], test_fraction=data["test_fraction"],
            min_doc_tokens=max(1, preset["model"]["train_length"] // 4), role=corpus)
    return out


def small_run_rules() -> list[str]:
    """The rules Table 3 of the small run needs at seed 1 once its corpus exists (nothing fetched or
    prepared; seed 2's results stand as they are), as Snakemake's last option (it takes every word
    after it)."""
    measures = [f"lex_resolution__tiny_{v}_s1_pg22" for v in TABLE3_VARIANTS]
    return ["--allowed-rules", "train", "lex_table_header", "paper_table", *measures]


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """A finished LEX run with Table 3: the shared finished tiny run (tests/tiny_build.py), copied
    with its timestamps and Snakemake's records so that each test may break its copy."""
    return tiny_copy(tmp_path_factory.mktemp("small") / "w", models=("lex",))


def copy_of(run_dir: Path, tmp_path: Path) -> Path:
    """A copy of a finished run (timestamps and Snakemake's records kept), links kept as links."""
    return Path(shutil.copytree(run_dir, tmp_path / "copy", symlinks=True))


def only_error_line(log: Path) -> str:
    lines = log.read_text().strip().splitlines()
    assert lines and lines[-1].startswith("error: ") and not any(l.startswith("Traceback") for l in lines), lines
    return lines[-1]


# -- DAG build -----------------------------------------------------------------------------------
def _config_copy(tmp_path: Path) -> Path:
    work = scratch_workflow(tmp_path / "w")
    (work / "config").unlink()
    shutil.copytree(REPO / "config", work / "config")
    return work


@pytest.mark.parametrize("paper, right, typo, claim", [
    ("receptive-field", '"t1/erf/arxiv/window-40", "t1/trf', '"t1/erf/arxvi/window-40", "t1/trf', "rf-erf-within-trf"),
    ("receptive-field", '"t5/check/min_speedup"', '"t5/check/min_speedupp"', "rf-cache-window-faster"),
    ("segmented", '"f3/after_mean_median"]', '"f3/after_mean_mediann"]', "seg-figure3-attention-spread"),
])
def test_a_claims_reference_to_nothing_fails_the_dry_run(tmp_path, paper, right, typo, claim):
    """An ERF, check or figure reference that names nothing used to resolve to a missing value (the
    claim 'untestable', rc 0): now one error naming the claims file, the claim and the reference."""
    work = _config_copy(tmp_path)
    claims = work / "config/claims" / f"{paper}.yaml"
    text = claims.read_text()
    assert text.count(right) == 1, right
    claims.write_text(text.replace(right, typo))
    run = snakemake(work, "-n", f"results/tiny/claims/{paper}.md")
    ref = typo.split('"')[1]
    assert run.returncode != 0
    assert f"config/claims/{paper}.yaml: claim '{claim}': {ref} names nothing its tables and figures produce (did " \
           f"you mean {right.split(chr(34))[1]}" in said(run), said(run)[-3000:]


def test_every_claims_reference_of_the_papers_names_what_they_produce():
    from lenex.claims.evaluate import check_produced, load_claims
    from lenex.pipeline.workflow import Pipeline

    config = {**yaml.safe_load((REPO / "config/config.yaml").read_text()), "extra_schemes": {}}
    pipeline = Pipeline(config, REPO)
    for paper in config["papers"]:
        produced = pipeline.settings.paper(paper).produced_references(pipeline.settings)
        check_produced(load_claims(REPO / "config/claims" / f"{paper}.yaml"), produced, paper)
    produced = pipeline.settings.paper("receptive-field").produced_references(pipeline.settings)
    assert {"t1/erf/arxiv/window-40", "t4/erf/openwebtext2/alibi-shift-6", "t5/check/min_speedup"} <= produced
    assert pipeline.settings.paper("segmented").produced_references(pipeline.settings) == {"f3/before_mean_median", "f3/after_mean_median"}


def test_n_head_not_dividing_d_model_fails_the_dry_run_and_keeps_the_old_model(tmp_path):
    """`n_head: 3` with `d_model: 64` passed the dry run; the job failed after Snakemake had deleted
    the finished model. Now the DAG is refused: the preset is typed when it is read
    (lenex.experiment.preset_spec)."""
    work = _config_copy(tmp_path)
    preset = work / "config/presets/tiny.yaml"
    text, n = re.subn(r"^(model:\n(?:  .*\n)*?  n_head:) 4$", r"\1 3", preset.read_text(), count=1, flags=re.M)
    assert n == 1
    preset.write_text(text)
    model = work / "results/tiny/models/lex/rope/seed1.pt"
    model.parent.mkdir(parents=True)
    model.write_bytes(b"a finished model")
    for args in (["-n"], ["--cores", "1"]):
        run = snakemake(work, *args, "results/tiny/models/lex/rope/seed1.pt")
        assert run.returncode != 0
        assert "config/presets/tiny.yaml: model: d_model 64 is not divisible by n_head 3" in said(run), said(run)
    assert model.read_bytes() == b"a finished model"


def test_a_prepared_split_shorter_than_a_window_fails_the_dry_run(tmp_path):
    """A validation split shorter than one window was found after the last training step. Where the
    corpus is prepared as the preset prepares it, meta.json's sizes are checked when the DAG is built."""
    work = _config_copy(tmp_path)
    short_tiny_trainings(work, lex_train_corpus="pg22")
    data = prepare_stand_in(work, "pg22", n_docs=12, words=40)  # one document of some 40 tokens is validation
    valid = json.loads((data / "meta.json").read_text())["splits"]["valid"]["n_tokens"]
    window = yaml.safe_load((work / "config/presets/tiny.yaml").read_text())["model"]["train_length"] + 2
    assert valid < window
    run = snakemake(work, "-n", "results/tiny/models/lex/rope/seed1.pt", "--allowed-rules", "train")
    assert run.returncode != 0
    assert (f"results/tiny/data/pg22/valid.bin: the valid split has {valid} tokens, fewer than one training "
            f"window of {window}") in said(run), said(run)[-3000:]


def test_no_rule_command_or_input_names_the_checkout(tmp_path):
    """The preset file was passed as an absolute path (unquoted) to every table rule: a path with a
    space broke them, and a moved checkout re-rendered every page. Under a path with a space and
    a `ü`, no command names the checkout, and a rule runs."""
    work = _config_copy(tmp_path / "a b ü")
    run = snakemake(work, "-n", "-p", "--forceall", "results/tiny/plan/lex.md", "results/tiny/lex.md",
                    "results/tiny/receptive-field.md", "results/tiny/segmented.md")
    assert run.returncode == 0, said(run)[-3000:]
    jobs = run.stdout.split("Building DAG of jobs...")[1]
    assert str(work) not in jobs and str(REPO) not in jobs, [l for l in jobs.splitlines() if str(work) in l][:3]
    assert "--preset-file config/presets/tiny.yaml" in jobs
    run = snakemake(work, "--cores", "1", "results/tiny/figures/lex/figure2.png")
    assert run.returncode == 0 and (work / "results/tiny/figures/lex/figure2.png").stat().st_size, said(run)[-3000:]


@pytest.mark.slow
def test_a_whole_paper_runs_from_a_path_with_a_space_and_an_umlaut(tmp_path):
    """One paper whole (the receptive-field page: a model trained, measured, every table and figure
    drawn, the claims judged) from a checkout under `a b ü`, then nothing to do. On a copy of the
    shared finished tiny run (tests/tiny_build.py) with one model and all that reads it removed."""
    work = tiny_copy(tmp_path / "a b ü", models=("receptive-field",))
    page = "results/tiny/receptive-field.md"
    tiny = work / "results/tiny"
    for gone in ("models/receptive-field/arxiv/alibi", "eval/receptive-field/arxiv/alibi", "tables/receptive-field",
                 "figures/receptive-field", "claims/receptive-field.md", "claims/receptive-field.json", "receptive-field.md"):
        shutil.rmtree(tiny / gone) if (tiny / gone).is_dir() else (tiny / gone).unlink()
    run = snakemake(work, "--cores", "2", page, timeout=1800)
    assert run.returncode == 0, said(run)[-4000:]
    text = (work / page).read_text()
    claims = yaml.safe_load((REPO / "config/claims/receptive-field.yaml").read_text())["claims"]
    assert "(Table 1)" in text and "(Table 2)" in text and f"{len(claims)} claims." in text
    assert (work / "results/tiny/claims/receptive-field.json").stat().st_size
    again = snakemake(work, "-n", page)
    assert again.returncode == 0 and "Nothing to be done" in said(again), said(again)[-3000:]


def test_a_code_stamp_is_the_same_wherever_the_checkout_lies(tmp_path):
    """A moved checkout reruns nothing: the hash of a job's code names its files relative to src/lenex."""
    moved = Path(shutil.copytree(SRC / "lenex", tmp_path / "moved ü/src/lenex",
                                 ignore=shutil.ignore_patterns("__pycache__")))
    script = ("from lenex.pipeline.code import code_hash, job_files;"
              "print(code_hash(job_files('lenex.training.train', 'alibi')), code_hash(job_files('lenex.tables.render')))")
    hashes = [subprocess.run([sys.executable, "-c", script], cwd=src.parent, env={**os.environ, "PYTHONPATH": str(src)},
                             capture_output=True, text=True, check=True).stdout for src in (SRC, moved.parent)]
    assert hashes[0] == hashes[1] and len(hashes[0].split()) == 2


def test_a_job_counts_the_code_of_its_own_scheme_only():
    """Editing ALiBi's file changes the code of ALiBi's jobs only; the renderer's code has no scheme."""
    from lenex.pipeline.code import ROOT, job_files

    def names(files):
        return {p.relative_to(ROOT).as_posix() for p in files}

    alibi, rope, xpos = (names(job_files("lenex.training.train", s)) for s in ("alibi", "rope", "xpos"))
    assert "positions/alibi.py" in alibi and "positions/alibi.py" not in rope | xpos
    assert "positions/rope.py" in rope and "positions/rope.py" in xpos  # xPos is RoPE's rotation, scaled
    assert {"training/train.py", "model/transformer.py", "positions/base.py"} <= alibi & rope & xpos
    render = names(job_files("lenex.tables.render"))
    schemes = {f"positions/{name}.py" for name in ("alibi", "rope", "xpos", "t5", "kerple", "sandwich")}
    assert {"tables/render.py", "tables/templates/table.md.j2"} <= render and not render & schemes


def test_a_job_counts_every_mask_a_registry_finds_by_itself(tmp_path):
    """The mask registry imports every module of lenex/masks/ at its first lookup (lenex.registry),
    which no import statement names: a training still counts each mask's file, and a scheme
    registry's discovered schemes count only as the model's own."""
    from lenex.pipeline.code import ROOT, discovered_files, job_files

    masks = {p.relative_to(ROOT).as_posix() for p in discovered_files(ROOT / "masks/base.py")}
    assert masks == {"masks/blockwise.py", "masks/causal.py", "masks/sliding.py"}
    alibi = {p.relative_to(ROOT).as_posix() for p in job_files("lenex.training.train", "alibi")}
    assert masks | {"registry.py"} <= alibi and "positions/t5.py" not in alibi
    registry = tmp_path / "reg.py"
    registry.write_text('THINGS = Registry("thing", members="lenex.masks.*")\n')
    assert discovered_files(registry) == discovered_files(ROOT / "masks/base.py") | {ROOT / "masks/base.py"}


def test_a_training_records_and_an_evaluation_expects_what_its_path_names(tmp_path):
    work = _config_copy(tmp_path)
    run = snakemake(work, "-n", "-p", "--forceall", "results/tiny/eval/receptive-field/arxiv/alibi/seed2/erf.json")
    assert run.returncode == 0, said(run)[-3000:]
    identity = re.search(r"lenex.training.train .* --identity '([^']+)'", run.stdout)[1]
    assert json.loads(identity) == {"paper": "receptive-field", "preset": "tiny", "variant": "alibi", "corpus": "arxiv"}
    expect = json.loads(re.search(r"receptive_field.evaluate .* --expect '([^']+)'", run.stdout)[1])
    preset = yaml.safe_load((work / "config/presets/tiny.yaml").read_text())
    assert expect["seed"] == preset["train"]["seed"] + 1  # seed 2 trains with the preset's seed + 1
    assert {k: expect[k] for k in ("paper", "preset", "variant", "corpus", "position")} == {
        "paper": "receptive-field", "preset": "tiny", "variant": "alibi", "corpus": "arxiv", "position": "alibi"}


# -- end to end, on a small finished run --------------------------------------------------------------
@pytest.mark.slow
def test_a_swapped_checkpoint_is_refused_by_the_cells_rule(small_run, tmp_path):
    """`cp alibi.pt rope.pt`, then the RoFormer cells: they were ALiBi's numbers, rc 0. Now the
    cells' job refuses the checkpoint (one line naming both files and the field), and so for a
    model of another shape."""
    import torch

    from lenex.config import ModelConfig
    from lenex.training.train import TrainConfig, train

    work = copy_of(small_run, tmp_path)
    models, rope = work / "results/tiny/models/lex", work / "results/tiny/models/lex/rope/seed1.pt"
    job = "lex_resolution__tiny_rope_s1_pg22"
    log = work / "results/tiny/logs/resolution/lex/rope/seed1/pg22.log"
    shutil.copy(models / "alibi/seed1.pt", rope)
    run = snakemake(work, "--cores", "1", TABLE3, "--forcerun", job, *small_run_rules())
    assert run.returncode != 0
    line = only_error_line(log)
    assert line.startswith("error: results/tiny/models/lex/rope/seed1.pt is not the model results/tiny/resolution/"
                           "lex/rope/seed1/pg22/") and line.endswith("expects: position is 'alibi', expected 'rope'"), line
    torch.set_num_threads(1)  # another shape, labelled as the RoFormer model it is not
    other = ModelConfig(n_layer=1, d_model=32, n_head=2, d_ff=64, train_length=64, position="rope")
    train(other, TrainConfig(steps=2, batch_size=2, warmup=1, log_every=1, checkpoint_every=5),
          work / "results/tiny/data/pg22", rope, tmp_path / "other", labels={"paper": "lex", "preset": "tiny",
                                                                               "variant": "rope"})
    run = snakemake(work, "--cores", "1", TABLE3, "--forcerun", job, *small_run_rules())
    assert run.returncode != 0
    assert only_error_line(log).endswith("expects: d_ff is 64, expected 256"), only_error_line(log)


@pytest.mark.slow
def test_a_result_recording_another_model_fails_the_table_rule(small_run, tmp_path):
    """A result file holding another cell's result (copied over it) filled no cell, or the wrong
    one, rc 0. The table job now checks each result against its path and refuses it."""
    work = copy_of(small_run, tmp_path)
    cells = work / "results/tiny/resolution/lex"
    rope = next((cells / "rope/seed1/pg22").rglob("*.json"))
    shutil.copy(cells / "alibi" / rope.relative_to(cells / "rope"), rope)
    run = snakemake(work, "--cores", "1", TABLE3, "--forcerun", "paper_table", *small_run_rules())
    assert run.returncode != 0
    line = only_error_line(work / "results/tiny/logs/tables/lex/table3.log")
    assert line == (f"error: {rope.relative_to(work)}: records variant 'alibi' where its path names 'rope': it holds "
                    "another cell's result; rerun the job that writes it"), line


@pytest.mark.slow
def test_an_edited_scheme_reruns_its_models_only(small_run, tmp_path):
    """Editing ALiBi's slopes left `snakemake -n` at 'Nothing to be done'. The code a job runs is
    an input: now ALiBi's training and measurement rerun, and what reads them; no other model's."""
    work = copy_of(small_run, tmp_path)
    assert "Nothing to be done" in said(snakemake(work, "-n", TABLE3, *small_run_rules()))
    shutil.rmtree(work / ".snakemake/lenex/code")  # stamps written anew (a fresh clone's) rerun nothing
    assert "Nothing to be done" in said(snakemake(work, "-n", TABLE3, *small_run_rules()))
    src = Path(shutil.copytree(SRC, tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")))
    alibi = src / "lenex/positions/alibi.py"
    alibi.write_text(alibi.read_text().replace("def alibi_slopes(", "def alibi_slopes(  # edited\n    ", 1))
    run = snakemake(work, "-n", TABLE3, *small_run_rules(), src=src)
    assert run.returncode == 0, said(run)[-3000:]
    jobs = re.findall(r"^rule (\w+):\n(?:    .*\n)*?    output: (.*)$", run.stdout, re.M)
    models = {Path(out.split(", ")[0]).parent.name for rule, out in jobs if rule == "train"}  # model, curve
    measured = {rule for rule, _ in jobs if rule.startswith("lex_resolution")}
    assert models == {"alibi"} and measured == {"lex_resolution__tiny_alibi_s1_pg22"}, jobs
    assert {rule for rule, _ in jobs} == {"train", "lex_resolution__tiny_alibi_s1_pg22", "lex_table_header",
                                          "paper_table"}
    renderer = src / "lenex/tables/render.py"  # rendering code: the table re-renders, nothing else
    alibi.write_text((SRC / "lenex/positions/alibi.py").read_text())
    renderer.write_text(renderer.read_text() + "\n# edited\n")
    run = snakemake(work, "-n", TABLE3, *small_run_rules(), src=src)
    assert {rule for rule in re.findall(r"^rule (\w+):$", run.stdout, re.M)} == {"paper_table"}, run.stdout[-3000:]
