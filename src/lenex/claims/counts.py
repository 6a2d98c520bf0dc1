"""The five verdict counts of a set of claim records, and the table that sets two sets beside each
other (frozen rules against today's, the reference run's records against the re-runs')."""
from __future__ import annotations

from .verdicts import VERDICTS


def verdict_counts(records: list[dict]) -> dict[str, int]:
    """How many claims of each of the five verdicts on ours."""
    counts = {v: 0 for v in VERDICTS}
    for r in records:
        counts[r["verdict"]] += 1
    return counts


def counts_table(column: str, sides: list[tuple[str, list[dict]]]) -> list[str]:
    """A Markdown table of the five counts, one row per (label, records): the two sides a claims page
    sets beside each other (frozen rules and today's, the reference run's records and the re-runs')."""
    lines = [f"| {column} | claims | " + " | ".join(VERDICTS) + " |", "|---|---|" + "---|" * len(VERDICTS)]
    for label, records in sides:
        counts = verdict_counts(records)
        lines.append(f"| {label} | {len(records)} | " + " | ".join(str(counts[v]) for v in VERDICTS) + " |")
    return lines
