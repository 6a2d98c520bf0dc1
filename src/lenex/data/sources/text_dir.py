"""Plain text files in a local folder (``path``, ``pattern``; e.g. a PG22 mirror built by
lenex.data.pg22): one document and one split group per file."""
from __future__ import annotations

import os
from pathlib import Path

from ..documents import Document, decode_bytes, strip_gutenberg_boilerplate
from . import SOURCES, Local


def read_text_dir(path: str | os.PathLike, pattern: str = "*.txt",
                  fallback_encoding: str | None = None) -> list[Document]:
    """One Document per file matching ``pattern`` (recursively, for a local PG22
    mirror). Each book is its own group; doc_id is the path relative to ``path``.
    Files that are not UTF-8 are an error unless ``fallback_encoding`` is given."""
    root = Path(path)
    if not root.is_dir():
        raise FileNotFoundError(f"corpus directory not found: {root}")
    docs = []
    for file in sorted(root.rglob(pattern)):
        if not file.is_file():
            continue
        text, encoding = decode_bytes(file.read_bytes(), str(file), fallback_encoding)
        text = strip_gutenberg_boilerplate(text)
        if text:
            rel = file.relative_to(root).with_suffix("").as_posix()
            docs.append(Document(rel, rel, text, encoding))
    if not docs:
        raise ValueError(f"no non-empty files matching {pattern!r} under {root}")
    return docs


def read(spec, resources_dir):
    return read_text_dir(spec["path"], spec.get("pattern", "*.txt"), spec.get("fallback_encoding"))


SOURCE = SOURCES.register(Local(read), name="text_dir")
