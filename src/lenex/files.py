"""Atomic writes: every output is written under a temporary name in its own folder and
renamed into place once complete, so an interrupted job never leaves a truncated file
that Snakemake (or a reader) would take as finished."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: str | Path, write) -> None:
    """Call write(tmp_path) and move the result to `path` only once it is complete."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        # mkstemp creates 0600 files; outputs are meant to be shared like any other file.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


# Metadata that would move between two renders of the same figure (render date, the plotting
# library's version) is left out, so a figure re-rendered from the same numbers is byte-identical.
FIXED_FIGURE_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}


def save_figure(fig, path: str | Path, **options) -> None:
    """Write a matplotlib figure atomically, its format from the suffix (png, pdf), fixed metadata."""
    fmt = Path(path).suffix[1:]
    if fmt not in FIXED_FIGURE_METADATA:
        raise ValueError(f"figure {path}: unknown format {fmt!r}; known: {', '.join(FIXED_FIGURE_METADATA)}")
    atomic_write(path, lambda tmp: fig.savefig(tmp, format=fmt, metadata=FIXED_FIGURE_METADATA[fmt], **options))
