"""Expository-prose stand-in for OpenWebText2, large enough to train on: the
documentation sources of the Linux kernel 6.1, Python 3.11 and Perl 5.36 as Debian
ships them (``linux-doc-6.1``, ``python3.11-doc``, ``perl-doc``), one Document per page.

A WEAK stand-in, like the Python-docs one it extends (``lenex.data.pydoc``): English
prose written for the web by thousands of authors (the kernel's documentation alone
has thousands of contributors), but all of it technical, heavy in markup
(reStructuredText, POD) and code, where OpenWebText2 is Reddit-linked pages on every
topic. It is here because no registry this project reaches ships web text of this size.

Layout read (``root`` is the ``--out`` folder of ``python -m lenex.data.debian``)::

    <root>/linux-doc-6.1/root/usr/share/doc/linux-doc-6.1/html/_sources/**/*.rst.txt
    <root>/python3.11-doc/root/usr/share/doc/python3.11/html/_sources/**/*.rst.txt
    <root>/perl-doc/root/usr/share/perl/5.36.0/pod/*.pod

Left out: the kernel's ``translations`` folder (Chinese, Japanese, Korean, Italian and
Spanish versions of English pages) and pages shorter than ``MIN_PAGE_CHARS`` (tables of
contents, ``.. include::`` stubs). Every page is its own split group.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .documents import Document, read_utf8
from .fetch import unpacked_folder

MIN_PAGE_CHARS = 1000


@dataclass(frozen=True)
class DocTree:
    """Where one package keeps its page sources."""

    name: str  # doc_id prefix
    folder: str
    suffix: str
    excluded_dirs: tuple[str, ...] = ()


DOC_TREES = {
    "linux-doc-6.1": DocTree("linux", "usr/share/doc/linux-doc-6.1/html/_sources", ".rst.txt",
                             ("translations",)),
    "python3.11-doc": DocTree("python", "usr/share/doc/python3.11/html/_sources", ".rst.txt"),
    "perl-doc": DocTree("perl", "usr/share/perl/5.36.0/pod", ".pod"),
}
TECHDOC_PACKAGES = tuple(DOC_TREES)


def page_files(base: Path, tree: DocTree) -> list[Path]:
    """Sorted page files under ``base``, none inside an excluded folder."""
    return sorted(p for p in base.rglob(f"*{tree.suffix}") if p.is_file()
                  and not set(p.relative_to(base).parts[:-1]) & set(tree.excluded_dirs))


def read_doc_trees(root: str | Path, packages: Iterable[str] = TECHDOC_PACKAGES) -> list[Document]:
    """One Document per page, doc_id = group = "<tree>/<page path without suffix>"
    (e.g. "linux/admin-guide/README"), sorted by doc_id."""
    root, docs = Path(root), []
    for package in packages:
        tree, base = unpacked_folder(root, package, DOC_TREES, "documentation")
        pages = page_files(base, tree) if base.is_dir() else []
        if not pages:
            raise FileNotFoundError(f"no *{tree.suffix} pages under {base} (expected "
                                    f"<root>/{package}/root/{tree.folder}); fetch with: "
                                    f"python -m lenex.data.debian --out {root} {package}")
        for path in pages:
            text = read_utf8(path).strip()
            if len(text) >= MIN_PAGE_CHARS:
                rel = path.relative_to(base).as_posix()[: -len(tree.suffix)]
                doc_id = f"{tree.name}/{rel}"
                docs.append(Document(doc_id, doc_id, text))
    return sorted(docs, key=lambda d: d.doc_id)
