"""The inputs and outputs of the emergence sweeps' Snakemake rules (workflow/rules/sweeps.smk),
as plain functions: the rules stay thin and these are tested without Snakemake."""
from __future__ import annotations

from pathlib import Path

from ..data.corpus import fetched_files
from ..files import read_json, read_yaml
from . import sweeps as sw


_LOADED: dict = {}


def sweeps_config(root: str | Path = sw.ROOT) -> dict:
    """config/sweeps.yaml of the checkout at `root`, read once and only when a sweep rule's input is
    asked for (not when Snakemake parses the workflow for the papers' targets)."""
    root = Path(root)
    if root not in _LOADED:
        _LOADED[root] = sw.load_sweeps(root / "config" / "sweeps.yaml", root)
    return _LOADED[root]


def corpus_meta(config: dict, corpus: str, work: str = sw.WORK) -> str:
    """The file that marks a corpus prepared for the sweeps (written last by lenex.data.prepare)."""
    return str(sw.corpus_folder(config, corpus, work) / "meta.json")


def corpus_inputs(config: dict, corpus: str, tokenizer: str, root: Path = sw.ROOT) -> list[str]:
    """The fetched packages a sweep corpus is read from (the pipeline's fetch rules make them);
    the sweeps prepare their corpora with the config's tokenizer only."""
    if tokenizer != config["tokenizer"]:
        raise ValueError(f"the sweeps tokenize with {config['tokenizer']}, not {tokenizer}")
    corpora = read_yaml(root / config["corpora"])["corpora"]
    if corpus not in corpora:
        raise ValueError(f"corpus {corpus!r} is not in {config['corpora']}")
    return fetched_files(corpora[corpus])


def point_file(sweep: str, ident: str, out: str = sw.OUT) -> str:
    return f"{out}/{sweep}/points/{ident}.json"


def point_inputs(config: dict, sweep: str, ident: str) -> dict[str, str]:
    """A point's record is scored from its model, on its corpus (one job prepares a corpus, so two
    points never race on it)."""
    point = sw.find_point(config, sweep, ident)
    return {"model": str(sw.point_files(point).model), "data": corpus_meta(config, point["corpus"])}


def part_inputs(sweep: str, part: str, out: str = sw.OUT) -> list[str]:
    """The points of a part, as the committed plan (plan.json) fixed them."""
    plan = Path(out) / "plan.json"
    if not plan.exists():
        raise ValueError(f"{plan} is missing: run `python -m lenex.scale_study.sweep_run plan` first")
    parts = read_json(plan)["sweeps"].get(sweep, {}).get("parts", {})
    if part not in parts:
        raise ValueError(f"sweep {sweep!r} has no part {part!r} in {plan}; its parts: {', '.join(parts) or 'none'}")
    return [point_file(sweep, ident, out) for ident in parts[part]]


def report_inputs(sweep: str, out: str = sw.OUT) -> list[str]:
    """Every part's record of a sweep: its page is rendered once all of them ran."""
    parts = read_json(Path(out) / "plan.json")["sweeps"][sweep]["parts"]
    return [f"{out}/{sweep}/parts/{part}.json" for part in parts]


def recorded_points(root: str | Path = sw.ROOT, out: str = sw.OUT) -> list[str]:
    """Every point record under <out>/<sweep>/points/ (relative to `root`): what the curves page reads."""
    return sorted(str(p.relative_to(root)) for p in Path(root).glob(f"{out}/*/points/*.json"))
