"""Books stand-in for NarrativeQA's stories, a little larger than Austen alone: Jane
Austen's six novels (Debian ``r-cran-janeaustenr``, read by ``lenex.data.austen``) and
Herman Melville's *Moby-Dick* as the R package ``tokenizers`` ships it for its examples
(Debian ``r-cran-tokenizers``: one R string holding the Project Gutenberg e-text, licence
header and footer included, which are stripped here). All public domain.

Layout (``root`` is the ``--out`` folder of ``python -m lenex.data.debian``)::

    <root>/r-cran-tokenizers/root/usr/lib/R/site-library/tokenizers/data/Rdata.rdx + Rdata.rdb
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .austen import AUSTEN_PACKAGE, read_austen, read_lazyload_db
from .documents import Document, strip_gutenberg_boilerplate
from .fetch import unpacked_root

MOBY_DICK_PACKAGE = "r-cran-tokenizers"
MOBY_DICK_DATA = "usr/lib/R/site-library/tokenizers/data"
NOVEL_PACKAGES = (AUSTEN_PACKAGE, MOBY_DICK_PACKAGE)


def gutenberg_string(value, name: str) -> str:
    """The one string of an R character vector of length 1, BOM, CRLF and the Project
    Gutenberg header and footer removed."""
    values = list(value) if not isinstance(value, str) else [value]
    if len(values) != 1 or not isinstance(values[0], str):
        raise ValueError(f"{name} should be one string, found {len(values)} values")
    text = strip_gutenberg_boilerplate(values[0].lstrip("\ufeff"))
    if not text:
        raise ValueError(f"{name} is empty once its Gutenberg header and footer are removed")
    return text


def read_moby_dick(root: str | Path) -> Document:
    data_dir = unpacked_root(root, MOBY_DICK_PACKAGE) / MOBY_DICK_DATA
    if not (data_dir / "Rdata.rdx").is_file():
        raise FileNotFoundError(f"{data_dir}/Rdata.rdx not found; fetch it with: "
                                f"python -m lenex.data.debian --role novels --out {root}")
    objects = read_lazyload_db(data_dir)
    if "mobydick" not in objects:
        raise KeyError(f"{data_dir}/Rdata.rdx has no object 'mobydick'; it has {sorted(objects)}")
    return Document("mobydick", "mobydick", gutenberg_string(objects["mobydick"], f"{data_dir}[mobydick]"))


def read_novels(root: str | Path, packages: Iterable[str] = NOVEL_PACKAGES) -> list[Document]:
    """Austen's novels and/or Moby-Dick, whichever of the two packages are named;
    doc_id = group = "emma", ..., "mobydick"; sorted by doc_id."""
    readers = {AUSTEN_PACKAGE: read_austen, MOBY_DICK_PACKAGE: lambda r: [read_moby_dick(r)]}
    packages = list(packages)
    unknown = sorted(set(packages) - set(readers))
    if unknown or not packages:
        raise ValueError(f"novel packages must be among {sorted(readers)}, got {packages}")
    docs = [doc for package in packages for doc in readers[package](root)]
    return sorted(docs, key=lambda d: d.doc_id)
