"""Web-like prose stand-in (for OpenWebText2): essays from the Python documentation.

A WEAK stand-in. OpenWebText2 is Reddit-linked web pages on every topic, mostly short
(a few thousand tokens); the Python HOWTOs, "What's New" notes and tutorial are
expository English written for the web by many authors, but all about one topic,
heavy in code and reStructuredText markup, and far fewer documents. Use it to exercise
the pipeline offline and to compare methods against each other, not to read off
numbers meant to match the papers' OpenWebText2 columns.

Source: the reStructuredText sources that Sphinx copies next to the HTML in Debian's
``python3.11-doc``, kept verbatim (markup included). Layout read (``root`` is the
``--out`` folder of ``python -m lenex.data.debian``)::

    <root>/python3.11-doc/root/usr/share/doc/python3.11/html/_sources/<part>/*.rst.txt

Pages shorter than ``MIN_PAGE_CHARS`` are dropped: they are table-of-contents index
pages and ``.. include::`` stubs (whatsnew/changelog), not prose.
"""
from __future__ import annotations

import logging
from pathlib import Path

from .documents import Document, read_utf8
from .fetch import unpacked_root

log = logging.getLogger(__name__)

PYDOC_PACKAGE = "python3.11-doc"
SOURCES_DIR = "usr/share/doc/python3.11/html/_sources"
PARTS = ("howto", "whatsnew", "tutorial")
MIN_PAGE_CHARS = 1000
_SUFFIX = ".rst.txt"
LAYOUT = f"<root>/{PYDOC_PACKAGE}/root/{SOURCES_DIR}/<part>/*{_SUFFIX}"


def read_python_doc_essays(root: str | Path, parts: tuple[str, ...] = PARTS) -> list[Document]:
    """One Document per page of the given parts, sorted by doc_id;
    doc_id = group = "<part>/<page>" (e.g. "howto/logging-cookbook")."""
    root = Path(root)
    if isinstance(parts, str) or not parts:
        raise ValueError(f"parts must be a non-empty tuple of folder names, got {parts!r}")
    sources = unpacked_root(root, PYDOC_PACKAGE) / SOURCES_DIR
    docs = []
    for part in parts:
        pages = sorted((sources / part).glob(f"*{_SUFFIX}"))
        if not pages:
            raise FileNotFoundError(f"no pages for part {part!r} under {root} (expected {LAYOUT}); "
                                    f"fetch with: python -m lenex.data.debian --role pydoc --out {root}")
        for path in pages:
            doc_id = f"{part}/{path.name[: -len(_SUFFIX)]}"
            text = read_utf8(path).strip()
            if len(text) < MIN_PAGE_CHARS:
                log.info("skipping %s: a %d-character index or include stub", doc_id, len(text))
                continue
            docs.append(Document(doc_id, doc_id, text))
    if not docs:
        raise FileNotFoundError(f"no page under {root} has at least {MIN_PAGE_CHARS} characters "
                                f"(expected {LAYOUT})")
    return sorted(docs, key=lambda d: d.doc_id)
