"""Part of PG22's workstation stand-in: SWORD modules, Bible texts and commentaries (lenex.data.sword)."""
from __future__ import annotations

from ..sword import SWORD_PACKAGES, read_sword_modules
from . import SOURCES, Debian


def read(root, packages, spec):
    return read_sword_modules(root, packages)


SOURCE = SOURCES.register(Debian(read, SWORD_PACKAGES), name="debian_sword")
