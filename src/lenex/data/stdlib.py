"""Code stand-in for the Pile's GitHub subset: the Python standard library of the
interpreter running lenex (``sysconfig.get_paths()["stdlib"]``), read in place.

What is read: every ``*.py`` file under the stdlib root, except
  - folders named ``test``, ``tests``, ``idle_test`` (test suites, including
    lib2to3's deliberately broken sample files), ``pydoc_data`` (generated help
    text), ``site-packages`` / ``dist-packages`` (third-party code), ``__pycache__``,
    and ``config-*`` (the build's Makefile folder);
  - files named ``test_*.py`` anywhere;
  - ``_sysconfigdata_*.py`` (generated at build time; holds this machine's paths).
One Document per file; its group is the top-level module or package
(``asyncio/tasks.py`` -> ``python_stdlib/asyncio``) so a package never straddles
splits. ``stdlib_source_record`` fingerprints exactly that file list for the data card.
"""
from __future__ import annotations

import hashlib
import logging
import os
import platform
import sysconfig
from fnmatch import fnmatch
from pathlib import Path

from .documents import Document, decode_bytes

log = logging.getLogger(__name__)

EXCLUDED_DIRS = ("test", "tests", "idle_test", "pydoc_data", "site-packages",
                 "dist-packages", "__pycache__", "config-*")
EXCLUDED_FILES = ("test_*.py", "_sysconfigdata_*.py")
PREFIX = "python_stdlib"


def default_stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def is_included(relative: Path) -> bool:
    """The selection rule above, on a path relative to the stdlib root."""
    if relative.suffix != ".py":
        return False
    if any(fnmatch(part, pattern) for part in relative.parts[:-1] for pattern in EXCLUDED_DIRS):
        return False
    return not any(fnmatch(relative.name, pattern) for pattern in EXCLUDED_FILES)


def stdlib_files(root: str | Path | None = None) -> tuple[Path, list[Path]]:
    """(root, sorted relative paths of the files the rule keeps)."""
    root = Path(root) if root is not None else default_stdlib_root()
    if not root.is_dir():
        raise FileNotFoundError(f"Python standard library folder not found: {root}")
    files = []
    for folder, subfolders, names in os.walk(root):
        # Prune excluded folders here so site-packages is never even walked.
        subfolders[:] = [d for d in subfolders
                         if not any(fnmatch(d, pattern) for pattern in EXCLUDED_DIRS)]
        rel_folder = Path(folder).relative_to(root)
        files += [rel_folder / n for n in names if is_included(rel_folder / n)
                  and (Path(folder) / n).is_file()]
    files.sort()
    if not files:
        raise ValueError(f"no *.py files outside test folders under {root}")
    return root, files


def module_group(relative: Path) -> str:
    """Top-level module or package: ``json/decoder.py`` -> ``python_stdlib/json``,
    ``argparse.py`` -> ``python_stdlib/argparse``."""
    top = relative.parts[0] if len(relative.parts) > 1 else relative.stem
    return f"{PREFIX}/{top}"


def read_python_stdlib(root: str | Path | None = None) -> list[Document]:
    """One Document per kept module file (empty files, e.g. bare ``__init__.py``, skipped)."""
    root, files = stdlib_files(root)
    docs = []
    for rel in files:
        text, encoding = decode_bytes((root / rel).read_bytes(), str(root / rel))
        if text.strip():
            docs.append(Document(f"{PREFIX}/{rel.as_posix()}", module_group(rel), text, encoding))
    log.info("read %d module files (%d groups) from %s", len(docs),
             len({d.group for d in docs}), root)
    return docs


def stdlib_source_record(root: str | Path | None = None) -> dict:
    """What was read, exactly: Python version, root, file count and a sha256 over the
    sorted ``<relative path>\\t<file sha256>\\n`` lines of the kept files."""
    root, files = stdlib_files(root)
    listing = hashlib.sha256()
    for rel in files:
        digest = hashlib.sha256((root / rel).read_bytes()).hexdigest()
        listing.update(f"{rel.as_posix()}\t{digest}\n".encode())
    return {
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "root": str(root),
        "files": len(files),
        "sha256": listing.hexdigest(),
        "rule": "*.py under root, excluding folders " + ", ".join(EXCLUDED_DIRS)
                + " and files " + ", ".join(EXCLUDED_FILES),
    }
