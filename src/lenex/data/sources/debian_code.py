"""GitHub's workstation stand-in: the Go and Rust standard libraries and toolchains (lenex.data.code)."""
from __future__ import annotations

from ..code import CODE_PACKAGES, read_source_trees
from . import SOURCES, Debian


def read(root, packages, spec):
    return read_source_trees(root, packages)


SOURCE = SOURCES.register(Debian(read, CODE_PACKAGES), name="debian_code")
