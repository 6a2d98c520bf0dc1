"""Issue 60, config side: no config file runs code (YTE templates, Python tags), the code that runs
is the checkout's own, and bad input is one line in the user's terms (file, key or entry, allowed
values) from the DAG build. Synthetic files on scratch copies of config/; a few dry runs."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from subprocess_env import env_with_venv

from lenex.claims.cell_names import table_cells
from lenex.claims.evaluate import check_produced, load_claims
from lenex.files import read_yaml
from lenex.pipeline.hf_profile import HFProfile
from lenex.pipeline.launch import foreign_code
from lenex.pipeline.settings import Settings, validate
from lenex.pipeline.startup import check_config_files
from lenex.pipeline.user_errors import one_line_errors
from lenex.scale_study.sweeps import load_sweeps

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"


def repo_config(**changes) -> dict:
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    config.update(yaml.safe_load((REPO / "config/schemes.yaml").read_text()) or {})
    return {**config, **changes}


def scratch_root(path: Path) -> Path:
    """config/ and workflow/schemas/ copied: a root Settings reads, free to break."""
    shutil.copytree(REPO / "config", path / "config")
    shutil.copytree(REPO / "workflow/schemas", path / "workflow/schemas")
    return path


def settings_of(root: Path, **changes) -> Settings:
    return Settings(repo_config(**changes), root, stamps=root / "stamps")


# -- no config runs code ---------------------------------------------------------------------------

# Each kind of config file and the loader lenex (or the Snakefile's start-up check, for the files
# Snakemake loads) reads it with.
KINDS = {
    "config/config.yaml": lambda root, path: check_config_files([path]),
    "config/schemes.yaml": lambda root, path: check_config_files([path]),
    "--configfile": lambda root, path: check_config_files([path]),
    "config/presets/tiny.yaml": lambda root, path: settings_of(root).preset("tiny"),
    "config/experiments/lex.yaml": lambda root, path: settings_of(root).experiment("lex"),
    "config/claims/lex.yaml": lambda root, path: load_claims(path, root / "workflow/schemas/claims.schema.yaml"),
    "config/hf_models.yaml": lambda root, path: HFProfile(settings_of(root)).models_config(),
    "config/sweeps.yaml": lambda root, path: load_sweeps(path, REPO),
    "config/corpora-workstation.yaml": lambda root, path: read_yaml(path),
}
# What YTE (Snakemake's config templating) reads as code, and a tag Snakemake's loader resolves.
TEMPLATES = {
    "__use_yte__": ("__use_yte__: true\n", "line 1: the key __use_yte__ is YTE template syntax"),
    "?if key": ('"?if True": {probe: 1}\n', "line 1: '?if True' (a string starting with '?') is YTE template syntax"),
    "?expression": ("probe: ?__import__('os').getpid()\n", "line 1: \"?__import__('os').getpid()\" (a string starting with '?')"),
    "__definitions__": ("__definitions__: [x = 1]\n", "line 1: the key __definitions__ is YTE template syntax"),
    "python tag": ("probe: !!python/name:os.system\n", "line 1 column 8: tag !!python/name:os.system asks for a "
                   "Python object"),
}


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_config_file_of_each_kind_with_a_template_or_python_tag_is_refused(tmp_path, kind, template):
    """Before: `__use_yte__: true` at the top of config/schemes.yaml or of a --configfile made
    Snakemake evaluate the file's `?` expressions (a command ran); lenex's own readers took the
    other files' templates as plain strings."""
    root = scratch_root(tmp_path / "root")
    path = tmp_path / "mine.yaml" if kind == "--configfile" else root / kind
    original = (REPO / "config/config.yaml").read_text() if kind == "--configfile" else path.read_text()
    text, said = TEMPLATES[template]
    path.write_text(text + original)
    with pytest.raises(ValueError) as err:
        KINDS[kind](root, path)
    message = str(err.value)
    assert message.startswith(f"{path}: {said}") and "\n" not in message, message


def test_what_yte_would_evaluate_is_what_is_refused(tmp_path):
    """The hazard itself, as Snakemake's config loader meets it (yte.process_yaml with
    require_use_yte, snakemake.common.configfile): a `?` value of a file with `__use_yte__: true`
    is Python, evaluated; the same file is refused by lenex's reader, and so is every sample above
    that YTE would read as an instruction."""
    import yte

    text = "__use_yte__: true\nprobe: ?__import__('os').getpid()\n"
    assert yte.process_yaml(text, require_use_yte=True) == {"probe": os.getpid()}
    branch = "__use_yte__: true\n" + TEMPLATES["?if key"][0]
    assert yte.process_yaml(branch, require_use_yte=True) == {"probe": 1}  # an `if`, not a key
    for sample in (text, branch):
        path = tmp_path / "c.yaml"
        path.write_text(sample)
        with pytest.raises(ValueError, match=r"line 1: the key __use_yte__ is YTE template syntax"):
            read_yaml(path)


def test_every_committed_yaml_file_is_plain_data():
    """No file of the checkout uses a template or a tag the check refuses (profiles included:
    Snakemake evaluates a profile's YTE before any workflow code runs)."""
    files = [p for pattern in ("config/**/*.yaml", "workflow/**/*.yaml", "profiles/**/*.yaml", "results/**/*.yaml")
             for p in REPO.glob(pattern)]
    assert len(files) > 20
    for path in files:
        read_yaml(path)


def test_only_safe_yaml_loading_in_the_code():
    """Every YAML read is yaml.safe_load or lenex.files.read_yaml (a SafeLoader): no FullLoader,
    UnsafeLoader or plain yaml.load elsewhere, which would build Python objects from tags."""
    unsafe = re.compile(r"yaml\.(unsafe_load|full_load|load_all|load)\(|Loader=(yaml\.)?(Full|Unsafe|)Loader\b")
    found = []
    for folder in ("src", "workflow", "scripts", "benchmarks"):
        for path in (REPO / folder).rglob("*"):
            if path.suffix in (".py", ".smk") and path.is_file():
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if unsafe.search(line):
                        found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert len(found) == 1 and found[0].startswith("src/lenex/files.py:") and "Loader=_unique_key_loader()" in found[0], \
        found  # read_yaml itself, whose loader is a SafeLoader:
    assert 'class UniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader))' in (SRC / "lenex/files.py").read_text()


# -- the checkout's own code ------------------------------------------------------------------------

def _checkout_with_other_code(path: Path) -> Path:
    """A checkout (config/, src/lenex) whose lenex is not the one Python imports (the tests' own)."""
    path.mkdir()
    for name in ("Snakefile", "workflow"):
        (path / name).symlink_to(REPO / name)
    shutil.copytree(REPO / "config", path / "config")
    (path / "src/lenex").mkdir(parents=True)
    (path / "src/lenex/__init__.py").write_text("")
    return path


def test_an_entry_point_in_a_checkout_refuses_another_checkouts_code(tmp_path):
    """Before: `cp -a` of a checkout whose venv had lenex installed editable ran, and code-stamped,
    the original's code; an edit in the copy changed nothing and nothing said why."""
    copy = _checkout_with_other_code(tmp_path / "copy")
    assert foreign_code(REPO) is None  # the checkout running its own code
    assert foreign_code(tmp_path) is None  # no checkout: nothing to compare with
    assert foreign_code(copy) == (
        f"Python imports lenex from {SRC / 'lenex'}, not this checkout's {copy / 'src/lenex'}: run `pip install -e .` "
        f"in {copy} (with the venv the jobs run in), or set PYTHONPATH={copy / 'src'}")
    job = subprocess.run([sys.executable, "-m", "lenex.pipeline.launch", "lenex.tables.render", "--help"], cwd=copy,
                         env=env_with_venv(PYTHONPATH=str(SRC)), capture_output=True, text=True, timeout=60)
    assert job.returncode == 1 and job.stderr.strip().splitlines() == [f"error: {foreign_code(copy)}"], job.stderr


def _snakemake(cwd, *args, src=SRC):
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=cwd, env=env_with_venv(PYTHONPATH=str(src)),
                          capture_output=True, text=True, timeout=300)


def test_the_snakefile_refuses_another_checkouts_code(tmp_path):
    copy = _checkout_with_other_code(tmp_path / "copy")
    run = _snakemake(copy, "-n")
    lines = (run.stdout + run.stderr).strip().splitlines()
    assert run.returncode == 1 and lines == [
        f"error: Python imports lenex from {SRC / 'lenex'}, not this checkout's {copy / 'src/lenex'}: run "
        f"`pip install -e .` in {copy} (with the venv you run snakemake from), or set PYTHONPATH={copy / 'src'}"], lines


# -- the dry runs: what Snakemake loads, and what only the DAG build knows ----------------------------

def _scratch_workflow(path: Path) -> Path:
    path.mkdir()
    for name in ("Snakefile", "workflow"):
        (path / name).symlink_to(REPO / name)
    shutil.copytree(REPO / "config", path / "config")
    (path / "results").mkdir()
    (path / "results/scale-study").symlink_to(REPO / "results/scale-study")
    return path


RUNS_CODE = "__use_yte__: true\nextra_schemes: ?__import__('pathlib').Path('RAN').touch() or {}\n"


def test_yte_in_schemes_yaml_stops_the_dry_run_before_snakemake_evaluates_it(tmp_path):
    """config/schemes.yaml is read by the Snakefile's start-up check before its `configfile:`
    line hands it to Snakemake's loader: refused, and its code never ran."""
    work = _scratch_workflow(tmp_path / "w")
    (work / "config/schemes.yaml").write_text(RUNS_CODE)
    run = _snakemake(work, "-n")
    lines = (run.stdout + run.stderr).strip().splitlines()
    assert run.returncode == 1 and lines == [
        "error: config/schemes.yaml: line 1: the key __use_yte__ is YTE template syntax, which Snakemake evaluates "
        "as Python code; lenex's config files are plain data: write the values out"], lines
    assert not (work / "RAN").exists()


def test_yte_in_a_configfile_is_refused_but_snakemake_has_evaluated_it_first(tmp_path):
    """The limit, checked: Snakemake's command line loads a --configfile before any workflow code
    runs, so its template has run when the Snakefile refuses the file (docs/reliability.md)."""
    work = _scratch_workflow(tmp_path / "w")
    mine = tmp_path / "mine.yaml"
    mine.write_text(RUNS_CODE)
    run = _snakemake(work, "-n", "--configfile", str(mine))
    assert run.returncode == 1
    assert f"error: {mine}: line 1: the key __use_yte__ is YTE template syntax" in run.stdout + run.stderr
    assert (work / "RAN").exists()


def test_an_unknown_config_key_and_a_cell_that_no_table_has_fail_the_dry_run_in_one_line(tmp_path):
    """Before: `--config foo=1` printed 427 lines (jsonschema's dump of the whole config schema);
    a claims file's cell reference that matched no cell passed the dry run (the claim then
    'untestable' at run time)."""
    work = _scratch_workflow(tmp_path / "w")
    run = _snakemake(work, "-n", "--config", "foo=1")
    errors = [line for line in (run.stdout + run.stderr).splitlines() if "foo" in line or "rror" in line]
    assert run.returncode == 1 and errors == [
        "error: unknown config key 'foo' (from config/config.yaml, config/schemes.yaml, a --configfile or --config); "
        "known: bpe_corpus, corpora, crosscheck, extra_schemes, from_raw, papers, preset, scale_study, scale_study_only, scale_study_train, sweeps"], errors
    claims = work / "config/claims/lex.yaml"
    claims.write_text(claims.read_text().replace('- less: ["t2/pg22/lex@0.25", "t2/pg22/transformer@0.25"]',
                                                 '- less: ["t2/pg22/lexx@0.25", "t2/pg22/transformer@0.25"]', 1))
    run = _snakemake(work, "-n", "results/tiny/claims/lex.md")
    said = run.stdout + run.stderr
    assert run.returncode == 1 and "Traceback" not in said, said[-3000:]
    assert said.strip().splitlines()[-1] == (
        "error: config/claims/lex.yaml: claim 'lex-best-at-short-lengths': t2/pg22/lexx@0.25 names nothing its "
        "tables and figures produce (did you mean t2/pg22/lex@0.25 or t2/pg22/lex@0.5 or t2/pg22/lex@2?)")


# -- errors in the user's terms, without Snakemake ---------------------------------------------------

TINY = (REPO / "config/presets/tiny.yaml").read_text()


@pytest.mark.parametrize("text, held", [("", "is empty"), ("# nothing yet\n", "is empty"), ("- tiny\n", "holds a list"),
                                        ("tiny\n", "holds a str")])
def test_an_empty_or_non_mapping_preset_is_named_and_only_breaks_itself(tmp_path, capsys, text, held):
    """Before: an empty or non-mapping preset file broke every preset with a TypeError ('NoneType'
    object is not subscriptable) naming no file."""
    root = scratch_root(tmp_path)
    (root / "config/presets/mine.yaml").write_text(text)
    settings = settings_of(root)
    assert settings.preset_names == ["gpu", "paper", "tiny", "workstation"]
    said = (f"{os.path.relpath(root / 'config/presets/mine.yaml')}: the file {held}; it must be a mapping of keys "
            "(name, description, model, train, data, eval, resources)")
    assert capsys.readouterr().err.strip().splitlines() == [
        f"lenex: warning: preset 'mine' left out ({said}); only the preset in use, 'tiny', must be valid"]
    with pytest.raises(ValueError) as err:
        settings.preset("mine")  # a run that asks for it fails naming it
    assert str(err.value) == said


@pytest.mark.parametrize("change, said", [
    (lambda p: p["data"].update(seed=1234.0), "data.seed: 1234.0 (must be an integer: write 1234)"),
    (lambda p: p["train"].update(steps=16.0), "train.steps: 16.0 (must be an integer: write 16)"),
    (lambda p: p["papers"]["lex"]["experiment"].update(seeds=2.0),
     "papers.lex.experiment.seeds: 2.0 (must be an integer: write 2)"),
])
def test_an_integer_written_as_a_float_is_refused_naming_file_and_key(change, said):
    """Before: `data.seed: 1234.0` passed the schema (JSON Schema takes 1234.0 for an integer) and
    failed inside a job."""
    preset = yaml.safe_load(TINY)
    change(preset)
    with pytest.raises(ValueError) as err:
        validate(preset, REPO / "workflow/schemas/preset.schema.yaml", "config/presets/mine.yaml")
    assert str(err.value) == f"config/presets/mine.yaml: {said}"


def test_a_whole_float_where_a_number_is_asked_for_still_passes():
    preset = yaml.safe_load(TINY)
    preset["train"]["lr"] = 1.0  # a number, not an integer: 1.0 is right
    preset["data"]["seed"] = 1234
    validate(preset, REPO / "workflow/schemas/preset.schema.yaml", "config/presets/mine.yaml")


@pytest.mark.parametrize("name", ["../../x", "tiny/../tiny", "/etc/passwd", ""])
def test_a_preset_name_is_never_a_path(tmp_path, name):
    """Before: `--config preset=../../x` read a file outside config/presets/, and an unknown one
    said `known: none` (the presets of the folder the path led to)."""
    root = scratch_root(tmp_path)
    (tmp_path / "x.yaml").write_text(TINY.replace("name: tiny", "name: x"))
    with pytest.raises(ValueError) as err:
        settings_of(root, preset=name)
    assert str(err.value) == (f"config preset: {name!r} is not a preset name: a preset is config/presets/<name>.yaml, "
                              "named by <name> alone (letters, digits, '_' and '-'); known: gpu, paper, tiny, workstation")
    with pytest.raises(ValueError, match=r"^preset '\.\./x' is not a name of config/presets/<name>.yaml; known: gpu, "):
        settings_of(root).preset("../x")


def test_an_unknown_config_key_is_one_line_naming_the_known_ones(tmp_path):
    with pytest.raises(ValueError) as err:
        settings_of(scratch_root(tmp_path), crosscheck={**repo_config()["crosscheck"], "seedz": [1]})
    assert str(err.value) == ("unknown config key 'crosscheck.seedz' (from config/config.yaml, config/schemes.yaml, "
                              "a --configfile or --config); known: backends, bca_variant, corpus, multiples, paper, "
                              "seeds, variants")


def test_a_claims_cell_reference_is_checked_against_the_tables_cells(tmp_path):
    """The cells a paper's tables produce, from its experiment file alone: LEX Table 2 is 2
    sections x 4 rows x 6 columns = 48 cells; a method, dataset or column no table has is refused."""
    settings = Settings(repo_config(extra_schemes={}), REPO, stamps=tmp_path)
    cells = table_cells(settings.experiment("lex"))
    table2 = {c for c in cells if c.startswith("t2/")}
    assert len(table2) == 48 and {"t2/pg22/lex@0.25", "t2/qmsum/roformer@8", "t2/pg22/transformer@1"} <= table2
    produced = settings.paper("lex").produced_references(settings)
    claims = load_claims(REPO / "config/claims/lex.yaml")
    check_produced(claims, produced, "lex.yaml", cells=cells)  # the committed claims name only real cells
    first = claims["claims"][0]["check"]["all"][0]["less"]
    for typo, hint in (("t2/pg22/lexx@0.25", "did you mean t2/pg22/lex@0.25"), ("t2/pg23/lex@0.25", "t2/pg22/lex@0.25"),
                       ("t2/pg22/lex@16", "t2/pg22/lex@1")):
        first[0] = typo
        with pytest.raises(ValueError, match=re.escape(f"lex.yaml: claim 'lex-best-at-short-lengths': {typo} names "
                                                       "nothing its tables and figures produce (")) as err:
            check_produced(claims, produced, "lex.yaml", cells=cells)
        assert hint in str(err.value)
    first[0] = "t2/pg22/lex@0.250"  # another spelling of the same multiple is the same cell
    check_produced(claims, produced, "lex.yaml", cells=cells)


@pytest.mark.parametrize("name, loader", [
    ("claims/lex.yaml", lambda root: load_claims(root / "config/claims/lex.yaml")),
    ("hf_models.yaml", lambda root: HFProfile(settings_of(root)).models_config()),
])
def test_a_yaml_error_of_claims_or_hf_models_is_one_line_with_file_and_line(tmp_path, capsys, name, loader):
    """Before: the right message arrived inside an InputFunctionException and a traceback."""
    root = scratch_root(tmp_path)
    path = root / "config" / name
    path.write_text(path.read_text() + "broken: [\n")
    one_line_errors()  # as under Snakemake (workflow/rules/common.smk)
    try:
        with pytest.raises(SystemExit) as stop:
            loader(root)
    finally:
        one_line_errors(False)
    said = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 1 and len(said) == 1, said
    assert re.fullmatch(rf"error: {re.escape(str(path))}: line \d+ column \d+: .* \(not valid YAML\)", said[0]), said


def test_a_corpus_typo_in_an_experiment_names_the_entry_and_the_known_corpora(tmp_path):
    """Before: `corpus: pg23` in a table section: `ValueError in file workflow/rules/lex.smk, line 67:
    unknown corpus 'pg23'` and a traceback, naming neither the experiment file nor the entry."""
    root = scratch_root(tmp_path)
    path = root / "config/experiments/lex.yaml"
    path.write_text(path.read_text().replace("corpus: qmsum", "corpus: qmsun", 1))
    with pytest.raises(ValueError) as err:
        settings_of(root).experiment("lex")
    assert str(err.value) == (f"{os.path.relpath(path)}: tables.table2.sections[1].corpus: unknown corpus 'qmsun'; "
                              "known: arxiv, github, narrativeqa, openwebtext2, pg22, qmsum, train_mix "
                              "(config/config.yaml corpora)")


@pytest.mark.parametrize("source, said", [
    ("import math\nraise RuntimeError('boom in my scheme')\n", "raised RuntimeError at line 2 when imported: boom in my scheme"),
    ("def broken(:\n    pass\n", "raised SyntaxError at line 1 when imported: "),
    ("import lenex_no_such_module\n", "raised ModuleNotFoundError at line 1 when imported: No module named"),
])
def test_a_scheme_that_raises_at_import_names_the_file_line_and_entry(tmp_path, source, said):
    """Before: `RuntimeError in file workflow/rules/common.smk, line 17: boom in my scheme` and a
    traceback: neither the scheme's file nor its entry in config/schemes.yaml."""
    root = scratch_root(tmp_path / "root")
    scheme = tmp_path / "mine.py"
    scheme.write_text(source)
    entry = {"mine": {"position": "mine", "module": str(scheme)}}
    (root / "config/schemes.yaml").write_text(yaml.safe_dump({"extra_schemes": entry}))
    with pytest.raises(ValueError) as err:
        settings_of(root, extra_schemes=entry)
    assert str(err.value).startswith(f"{os.path.relpath(root / 'config/schemes.yaml')}: extra_schemes.mine: position "
                                     f"scheme module {str(scheme)!r} {said}"), str(err.value)


def test_make_report_with_nothing_run_exits_non_zero_with_one_line(tmp_path):
    """Before: exit 0 and an empty report."""
    shutil.copy(REPO / "Makefile", tmp_path / "Makefile")
    shutil.copytree(REPO / "config", tmp_path / "config")
    run = subprocess.run(["make", "-o", "setup", "report", "PRESET=nothing", "CORES=1"], cwd=tmp_path,
                         env=env_with_venv(), capture_output=True, text=True, timeout=60)
    # make's own line: `make: ***`, or `make[1]: ***` when the tests themselves run under make.
    ours = [line for line in run.stderr.splitlines() if not re.match(r"make(\[\d+\])?: \*\*\*", line)]
    assert run.returncode != 0 and ours == [
        "error: results/nothing/ holds no table, figure, claims page or dataset card to report: run "
        "`snakemake --cores 1 --config preset=nothing` (or one of its targets) first"], run.stderr
    assert not (tmp_path / "results/nothing/report.html").exists()


# -- a failed claims job keeps the previous page ------------------------------------------------------

def test_a_failed_claims_job_keeps_the_previous_claims_page(tmp_path):
    """Before: Snakemake deleted the outputs of the failed claims job, the previous page with them.
    The rule's outputs are update(): Snakemake keeps them while the job runs and restores them when
    it fails. Here the job fails on a cells file edited to NaN (the claims' read check)."""
    work = _scratch_workflow(tmp_path / "w")
    tables, figures, claims = (work / "results/tiny" / part for part in ("tables/lex", "figures/lex", "claims"))
    for folder in (tables, figures, claims):
        folder.mkdir(parents=True)
    (figures / "figure2.cells.json").write_text(json.dumps({"figure": 2, "values": {}, "cells": []}))
    experiment = yaml.safe_load((REPO / "config/experiments/lex.yaml").read_text())
    for key, spec in experiment["tables"].items():  # a cell of every table: enough for the job to start
        (tables / f"{key}.cells.json").write_text(json.dumps({"table": spec["table"], "cells": [
            {"dataset": "pg22", "method": "lex", "multiple": 1, "ours": float("nan"), "paper": 1.0}]}))
    page, record = claims / "lex.md", claims / "lex.json"
    page.write_text("# the previous claims page\n")
    record.write_text("{}\n")
    os.utime(page, (1, 1))
    os.utime(record, (1, 1))
    run = _snakemake(work, "--cores", "1", "results/tiny/claims/lex.md", "--allowed-rules", "paper_claims")
    said = run.stdout + run.stderr
    assert run.returncode == 1 and "Restored previous version of results/tiny/claims/lex.md" in said, said[-3000:]
    assert page.read_text() == "# the previous claims page\n" and record.read_text() == "{}\n"
    assert "is nan: not a finite number" in (work / "results/tiny/logs/claims/lex.log").read_text()


def test_a_failed_table_job_keeps_the_previous_table(tmp_path):
    """Before: a raw record without its seed failed the table job and Snakemake deleted the table.
    The table rule's outputs are update(), as the claims': here the committed workstation raw
    results with one evaluation's `seed` removed fail the job, and the previous table is put back."""
    import lzma

    work = _scratch_workflow(tmp_path / "w")
    ours = work / "results/workstation"
    ours.mkdir()
    for name in ("raw", "tables"):
        shutil.copytree(REPO / "results/workstation" / name, ours / name)
    shutil.copy(REPO / "results/workstation/runs.yaml", ours / "runs.yaml")
    part = ours / "raw/lex.part-run.jsonl.xz"
    lines = lzma.decompress(part.read_bytes()).decode().splitlines()
    first = next(i for i, line in enumerate(lines)
                 if '/eval/lex/' in line and '/pg22/causal/' in line and '"seed"' in line)
    record = json.loads(lines[first])
    del record["seed"]
    lines[first] = json.dumps(record)
    part.write_bytes(lzma.compress(("\n".join(lines) + "\n").encode()))
    previous = {path: path.read_bytes() for path in (ours / "tables/lex").glob("table2.*")}
    for path in previous:
        os.utime(path, (1, 1))
    run = _snakemake(work, "--cores", "1", "results/workstation/tables/lex/table2.md", "--config", "from_raw=True",
                     "preset=workstation", "--allowed-rules", "paper_table", "--forcerun", "paper_table")
    said = run.stdout + run.stderr
    assert run.returncode == 1 and "Restored previous version of results/workstation/tables/lex/table2.md" in said, \
        said[-3000:]
    for path, content in previous.items():
        assert path.read_bytes() == content, f"{path} was not put back"
