"""The papers' own numbers, shipped with the package as ``lenex/paper_results.csv``.

Every column is read as text: lengths such as ``2L_t`` are not integers, and the
values must be printable exactly as the paper printed them (``38.1``, not ``38.10``).
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

import pandas as pd

PACKAGED_CSV = "paper_results.csv"


def load_paper_results(path: str | Path | None = None) -> pd.DataFrame:
    """Read the paper-results csv; ``None`` reads the copy packaged inside ``lenex``."""
    if path is None:
        with resources.as_file(resources.files("lenex") / PACKAGED_CSV) as packaged:
            return _read(packaged)
    return _read(Path(path))


def _read(path: Path) -> pd.DataFrame:
    # keep_default_na=False: an empty std/note must stay "" rather than become NaN.
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _matching_rows(df, paper, table, dataset, method, length, metric) -> pd.DataFrame:
    # Everything is compared as text so 1024 (int) finds "1024" and "2L_t" finds itself.
    keys = {"paper": paper, "table": table, "dataset": dataset,
            "method": method, "length": length, "metric": metric}
    mask = pd.Series(True, index=df.index)
    for column, wanted in keys.items():
        mask &= df[column].astype(str) == str(wanted)
    return df[mask]


def paper_value_text(df, paper, table, dataset, method, length,
                     metric: str = "ppl") -> str | None:
    """The number exactly as printed in the paper, or None when the paper has none."""
    rows = _matching_rows(df, paper, table, dataset, method, length, metric)
    if rows.empty:
        return None
    values = set(rows["value"])
    if len(values) > 1:
        # A duplicated key with different numbers is a transcription error, not a choice to make here.
        raise ValueError(f"conflicting paper values for {paper} table {table} {dataset}/"
                         f"{method}@{length} {metric}: {sorted(values)}")
    text = values.pop().strip()
    return text or None


def paper_value(df, paper, table, dataset, method, length,
                metric: str = "ppl") -> float | None:
    """The paper's number as a float, or None when the paper has none."""
    text = paper_value_text(df, paper, table, dataset, method, length, metric)
    return None if text is None else float(text)


def paper_details(df, paper, table, dataset, method, length, metric: str = "ppl") -> dict:
    """The std and note printed with a paper's number ("" when none), e.g. Table 3's
    "± 3.8" and its significance marker."""
    rows = _matching_rows(df, paper, table, dataset, method, length, metric)
    first = rows.iloc[0] if not rows.empty else {}
    return {"std": str(first.get("std", "") or "").strip(), "note": str(first.get("note", "") or "").strip()}
