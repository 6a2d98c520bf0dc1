"""Build PG22 (LEX §4.2): Project Gutenberg books released after 2019, so none overlaps
PG19. No ready-made copy exists; this builds one from Gutenberg's catalog and a mirror.

Selection rule (``select_pg22``), on Project Gutenberg's CSV catalog ``pg_catalog.csv``
(columns ``Text#, Type, Issued, Title, Language, Authors, Subjects, LoCC, Bookshelves``):
a row is kept if and only if
  1. ``Type`` is exactly ``Text`` (no audio books, images, data sets, collections);
  2. ``Language``, split on ``;`` with spaces stripped, contains the code ``en``
     (so ``en; fr`` counts as English, ``fr`` or ``enm`` do not);
  3. ``Issued`` (the date the e-book was released on Gutenberg, ``YYYY-MM-DD``) is
     strictly after ``after``, 2019-12-31 by default: a book issued on the cutoff day is
     dropped, one issued the day after is kept.
Kept books are then read from a mirror (``build_pg22``); a book the mirror lacks is
listed as ``missing_in_mirror``, one with nothing left after the Gutenberg header and
licence are stripped as ``empty_after_strip``.

Mirror: a folder holding any of ``<id>/pg<id>.txt``, ``cache/epub/<id>/pg<id>.txt``,
``<id>.txt`` or ``<id>/<id>-0.txt`` (tried in that order), or an http(s) URL template
with ``{id}`` (e.g. ``https://www.gutenberg.org/cache/epub/{id}/pg{id}.txt``; use a
mirror, and only on a machine meant to download).

Output (written to a temporary folder, renamed into place when complete):
  ``<out>/books/<id>.txt``   one stripped book per kept entry (read by ``text_dir``)
  ``<out>/selection.csv``    id, title, issued, language, chars, status for every entry
                             the rule selected; status ``kept`` / ``missing_in_mirror`` /
                             ``empty_after_strip``

Usage: ``python -m lenex.data.pg22 --catalog pg_catalog.csv --mirror DIR_OR_URL
--out DIR [--after YYYY-MM-DD] [--fallback-encoding latin-1]``
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import logging
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from ..cli import run_cli
from ..files import replace_dir
from .documents import decode_bytes, strip_gutenberg_boilerplate

log = logging.getLogger(__name__)

CUTOFF = dt.date(2019, 12, 31)
CATALOG_COLUMNS = ("Text#", "Type", "Issued", "Title", "Language")
MIRROR_LAYOUTS = ("{id}/pg{id}.txt", "cache/epub/{id}/pg{id}.txt", "{id}.txt", "{id}/{id}-0.txt")
SELECTION_COLUMNS = ("id", "title", "issued", "language", "chars", "status")
STATUSES = ("kept", "missing_in_mirror", "empty_after_strip")


@dataclass(frozen=True)
class CatalogEntry:
    id: int
    title: str
    issued: dt.date
    language: str
    type: str = "Text"


def is_english(language_field: str) -> bool:
    return "en" in {code.strip() for code in language_field.split(";")}


def select_pg22(catalog_csv: str | os.PathLike, after: dt.date = CUTOFF) -> list[CatalogEntry]:
    """The catalog rows the module's selection rule keeps, sorted by id."""
    path = Path(catalog_csv)
    if not path.is_file():
        raise FileNotFoundError(f"Gutenberg catalog not found: {path}")
    kept = []
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        missing = [c for c in CATALOG_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing catalog column(s) {missing}; "
                             f"found {reader.fieldnames}")
        for line, row in enumerate(reader, start=2):
            if row["Type"] != "Text" or not is_english(row["Language"] or ""):
                continue
            try:
                issued = dt.date.fromisoformat(row["Issued"].strip())
                book_id = int(row["Text#"])
            except ValueError:
                raise ValueError(f"{path}:{line}: bad Text# {row['Text#']!r} or Issued "
                                 f"{row['Issued']!r} (expected an integer and YYYY-MM-DD)") from None
            if issued > after:
                kept.append(CatalogEntry(book_id, row["Title"], issued, row["Language"]))
    return sorted(kept, key=lambda e: e.id)


def is_url(mirror: str) -> bool:
    return mirror.startswith(("http://", "https://"))


def read_from_mirror(mirror: str | os.PathLike, book_id: int) -> bytes | None:
    """The book's bytes, or None when the mirror does not have it."""
    mirror = str(mirror)
    if is_url(mirror):
        url = mirror.format(id=book_id)
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                return response.read()
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise RuntimeError(f"mirror request {url} failed: HTTP {e.code}") from e
    for layout in MIRROR_LAYOUTS:
        candidate = Path(mirror) / layout.format(id=book_id)
        if candidate.is_file():
            return candidate.read_bytes()
    return None


def _check_mirror(mirror: str) -> None:
    if is_url(mirror):
        if "{id}" not in mirror:
            raise ValueError(f"mirror URL {mirror!r} needs an {{id}} placeholder, e.g. "
                             "https://<mirror>/cache/epub/{id}/pg{id}.txt")
    elif not Path(mirror).is_dir():
        raise FileNotFoundError(f"Gutenberg mirror folder not found: {mirror}")


def build_pg22(catalog_csv: str | os.PathLike, mirror: str | os.PathLike,
               out: str | os.PathLike, after: dt.date = CUTOFF,
               fallback_encoding: str | None = None) -> dict[str, int]:
    """Select, read, strip and write PG22 to ``out`` (replacing it whole); return the
    count per status plus ``selected``."""
    mirror, out = str(mirror), Path(out)
    _check_mirror(mirror)
    entries = select_pg22(catalog_csv, after)
    log.info("catalog: %d English texts issued after %s", len(entries), after)
    out.parent.mkdir(parents=True, exist_ok=True)
    counts = dict.fromkeys(STATUSES, 0)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.building-"))
    try:
        (tmp / "books").mkdir()
        rows = []
        for entry in tqdm(entries, desc="PG22 books", unit="book", disable=None):
            raw = read_from_mirror(mirror, entry.id)
            text = ""
            if raw is None:
                status = "missing_in_mirror"
            else:
                text, _ = decode_bytes(raw, f"book {entry.id}", fallback_encoding)
                text = strip_gutenberg_boilerplate(text)
                status = "kept" if text else "empty_after_strip"
            if status == "kept":
                (tmp / "books" / f"{entry.id}.txt").write_text(text + "\n", encoding="utf-8")
            counts[status] += 1
            rows.append((entry.id, entry.title, entry.issued.isoformat(), entry.language,
                         len(text), status))
        with open(tmp / "selection.csv", "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(SELECTION_COLUMNS)
            writer.writerows(rows)
        replace_dir(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    counts["selected"] = len(entries)
    log.info("PG22 in %s: %s", out, ", ".join(f"{k} {v}" for k, v in counts.items()))
    if counts["kept"] == 0:
        log.warning("no book of the selection was found in the mirror %s", mirror)
    return counts


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Build PG22 from the Gutenberg catalog and a mirror.")
    ap.add_argument("--catalog", required=True, help="Project Gutenberg's pg_catalog.csv")
    ap.add_argument("--mirror", required=True,
                    help="mirror folder, or http(s) URL template with {id}")
    ap.add_argument("--out", required=True, help="output folder (replaced when complete)")
    ap.add_argument("--after", type=dt.date.fromisoformat, default=CUTOFF,
                    help="keep books issued strictly after this date (default %(default)s)")
    ap.add_argument("--fallback-encoding", default=None,
                    help="decode books that are not UTF-8 with this (e.g. latin-1)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    counts = build_pg22(args.catalog, args.mirror, args.out, args.after, args.fallback_encoding)
    print(" ".join(f"{k}={v}" for k, v in counts.items()))


if __name__ == "__main__":
    run_cli(main)
