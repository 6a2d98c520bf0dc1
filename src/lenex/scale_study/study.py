"""Scale study: the grid (config/scale-study.yaml) and the jobs of its Snakemake rules.

For each point of the grid (phenomenon x tokenizer x model shape x training tokens) train one
model with lenex.training.train on the corpus's train split and score it with the LEX protocol
(lenex.scoring.evaluate) at every multiple k of its L_tr on the test split; record ppl(k L_tr) / ppl(L_tr),
the parameter count and the training tokens/s as one line of results/scale-study/points.jsonl, then
regenerate the plot and the write-up from every recorded line (lenex.scale_study.report).

What runs is Snakemake's to decide (workflow/rules/scale_study.smk, targets from
lenex.scale_study.study_rules): `python -m lenex.scale_study` asks it for the write-up. A point's
model is trained by the pipeline's one training rule (its spec: lenex.scale_study.studies), which
resumes from its training state when an earlier try was cut off. Each job here does its one thing:
`point` scores a trained model (keeping the evaluations an earlier try finished on it), `gather`
adds the point records to points.jsonl, `report` writes the plot and the write-up.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import logging
import shutil
import sys
import time
from pathlib import Path

import jsonschema
import torch

from ..scoring import evaluate
from ..receptive_field import evaluate as rf_evaluate
from ..records.checkpoint import read_checkpoint
from ..cli import run_cli
from ..data.tokenizer import get_tokenizer
from ..files import atomic_write_text, read_json, read_yaml
from ..records.run_facts import run_facts
from .points import PointFiles, gather_points, length_ratios, point_name, read_points
from .report import write_report
from ..config import ModelConfig, TrainConfig

log = logging.getLogger("lenex.scale_study")
ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / "config" / "scale-study.yaml"
SCHEMA = ROOT / "workflow" / "schemas" / "scale-study.schema.yaml"
POINTS = "points.jsonl"


def load_study(path: str | Path) -> dict:
    """The study config, validated against workflow/schemas/scale-study.schema.yaml."""
    path = Path(path)
    study = read_yaml(path)
    schema = read_yaml(SCHEMA)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(study))
    if errors:
        first = min(errors, key=lambda e: [str(p) for p in e.path])
        where = "/".join(str(p) for p in first.path) or "top level"
        raise ValueError(f"{path}: {where}: {first.message}")
    try:
        check_grid(study)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    return study


GRID_KEYS = ("train_tokens", "shapes", "tokenizers")


def sub_grids(study: dict, phenomenon: dict) -> list[dict]:
    """The parts of the grid a phenomenon runs on: its own `train_tokens`, `shapes` and
    `tokenizers` (default: the study's), then each `extended` entry laid over those (more
    budget on part of them: the longer runs are paid only where they can tell something)."""
    main = {key: phenomenon.get(key, study[key]) for key in GRID_KEYS}
    return [main] + [{**main, **extra} for extra in phenomenon.get("extended", [])]


def expand_grid(study: dict) -> list[dict]:
    """Every point, cheapest budget first (then shape, tokenizer, phenomenon in config order).
    A point's model is its shape's fields with its phenomenon's laid over them. A phenomenon may
    name its own `train_tokens`, `shapes` and `tokenizers` (a probe that needs only part of the
    grid, or more budget than the rest), and `extended` parts; otherwise it takes the study's."""
    grids = {name: sub_grids(study, phenomenon) for name, phenomenon in study["phenomena"].items()}
    budgets = sorted({t for parts in grids.values() for part in parts for t in part["train_tokens"]})
    points = []
    for tokens in budgets:
        for shape, shape_fields in study["shapes"].items():
            for tokenizer in study["tokenizers"]:
                for name, phenomenon in study["phenomena"].items():
                    if not any(tokens in part["train_tokens"] and shape in part["shapes"]
                               and tokenizer in part["tokenizers"] for part in grids[name]):
                        continue
                    points.append({"key": f"{name}/{tokenizer}/{shape}/{tokens}", "phenomenon": name,
                                   "tokenizer": tokenizer, "shape": shape, "train_tokens": tokens,
                                   "model": {**shape_fields, **phenomenon["model"]},
                                   "multiples": sorted(phenomenon["multiples"]),
                                   "short_multiples": sorted(phenomenon.get("short_multiples", [])),
                                   "last_token": {**study.get("last_token", {}), **phenomenon.get("last_token", {})},
                                   "protocols": phenomenon.get("protocols", ["lex"])})
    return points


def check_grid(study: dict) -> None:
    """A phenomenon's own shapes and tokenizers (extended parts included) must be the study's, and
    the last-token protocol needs its settings (one error naming it)."""
    for name, phenomenon in study["phenomena"].items():
        if "last-token" in phenomenon.get("protocols", []) and "last_token" not in study:
            raise ValueError(f"phenomena/{name}/protocols: last-token needs the study's last_token settings")
        for i, part in enumerate(sub_grids(study, phenomenon)):
            where = f"/extended/{i - 1}" if i else ""
            for what in ("shapes", "tokenizers"):
                unknown = sorted(set(part[what]) - set(study[what]))
                if unknown:
                    raise ValueError(f"phenomena/{name}{where}/{what}: {unknown[0]!r} is not one of the study's "
                                     f"{what} ({', '.join(study[what])})")


def tokenizer_vocab(tokenizer: str) -> int:
    """Rows of the output layer a tokenizer name implies: GPT-2's 50257, or bpe-<vocab>'s vocab."""
    return get_tokenizer("gpt2").vocab_size if tokenizer == "gpt2" else int(tokenizer.split("-", 1)[1])


def estimated_cost(point: dict) -> int:
    """Training tokens x the weights each token passes through (head + blocks, 12 d^2 per layer):
    the order a sweep runs its points in, so a cut-off sweep has the most points."""
    model, width = point["model"], point["model"].get("d_model", 64)
    per_token = tokenizer_vocab(point["tokenizer"]) * width + 12 * model.get("n_layer", 2) * width**2
    return point["train_tokens"] * per_token


def scored_lengths(multiples: list[int], short_multiples: list[float], train_length: int) -> list[int]:
    """Every length a point scores with the LEX protocol: its multiples of L_tr (and L_tr itself) and
    its short fractions of L_tr, each a whole number of tokens dividing the span (the largest)."""
    span = max(multiples) * train_length
    lengths = {k * train_length for k in {1, *multiples}}
    for fraction in short_multiples:
        length = fraction * train_length
        if length != int(length) or span % int(length):
            raise ValueError(f"short multiple {fraction} of L_tr {train_length} is not a whole number of tokens "
                             f"dividing the span {span}")
        lengths.add(int(length))
    return sorted(lengths)


def steps_for(train_tokens: int, batch_size: int, train_length: int) -> int:
    """Optimizer steps that see `train_tokens` (rounded down to whole steps)."""
    steps = train_tokens // (batch_size * train_length)
    if steps < 1:
        raise ValueError(f"train_tokens {train_tokens} is less than one step of {batch_size} x {train_length} tokens")
    return steps


def receptive_field(model: dict) -> int | None:
    """w x n_layer for a windowed model (the receptive-field paper's w.R), else None."""
    window = (model.get("mask_options") or {}).get("window")
    return window * model.get("n_layer", 1) if model.get("mask") in ("windowed", "sliding") and window else None


def corpus_spec(study: dict, root: Path = ROOT) -> dict:
    corpus = study["corpus"]
    if isinstance(corpus, dict):  # an inline spec (tests)
        return corpus
    corpora = read_yaml(root / "config" / "config.yaml")["corpora"]
    if corpus not in corpora:
        raise ValueError(f"scale study corpus {corpus!r} is not in config/config.yaml; known: {', '.join(corpora)}")
    return corpora[corpus]


def bpe_tokenizer_file(out: Path, tokenizer: str) -> Path:
    return out / "tokenizer" / f"{tokenizer}.json"


def data_folder(out: Path, tokenizer: str) -> Path:
    return out / "data" / tokenizer


def _split_args(study: dict) -> list[str]:
    data = study["data"]
    return ["--seed", str(data["seed"]), "--valid-fraction", str(data["valid_fraction"]),
            "--test-fraction", str(data["test_fraction"])]


def train_tokenizer(study: dict, tokenizer: str, out: Path, resources: str) -> Path:
    """A bpe-<vocab> tokenizer trained on the corpus's train split (the pipeline's own bpe code)."""
    from ..data import bpe

    tok_file = bpe_tokenizer_file(out, tokenizer)
    tok_file.parent.mkdir(parents=True, exist_ok=True)
    bpe.main(["--source-spec", json.dumps(corpus_spec(study)), "--resources", resources, *_split_args(study),
              "--vocab-size", tokenizer.split("-", 1)[1], "--out", str(tok_file)])
    return tok_file


def prepare_data(study: dict, tokenizer: str, out: Path, resources: str) -> Path:
    """The corpus tokenized by `tokenizer` (a bpe-<vocab> one must be trained already: train_tokenizer)."""
    from ..data import prepare

    name = f"bpe:{bpe_tokenizer_file(out, tokenizer)}" if tokenizer.startswith("bpe-") else tokenizer
    folder = data_folder(out, tokenizer)
    prepare.main(["--source-spec", json.dumps(corpus_spec(study)), "--resources", resources, "--out", str(folder),
                  "--tokenizer", name, *_split_args(study), "--role", "scale-study"])
    return folder


def prepared_data(study: dict, tokenizer: str, out: Path, resources: str) -> Path:
    """Tokenizer and tokenized corpus in one job (the sweeps' corpus rule: Snakemake runs it only
    while the corpus's meta.json is missing)."""
    if tokenizer.startswith("bpe-"):
        train_tokenizer(study, tokenizer, out, resources)
    return prepare_data(study, tokenizer, out, resources)


def _train_config(study: dict, steps: int) -> TrainConfig:
    settings = dict(study["train"])
    warmup_fraction = settings.pop("warmup_fraction", 0.1)
    return TrainConfig.from_dict({**settings, "steps": steps, "warmup": int(round(warmup_fraction * steps)),
                                  "log_every": max(1, steps // 20), "checkpoint_every": max(1, steps // 4)})


def _last_metrics(workdir: Path) -> dict:
    lines = (workdir / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    return json.loads(lines[-1]) if lines else {}


def find_point(study: dict, name: str) -> dict:
    """The grid point called `name` (point_name of its key); one error naming a few known ones."""
    grid = expand_grid(study)
    for point in grid:
        if point_name(point["key"]) == name:
            return point
    raise ValueError(f"no scale-study point {name!r} in the grid; known, e.g.: "
                     f"{', '.join(point_name(p['key']) for p in grid[:3])} ({len(grid)} in all)")


def point_files(out: Path, key: str) -> PointFiles:
    """A study point's files: its model under <out>/models/study/ (the training rule's layout,
    results/scale-study/models/<study>/<model>.pt), its state and scores under <out>/train, <out>/eval."""
    name = point_name(key)
    return PointFiles(out / "models" / "study" / f"{name}.pt", out / "train" / name, out / "eval" / name)


def default_train_length() -> int:
    return next(f.default for f in dataclasses.fields(ModelConfig) if f.name == "train_length")


def point_settings(point: dict, study: dict) -> tuple[dict, dict]:
    """A point's ModelConfig fields (its vocabulary is its corpus's, which the trainer reads) and its
    TrainConfig fields: its steps from its training tokens, warmup, logging and checkpoints a share of them."""
    model = dict(point["model"])
    steps = steps_for(point["train_tokens"], study["train"]["batch_size"], model.get("train_length", default_train_length()))
    return model, _train_config(study, steps).to_dict()


def score_point(point: dict, study: dict, files: PointFiles, data_dir: Path, device: str, command: str,
                facts: dict) -> dict:
    """Score a point's trained model at every length it asks for; its record. Scores finished
    by an earlier try over the same span, on this model, are kept (those older than the model are
    a former model's: dropped). `point_wall_s`: the model's training time (its last run) plus this scoring."""
    started = time.time()
    model_path, scores_dir = files.model, files.scores
    drop_scores_older_than(scores_dir, model_path)
    payload = read_checkpoint(model_path)
    length = payload["model_config"]["train_length"]
    metrics = _last_metrics(files.workdir)
    multiples = point["multiples"]
    span, ppl = max(multiples) * length, {}
    for scored in scored_lengths(multiples, point.get("short_multiples", []), length):
        result_path = scores_dir / f"L{scored}.json"
        # The same tokens at every length: a score over another span (before a larger multiple
        # was added) is measured again.
        result = read_json(result_path) if result_path.exists() else None
        if result is None or result["span"] != span:
            evaluate.run(model_path, data_dir, scored, span, result_path, split="test", device=device,
                         **study["eval"])
            result = read_json(result_path)
        ppl[scored] = result["ppl"]
    scores = {}
    if "last-token" in point["protocols"]:
        settings = point.get("last_token") or study["last_token"]
        scores["last_token"] = last_token_scores(model_path, data_dir, length, multiples, settings,
                                                 scores_dir / "last-token.json", device)
    return {**{k: point[k] for k in ("key", "phenomenon", "tokenizer", "shape", "train_tokens", "multiples")},
            "model_config": payload["model_config"], "params": payload["params"],
            "vocab_size": payload["model_config"]["vocab_size"], "train_length": length,
            "receptive_field": receptive_field(payload["model_config"]),
            "steps": payload["step"], "batch_size": study["train"]["batch_size"], "tokens_seen": payload["tokens_seen"],
            "final_loss": payload["final_loss"], "valid_loss": payload["valid_loss"],
            "train_tokens_per_s": metrics.get("tokens_per_s"), "train_wall_s": payload["wall_seconds_last_run"],
            "threads": torch.get_num_threads(), "ppl": {str(n): v for n, v in ppl.items()},
            "scored_tokens": result["tokens"], "ratio": length_ratios(ppl, length, multiples),
            "point_wall_s": payload["wall_seconds_last_run"] + time.time() - started, "command": command,
            "finished_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            **scores, **facts}


def drop_scores_older_than(scores: Path, model: Path) -> None:
    """A point's scores folder emptied when its model is newer than a score in it: that model was
    trained again (its config or code changed), and its former model's scores must not be read as its."""
    if scores.is_dir() and any(p.stat().st_mtime < model.stat().st_mtime for p in scores.iterdir()):
        shutil.rmtree(scores)


def last_token_scores(model_path: Path, data_dir: Path, length: int, multiples: list[int], settings: dict,
                      result_path: Path, device: str) -> dict:
    """The receptive-field paper's protocol on the study's test split (its tables score only the
    last token of each segment, with every token before it in context, where the LEX protocol
    averages over every position of a piece): ppl at k L_tr and the ratios to L_tr, over the
    same `segments` last tokens at every length (span: the largest multiple). Cached beside the
    LEX scores; a cache over another span or segment count is measured again."""
    span, segments = max(multiples) * length, settings["segments"]
    records = read_json(result_path) if result_path.exists() else None
    if not records or records[0]["span"] != span or records[0]["segments"] != segments:
        rf_evaluate.main(["--checkpoint", str(model_path), "--data", str(data_dir), "--train-length", str(length),
                          "--multiples", *map(str, sorted({1, *multiples})), "--span-multiple", str(max(multiples)),
                          "--segments", str(segments), "--batch-tokens", str(settings.get("batch_tokens", 16384)),
                          "--device", device, "--out", str(result_path)])
        records = read_json(result_path)
    ppl = {r["length"]: r["ppl"] for r in records}
    return {"ppl": {str(n): v for n, v in ppl.items()}, "ratio": length_ratios(ppl, length, multiples),
            "segments": segments, "span": span}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="The scale study's jobs (workflow/rules/scale_study.smk runs them)")
    parser.add_argument("command", choices=["tokenizer", "data", "point", "gather", "report"])
    parser.add_argument("name", nargs="?", help="a tokenizer (tokenizer, data) or a point (point)")
    parser.add_argument("--config", default=str(CONFIG), help="the grid (default config/scale-study.yaml)")
    parser.add_argument("--out", default="results/scale-study")
    parser.add_argument("--resources", default="resources", help="fetched corpora (as for the pipeline)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--device", default="cpu", help="cpu, auto, cuda ...")
    parser.add_argument("--record", help="point: where its record goes")
    parser.add_argument("--records", nargs="*", default=[], help="gather: the point records to add to points.jsonl")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    torch.set_num_threads(args.threads)
    study, out = load_study(args.config), Path(args.out)
    if args.command in ("tokenizer", "data", "point") and not args.name:
        parser.error(f"{args.command} takes a name")
    if args.command == "tokenizer":
        train_tokenizer(study, args.name, out, args.resources)
    elif args.command == "data":
        prepare_data(study, args.name, out, args.resources)
    elif args.command == "point":
        if not args.record:
            parser.error("point needs --record")
        point = find_point(study, args.name)
        command = " ".join(["python -m lenex.scale_study.study", *(argv if argv is not None else sys.argv[1:])])
        record = score_point(point, study, point_files(out, point["key"]), data_folder(out, point["tokenizer"]),
                             args.device, command, run_facts())
        atomic_write_text(Path(args.record), json.dumps(record, sort_keys=True) + "\n")
    elif args.command == "gather":
        gather_points(out / POINTS, [read_json(Path(path)) for path in args.records])
        log.info("%d point(s) added, %d recorded in %s", len(args.records), len(read_points(out / POINTS)), out / POINTS)
    else:
        write_report(read_points(out / POINTS), expand_grid(study), out)


if __name__ == "__main__":
    run_cli(main)
