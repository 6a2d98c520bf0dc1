"""OpenWebText2's stand-in in the default config: the essay-like pages of the Python 3.11
documentation (lenex.data.pydoc); ``parts:`` picks the folders (default howto, whatsnew, tutorial)."""
from __future__ import annotations

from ..pydoc import PARTS, PYDOC_PACKAGE, read_python_doc_essays
from . import SOURCES, Debian


def read(root, packages, spec):
    return read_python_doc_essays(root, tuple(spec.get("parts") or PARTS))


SOURCE = SOURCES.register(Debian(read, (PYDOC_PACKAGE,)), name="debian_pydoc")
