"""The targets of the scale study's Snakemake rules (workflow/rules/scale_study.smk), as plain
functions: the rules stay thin and these are tested without Snakemake.

A point is two targets: its model (results/scale-study/models/study/<point>.pt, kept, not committed,
trained by the pipeline's one training rule: lenex.scale_study.studies) and its record
(records/<point>.json, until the gather adds it to points.jsonl). Snakemake decides
what runs: a point whose model is kept is only scored; one whose model is gone is trained again.
Rule scale_study and the gather ask for the records of the grid's points that points.jsonl (the
committed store) does not hold complete, cheapest first; with every point recorded, or with
`train` off, they ask for none, so regenerating points.jsonl and the pages from the committed
records trains nothing.
"""
from __future__ import annotations

from pathlib import Path

from ..data.corpus import fetched_files
from . import study as st
from .points import missing_multiples, missing_protocols, read_points

OUT = "results/scale-study"
POINTS = f"{OUT}/{st.POINTS}"
CONFIG = "config/scale-study.yaml"
WRITEUP = [f"{OUT}/README.md", f"{OUT}/ratio.png"]
FLAG = "scale_study=True"  # the config flag that defines the rules (lenex.pipeline.settings)

_LOADED: dict = {}


def study_config(root: str | Path = st.ROOT) -> dict:
    """config/scale-study.yaml of the checkout at `root`, read once and only when a study rule's
    input is asked for (not when Snakemake parses the workflow for the papers' targets)."""
    root = Path(root)
    if root not in _LOADED:
        _LOADED[root] = st.load_study(root / CONFIG)
    return _LOADED[root]


def record_file(name: str, out: str = OUT) -> str:
    return f"{out}/records/{name}.json"


def data_meta(tokenizer: str, out: str = OUT) -> str:
    """The file that marks the corpus prepared with `tokenizer` (written last by lenex.data.prepare)."""
    return f"{out}/data/{tokenizer}/meta.json"


def tokenizer_file(tokenizer: str, out: str = OUT) -> str:
    return f"{out}/tokenizer/{tokenizer}.json"


def pending_points(study: dict, store: Path) -> list[dict]:
    """The grid's points that the store does not hold complete (no record, or one lacking a
    multiple or protocol the config asks for now), cheapest first (st.estimated_cost): a run
    cut off midway has covered every phenomenon at the small budgets."""
    done = read_points(Path(store))
    pending = []
    for point in sorted(st.expand_grid(study), key=st.estimated_cost):
        recorded = done.get(point["key"])
        if (recorded is None or missing_multiples(recorded, point["multiples"])
                or missing_protocols(recorded, point["multiples"], point["protocols"])):
            pending.append(point)
    return pending


def gather_inputs(study: dict, root: str | Path = st.ROOT, only: str = "", train: bool = True,
                  out: str = OUT) -> list[str]:
    """The records the gather adds to points.jsonl: those of the pending points whose key contains
    `only`; none when `train` is false (the store and the pages rendered again as they are)."""
    if not train:
        return []
    pending = pending_points(study, Path(root) / out / st.POINTS)
    return [record_file(st.point_name(p["key"]), out) for p in pending if only in p["key"]]


def study_targets(study: dict, root: str | Path = st.ROOT, only: str = "", train: bool = True,
                  out: str = OUT) -> list[str]:
    """What rule scale_study asks for: the pending points' records (gather_inputs) and the pages."""
    return gather_inputs(study, root, only, train, out) + WRITEUP


def corpus_inputs(study: dict, root: str | Path = st.ROOT) -> list[str]:
    """The fetched packages the study's corpus is read from (the pipeline's fetch rules make them)."""
    return fetched_files(st.corpus_spec(study, Path(root)))


def check_tokenizer(study: dict, tokenizer: str) -> None:
    if tokenizer not in study["tokenizers"]:
        raise ValueError(f"the scale study has no tokenizer {tokenizer!r}; its tokenizers: {', '.join(study['tokenizers'])}")


def tokenizer_inputs(study: dict, tokenizer: str, root: str | Path = st.ROOT) -> list[str]:
    """A bpe-<vocab> tokenizer is trained on the corpus's train split."""
    check_tokenizer(study, tokenizer)
    if not tokenizer.startswith("bpe-"):
        raise ValueError(f"{tokenizer} is not trained by the study: only its bpe-<vocab> tokenizers are")
    return corpus_inputs(study, root)


def data_inputs(study: dict, tokenizer: str, root: str | Path = st.ROOT, out: str = OUT) -> list[str]:
    """The corpus, and for a bpe-<vocab> tokenizer the tokenizer trained on it."""
    check_tokenizer(study, tokenizer)
    return corpus_inputs(study, root) + ([tokenizer_file(tokenizer, out)] if tokenizer.startswith("bpe-") else [])


def point_inputs(study: dict, name: str, out: str = OUT) -> dict[str, str]:
    """A point's record is scored from its model, on its tokenizer's corpus."""
    point = st.find_point(study, name)
    return {"model": str(st.point_files(Path(out), point["key"]).model), "data": data_meta(point["tokenizer"], out)}


def snakemake_command(cores: int, extra: list[str], only: str = "") -> list[str]:
    """What `python -m lenex.scale_study` runs: Snakemake, asked for rule scale_study with the
    study's rules defined (and only the points whose key contains `only`, if given)."""
    config = [FLAG, *([f"scale_study_only={only}"] if only else [])]
    return ["snakemake", "--cores", str(cores), "scale_study", *extra, "--config", *config]
