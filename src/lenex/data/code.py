"""Source-code stand-in for the Pile's GitHub subset, large enough to train on: the
standard libraries and toolchains of Go 1.19 and Rust 1.63 as Debian ships their
sources (``golang-1.19-src``, ``rust-src``), read from the unpacked packages.

Two languages, thousands of authors, one Document per source file, like the Pile's
GitHub. What is left out, and why:
  - test code: folders ``testdata`` (fixtures, some deliberately broken), ``tests``,
    ``benches``, and Go's ``*_test.go`` files;
  - ``vendor`` folders: copies of third-party modules, not the project's own code;
  - Rust's ``stdarch``: 10 of the 22 MB of rust-src, mostly SIMD intrinsics generated
    from vendor tables, which would dominate the corpus with near-identical text.
  - Go's ``time/tzdata/zipdata.go``: the time-zone database as a 1.4 MB string literal
    of escaped bytes.
A file's split group is its folder (``go/net/http``, ``rust/core/num``; Rust's ``src``
folders skipped): a Go package or Rust module, whose files share generated and copied
code (``syscall``'s per-platform tables), never straddles splits.

Layout read (``root`` is the ``--out`` folder of ``python -m lenex.data.debian``)::

    <root>/golang-1.19-src/root/usr/share/go-1.19/src/**/*.go
    <root>/rust-src/root/usr/src/rustc-1.63.0/library/**/*.rs
"""
from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

from .documents import Document, decode_bytes
from .fetch import unpacked_folder

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceTree:
    """Where one package keeps its sources, and which files are code to keep."""

    language: str
    folder: str  # inside the unpacked package
    suffix: str
    excluded_dirs: tuple[str, ...]
    excluded_files: tuple[str, ...] = ()


SOURCE_TREES = {
    "golang-1.19-src": SourceTree("go", "usr/share/go-1.19/src", ".go",
                                  ("testdata", "vendor"), ("*_test.go", "zipdata.go")),
    "rust-src": SourceTree("rust", "usr/src/rustc-1.63.0/library", ".rs",
                           ("tests", "benches", "vendor", "stdarch")),
}
CODE_PACKAGES = tuple(SOURCE_TREES)


def is_kept(relative: PurePosixPath, tree: SourceTree) -> bool:
    """The selection rule of the module docstring, on a path relative to the tree."""
    if relative.suffix != tree.suffix:
        return False
    if any(part in tree.excluded_dirs for part in relative.parts[:-1]):
        return False
    return not any(fnmatch(relative.name, pattern) for pattern in tree.excluded_files)


def file_group(language: str, relative: PurePosixPath) -> str:
    """The file's folder (a Go package, a Rust module): ``net/http/server.go`` ->
    ``go/net/http``, ``core/src/num/mod.rs`` -> ``rust/core/num``; a file at the top
    of the tree is its own group."""
    folders = [p for p in relative.parts[:-1] if p != "src"]
    return "/".join([language, *folders]) if folders else f"{language}/{relative.stem}"


def tree_files(root: Path, tree: SourceTree) -> list[PurePosixPath]:
    """Sorted relative paths of the kept files (excluded folders are never walked)."""
    files = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d not in tree.excluded_dirs)
        rel_folder = PurePosixPath(Path(folder).relative_to(root).as_posix())
        files += [rel_folder / n for n in names
                  if is_kept(rel_folder / n, tree) and (Path(folder) / n).is_file()]
    return sorted(files)


def read_source_trees(root: str | Path, packages: Iterable[str] = CODE_PACKAGES) -> list[Document]:
    """One Document per kept source file of ``packages``, doc_id = "<language>/<path>"
    (e.g. "go/net/http/server.go"), sorted by doc_id. Empty files are skipped."""
    root, docs = Path(root), []
    for package in packages:
        tree, base = unpacked_folder(root, package, SOURCE_TREES, "source")
        if not base.is_dir():
            raise FileNotFoundError(f"{base} not found (expected <root>/{package}/root/{tree.folder}); "
                                    f"fetch it with: python -m lenex.data.debian --out {root} {package}")
        files = tree_files(base, tree)
        if not files:
            raise FileNotFoundError(f"no *{tree.suffix} files under {base}")
        for rel in files:
            text, encoding = decode_bytes((base / rel).read_bytes(), str(base / rel))
            if text.strip():
                docs.append(Document(f"{tree.language}/{rel}", file_group(tree.language, rel),
                                     text, encoding))
        log.info("%s: %d files", package, len(files))
    return sorted(docs, key=lambda d: d.doc_id)
