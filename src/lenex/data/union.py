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
a group on purpose, but two documents with one doc_id are an error. Its declaration,
``lenex.data.sources.union``, reads, fetches and records each part through the part's source.
"""
from __future__ import annotations

import os
from collections.abc import Callable

from .documents import Document


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

