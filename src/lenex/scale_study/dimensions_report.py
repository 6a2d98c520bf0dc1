"""The dimensional-analysis tables of docs/dimensions.md, computed from the presets, the papers'
numbers and our measurements (config/dimensions.yaml says which):
`python -m lenex.scale_study.dimensions_report [--write docs/dimensions.md]`.

Each paper gets one table: a row per group (lenex.experiment.dimensions), a column per setting (the paper,
the workstation preset before its models were resized, the workstation preset now). The page keeps its prose;
only the text between the `<!-- dimensions:<paper> -->` and `<!-- /dimensions:<paper> -->`
markers is rewritten.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
from pathlib import Path

import yaml

from ..experiment import dimensions as D
from ..cli import run_cli
from ..files import atomic_write_text
from ..experiment.presets import group_view, paper_view

ROOT = Path(__file__).resolve().parents[3]
PAPERS = ("lex", "receptive-field", "segmented")
RF_PAPER_WINDOWS = (40, 320)  # the receptive-field paper's smallest and largest w (Tables 1 and 4)


def read_source(spec: str, root: Path = ROOT) -> str:
    """A file's text, from the working tree or, for "git:<rev>:<path>", from that revision."""
    if spec.startswith("git:"):
        _, rev, path = spec.split(":", 2)
        return subprocess.run(["git", "-C", str(root), "show", f"{rev}:{path}"], check=True,
                              capture_output=True, text=True).stdout
    return (root / spec).read_text(encoding="utf-8")


def scheme_options(view: dict, scheme: str) -> dict:
    """The options a preset lays under a scheme's variants (its `positions` section)."""
    return dict((view.get("positions") or {}).get(scheme) or {})


def fmt(value, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) >= 10):
        return f"{int(value):,}"
    return f"{value:.{digits}g}"


def tokens_per_model(view: dict) -> int:
    return int(view["train"]["steps"] * view["train"]["batch_size"] * view["model"]["train_length"])


def lex_rows(view: dict, discount: float | None) -> dict:
    model = view["model"]
    length, head = model["train_length"], model["d_model"] // model["n_head"]
    rope = D.rotary_geometry(head, scheme_options(view, "rope").get("base", 10000.0), length)
    xpos = scheme_options(view, "xpos")
    decay = D.xpos_decay(xpos.get("gamma", 0.4), xpos.get("scale_base", 512), length)
    alibi = D.alibi_extent(model["n_head"], length, slope_scale=scheme_options(view, "alibi").get("slope_scale", 1.0))
    tokens = tokens_per_model(view)
    return {
        "L_tr (tokens)": length, "head dimension": head,
        "early-token discount D = ln ppl(L_tr/2) − ln ppl(L_tr)": discount,
        "whole-piece discount at 2 L_tr, 1 − e^(−D/2)": None if discount is None else D.whole_piece_discount(discount, 2),
        "whole-piece discount at 8 L_tr": None if discount is None else D.whole_piece_discount(discount, 8),
        "rotary pairs per octave of wavelength": rope["pairs_per_octave"],
        "share of rotary pairs never wrapping within L_tr": rope["unseen_share"],
        "pairs whose first wrap falls in (L_tr, 8 L_tr]": rope["wraps_within_reach"],
        "first unseen wrap / L_tr": rope["first_unseen_wrap"],
        "xPos L_tr / B": decay["train_over_base"],
        "xPos fastest pair's decay across L_tr": decay["fastest_decay_over_train"],
        "ALiBi largest slope × L_tr": alibi["largest_slope_x_train"],
        "ALiBi smallest slope × L_tr": alibi["smallest_slope_x_train"],
        "training tokens a model": tokens,
        "tokens per non-embedding parameter": D.tokens_per_parameter(tokens, model["n_layer"], model["d_model"], model["d_ff"]),
        "seeds a model": (view.get("experiment") or {}).get("seeds", 1),
    }


def rf_rows(view: dict, experiment: dict, seeds_read: str = "every") -> dict:
    model, seeds = view["model"], group_view(view, "seeds")
    length, layers = model["train_length"], model["n_layer"]
    scale = scheme_options(view, "alibi").get("slope_scale", 1.0)
    alibi = D.alibi_extent(model["n_head"], length, slope_scale=scale)
    from ..receptive_field.targets import scaled_window  # the windows the rules train with
    small, large = (scaled_window(w, layers, length) for w in RF_PAPER_WINDOWS)
    head = seeds["model"]["d_model"] // seeds["model"]["n_head"]
    rope = D.rotary_geometry(head, 10000.0, length)
    t5 = scheme_options(view, "t5").get("max_distance", 128)
    return {
        "L_tr (tokens)": length, "layers of the slope and window models (R)": layers,
        "ALiBi largest slope × L_tr (Δ = 0)": alibi["largest_slope_x_train"],
        "ALiBi smallest slope × L_tr (Δ = 0)": alibi["smallest_slope_x_train"],
        "ALiBi smallest slope × L_tr at Δ = 6": D.alibi_extent(model["n_head"], length, 6, None, scale)["smallest_slope_x_train"],
        "ALiBi slope × L_tr with every h = 8": D.alibi_extent(model["n_head"], length, 0, 8, scale)["smallest_slope_x_train"],
        "w R / L_tr of the paper's w = 40": D.window_extent(small, layers, length)["trf_over_train"],
        "w R / L_tr of the paper's w = 320": D.window_extent(large, layers, length)["trf_over_train"],
        "w / L_tr of the paper's w = 320": D.window_extent(large, layers, length)["window_over_train"],
        "Table 3 head dimension": head,
        "Table 3 rotary pairs per octave": rope["pairs_per_octave"],
        "Table 3 first unseen wrap / L_tr": rope["first_unseen_wrap"],
        "Sandwich's curve over L_tr (1 = the paper's)": D.curve_extent(
            scheme_options(view, "sandwich").get("distance_scale", 1.0), length, 512),
        "T5 max_distance / L_tr": t5 / length,
        "training tokens, slope and window models": tokens_per_model(view),
        "training tokens, Table 3 models": tokens_per_model(seeds),
        "seeds, slope and window models / Table 3": f"{slope_seeds(view, experiment, seeds_read)} / {seed_count(seeds)}",
    }


def seed_count(view: dict) -> int:
    return int((view.get("experiment") or {}).get("seeds", 1))


def slope_seeds(view: dict, experiment: dict, seeds_read: str = "every") -> int:
    """Seeds of the slope and window models that Table 1 reads: every seed of their budget, unless
    the table (`seeds: first`) or the setting (`slope_seeds_read: first`: before every seed was read the rules
    read seed 1 of these models) reads the first alone."""
    first = experiment["tables"]["table1"].get("seeds") == "first" or seeds_read == "first"
    return 1 if first else seed_count(view)


def segmented_rows(view: dict, released: dict | None, discount: float | None) -> dict:
    """The segmented paper continues released models (the `paper` preset names checkpoints): their
    geometry comes from config/dimensions.yaml's `released`; a preset's stand-ins from the preset."""
    model = view["model"]
    experiment = view.get("experiment") or {}
    if released:
        rope, small, bloom = released["pythia"], released["pythia-small"], released["bloom"]
        rotary = D.rotary_geometry(rope["rotary_dims"], rope["base"], rope["train_length"], reach=4)
        dev = D.rotary_geometry(small["rotary_dims"], small["base"], small["train_length"], reach=4)
        alibi = D.alibi_extent(bloom["n_heads"], bloom["train_length"])
        length = model["train_length"]
        pretraining, continued = None, None
    else:
        length = model["train_length"]
        large = {**model, **experiment.get("large_model", {})}
        rotary = D.rotary_geometry(large["d_model"] // large["n_head"], 10000.0, length, reach=4)
        dev = D.rotary_geometry(model["d_model"] // model["n_head"], 10000.0, length, reach=4)
        alibi = D.alibi_extent(large["n_head"], length,
                               slope_scale=scheme_options(view, "alibi").get("slope_scale", 1.0))
        pretraining, continued = tokens_per_model(view), experiment.get("epoch_tokens")
    return {
        "L_t of the APE models (tokens)": length,
        "early-token discount D": discount,
        "whole-piece discount at 2 L_t": None if discount is None else D.whole_piece_discount(discount, 2),
        "RoPE development model: rotary pairs per octave": dev["pairs_per_octave"],
        "RoPE development model: first unseen wrap / L_t": dev["first_unseen_wrap"],
        "RoPE model: rotary pairs per octave": rotary["pairs_per_octave"],
        "RoPE model: first unseen wrap / L_t": rotary["first_unseen_wrap"],
        "RoPE model: pairs whose first wrap falls in (L_t, 4 L_t]": rotary["wraps_within_reach"],
        "ALiBi model: largest slope × L_t": alibi["largest_slope_x_train"],
        "ALiBi model: smallest slope × L_t": alibi["smallest_slope_x_train"],
        "chunk-0.125 segment (tokens)": length / 8,
        "pretraining tokens a stand-in": pretraining,
        "continued-pretraining tokens / pretraining tokens": None if not (pretraining and continued) else continued / pretraining,
        "seeds of each continued run": seed_count(view),
    }


def discount_of(spec: dict | None, root: Path = ROOT) -> float | None:
    """D from the source config/dimensions.yaml names: the paper's printed numbers, a committed
    cells file (median over its rows) or the scale study's probes (median over the phenomena)."""
    if not spec:
        return None
    if "paper_results" in spec:
        want = spec["paper_results"]
        half, full = want["lengths"]
        rows = list(csv.DictReader((root / "src/lenex/paper_results.csv").open(encoding="utf-8")))
        ppl = {(r["dataset"], r["method"], int(r["length"])): float(r["value"]) for r in rows
               if r["paper"] == want["paper"] and r["table"] == str(want["table"]) and r["dataset"] in want["datasets"]}
        pairs = [(ppl[(d, m, half)], ppl[(d, m, full)]) for (d, m, n) in ppl if n == full and (d, m, half) in ppl]
        return D.median_discount(pairs)
    if "cells" in spec:
        cells = json.loads(read_source(spec["cells"], root))["cells"]
        half, full = spec["multiples"]
        ours = {(c["dataset"], c["variant"], c["multiple"]): c["ours"] for c in cells if c.get("ours")}
        pairs = [(ours[(d, v, half)], ours[(d, v, full)]) for (d, v, k) in ours if k == full and (d, v, half) in ours]
        return D.median_discount(pairs)
    points = [json.loads(line) for line in (root / "results/scale-study/points.jsonl").read_text().splitlines() if line]
    pairs = []
    for point in points:
        if point["phenomenon"] in spec["scale_study"]:
            length, ppl = point["train_length"], point["ppl"]
            if str(length // 2) in ppl:
                pairs.append((ppl[str(length // 2)], ppl[str(length)]))
    return D.median_discount(pairs)


def paper_tables(config: dict, root: Path = ROOT) -> dict[str, list[str]]:
    """Markdown table lines per paper: a row per group, a column per setting."""
    settings = config["settings"]
    presets = {name: yaml.safe_load(read_source(s["preset"], root)) for name, s in settings.items()}
    experiments = {name: yaml.safe_load(read_source(s.get("experiments", "config/experiments") + "/receptive-field.yaml",
                                                    root)) for name, s in settings.items()}
    tables = {}
    for paper in PAPERS:
        columns = {}
        for name, preset in presets.items():
            view = paper_view(preset, paper)
            measured = discount_of((config.get("discount", {}).get(paper) or {}).get(name), root)
            if paper == "lex":
                columns[name] = lex_rows(view, measured)
            elif paper == "receptive-field":
                columns[name] = rf_rows(view, experiments[name], settings[name].get("slope_seeds_read", "every"))
            else:
                # a preset that continues the released checkpoints (paper, gpu) reads their geometry
                released = (view.get("experiment") or {}).get("hf_checkpoints")
                columns[name] = segmented_rows(view, config["released"] if released else None, measured)
        groups = list(next(iter(columns.values())))
        lines = ["| group | " + " | ".join(settings[n]["label"] for n in columns) + " |",
                 "|---|" + "---|" * len(columns)]
        lines += [f"| {g} | " + " | ".join(fmt(columns[n][g]) for n in columns) + " |" for g in groups]
        tables[paper] = lines
    return tables


def rewrite_page(text: str, tables: dict[str, list[str]]) -> str:
    """`text` with each paper's table put between its markers (a page without them is an error)."""
    for paper, lines in tables.items():
        pattern = re.compile(rf"(<!-- dimensions:{paper} -->\n).*?(<!-- /dimensions:{paper} -->)", re.S)
        if not pattern.search(text):
            raise ValueError(f"the page has no <!-- dimensions:{paper} --> ... <!-- /dimensions:{paper} --> markers")
        text = pattern.sub(lambda m: m.group(1) + "\n".join(lines) + "\n" + m.group(2), text)
    return text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=str(ROOT / "config" / "dimensions.yaml"))
    parser.add_argument("--write", default=None, help="the page whose marked tables to rewrite (docs/dimensions.md)")
    args = parser.parse_args(argv)
    tables = paper_tables(yaml.safe_load(Path(args.config).read_text(encoding="utf-8")))
    if args.write:
        page = Path(args.write)
        atomic_write_text(page, rewrite_page(page.read_text(encoding="utf-8"), tables))
    else:
        print("\n\n".join("\n".join([f"## {paper}", "", *lines]) for paper, lines in tables.items()))


if __name__ == "__main__":
    run_cli(main)
