"""Claims judged on re-runs, beside the verdicts the reference run's records give.

Where committed re-runs of a table hold every seed it reads, the table is rendered from them
(lenex.pipeline.recorded.Recorded.superseding: a re-run scores by the code of its day, a rule of what
an evaluation scores changed since the reference run). The claims are judged on those cells; the same
claims, by the same engine and rules, are judged on the cells the reference run's records give (the
superseded tables rendered from them alone, rule paper_table_reference), and every verdict that
moved is listed. So a change of what is scored hides no verdict, as a change of rules hides none
(lenex.claims.frozen)."""
from __future__ import annotations

from pathlib import Path

from .counts import counts_table, verdict_counts
from .verdicts import VERDICTS


def earlier_record(cells: list[str], earlier_cells: list[str], records: list[dict], earlier: list[dict]) -> dict:
    """What the claims document keeps of the earlier side: the cells files it read in place of today's,
    each claim's verdict there and every claim whose verdict moved."""
    if len(cells) != len(earlier_cells):
        raise ValueError(f"--earlier-cells names {len(earlier_cells)} cells files, --cells {len(cells)}: "
                         "the earlier side reads the same tables, the superseded ones rendered from the reference run")
    now = {r["id"]: r["verdict"] for r in records}
    before = {r["id"]: r["verdict"] for r in earlier}
    return {"replaced": [{"today": a, "earlier": b} for a, b in zip(cells, earlier_cells) if a != b],
            "records": [{k: r[k] for k in ("id", "verdict", "on_paper")} for r in earlier],
            "moved": [{"id": i, "earlier": before.get(i), "current": now.get(i)}
                      for i in dict.fromkeys([*before, *now]) if before.get(i) != now.get(i)]}


def tables_named(record: dict) -> str:
    """The superseded tables, by name (`table2`), in words."""
    names = [Path(r["today"]).name.split(".")[0] for r in record["replaced"]]
    return ", ".join(names) or "none"


def earlier_section(document: dict) -> list[str]:
    """The claims page's part on the earlier scoring: counts on both sides and the moved verdicts."""
    earlier = document.get("earlier_scoring")
    if not earlier:
        return []
    lines = ["", f"## Verdicts on the reference run's records, beside the re-runs' ({tables_named(earlier)})", "",
             f"Committed re-runs hold every seed of {tables_named(earlier)}, so those cells are read from them "
             "(each re-run's page compares it with the reference run, cell by cell). The same claims, rules and "
             "engine, judged on the cells the reference run's records give (rendered from them alone: "
             + ", ".join(f"`{r['earlier']}`" for r in earlier["replaced"]) + "):", "",
             *counts_table("cells", [("the reference run's", earlier["records"]), ("the re-runs'", document["claims"])])]
    if not earlier["moved"]:
        return lines + ["", "No verdict moved."]
    lines += ["", "| claim | on the reference run's records | on the re-runs' |", "|---|---|---|"]
    lines += [f"| {m['id']} | {m['earlier'] or '—'} | {m['current'] or '—'} |" for m in earlier["moved"]]
    return lines


def earlier_table(documents: list[dict]) -> list[str]:
    """The summary's part: per paper judged on re-runs, both sides' counts and the moved verdicts."""
    judged = [d for d in documents if d.get("earlier_scoring")]
    if not judged:
        return []
    lines = ["", "Re-runs beside the reference run: where committed re-runs hold every seed of a table, its cells are "
             "read from them; the same claims judged on the reference run's records for those tables:", "",
             "| paper | tables re-run | cells | " + " | ".join(VERDICTS) + " | verdicts moved |",
             "|---|---|---|" + "---|" * (len(VERDICTS) + 1)]
    for document in judged:
        e = document["earlier_scoring"]
        before, now = verdict_counts(e["records"]), verdict_counts(document["claims"])
        lines.append(f"| {document['paper']} | {tables_named(e)} | the reference run's | "
                     + " | ".join(str(before[v]) for v in VERDICTS) + f" | {len(e['moved'])} |")
        lines.append(f"| {document['paper']} | {tables_named(e)} | the re-runs' | "
                     + " | ".join(str(now[v]) for v in VERDICTS) + " | |")
    moved = [(d["paper"], m) for d in judged for m in d["earlier_scoring"]["moved"]]
    if moved:
        lines += ["", "Verdicts the re-runs moved:", ""]
        lines += [f"- {m['id']} ({paper}): {m['earlier'] or 'absent'} → {m['current'] or 'absent'}" for paper, m in moved]
    return lines
