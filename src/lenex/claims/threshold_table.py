"""The table in docs/claims.md of every claim threshold that is not a word's default: where it comes
from, the paper's effects it is derived from (lenex.claims.thresholds), the old and the new value.

    python -m lenex.claims.threshold_table --write-docs   # rewrite the table in docs/claims.md
    python -m lenex.claims.threshold_table --check        # fail if that table is not current
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path
from statistics import median

from ..cli import run_cli
from .evaluate import load_claims, threshold_basis
from .thresholds import BORROWED, CONTRAST, DEFAULT, DERIVED, PAPERS, WORDS, ratio_text

REPO = Path(__file__).resolve().parents[3]
DOCS = REPO / "docs" / "claims.md"
BEGIN, END = "<!-- thresholds table: python -m lenex.claims.threshold_table --write-docs -->", "<!-- end of thresholds table -->"


def table_rows(papers=PAPERS) -> list[str]:
    """The docs table: every claim's threshold that is not a default, from the claims files and the
    bundled paper numbers."""
    rows = ["| claim | word | from | paper's effects (n: min / median / max) | old | new | "
            "the paper's cells below the new one |", "|---|---|---|---|---|---|---|"]
    for paper in papers:
        for claim in load_claims(REPO / "config" / "claims" / f"{paper}.yaml")["claims"]:
            for word, t in threshold_basis(claim).items():
                if t.source == DEFAULT:
                    continue
                spread = (f"{len(t.effects)}: {ratio_text(math.exp(min(t.effects)))} / "
                          f"{ratio_text(math.exp(median(t.effects)))} / {ratio_text(math.exp(max(t.effects)))}"
                          if t.effects else "—")
                how = {DERIVED: "its own cells", BORROWED: f"`{t.lender}`", CONTRAST: "contrasted cells",
                       WORDS: "the paper's words"}[t.source]
                old = t.value if t.source == WORDS else t.old
                rows.append(f"| `{claim['id']}` | {word} | {how} | {spread} | {old:.3g} | {t.value:.3g} | "
                            f"{len(t.paper_below) or '—'} |")
    return rows


def docs_with_table(text: str, rows: list[str]) -> str:
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise ValueError(f"docs/claims.md must hold one {BEGIN!r} ... {END!r} block")
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    return head + BEGIN + "\n" + "\n".join(rows) + "\n" + END + tail


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write-docs", action="store_true", help=f"rewrite the table in {DOCS}")
    action.add_argument("--check", action="store_true", help="fail if that table is not current")
    args = parser.parse_args(argv)
    text = DOCS.read_text(encoding="utf-8")
    new = docs_with_table(text, table_rows())
    if args.check:
        if new != text:
            raise SystemExit(f"{DOCS}: the thresholds table is not current; run python -m lenex.claims.threshold_table "
                             "--write-docs")
        return
    DOCS.write_text(new, encoding="utf-8")


if __name__ == "__main__":
    run_cli(main)
