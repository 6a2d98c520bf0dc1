"""The receptive-field paper's tables (1-5), paper / ours / Δ per cell:

    python -m lenex.receptive_field.table --spec config/experiments/receptive-field.yaml \
        --table-key table3 --preset-file config/presets/tiny.yaml --results R.json ... \
        [--erf E.json ...] --metas META.json ... --out-md T.md --out-tex T.tex [--out-cells T.cells.json]

Each results file is one model's evaluation (a list of records, one per L_ex). Every cell is the
mean ± std over the seeds of its model (lenex.tables.seeds; a spec with `seeds: first` reads seed 1
only), with the paired t-test against the spec's `significance.reference` where it names one.
Every length of a section must score the same tokens (checked). With --erf, the table ends with
each model's empirical receptive field (the mean over its seeds, each seed's in the cells file)
beside its theoretical one (TRF = w·R, windowed models).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..cli import run_cli
from ..tables.header import build_header
from ..experiment.presets import paper_view
from ..tables.raw_results import read_recorded
from ..tables.cells import significance_extra
from ..tables.paper_results import load_paper_results
from ..tables.render import add_table_arguments, load_experiment, load_results, load_table_spec, write_table
from ..tables.table_data import build_table
from . import PAPER_KEY
from .targets import CACHE_CHECKS, windows_note
from .significance import aggregate_seeds
from ..tables.seeds import mean_std, seeds_fact
from ..files import read_yaml


def check_same_tokens(records: list[dict]) -> None:
    """Section 3.4: every L_ex of a corpus scores the same last tokens."""
    digests: dict[str, set] = {}
    for record in records:
        digests.setdefault(record["corpus"], set()).add(record.get("scored_tokens_sha256"))
    for corpus, found in digests.items():
        if len(found) != 1:
            raise ValueError(f"{corpus}: the evaluations do not all score the same tokens "
                             f"({len(found)} different token sets); rerun them at one preset")


def table_records(spec: dict, records: list[dict]) -> list[dict]:
    """One record per cell: the mean over its model's seeds, t-tested against the spec's reference."""
    check_same_tokens(records)
    if spec.get("seeds") == "first":
        records = [r for r in records if r.get("seed", 1) == 1]
    reference = (spec.get("significance") or {}).get("reference")
    return aggregate_seeds(records, reference=reference, metric=spec.get("metric", "ppl"))


def cache_checks(records: list[dict]) -> dict | None:
    """Table 5's checks as data for the cells file: the largest |Δ NLL| against the sliding mask
    and every model's speed-up over re-encoding."""
    checks = {r["checkpoint"]: r["check"] for r in records if r.get("check")}
    if not checks:
        return None
    values = (max(c["max_abs_diff_vs_sliding_mask"] for c in checks.values()),
              min(c["speedup"] for c in checks.values()), len(checks))
    return dict(zip(CACHE_CHECKS, values))  # the names the claims read (targets.produced_references)


def last_token_reach(records: list[dict]) -> dict[str, int]:
    """'<corpus>/<variant>' -> how many tokens back the scored last token can see, from each model's
    recorded config: n_layer x window for a windowed mask (its TRF) or a cache window (each layer
    reads the last w̄ states of the layer below). A length at or beyond it gives the last token the
    same context, so two such lengths score one model output (lenex.claims.cannot_fail). Models with
    full attention see every token and are left out."""
    reach: dict[str, int] = {}
    for r in records:
        config = r.get("model_config") or {}
        window = r.get("window") if r.get("protocol") == "cache-window" else (config.get("mask_options") or {}).get("window")
        if not window or not config.get("n_layer"):
            continue
        key, tokens = f"{r['corpus']}/{r['variant']}", int(config["n_layer"]) * int(window)
        if reach.setdefault(key, tokens) != tokens:
            raise ValueError(f"two reaches of {key}: {reach[key]} and {tokens} tokens (seeds of one model differ)")
    return dict(sorted(reach.items()))


def cache_summary(records: list[dict]) -> dict:
    """Header lines of Table 5 from every model's checks: equality with the sliding mask, speed."""
    checks = {r["checkpoint"]: r["check"] for r in records if r.get("check")}
    if not checks:
        return {}
    diffs = [c["max_abs_diff_vs_sliding_mask"] for c in checks.values()]
    speedups = sorted(c["speedup"] for c in checks.values())
    first = next(iter(checks.values()))
    return {
        "cache_window_check": (f"the cache window gives the sliding-mask (w̄) numbers: largest |Δ NLL| "
                               f"{max(diffs):.1e} over {len(diffs)} models (it is not re-encoding the last w̄ "
                               "tokens: with R layers a cached key already saw w̄ tokens before it; the two agree "
                               "for one layer, tested)"),
        "cache_window_speed": (f"scoring {first['timed_tokens']} tokens after the first w̄: cache window "
                               f"{speedups[0]:.1f}× to {speedups[-1]:.1f}× faster than re-encoding each "
                               f"token's last w̄ tokens (median {speedups[len(speedups) // 2]:.1f}×, "
                               f"{len(speedups)} models, this machine)"),
    }


def erf_rows(erf_results: list[dict]) -> list[dict]:
    """One row per model (corpus, variant): its ERF as the mean over its seeds, with their std,
    count and each seed's ERF (`erf_seeds`: the claims' intervals pair them seed by seed)."""
    by_model: dict[tuple, dict[int, dict]] = {}
    for r in erf_results:
        by_seed = by_model.setdefault((r["corpus"], r["variant"]), {})
        seed = int(r.get("seed", 1))
        if seed in by_seed and by_seed[seed]["erf"] != r["erf"]:
            raise ValueError(f"two different ERFs of {r['variant']} on {r['corpus']} seed {seed}")
        by_seed[seed] = r
    rows = []
    for (corpus, variant), by_seed in by_model.items():
        seeds = sorted(by_seed)
        first = by_seed[seeds[0]]
        mean, std = mean_std([by_seed[s]["erf"] for s in seeds])
        rows.append({"corpus": corpus, "variant": variant, "erf": mean, "erf_std": std, "n_seeds": len(seeds),
                     "erf_seeds": {str(s): by_seed[s]["erf"] for s in seeds}, "trf": first["trf"],
                     "train_length": first["train_length"], "length": first["length"], "segments": first["segments"]})
    return sorted(rows, key=lambda r: (r["corpus"], r["trf"] is None, r["trf"] or 0, r["variant"]))


def erf_text(row: dict) -> str:
    """An ERF row's value as printed: the mean over seeds, ± their std where there are several."""
    return f"{row['erf']:g}" + ("" if row.get("erf_std") is None else f" ± {row['erf_std']:.1f}")


def erf_markdown(rows: list[dict]) -> str:
    if not rows:
        return ""
    first = rows[0]
    seeds = sorted({r.get("n_seeds", 1) for r in rows})
    over = "" if seeds == [1] else f"; mean ± std over {'/'.join(map(str, seeds))} seeds of each model"
    lines = ["", "## Empirical receptive field (Section 5.1)", "",
             f"ERF: the most recent tokens holding 99% of the cumulative normalized gradient when "
             f"predicting the {first['length']}-th token (4 × L_tr, as the paper's 2048-th with L_tr = 512), "
             f"averaged over {first['segments']} segments{over}. TRF = w·R for windowed attention "
             "(no model can use more; the paper: extrapolation holds when L_tr covers the ERF).", "",
             "| corpus | model | L_tr | TRF = w·R | ERF | ERF ≤ L_tr |", "|---|---|---|---|---|---|"]
    for r in rows:
        trf = "—" if r["trf"] is None else str(r["trf"])
        covered = "yes" if r["erf"] <= r["train_length"] else "no"
        lines.append(f"| {r['corpus']} | {r['variant']} | {r['train_length']} | {trf} | {erf_text(r)} | {covered} |")
    return "\n".join(lines) + "\n"


TEX_PM = "$\\pm$"


def erf_latex(rows: list[dict]) -> str:
    if not rows:
        return ""
    body = "\n".join(f"{r['corpus']} & {r['variant']} & {r['train_length']} & "
                     f"{'---' if r['trf'] is None else r['trf']} & {erf_text(r).replace('±', TEX_PM)} \\\\"
                     for r in rows)
    return ("\n\\begin{table}[t]\n\\centering\n\\small\n\\caption{Empirical receptive field (99\\% of the "
            "cumulative normalized gradient) beside TRF $= wR$.}\n\\begin{tabular}{llrrr}\n\\toprule\n"
            "Corpus & Model & $L_{tr}$ & TRF & ERF \\\\\n\\midrule\n" + body.replace("_", "\\_")
            + "\n\\bottomrule\n\\end{tabular}\n\\end{table}\n")


def header_for(preset: dict, experiment: dict, spec: dict, corpora: dict, metas: dict, results: list[dict],
               unavailable: dict) -> dict:
    """The table's header: lenex.tables.header.build_header with this paper's facts (header_facts)."""
    view = paper_view(preset, PAPER_KEY)
    return build_header(view, corpora, metas, results, unavailable=unavailable,
                        training_data="each section's models are trained on the train split of that section's "
                                      "corpus, as the paper trains one model per dataset",
                        facts=header_facts(view, experiment, spec, results))


def header_facts(view: dict, experiment: dict, spec: dict, results: list[dict]) -> dict:
    """What only this paper's headers say: that it runs at its own block of the preset, its
    protocol, how its windows were scaled, its seeds and t-tests."""
    # The preset's own description is of its shared scale; this paper runs at its `papers:` block.
    facts = {"preset_description": (f"this paper's block (`papers: {PAPER_KEY}`) of preset `{view['name']}`: "
                                    "the scale line above; not the preset's shared scale")}
    protocol = spec.get("protocol", "last-token")
    segments = results[0].get("segments") if results else None
    if protocol == "cache-window":
        window = results[0].get("window") if results else None
        facts["protocol"] = (f"last-token protocol (Section 3.4) over {segments} segments, each read through a "
                             f"cache window of w̄ = {window} tokens (4 × L_tr, as the paper's 2048; Appendix B)")
    else:
        facts["protocol"] = (f"last-token protocol (Section 3.4): the same {segments} tokens scored at every L_ex, "
                             "each after L_ex − 1 tokens")
    if any("paper_window" in experiment["variants"].get(r["variant"], {}) for s in spec["sections"] for r in s["rows"]):
        facts["windows"] = windows_note(experiment, view)
    seeds = seeds_fact(results)
    if seeds and spec.get("significance"):
        marks = spec["significance"]
        facts["seeds"] = seeds + (f"; {marks['better']} / {marks['worse']} = paired two-sided t-test over seeds at "
                                  f"α = 0.05: {marks['reference']} significantly better / worse than the row")
    return facts


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--preset-file", required=True)
    parser.add_argument("--erf", nargs="*", default=[], help="ERF files of the models to list under the table")
    parser.add_argument("--metas", nargs="*", default=[], help="meta.json of each corpus of the table")
    parser.add_argument("--corpora", default="{}", help="JSON: the config's corpora section")
    parser.add_argument("--unavailable", default="{}", help="JSON: corpus -> why it could not be built")
    parser.add_argument("--paper-results", default=None)
    args = parser.parse_args(argv)
    extra = json.loads(args.extra_schemes)
    experiment = load_experiment(args.spec, extra)
    spec = load_table_spec(args.spec, args.table_key, extra)
    raw = load_results(args.results, experiment, expect=args.expect)
    records = table_records(spec, raw)
    preset = read_yaml(args.preset_file)
    metas = {Path(m).parent.name: read_recorded(m) for m in args.metas}
    header = header_for(preset, experiment, spec, json.loads(args.corpora), metas, records,
                        json.loads(args.unavailable))
    header.update(cache_summary(raw))
    table = build_table(spec, records, load_paper_results(args.paper_results), header)
    rows = erf_rows([read_recorded(p) for p in args.erf])
    cells_extra = {"erf": rows, **significance_extra(spec)}
    if cache_checks(raw):
        cells_extra["cache_window"] = cache_checks(raw)
    if last_token_reach(raw):
        cells_extra["reach"] = last_token_reach(raw)
    write_table(table, args, erf_markdown(rows), erf_latex(rows), cells_extra)

if __name__ == "__main__":
    run_cli(main)
