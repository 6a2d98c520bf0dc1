"""Render one paper's claims, checked on the paper's numbers and on ours, as Markdown and JSON;
or the summary of every paper's claims at one preset.

    python -m lenex.claims.render paper --claims config/claims/lex.yaml --preset tiny \\
        --cells results/tiny/tables/lex/table2.cells.json ... --out-md C.md --out-json C.json
    python -m lenex.claims.render summary --preset tiny --claims-json C1.json C2.json ... --out S.md

The JSON shape (tools read it): {"paper", "preset", "claims": [{"id", "statement", "source",
"on_paper", "on_ours", "evidence"}]}; a verdict is true, false or null (cannot be tested, why in
the evidence). A failing claim the scale study was asked about also has "scale": {"trained_tokens",
"first_seen_tokens"} (the preset's budget for the models it reads, and the fewest tokens at which
the study sees its phenomena; null when it never does).
"""
from __future__ import annotations

import argparse
import json
import math
import os
from fractions import Fraction
from pathlib import Path

from ..cli import run_cli
from ..files import atomic_write_text
from ..tables.formatting import md_escape
from .evaluate import SCHEMA, evaluate_paper, load_claims
from .predicates import THRESHOLDS
from .scale import Budget, load_points

VERDICT = {True: "holds", False: "FAILS", None: "untestable"}


def load_cells(paths: list[str | Path]) -> dict[str, dict]:
    """Table number (f<N> for a figure's) -> cells file content; two files for one key is an error."""
    tables: dict[str, dict] = {}
    for path in paths:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"cells file {path} is not valid JSON: {err}") from err
        key = f"f{data['figure']}" if "figure" in data else str(data["table"])
        if key in tables:
            raise ValueError(f"two cells files for table {key}: {path} and another")
        tables[key] = data
    return tables


def claims_document(paper: str, preset: str, records: list[dict]) -> dict:
    return {"paper": paper, "preset": preset, "claims": records}


def counts(records: list[dict], side: str) -> dict[str, int]:
    out = {"holds": 0, "FAILS": 0, "untestable": 0}
    for r in records:
        out[VERDICT[r[f"on_{side}"]]] += 1
    return out


# The bar a preset's claims are held to (issue 16): this share of the claims that hold on the
# paper's own numbers must hold on ours; a claim untestable at this scale counts as not holding.
# A fraction, so that the claims it asks for are counted exactly.
BAR_SHARE = Fraction(4, 5)


def against_bar(records: list[dict], share: Fraction = BAR_SHARE) -> dict[str, int]:
    """Of the claims that hold on the paper's numbers (`on_paper`): how many hold on ours, the
    bar (the smallest whole number of them that is at least `share`), how many are untestable at
    this scale and, of those, how many the scale study never sees at any budget it ran (its
    `first_seen_tokens` is null), and the most that could hold at this scale (all but the untestable)."""
    if not 0 < share <= 1:
        raise ValueError(f"the bar's share must be in (0, 1], got {share}")
    on_paper = [r for r in records if r["on_paper"] is True]
    untestable = [r for r in on_paper if r["on_ours"] is None]
    never = [r for r in untestable if "scale" in r and r["scale"]["first_seen_tokens"] is None]
    bar = math.ceil(Fraction(share) * len(on_paper))
    return {"on_paper": len(on_paper), "hold": sum(r["on_ours"] is True for r in on_paper), "bar": bar,
            "untestable": len(untestable), "never_seen": len(never),
            "reachable": len(on_paper) - len(untestable)}


def render_markdown(document: dict) -> str:
    records = document["claims"]
    ours, paper = counts(records, "ours"), counts(records, "paper")
    thresholds = ", ".join(f"{k} = {v:g}" for k, v in THRESHOLDS.items())
    lines = [f"# Claims of `{document['paper']}`, checked at preset `{document['preset']}`", "",
             f"{len(records)} claims. On the paper's own numbers: {paper['holds']} hold, {paper['FAILS']} fail, "
             f"{paper['untestable']} not printed. On ours: {ours['holds']} hold, {ours['FAILS']} fail, "
             f"{ours['untestable']} cannot be tested at this scale.", "",
             f"Thresholds (docs/claims.md): {thresholds}. Evidence: each cell with the paper's value and ours.", "",
             "| id | claim | source | paper | ours | evidence |", "|---|---|---|---|---|---|"]
    for r in records:
        lines.append(f"| {r['id']} | {md_escape(r['statement'])} | {md_escape(r['source'])} | "
                     f"{VERDICT[r['on_paper']]} | {VERDICT[r['on_ours']]} | {md_escape(r['evidence'])} |")
    return "\n".join(lines) + "\n"


def render_summary(preset: str, documents: list[dict], paths: list[Path], out: Path) -> str:
    lines = [f"# Claims at preset `{preset}`", "",
             "Which of each paper's claims hold on our numbers (and, as a check of the claims files, on the "
             "paper's own). Built by `snakemake results/" + preset + "/claims.md`.", "",
             "| paper | claims | ours: hold | ours: fail | ours: untestable | paper: hold | paper: fail | "
             "paper: not printed |", "|---|---|---|---|---|---|---|---|"]
    for document, path in zip(documents, paths):
        ours, paper = counts(document["claims"], "ours"), counts(document["claims"], "paper")
        link = Path(os.path.relpath(path.with_suffix(".md"), out.parent)).as_posix()
        lines.append(f"| [{document['paper']}]({link}) | {len(document['claims'])} | {ours['holds']} | "
                     f"{ours['FAILS']} | {ours['untestable']} | {paper['holds']} | {paper['FAILS']} | "
                     f"{paper['untestable']} |")
    lines += ["", f"Against the bar: at least {float(BAR_SHARE):.0%} of the claims that hold on the paper's own numbers "
              "must hold on ours; one untestable at this scale counts as not holding (`never seen`: the scale "
              "study does not see its phenomenon at any budget it ran; `most reachable`: all but the untestable).",
              "", "| paper | hold on the paper | of them, hold on ours | bar | untestable at this scale | "
              "never seen | most reachable | meets the bar |", "|---|---|---|---|---|---|---|---|"]
    for document in documents:
        bar = against_bar(document["claims"])
        meets = "yes" if bar["hold"] >= bar["bar"] else ("no" if bar["reachable"] >= bar["bar"] else
                                                         "no (out of reach at this scale)")
        lines.append(f"| {document['paper']} | {bar['on_paper']} | {bar['hold']} | {bar['bar']} | "
                     f"{bar['untestable']} | {bar['never_seen']} | {bar['reachable']} | {meets} |")
    for document in documents:
        failed = [r["id"] for r in document["claims"] if r["on_ours"] is False]
        if failed:
            lines += ["", f"Failing on ours in `{document['paper']}`: {', '.join(failed)}."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("paper", help="one paper's claims")
    one.add_argument("--claims", required=True, help="config/claims/<paper>.yaml")
    one.add_argument("--schema", default=str(SCHEMA))
    one.add_argument("--preset", required=True)
    one.add_argument("--cells", nargs="+", required=True, help="every table's cells file")
    one.add_argument("--out-md", required=True)
    one.add_argument("--out-json", required=True)
    one.add_argument("--scale-study", help="the scale study's points.jsonl: with --budget and --tokenizer, "
                     "a failing claim that names its phenomena says whether this budget can show them")
    one.add_argument("--budget", type=json.loads, help='JSON {tokens, shape, by_variant: {variant: {tokens, shape}}}: '
                     "what this paper's models train on at this preset (lenex.presets.scale_budget)")
    one.add_argument("--tokenizer", help="this preset's tokenizer (gpt2, bpe-<vocab>)")
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
        records = evaluate_paper(claims, load_cells(args.cells), budget)
        document = claims_document(claims["paper"], args.preset, records)
        atomic_write_text(args.out_json, json.dumps(document, indent=1, ensure_ascii=False) + "\n")
        atomic_write_text(args.out_md, render_markdown(document))
    else:
        paths = [Path(p) for p in args.claims_json]
        documents = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
        out = Path(args.out)
        atomic_write_text(out, render_summary(args.preset, documents, paths, out))


if __name__ == "__main__":
    run_cli(main)
