"""NarrativeQA's stand-in in the default config: Jane Austen's six novels (lenex.data.austen)."""
from __future__ import annotations

from ..austen import AUSTEN_PACKAGE, read_austen
from . import SOURCES, Debian


def read(root, packages, spec):
    return read_austen(root)


SOURCE = SOURCES.register(Debian(read, (AUSTEN_PACKAGE,)), name="debian_austen")
