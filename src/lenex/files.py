"""Atomic, durable writes and JSON reads that name their file.

Every output is written under a temporary name in its own folder, synced to disk and renamed
into place once complete (then the folder is synced, so the rename survives a power loss):
an interrupted job never leaves a truncated file that Snakemake (or a reader) would take as
finished."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import uuid
from pathlib import Path


def _fsync_path(path: str | Path, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0))
    try:
        os.fsync(fd)
    except OSError:  # some file systems cannot sync a directory; the rename itself is still atomic
        if not directory:
            raise
    finally:
        os.close(fd)


def atomic_write(path: str | Path, write) -> None:
    """Call write(tmp_path) and move the result to `path` only once it is complete and on disk."""
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
        _fsync_path(tmp)
        os.replace(tmp, path)
        _fsync_path(path.parent, directory=True)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def replace_dir(new: str | Path, target: str | Path) -> None:
    """Rename the finished folder `new` to `target` (same file system). rename() cannot
    overwrite a non-empty folder, so an old `target` is moved aside first and removed after:
    a reader sees the old or the new complete folder, never a mix."""
    new, target = Path(new), Path(target)
    old = None
    if target.exists():
        old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
        os.replace(target, old)
    os.replace(new, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def read_json(path: str | Path):
    """json.loads of a file; a syntax error (e.g. a truncated file) names the file, line and column."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: line {err.lineno} column {err.colno}: {err.msg} "
                         "(a truncated or hand-edited file? rebuild it)") from None


def read_yaml(path: str | Path):
    """yaml.safe_load of a file; a syntax error names the file, line and column (PyYAML says
    `"<unicode string>"` when given the text, and Snakemake's config loader names nothing)."""
    import yaml

    path = Path(path)
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ValueError(f"{path}: {where}{problem} (not valid YAML)") from None


def _non_finite(value, where: str = "") -> str | None:
    """The key path of the first NaN or infinity in a JSON-like value, or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{where or 'value'} = {value}"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _non_finite(item, f"{where}.{key}" if where else str(key))
        if found:
            return found
    return None


def atomic_write_result(path: str | Path, result, cell: str = "", indent: int | None = 1) -> None:
    """Write an evaluator's JSON result; a NaN or infinity anywhere in it is an error naming the
    cell (what was evaluated) and the key, and nothing is written (JSON has no NaN; a table would
    print it as a number)."""
    found = _non_finite(result)
    if found:
        raise ValueError(f"{cell or path}: non-finite result ({found}); {path} not written")
    atomic_write_text(path, json.dumps(result, indent=indent, allow_nan=False) + "\n")
# Metadata that would move between two renders of the same figure (render date, the plotting
# library's version) is left out, so a figure re-rendered from the same numbers is byte-identical.
FIXED_FIGURE_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}


def save_figure(fig, path: str | Path, **options) -> None:
    """Write a matplotlib figure atomically, its format from the suffix (png, pdf), fixed metadata."""
    fmt = Path(path).suffix[1:]
    if fmt not in FIXED_FIGURE_METADATA:
        raise ValueError(f"figure {path}: unknown format {fmt!r}; known: {', '.join(FIXED_FIGURE_METADATA)}")
    atomic_write(path, lambda tmp: fig.savefig(tmp, format=fmt, metadata=FIXED_FIGURE_METADATA[fmt], **options))
