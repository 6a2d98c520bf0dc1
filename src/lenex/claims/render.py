"""Render one paper's claims, checked on the paper's numbers and on ours, as Markdown and JSON;
or the summary of every paper's claims at one preset.

    python -m lenex.claims.render paper --claims config/claims/lex.yaml --preset tiny \\
        --cells results/tiny/tables/lex/table2.cells.json ... --out-md C.md --out-json C.json
    python -m lenex.claims.render summary --preset tiny --claims-json C1.json C2.json ... --out S.md

The JSON shape (tools read it; docs/claims.md): {"paper", "preset", "claims": [{"id", "statement",
"source", "on_paper" (the paper's printed numbers: true, false or null), "verdict" (on ours: holds,
contradicted, inconclusive, untestable or by-construction), "outcome" (the check's own three-valued
result on ours, null when untestable), "interval", "level", "adjustment", "test" (of the deciding
comparison), "direction", "significant", "effect_fraction", "parts" (every comparison),
"on_ours" (true only for holds, false only for contradicted), "evidence"}]}, and where the claim has
them "narrowed", "by_construction", "thresholds" (the claims file's overrides), "thresholds_used" (every
word's value, its source and derivation, lenex.claims.thresholds), "smallest_effect", "given", "scale"
({trained_tokens, first_seen_tokens, quoted, never_seen_budgets}: what the scale study says of a
contradicted claim), "negligible" (why its effect is), "power" (an inconclusive claim's: what would
decide it, lenex.claims.power) and "sweep" (a contradicted claim's: the sweep that would measure why,
with its training tokens). A part that cannot fail carries "cannot_fail" (lenex.claims.cannot_fail).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..cli import run_cli
from ..files import atomic_write_text, read_json, read_yaml
from ..records.checks import check_cells, check_finite
from ..tables.formatting import md_escape
from .designed_sweeps import designed_by_claim, designed_text
from .emergence import emergence_text, readings_by_claim
from .evaluate import SCHEMA, evaluate_paper, load_claims
from .earlier_scoring import earlier_record, earlier_section
from .frozen import frozen_section, load_rules, moved, pinned
from .predicates import THRESHOLDS
from .scale import Budget, load_points
from .power import power_text
from .summary import (PAPER_SIDE, against_bar, fraction_text, meets, median_effect_fraction, paper_counts,
                      render_summary, sweep_text, verdict_counts)
from .verdicts import VERDICTS

def load_cells(paths: list[str | Path]) -> dict[str, dict]:
    """Table number (f<N> for a figure's) -> cells file content; two files for one key is an error."""
    tables: dict[str, dict] = {}
    for path in paths:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"cells file {path} is not valid JSON: {err}") from err
        check_finite(data, f"cells file {path}")  # a cell edited to NaN would decide a claim
        check_cells(data, f"cells file {path}")  # a mean edited away from its seeds' values too
        key = f"f{data['figure']}" if "figure" in data else str(data["table"])
        if key in tables:
            raise ValueError(f"two cells files for table {key}: {path} and another")
        tables[key] = data
    return tables


def claims_document(paper: str, preset: str, records: list[dict]) -> dict:
    return {"paper": paper, "preset": preset, "claims": records}


def interval_text(record: dict) -> str:
    """'e = −0.021, 95% [−0.035, −0.007], paired t over 5 seeds' for the deciding leaf."""
    if record.get("test") is None:
        return "—"
    leaf = next((p for p in record["parts"] if p["interval"] == record["interval"] and p["test"] == record["test"]),
                record["parts"][0])
    level = f"{100 * record['level']:.4g}%"
    shown = "no interval" if record["interval"] is None else (
        f"{level} [{record['interval'][0]:.3g}, {record['interval'][1]:.3g}]")
    return f"{leaf['rule']} {', '.join(leaf['refs'])}: e = {leaf['effect']:.3g}, {shown}, {record['test']}"


def effect_text(record: dict) -> str:
    """Direction and magnitude next to the paper's: 'same direction; ours 0.12 of the paper's effect'."""
    parts = [f"{record['direction']} direction" if record["direction"] != "none" else "no direction"]
    if record.get("effect_fraction") is not None:
        parts.append(f"ours {record['effect_fraction']:.2f} of the paper's effect")
    if record.get("significant") is not None:
        parts.append("significant" if record["significant"] else "not significant")
    return "; ".join(parts)


def claim_text(record: dict) -> str:
    """The statement with what qualifies it: a narrowing, a by-construction reason, own thresholds."""
    text = record["statement"]
    if record.get("narrowed"):
        text += f" (narrowed: {record['narrowed']})"
    if record.get("by_construction"):
        text += f" (by construction: {record['by_construction']})"
    used = record.get("thresholds_used")
    if used is None:  # a record written before thresholds_used: its overrides are its values
        used = {w: {"value": o["value"], "why": o["why"], "source": "words"} for w, o in (record.get("thresholds") or {}).items()}
    for word, t in used.items():
        if t["source"] != "default":
            value = f"x{t['value']:.3g}" if t["source"] not in ("words", "default") else f"{t['value']:g}"
            text += f" (threshold {word} = {value}: {t['why']})"
    return text


def paper_side(record: dict) -> str:
    """The paper's side in words: holds, not printed, or fails, with the cells it fails on where the
    claim lists them (a failure of the paper's own numbers, kept rather than narrowed away)."""
    if record.get("paper_fails_on"):
        return f"fails on {', '.join(record['paper_fails_on'])}"
    return PAPER_SIDE[record["on_paper"]]


def verdict_text(record: dict) -> str:
    """The verdict with what a reader needs beside it: the check of a by-construction claim, a
    negligible effect, what would decide an inconclusive one (power and cost), and the sweep that
    would measure why a contradicted one fails (docs/claims.md)."""
    verdict = record["verdict"]
    if verdict == "by-construction":
        return f"by-construction (check: {record['outcome']})"
    if record.get("negligible"):
        verdict += " (negligible effect)"
    if verdict == "inconclusive" and "power" in record:
        cost = (record["power"] or {}).get("cost")
        if record.get("read_as_exact"):  # the reading the label replaced, beside it
            verdict += f" (one replicate; read as exact values: {record['read_as_exact']})"
        verdict += f"; {power_text(record['power'], cost)}"
    if record.get("where_paper_holds"):  # the verdict of the narrowing the listed paper failure replaced
        verdict += f"; on the cells where the paper's numbers hold: {record['where_paper_holds']}"
    if record.get("sweep"):
        verdict += f"; {sweep_text(record['sweep'])}"
    if record.get("emergence"):
        verdict += f"; {emergence_text(record['emergence'])}"
    if record.get("designed_sweeps"):
        verdict += f"; {designed_text(record['designed_sweeps'])}"
    return verdict


def render_markdown(document: dict) -> str:
    records = document["claims"]
    ours, paper = verdict_counts(records), paper_counts(records)
    bar = against_bar(records)
    thresholds = ", ".join(f"{k} = {v:g}" for k, v in THRESHOLDS.items())
    lines = [f"# Claims of `{document['paper']}`, checked at preset `{document['preset']}`", "",
             f"{len(records)} claims. On the paper's own numbers: {paper['holds']} hold, {paper['fails']} fail, "
             f"{paper['not printed']} not printed. On ours: " + ", ".join(f"{ours[v]} {v}" for v in VERDICTS)
             + f"; median effect fraction {fraction_text(median_effect_fraction(records))} (our log-ratio over the "
             "paper's). Of the claims that hold on the paper's numbers (by-construction ones excluded), "
             f"{bar['hold']} of {bar['on_paper']} hold on ours; the bar is {bar['bar']} ({meets(bar)}).", "",
             "Each verdict on ours comes from the deciding comparison's interval of the effect e on the log scale "
             "(ln of a ratio of perplexities), at 95% two-sided, Bonferroni-adjusted inside `all`/`any` (docs/claims.md); "
             "a margin inside its interval is inconclusive.", "",
             f"Default thresholds (docs/claims.md): {thresholds}; a claim's own (an effect word's: half the median "
             "log effect of the paper's cells it reads, or of the effect it is set against) are stated beside it. "
             "Evidence: each cell with the paper's value and ours.", "",
             "| id | claim | source | paper | ours | deciding interval and test | effect against the paper's | evidence |",
             "|---|---|---|---|---|---|---|---|"]
    for r in records:
        verdict = verdict_text(r)
        lines.append(f"| {r['id']} | {md_escape(claim_text(r))} | {md_escape(r['source'])} | "
                     f"{paper_side(r)} | {verdict} | {md_escape(interval_text(r))} | "
                     f"{effect_text(r)} | {md_escape(r['evidence'])} |")
    return "\n".join(lines + frozen_section(document) + earlier_section(document)) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("paper", help="one paper's claims")
    one.add_argument("--claims", required=True, help="config/claims/<paper>.yaml")
    one.add_argument("--schema", default=str(SCHEMA))
    one.add_argument("--preset", required=True)
    one.add_argument("--cells", nargs="+", required=True, help="every table's cells file")
    one.add_argument("--one-model-per-variant", action="store_true",
                     help="one model of a variant is scored on every corpus (LEX): a claim's models, what more "
                          "seeds of it train, are its variants (lenex.pipeline.papers.Paper.models_per_corpus)")
    one.add_argument("--out-md", required=True)
    one.add_argument("--out-json", required=True)
    one.add_argument("--scale-study", help="the scale study's points.jsonl: with --budget and --tokenizer, "
                     "a failing claim that names its phenomena says whether this budget can show them")
    one.add_argument("--budget", type=json.loads, help='JSON {tokens, shape, by_variant: {variant: {tokens, shape}}}: '
                     "what this paper's models train on at this preset (lenex.experiment.presets.scale_budget)")
    one.add_argument("--tokenizer", help="this preset's tokenizer (gpt2, bpe-<vocab>)")
    one.add_argument("--emergence", nargs="*", default=[], help="the committed emergence.json records "
                     "(lenex.claims.emergence.emergence_files): each claim's trends beside its verdict")
    one.add_argument("--sweep-design", help="config/sweeps.yaml: with --sweep-plan and --sweep-parts, each claim's "
                     "designed sweeps, their planned cost and parts run (lenex.claims.designed_sweeps)")
    one.add_argument("--sweep-plan", help="results/scale-study/sweeps/plan.json")
    one.add_argument("--sweep-parts", nargs="*", default=[], help="the sweep parts' records so far")
    one.add_argument("--frozen", nargs="*", default=[], metavar="FILE",
                     help="none, or the run's frozen-claims.yaml and frozen-rules.json (lenex.claims.frozen): the "
                          "claims as they stood before the data, evaluated beside today's")
    one.add_argument("--earlier-cells", nargs="*", default=[], metavar="FILE",
                     help="none, or --cells with the tables that re-runs supersede rendered from the reference run's "
                          "records (lenex.claims.earlier_scoring): the verdicts those give, beside today's")
    summary = sub.add_parser("summary", help="the preset's summary over papers")
    summary.add_argument("--preset", required=True)
    summary.add_argument("--claims-json", nargs="+", required=True)
    summary.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.command == "paper":
        claims = load_claims(args.claims, args.schema)
        scale = (args.scale_study, args.budget, args.tokenizer)
        if any(x is not None for x in scale) and None in scale:
            parser.error("--scale-study, --budget and --tokenizer go together")
        budget = (Budget.from_dict(args.budget, args.tokenizer, load_points(args.scale_study))
                  if args.scale_study else None)
        designed = None
        if args.sweep_design:
            designed = designed_by_claim(read_yaml(args.sweep_design), read_json(args.sweep_plan), args.sweep_parts)
        tables, readings = load_cells(args.cells), readings_by_claim(args.emergence)
        records = evaluate_paper(claims, tables, budget, readings, per_variant=args.one_model_per_variant,
                                 designed=designed)
        document = claims_document(claims["paper"], args.preset, records)
        if args.frozen:
            if len(args.frozen) != 2:
                parser.error("--frozen takes the frozen claims file and its rules record, or nothing")
            rules = load_rules(args.frozen[1])
            frozen_claims = load_claims(args.frozen[0], args.schema)
            frozen_records = evaluate_paper(pinned(frozen_claims, rules["defaults"], rules["revision"]), tables, budget, readings,
                                            per_variant=args.one_model_per_variant, designed=designed)
            document["frozen"] = {"revision": rules["revision"], "date": rules["date"],
                                  "records": [{k: r[k] for k in ("id", "verdict", "on_paper")} for r in frozen_records],
                                  "moved": moved(frozen_claims, claims, frozen_records, records, rules)}
        if args.earlier_cells:
            earlier = evaluate_paper(claims, load_cells(args.earlier_cells), budget, readings,
                                     per_variant=args.one_model_per_variant, designed=designed)
            document["earlier_scoring"] = earlier_record(args.cells, args.earlier_cells, records, earlier)
        # One value a line, unindented: diffs stay line by line, and the tree sent to a GPU machine stays
        # small (the receptive-field record alone is half a megabyte indented).
        atomic_write_text(args.out_json, json.dumps(document, indent=0, ensure_ascii=False) + "\n")
        atomic_write_text(args.out_md, render_markdown(document))
    else:
        paths = [Path(p) for p in args.claims_json]
        documents = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
        out = Path(args.out)
        atomic_write_text(out, render_summary(args.preset, documents, paths, out))


if __name__ == "__main__":
    run_cli(main)
