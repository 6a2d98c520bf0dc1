"""Corpus fetching, reading, splitting and tokenisation for lenex.

Submodules are imported lazily by callers (``from lenex.data.store import load_split``)
so that reading a prepared split never pays for importing ``datasets``.
"""
