"""The cost model a preset is sized with (docs/dimensions.md, "Cost"): training throughput of each
model shape the preset trains, measured as the pipeline runs it (two one-thread jobs side by side,
`--cores 2`), times the trainings each paper's reference run needs.

    python -m benchmarks.preset_cost --preset workstation [--seconds 60] [--out benchmarks/results/cpu]
    python -m benchmarks.preset_cost --preset gpu --gpu     # one GPU, from the recorded H100 rates

With `--gpu` nothing is measured: each shape's tokens/s on one GPU comes from the recorded H100
throughput (benchmarks/gpu_cost.py), and the estimate is GPU-hours per paper (`gpu_hours`, which
the plan page can call), written to benchmarks/results/cuda-h100/preset_cost_<preset>.json and .md.

The trainings per paper are counted from the experiment definitions and the preset (variants x
budget groups x corpora x seeds), the tokens per model from the preset; the estimate is the training
time alone (evaluation is measured by the reference runs themselves, whose wall times REFERENCE.md
records). Writes preset_cost_<preset>.json and .md.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import time
from pathlib import Path

import torch

from lenex.config import ModelConfig, TrainConfig
from lenex.files import atomic_write_text, read_yaml
from lenex.model import LanguageModel
from lenex.experiment.presets import group_view, paper_view, seed_list
from lenex.training.train import build_optimizer

from .common import machine

ROOT = Path(__file__).resolve().parents[1]


def _throughput(shape: dict, seconds: float, queue) -> None:
    torch.set_num_threads(1)
    cfg = ModelConfig(n_layer=shape["n_layer"], d_model=shape["d_model"], n_head=shape["n_head"], d_ff=shape["d_ff"],
                      vocab_size=shape["vocab"], dropout=0.0, position="rope", train_length=shape["train_length"])
    model = LanguageModel(cfg).train()
    optimizer = build_optimizer(model, TrainConfig(lr=1e-3, grad_clip=2.0))
    x = torch.randint(0, shape["vocab"], (shape["batch_size"], shape["train_length"]))
    steps, started = 0, None
    while True:
        loss = model(x, x)[1]
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        steps += 1
        if steps == 3:
            started = time.perf_counter()
        elif started and time.perf_counter() - started >= seconds:
            queue.put((steps - 3) * shape["batch_size"] * shape["train_length"] / (time.perf_counter() - started))
            return


def paired_throughput(shape: dict, seconds: float) -> float:
    """Tokens/s of two one-thread trainings of `shape` side by side, summed (what `--cores 2` gets)."""
    queue = mp.get_context("spawn").Queue()
    jobs = [mp.get_context("spawn").Process(target=_throughput, args=(shape, seconds, queue)) for _ in range(2)]
    for job in jobs:
        job.start()
    rates = [queue.get() for _ in jobs]
    for job in jobs:
        job.join()
    return sum(rates)


def _shape(view: dict, vocab: int) -> dict:
    model, train = view["model"], view["train"]
    return {"n_layer": model["n_layer"], "d_model": model["d_model"], "n_head": model["n_head"], "d_ff": model["d_ff"],
            "train_length": model["train_length"], "batch_size": train["batch_size"], "vocab": vocab,
            "tokens": train["steps"] * train["batch_size"] * model["train_length"]}


def extra_seeds(view: dict, variants) -> int:
    """The trainings `experiment.power_seeds` adds to `variants` past the view's own seeds: keys
    `<variant>` (LEX) or `<corpus>/<variant>` (the receptive field), each model its count - seeds."""
    base = len(seed_list(view))
    power = (view.get("experiment") or {}).get("power_seeds") or {}
    return sum(len(seed_list(view, key)) - base for key in power if key.rpartition("/")[2] in set(variants))


def trainings(preset: dict, vocab: int) -> list[dict]:
    """Each paper's training groups: (paper, what, shape, count of models), the seeds
    `experiment.power_seeds` adds included (the segmented paper's are not: its continued runs are
    counted per method, and no preset costed here names any)."""
    groups = []
    lex = paper_view(preset, "lex")
    experiment = read_yaml(ROOT / "config/experiments/lex.yaml")
    seeds = int((lex.get("experiment") or {}).get("seeds", 1))
    groups.append({"paper": "lex", "what": "every variant",
                   "count": len(experiment["variants"]) * seeds + extra_seeds(lex, experiment["variants"]),
                   **_shape(lex, vocab)})
    rf = paper_view(preset, "receptive-field")
    experiment = read_yaml(ROOT / "config/experiments/receptive-field.yaml")
    corpora = {s["corpus"] for t in experiment["tables"].values() for s in t["sections"] if s.get("corpus")}
    for group in (None, "seeds"):
        view = group_view(rf, group)
        names = [name for name, v in experiment["variants"].items() if v.get("group") == group]
        n = int((view.get("experiment") or {}).get("seeds", 1))
        per_corpus = 2 if group is None else len(corpora)  # Tables 1/4 train on arXiv and OpenWebText2
        groups.append({"paper": "receptive-field", "what": group or "slope and window models",
                       "count": len(names) * n * per_corpus + extra_seeds(view, names), **_shape(view, vocab)})
    # Table 2's longer-L_tr fixes (budget groups fix-ltr*), one corpus each, at their own batch
    # (their variants train at train_length_multiple x L_tr: that many times the tokens per sequence)
    for name, variant in experiment["variants"].items():
        if variant.get("group") in (None, "seeds"):
            continue
        view = group_view(rf, variant["group"])
        length = int(view["model"]["train_length"] * variant.get("train_length_multiple", 1))
        view = {**view, "model": {**view["model"], "train_length": length}}
        n = int((view.get("experiment") or {}).get("seeds", 1))
        groups.append({"paper": "receptive-field", "what": name, "count": n + extra_seeds(view, [name]),
                       **_shape(view, vocab)})
    seg = paper_view(preset, "segmented")
    experiment = read_yaml(ROOT / "config/experiments/segmented.yaml")
    large = set((seg.get("experiment") or {}).get("large_variants", []))
    released = (seg.get("experiment") or {}).get("hf_checkpoints")
    for what, names in (("development stand-ins", set(experiment["variants"]) - large), ("large stand-ins", large)):
        if released:
            break  # the released checkpoints are fetched, not pretrained
        view = seg if what.startswith("dev") else {**seg, "model": {**seg["model"], **seg["experiment"]["large_model"]}}
        groups.append({"paper": "segmented", "what": f"pretraining, {what}", "count": len(names), **_shape(view, vocab)})
    if released:
        view = _largest_released(seg, released)
    # One epoch of domain adaptation per model (out of the box; Table 5's further epoch) and one continued
    # run per method and extension (L_t -> k L_t), each seed: counted at the large stand-ins' speed.
    adapted = {"ootb", "out-of-the-box", "domain-adaptation"}
    methods = {(row["method"], column) for spec in experiment["tables"].values() for section in spec["sections"]
               for row in section["rows"] for column in spec["columns"] if "{" not in row["method"]}
    continued = {(m, c) for m, c in methods if m.split(":")[1] not in adapted}
    adaptations = {m for m, _ in methods if m.split(":")[1] in adapted - {"out-of-the-box"}}
    runs = (len(continued) + len(adaptations)) * int((seg.get("experiment") or {}).get("seeds", 1))
    groups.append({"paper": "segmented", "what": "adaptation and continued runs", "count": runs,
                   **_shape(view, view["model"].get("vocab", vocab)), "tokens": int(seg["experiment"].get("epoch_tokens") or 0)})
    return groups


def _largest_released(seg: dict, released: dict) -> dict:
    """The segmented view with `model` the released checkpoint of most training FLOPs a token at
    its L_t (every continued run is costed at its rate: the estimate errs high)."""
    from lenex.segmented.memory import RELEASED

    from .gpu_cost import flops_per_token

    def shape(model: str) -> dict:
        arch = RELEASED[released[model]]
        length = (seg["experiment"].get("train_lengths") or {}).get(model, seg["model"]["train_length"])
        return {"n_layer": arch.n_layer, "d_model": arch.d_model, "n_head": arch.n_head, "d_ff": arch.d_ff,
                "train_length": length, "vocab": arch.vocab}

    biggest = max(released, key=lambda m: flops_per_token(**{k: v for k, v in shape(m).items() if k != "n_head"}))
    return {**seg, "model": {**seg["model"], **shape(biggest)}, "released_model": released[biggest],
            "train": {**seg["train"], "batch_size": seg["experiment"]["continued"]["batch_size"]}}


def gpu_costs(preset: dict, record: dict | None = None) -> list[dict]:
    """Each training group of `preset` with its tokens/s on one recorded GPU and its GPU-hours."""
    from . import gpu_cost

    record = record or gpu_cost.load_record()
    points = gpu_cost.recorded_points(record, [read_yaml(ROOT / "config/presets/paper.yaml")])
    peak = record["result"]["peak_flops"]
    rows = []
    for group in trainings(preset, 50257):
        shape = {**group, "vocab": group.get("vocab", 50257)}
        rate, point = gpu_cost.tokens_per_s(shape, points, peak)
        rows.append({**group, "tokens_per_s_gpu": rate, "costed_from": point["what"], "costed_mfu": point["mfu"],
                     "gpu_hours": group["count"] * group["tokens"] / rate / 3600})
    return rows


def model_shape(preset: dict, paper: str, variant: str, vocab: int = 50257) -> dict:
    """The training shape and tokens of one model of `variant` at `preset`, as `trainings` costs
    it (a receptive-field variant at its budget group's view, a longer-L_tr fix at its length).
    The segmented paper's runs are costed as one group: an error."""
    if paper == "lex":
        return _shape(paper_view(preset, "lex"), vocab)
    if paper != "receptive-field":
        raise ValueError(f"no per-model cost for paper {paper!r}: its continued runs are costed as one group")
    spec = read_yaml(ROOT / "config/experiments/receptive-field.yaml")["variants"].get(variant)
    if spec is None:
        raise ValueError(f"{variant!r} is no receptive-field variant")
    view = group_view(paper_view(preset, paper), spec.get("group"))
    if spec.get("group") not in (None, "seeds"):
        length = int(view["model"]["train_length"] * spec.get("train_length_multiple", 1))
        view = {**view, "model": {**view["model"], "train_length": length}}
    return _shape(view, vocab)


def model_gpu_hours(preset: dict, paper: str, variant: str, record: dict | None = None) -> float:
    """One training of one model of `variant` at `preset`, in GPU-hours on one recorded GPU (the
    rates `gpu_costs` uses)."""
    from . import gpu_cost

    record = record or gpu_cost.load_record()
    points = gpu_cost.recorded_points(record, [read_yaml(ROOT / "config/presets/paper.yaml")])
    shape = model_shape(preset, paper, variant)
    rate, _ = gpu_cost.tokens_per_s(shape, points, record["result"]["peak_flops"])
    return shape["tokens"] / rate / 3600


def gpu_hours(preset_name: str) -> dict[str, float]:
    """Training GPU-hours per paper of a preset on one recorded GPU (the plan page's reading)."""
    rows = gpu_costs(read_yaml(ROOT / "config/presets" / f"{preset_name}.yaml"))
    return {paper: sum(r["gpu_hours"] for r in rows if r["paper"] == paper) for paper in dict.fromkeys(r["paper"] for r in rows)}


def _gpu_main(preset_name: str, out: Path) -> None:
    from . import gpu_cost

    record = gpu_cost.load_record()
    rows = gpu_costs(read_yaml(ROOT / "config/presets" / f"{preset_name}.yaml"), record)
    totals = {paper: sum(r["gpu_hours"] for r in rows if r["paper"] == paper) for paper in dict.fromkeys(r["paper"] for r in rows)}
    source = str(gpu_cost.RECORD.relative_to(ROOT))
    atomic_write_text(out / f"preset_cost_{preset_name}.json", json.dumps(
        {"preset": preset_name, "record": source, "machine": record["machine"], "groups": rows,
         "gpu_hours_per_paper": totals}, indent=1) + "\n")
    lines = [f"# Training cost of preset `{preset_name}` on one GPU (python -m benchmarks.preset_cost --gpu)", "",
             f"Rates from the recorded {record['machine'].get('gpu', 'GPU')} throughput ({source}, and the paper "
             "preset's stated rates): the lowest MFU recorded at the nearest recorded shape, at each shape's FLOPs "
             "per token (benchmarks/gpu_cost.py). Training only.", "",
             "| paper | models | count | shape | L_tr x batch | tokens each | tokens/s (1 GPU) | costed from | GPU-hours |",
             "|---|---|---:|---|---|---:|---:|---|---:|"]
    for r in rows:
        lines.append(f"| {r['paper']} | {r['what']} | {r['count']} | {r['n_layer']}x{r['d_model']} | "
                     f"{r['train_length']} x {r['batch_size']} | {r['tokens']:,} | {r['tokens_per_s_gpu']:,.0f} | "
                     f"{r['costed_from'].split(':')[0]} (MFU {r['costed_mfu']:.3f}) | {r['gpu_hours']:.1f} |")
    lines += ["", "| paper | training GPU-hours |", "|---|---:|"]
    lines += [f"| {paper} | {hours:.1f} |" for paper, hours in totals.items()]
    atomic_write_text(out / f"preset_cost_{preset_name}.md", "\n".join(lines) + "\n")
    print("\n".join(lines))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="workstation")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--out", default=None, help="default: benchmarks/results/cpu (--gpu: cuda-h100)")
    parser.add_argument("--gpu", action="store_true", help="GPU-hours on one GPU from the recorded H100 rates")
    args = parser.parse_args(argv)
    if args.gpu:
        _gpu_main(args.preset, Path(args.out or ROOT / "benchmarks/results/cuda-h100"))
        return
    args.out = args.out or str(ROOT / "benchmarks/results/cpu")
    preset = read_yaml(ROOT / "config/presets" / f"{args.preset}.yaml")
    vocab = int(preset["data"]["tokenizer"].split("-")[1]) if preset["data"]["tokenizer"].startswith("bpe-") else 50257
    rows, measured = [], {}
    for group in trainings(preset, vocab):
        key = tuple(group[k] for k in ("n_layer", "d_model", "n_head", "train_length", "batch_size"))
        if key not in measured:
            measured[key] = paired_throughput(group, args.seconds)
        rate = measured[key]
        rows.append({**group, "tokens_per_s_two_jobs": rate, "training_hours": group["count"] * group["tokens"] / rate / 3600})
    record = {"preset": args.preset, "machine": machine(torch.device("cpu")), "seconds": args.seconds, "groups": rows}
    out = Path(args.out)
    atomic_write_text(out / f"preset_cost_{args.preset}.json", json.dumps(record, indent=1) + "\n")
    lines = [f"# Training cost of preset `{args.preset}` (python -m benchmarks.preset_cost)", "",
             "Two one-thread trainings side by side (`--cores 2`), random tokens, measured for "
             f"{args.seconds:g} s each; training only (evaluation: the reference runs' own wall times).", "",
             "| paper | models | count | shape | L_tr x batch | tokens each | tokens/s (2 jobs) | training hours |",
             "|---|---|---:|---|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['paper']} | {r['what']} | {r['count']} | {r['n_layer']}x{r['d_model']}, {r['n_head']} heads | "
                     f"{r['train_length']} x {r['batch_size']} | {r['tokens']:,} | {r['tokens_per_s_two_jobs']:,.0f} | "
                     f"{r['training_hours']:.2f} |")
    atomic_write_text(out / f"preset_cost_{args.preset}.md", "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
