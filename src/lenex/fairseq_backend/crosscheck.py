"""The fairseq cross-check page: lenex-trained against fairseq-trained models of the same
variants, seeds, data, steps and hyper-parameters (rule `crosscheck_fairseq`):
`results/<preset>/crosscheck/fairseq.md` and `.json`, every number read from the evaluation
files and training metrics the rules wrote."""

from __future__ import annotations

import argparse
import json
import re
import statistics
from pathlib import Path

from ..cli import run_cli
from ..files import atomic_write_text, read_json

RUN = re.compile(r"crosscheck/(?P<backend>[a-z]+)/s(?P<seed>\d+)/")
TINY_TOLERANCE = 0.10  # the criterion at `tiny`: backends within 10% at 1 x L_tr

NOT_IDENTICAL = """\
What cannot be made identical, and so sets the tolerance:
- **Data order.** lenex draws each batch as random windows of L_tr + 1 tokens from the training
  stream (generator seeded by seed and step); fairseq cuts the same stream into consecutive
  blocks of L_tr tokens (`--sample-break-mode none`) and shuffles the blocks with its seed.
  Both see the same tokens in expectation, not the same batches.
- **Initialisation.** Both seed torch with the run's seed and then build the same lenex module in
  the same order, so the initial weights coincide (tested in tests/test_fairseq_backend.py);
  a seed change moves both the same way.
- **Dropout RNG.** fairseq draws dropout masks from its own seeded generator per update; the
  streams differ from lenex's (moot where the preset's dropout is 0, as at `tiny`).
- **Weight decay.** fairseq's Adam decays every parameter (decoupled, as AdamW); lenex spares
  norms, biases and position parameters.
- **Warmup.** fairseq sets the rate of update k (0-based) from the k updates done, lr x max(1, k) /
  warmup, one update behind lenex's lr x (k + 1) / warmup; after warmup the two schedules agree.
  The early validation losses show it (fairseq higher at the first measurement).

Tolerance: the backend difference at 1 x L_tr is set against the seed-to-seed spread each
backend shows (|ppl(s1) - ppl(s2)| / mean); at `tiny` the criterion is a fixed 10%."""


def relative_difference(reference: float, other: float) -> float:
    """(other - reference) / reference."""
    return (other - reference) / reference


def seed_spread(values: list[float]) -> float:
    """(max - min) / mean of one backend's seeds."""
    return (max(values) - min(values)) / statistics.fmean(values)


def direction(ppl_at_train: float, ppl_longest: float) -> str:
    """Whether perplexity rises or falls from 1 x L_tr to the longest length."""
    return "rises" if ppl_longest > ppl_at_train else "falls"


def _runs(path: str) -> tuple[str, int]:
    match = RUN.search(path)
    if not match:
        raise ValueError(f"{path}: not a cross-check path (expected .../crosscheck/<backend>/s<seed>/...)")
    return match["backend"], int(match["seed"])


def valid_curve(model_path: str) -> list[list[float]]:
    """[step, validation loss] from the training metrics next to a cross-check model."""
    workdir = Path(model_path.replace("/models/", "/train/", 1)).with_suffix("")
    metrics = workdir / "metrics.jsonl"
    if not metrics.is_file():
        raise FileNotFoundError(f"{metrics} not found: the training of {model_path} left no metrics")
    rows = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
    return [[r["step"], r["valid_loss"]] for r in rows if "valid_loss" in r]


def gather(spec: dict, evaluations: list[str], models: list[str]) -> dict:
    train_length, backends = spec["train_length"], spec["backends"]
    ppl: dict = {}
    for path in evaluations:
        backend, seed = _runs(path)
        result = read_json(path)
        cell = ppl.setdefault(result["variant"], {}).setdefault(result["mask"], {}).setdefault(str(result["length"]), {})
        cell.setdefault(backend, {})[str(seed)] = result["ppl"]
    curves: dict = {}
    for path in models:
        backend, seed = _runs(path)
        curves.setdefault(Path(path).stem, {}).setdefault(backend, {})[str(seed)] = valid_curve(path)
    variants = {}
    for variant in spec["variants"]:
        summary = {}
        for mask, lengths in ppl[variant].items():
            for length, by_backend in lengths.items():
                seeds = {b: list(by_backend[b].values()) for b in backends}
                means = {b: statistics.fmean(v) for b, v in seeds.items()}
                summary.setdefault(mask, {})[length] = {
                    "mean": means, "seed_spread": {b: seed_spread(v) for b, v in seeds.items()},
                    "difference": relative_difference(means[backends[0]], means[backends[1]]),
                }
        at_train = summary["causal"][str(train_length)]
        longest = str(max(int(n) for n in summary["causal"]))
        variants[variant] = {
            "ppl": ppl[variant], "summary": summary, "valid_curve": curves[variant],
            "difference_at_train_length": at_train["difference"],
            "within_tiny_tolerance": abs(at_train["difference"]) <= TINY_TOLERANCE,
            "within_seed_spread": abs(at_train["difference"]) <= max(at_train["seed_spread"].values()),
            "direction_beyond_train": {b: direction(at_train["mean"][b], summary["causal"][longest]["mean"][b])
                                       for b in backends},
        }
    return {"spec": spec, "variants": variants}


def budget_sentence(spec: dict) -> str:
    """The training budget every cross-check model had, where the spec records it."""
    train = spec.get("train")
    if not train:
        return ""
    tokens = train["steps"] * train["batch_size"] * spec["train_length"]
    warmup = f", {train['warmup']:,} warmup steps" if "warmup" in train else ""
    return (f"Each model trained {train['steps']:,} steps of {train['batch_size']} x L_tr tokens "
            f"({tokens:,} tokens; peak lr {train['lr']:g}{warmup}). ")


def _pct(value: float) -> str:
    return f"{100 * value:+.1f}%"


def render(result: dict) -> str:
    spec = result["spec"]
    lenex, fairseq = spec["backends"]
    lines = [f"# fairseq cross-check at `{spec['preset']}`: lenex's trainer against fairseq-train", "",
             f"LEX variants trained by both backends from the same token files, preset, steps and "
             f"hyper-parameters, seeds {', '.join(map(str, spec['seeds']))} each; perplexity on the "
             f"{spec['corpus']} test split (LEX protocol), L_tr = {spec['train_length']}. "
             f"{budget_sentence(spec)}"
             f"Δ = {fairseq} mean / {lenex} mean - 1; spread = (max - min) / mean over seeds.", "",
             NOT_IDENTICAL, "", "## At 1 x L_tr", "",
             f"| variant | {lenex} | {fairseq} | Δ | spread {lenex} | spread {fairseq} | within 10% | within spread | beyond L_tr ({lenex} / {fairseq}) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for variant, data in result["variants"].items():
        cell = data["summary"]["causal"][str(spec["train_length"])]
        dirs = data["direction_beyond_train"]
        lines.append(f"| {variant} | {cell['mean'][lenex]:.2f} | {cell['mean'][fairseq]:.2f} | {_pct(cell['difference'])} "
                     f"| {100 * cell['seed_spread'][lenex]:.1f}% | {100 * cell['seed_spread'][fairseq]:.1f}% "
                     f"| {'yes' if data['within_tiny_tolerance'] else 'NO'} | {'yes' if data['within_seed_spread'] else 'no'} "
                     f"| {dirs[lenex]} / {dirs[fairseq]} |")
    lines += ["", "## Perplexity by length", ""]
    for variant, data in result["variants"].items():
        for mask, lengths in data["summary"].items():
            lines += [f"### {variant}, {mask} mask", "",
                      "| length | x L_tr | " + " | ".join(f"{b} s{s}" for b in spec["backends"] for s in spec["seeds"])
                      + f" | {lenex} mean | {fairseq} mean | Δ |", "|---" * (5 + 2 * len(spec["seeds"])) + "|"]
            for length in sorted(lengths, key=int):
                runs = data["ppl"][mask][length]
                cells = " | ".join(f"{runs[b][str(s)]:.2f}" for b in spec["backends"] for s in spec["seeds"])
                summary = lengths[length]
                lines.append(f"| {length} | {int(length) / spec['train_length']:g} | {cells} | {summary['mean'][lenex]:.2f} "
                             f"| {summary['mean'][fairseq]:.2f} | {_pct(summary['difference'])} |")
            lines.append("")
    lines += ["## Validation loss during training (nats, lenex's fixed validation windows, mean over seeds)", ""]
    for variant, data in result["variants"].items():
        means = {b: _mean_curve(data["valid_curve"][b]) for b in spec["backends"]}
        lines += [f"### {variant}", "", f"| step | {lenex} | {fairseq} | difference |", "|---|---|---|---|"]
        for step in sorted(set(means[lenex]) & set(means[fairseq])):
            lines.append(f"| {step} | {means[lenex][step]:.4f} | {means[fairseq][step]:.4f} "
                         f"| {means[fairseq][step] - means[lenex][step]:+.4f} |")
        lines.append("")
    return "\n".join(lines)


def _mean_curve(by_seed: dict) -> dict:
    steps: dict = {}
    for curve in by_seed.values():
        for step, loss in curve:
            steps.setdefault(int(step), []).append(loss)
    return {step: statistics.fmean(v) for step, v in steps.items() if len(v) == len(by_seed)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spec", required=True, help="JSON: variants, backends, seeds, train_length, preset ...")
    parser.add_argument("--evaluations", nargs="+", required=True, help="evaluation JSON files of every run")
    parser.add_argument("--models", nargs="+", required=True, help="the cross-check checkpoints")
    parser.add_argument("--out-md", required=True)
    parser.add_argument("--out-json", required=True)
    args = parser.parse_args(argv)
    result = gather(json.loads(args.spec), args.evaluations, args.models)
    atomic_write_text(args.out_json, json.dumps(result, indent=1) + "\n")
    atomic_write_text(args.out_md, render(result) + "\n")


if __name__ == "__main__":
    run_cli(main)
