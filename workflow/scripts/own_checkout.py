"""Which lenex Python would import, checked before lenex is imported (the Snakefile runs this file).

A copy of a checkout whose venv has lenex installed editable (`cp -a`) would otherwise run, and
code-stamp, the original checkout's code. Plain Python, no lenex import: the imported lenex cannot
vouch for itself.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path


def foreign_lenex(checkout) -> str | None:
    """Why the lenex Python finds is not `checkout`'s src/lenex, or None (it is, or the folder holds
    no code: the tests' scratch copies of the workflow)."""
    ours = Path(checkout, "src", "lenex")
    if not (ours / "__init__.py").is_file():
        return None
    found = importlib.util.find_spec("lenex")
    # The package folder, resolved: a checkout may link its files one by one (the tests do).
    imported = Path(found.origin).parent.resolve() if found and found.origin else None
    if imported == ours.resolve():
        return None
    return (f"Python imports lenex from {imported or 'nowhere'}, not this checkout's {ours}: run "
            f"`pip install -e .` in {checkout} (with the venv you run snakemake from), or set PYTHONPATH={ours.parent}")
