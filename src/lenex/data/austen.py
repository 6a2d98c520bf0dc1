"""Books stand-in for NarrativeQA's stories: Jane Austen's six novels from Debian
``r-cran-janeaustenr`` (Project Gutenberg texts, one character vector per novel).

The package keeps its data as an R lazy-load database, read here without R::

    <root>/r-cran-janeaustenr/root/usr/lib/R/site-library/janeaustenr/data/Rdata.rdx
    <root>/r-cran-janeaustenr/root/usr/lib/R/site-library/janeaustenr/data/Rdata.rdb

``Rdata.rdx`` is an RDS file (read with the PyPI package ``rdata``) holding, per object,
the (offset, length) of its record in ``Rdata.rdb``; a record is a 4-byte big-endian
uncompressed size, then the serialized object, zlib-compressed (R's default). With
``compress = 2`` or ``3`` a type byte ('Z' zlib, '2' bzip2, 'X' xz, '0' none) follows
the size. Each novel is a character vector with one element per printed line and ""
between paragraphs; lines are joined with newlines as stored, so paragraphs stay
separated by a blank line. ``root`` is the ``--out`` folder of ``python -m lenex.data.debian``.
"""
from __future__ import annotations

import bz2
import lzma
import struct
import warnings
import zlib
from pathlib import Path

from .documents import Document
from .fetch import unpacked_root

AUSTEN_PACKAGE = "r-cran-janeaustenr"
DATA_DIR = "usr/lib/R/site-library/janeaustenr/data"
NOVELS = ("emma", "mansfieldpark", "northangerabbey", "persuasion", "prideprejudice",
          "sensesensibility")
LAYOUT = f"<root>/{AUSTEN_PACKAGE}/root/{DATA_DIR}/Rdata.rdx + Rdata.rdb"
_DECOMPRESS = {b"Z": zlib.decompress, b"2": bz2.decompress, b"X": lzma.decompress,
               b"0": lambda data: data}


def _r_object(serialized: bytes, name: str):
    """Convert serialized R bytes; strings that are not valid in their declared
    encoding become one ValueError naming the object instead of a guess."""
    import rdata  # here, not at the top: a quarter of a second that every DAG build paid for a package list

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rdata warns before raising on bad bytes
        try:
            return rdata.conversion.convert(rdata.parser.parse_data(serialized, extension=".rds"))
        except UnicodeDecodeError as err:
            raise ValueError(f"{name} holds a string that is not valid UTF-8 ({err})") from None


def decode_record(record: bytes, compressed, name: str) -> bytes:
    """The serialized object in one lazy-load .rdb record (see the module docstring)."""
    if len(record) < 5:
        raise ValueError(f"{name}: truncated lazy-load record ({len(record)} bytes)")
    size = struct.unpack(">I", record[:4])[0]
    if compressed in (2, 3):
        kind, payload = record[4:5], record[5:]
        if kind not in _DECOMPRESS:
            raise ValueError(f"{name}: unknown compression type {kind!r}")
        data = _DECOMPRESS[kind](payload)
    else:
        data = zlib.decompress(record[4:])
    if len(data) != size:
        raise ValueError(f"{name}: record decompresses to {len(data)} bytes, header says {size}")
    return data


def read_lazyload_db(data_dir: Path, stem: str = "Rdata") -> dict:
    """{object name: Python value} for every object in ``<stem>.rdx``/``<stem>.rdb``."""
    rdx, rdb = data_dir / f"{stem}.rdx", data_dir / f"{stem}.rdb"
    for path in (rdx, rdb):
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found (expected {LAYOUT}); fetch it with: "
                                    f"python -m lenex.data.debian --role austen --out <root>")
    index = _r_object(_rds_bytes(rdx), str(rdx))
    compressed = int(index["compressed"][0])
    blob = rdb.read_bytes()
    objects = {}
    for name, (offset, length) in index["variables"].items():
        label = f"{rdb}[{name}]"
        record = blob[int(offset): int(offset) + int(length)]
        objects[str(name)] = _r_object(decode_record(record, compressed, label), label)
    return objects


def _rds_bytes(path: Path) -> bytes:
    """The serialized bytes of an RDS file (gzip, bzip2, xz or uncompressed)."""
    raw = path.read_bytes()
    for magic, decompress in ((b"\x1f\x8b", lambda b: zlib.decompress(b, 31)),
                              (b"BZh", bz2.decompress), (b"\xfd7zXZ", lzma.decompress)):
        if raw.startswith(magic):
            return decompress(raw)
    return raw


def novel_text(lines) -> str:
    """Lines of one novel as stored, joined with newlines (R NA lines are an error)."""
    lines = list(lines)
    bad = [i for i, line in enumerate(lines) if not isinstance(line, str)]
    if bad:
        raise ValueError(f"line {bad[0] + 1} is {lines[bad[0]]!r}, not a string")
    return "\n".join(lines).strip()


def read_austen(root: str | Path) -> list[Document]:
    """One Document per novel, sorted by doc_id; doc_id = group = R object name
    ("emma", "mansfieldpark", ..., "sensesensibility")."""
    data_dir = unpacked_root(root, AUSTEN_PACKAGE) / DATA_DIR
    objects = read_lazyload_db(data_dir)
    missing = [n for n in NOVELS if n not in objects]
    if missing:
        raise KeyError(f"{data_dir}/Rdata.rdx lacks the novels {missing}; it has {sorted(objects)}")
    docs = []
    for name in NOVELS:
        try:
            text = novel_text(objects[name])
        except ValueError as err:
            raise ValueError(f"{data_dir}/Rdata.rdb[{name}]: {err}") from None
        if not text:
            raise ValueError(f"{data_dir}/Rdata.rdb[{name}] is empty")
        docs.append(Document(name, name, text))
    return sorted(docs, key=lambda d: d.doc_id)
