"""The SLURM profile reaches every job: each paper's whole DAG at the `paper` preset, dry-run under
`profiles/slurm`, and for each job the sbatch request the SLURM executor plugin would build (its own
`get_submit_command` and `set_gres_string`) checked against the preset's `resources:` as the job's
paper sees it: GPUs, CPUs per GPU, memory, time limit, nodes; every evaluation rule submitted as a
job array; no other job asking for a GPU. Every rule's request (issue 48): GPU jobs on one node
(`--nodes=1`: the launch is `torchrun --standalone`), trainings sent SIGTERM ahead of their limit,
the corpus jobs given the preset's data memory, the fetches run locally (where the network is),
and an unset `$VAR` in the profile refused at the dry run with one line.

A dry run caps every job's threads at --cores (1 unless given); a cluster run does not, so the dry
run here is given more cores than any preset's job asks for.
"""
import os
import re
from types import SimpleNamespace

import pytest
import yaml

from lenex.pipeline.plan import parse_dry_run
from lenex.pipeline.resources import SIGNAL_LEAD_S, STAGE_DEFAULTS
from lenex.experiment.presets import paper_view
from lenex.pipeline.startup import unexpanded_variable
from test_workflow import REPO, scratch_workflow, snakemake

pytest.importorskip("snakemake_executor_plugin_slurm")
from snakemake_executor_plugin_slurm.submit_string import get_submit_command  # noqa: E402
from snakemake_executor_plugin_slurm.utils import set_gres_string  # noqa: E402

PROFILE = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
# The cluster presets: `paper` (8-GPU LEX trainings) and `gpu` (every job on one GPU).
PRESETS = {name: yaml.safe_load((REPO / f"config/presets/{name}.yaml").read_text()) for name in ("paper", "gpu")}
PAPERS = yaml.safe_load((REPO / "config/config.yaml").read_text())["papers"]
# Which stage of the preset's `resources:` each GPU rule runs (a rule made per preset and job is named
# by its prefix). A rule asking for a GPU that is not here fails the test: name its stage.
STAGES = {"train": "train", "train_multinode": "train",
          "evaluate": "evaluate", "resolution": "evaluate", "lex_eval": "evaluate", "lex_resolution": "evaluate",
          "receptive_field_evaluate": "evaluate", "receptive_field_cache_window": "evaluate",
          "segmented_evaluate": "evaluate", "segmented_attention": "evaluate"}
ARRAYS = {rule.strip() for rule in PROFILE["slurm-array-jobs"].split(",")}
# Rules that hold a corpus in memory (the preset's `resources: data:`) and rules that reach the network
# (local rules: run where Snakemake runs, never submitted).
DATA_RULES = {"train_tokenizer", "prepare_corpus", "segmented_retokenize"}
FETCH_RULES = {"fetch_pypi", "fetch_debian", "segmented_fetch_hf"}


class Resources(dict):
    """A job's resources as the plugin reads them: `.get(name)` and `.name`."""

    def __getattr__(self, name):
        return self[name]


def sbatch(job) -> str:
    """The sbatch command line the plugin would submit `job` with (one job, not an array)."""
    plugin_job = SimpleNamespace(threads=job.threads, resources=Resources(job.resources), name=job.rule)
    params = {"run_uuid": "RUN", "slurm_logfile": "LOG", "comment_str": f"rule_{job.rule}",
              "account": f"-A {job.resources['slurm_account']}", "partition": f"-p {job.resources['slurm_partition']}",
              "workdir": "WORKDIR"}
    return get_submit_command(plugin_job, params) + set_gres_string(plugin_job)


def option(call: str, name: str) -> str | None:
    """The value of `--name value`, `--name=value` or `-n value` in a command line (None: absent)."""
    found = re.search(rf"(?:^| ){re.escape(name)}[ =](\S+)", call)
    return found[1] if found else None


@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory):
    """Each paper's whole DAG at each cluster preset under the SLURM profile: its jobs, parsed,
    by (preset, paper)."""
    workdir = scratch_workflow(tmp_path_factory.mktemp("slurm-profile"))
    env = {"LENEX_SLURM_PARTITION": "gpu", "LENEX_SLURM_ACCOUNT": "lenex"}
    os.environ.update(env)
    try:
        runs = {}
        for preset in PRESETS:
            for paper in PAPERS:
                run = snakemake("-n", "--forceall", "--profile", str(REPO / "profiles/slurm"), "--cores", "4096",
                                f"results/{preset}/{paper}.md", cwd=workdir)
                assert run.returncode == 0, run.stderr[-3000:]
                runs[preset, paper] = parse_dry_run(run.stdout)
        return runs
    finally:
        for key in env:
            os.environ.pop(key)


def test_the_sbatch_reader_reads_the_plugins_command_lines():
    job = SimpleNamespace(rule="evaluate", threads=4, resources={"mem_mb": 32000, "runtime": 120, "gpu": 1,
                                                                 "cpus_per_gpu": 4, "slurm_partition": "gpu",
                                                                 "slurm_account": "lenex"})
    call = sbatch(job)
    assert (option(call, "-t"), option(call, "--mem"), option(call, "--cpus-per-gpu"), option(call, "--gpus")) == (
        "120", "32000", "4", "1")
    assert option(call, "--nodes") is None and option(call, "-A") == "lenex" and option(call, "-p") == "gpu"


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("paper", PAPERS)
def test_every_job_asks_slurm_for_what_the_preset_gives_its_stage(dry_runs, preset, paper):
    view = paper_view(PRESETS[preset], paper)
    jobs = dry_runs[preset, paper]
    assert jobs
    per_rule: dict[str, int] = {}
    for job in jobs:
        per_rule[job.rule] = per_rule.get(job.rule, 0) + 1
    checked = 0
    for job in jobs:
        call = sbatch(job)
        rule = job.rule.split("__")[0]  # LEX's rules made per preset and job: lex_eval__<preset>_...
        # GPUs are asked for in one form by every rule: `gpu` (sbatch --gpus), never a GRES string
        assert "gres" not in job.resources and "--gres" not in call, (job.rule, call)
        assert option(call, "-p") == "gpu" and option(call, "-A") == "lenex", (job.rule, call)
        if rule not in STAGES:
            # rendering, data and fetch jobs: no GPU, CPUs per task = their threads, the profile's defaults
            assert not job.resources.get("gpu") and option(call, "--gpus") is None, (job.rule, call)
            assert option(call, "--cpus-per-task") == str(job.threads), (job.rule, call)
            data = view["resources"].get("data", {})
            mem = data.get("mem_mb", STAGE_DEFAULTS["data"]["mem_mb"]) if rule in DATA_RULES else \
                PROFILE["default-resources"]["mem_mb"]
            assert option(call, "--mem") == str(mem) and option(call, "-t"), (job.rule, call)
            continue
        stage = view["resources"][STAGES[rule]]
        gpus, threads = stage.get("gpus", 0), stage.get("threads", 1)
        where = f"{paper}: {job.rule} ({job.output})\n{call}"
        assert option(call, "--gpus") == str(gpus), where
        assert option(call, "--cpus-per-gpu") == str(threads // gpus), where
        assert option(call, "--mem") == str(stage["mem_mb"]), where
        assert option(call, "-t") == str(stage["runtime"]), where  # one cell per evaluation job here
        assert option(call, "--nodes") == str(stage.get("nodes", 1)) == "1", where  # torchrun --standalone
        if STAGES[rule] == "train":
            assert option(call, "--signal") == f"TERM@{stage.get('signal_lead_s', SIGNAL_LEAD_S)}", where
            assert ("--exclusive" in call.split()) == bool(stage.get("exclusive")), where
        if STAGES[rule] == "evaluate":
            # an array: the profile names the rule, and the DAG has more than one of its jobs
            assert job.rule in ARRAYS and per_rule[job.rule] > 1, where
        else:
            assert job.rule not in ARRAYS, where
        checked += 1
    assert checked, f"{paper}: no GPU job at `{preset}`"


def test_lex_evaluations_at_paper_are_one_cell_jobs_the_profile_names(dry_runs):
    """LEX's cells at a GPU preset: rules `evaluate` and `resolution` (111 jobs), not rules made per job."""
    rules = [job.rule for job in dry_runs["paper", "lex"]]
    assert rules.count("evaluate") == 102 and rules.count("resolution") == 9
    assert not [rule for rule in rules if "__" in rule]
    assert {"evaluate", "resolution"} <= ARRAYS


def declared_local_rules() -> set[str]:
    """The rules the workflow declares `localrules:` (a dry run prints every job as `rule`, the
    dry-run executor being local itself, so the declaration is read from the rule files)."""
    names = set()
    for path in [REPO / "Snakefile", *sorted((REPO / "workflow/rules").glob("*.smk"))]:
        for block in re.findall(r"^localrules:\s*\n((?:[ \t]+\w+,?\s*\n)+)", path.read_text(), re.M):
            names |= set(re.findall(r"\w+", block))
    return names


@pytest.mark.parametrize("paper", PAPERS)
def test_fetches_run_locally_and_are_never_submitted(dry_runs, paper):
    local = declared_local_rules()
    fetched = {job.rule for job in dry_runs["paper", paper]} & FETCH_RULES
    assert fetched, f"{paper}: no fetch job in the DAG to check"
    assert fetched <= local, f"{paper}: fetch rules submitted to SLURM: {sorted(fetched - local)}"
    assert local == FETCH_RULES, f"local rules beyond the fetches: {sorted(local - FETCH_RULES)}"


def test_lex_at_paper_trains_on_whole_nodes_and_asks_for_the_signal(dry_runs):
    train = next(job for job in dry_runs["paper", "lex"] if job.rule == "train")
    call = sbatch(train)
    assert "--exclusive" in call.split() and option(call, "--signal") == "TERM@300" and option(call, "--nodes") == "1"


def test_an_unset_variable_in_the_profile_is_one_clear_line():
    line = unexpanded_variable({"slurm_partition": "$LENEX_SLURM_PARTITION", "mem_mb": 4000}, {}, environ={})
    assert line == ("profile default-resources: slurm_partition is '$LENEX_SLURM_PARTITION', but environment "
                    "variable LENEX_SLURM_PARTITION is not set; export LENEX_SLURM_PARTITION=... (or write the "
                    "value into the profile) and rerun")
    assert "set-resources of rule train: slurm_account" in unexpanded_variable(
        {}, {"train": {"slurm_account": "${ACC}"}}, environ={})
    assert unexpanded_variable({"slurm_partition": "$PART"}, {}, environ={"PART": "gpu"}) is None  # set: expanded later
    assert unexpanded_variable({"slurm_partition": "gpu", "runtime": 30}, {"train": {"mem_mb": 1}}, environ={}) is None


def test_the_dry_run_refuses_an_unset_partition(tmp_path):
    workdir = scratch_workflow(tmp_path / "unset")
    env_before = {key: os.environ.pop(key, None) for key in ("LENEX_SLURM_PARTITION", "LENEX_SLURM_ACCOUNT")}
    try:
        run = snakemake("-n", "--profile", str(REPO / "profiles/slurm"), "results/paper/plan/lex.md", cwd=workdir)
    finally:
        os.environ.update({key: value for key, value in env_before.items() if value is not None})
    assert run.returncode != 0
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert errors == [line for line in errors if "LENEX_SLURM_PARTITION is not set" in line] and len(errors) == 1
