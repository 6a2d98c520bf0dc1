"""OpenWebText2's workstation stand-in: the Linux kernel, Python 3.11 and Perl 5.36 documentation
(lenex.data.techdocs)."""
from __future__ import annotations

from ..techdocs import TECHDOC_PACKAGES, read_doc_trees
from . import SOURCES, Debian


def read(root, packages, spec):
    return read_doc_trees(root, packages)


SOURCE = SOURCES.register(Debian(read, TECHDOC_PACKAGES), name="debian_techdocs")
