"""NarrativeQA's workstation stand-in: Austen's six novels and Moby-Dick (lenex.data.novels)."""
from __future__ import annotations

from ..novels import NOVEL_PACKAGES, read_novels
from . import SOURCES, Debian


def read(root, packages, spec):
    return read_novels(root, packages)


SOURCE = SOURCES.register(Debian(read, NOVEL_PACKAGES), name="debian_novels")
