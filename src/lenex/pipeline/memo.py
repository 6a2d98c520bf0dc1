"""What the DAG build computes from files alone, kept between runs, so that a rerun with nothing to
do does not compute it all again.

Every `snakemake` call, a no-op included, builds the DAG anew: it parses and schema-validates the
config files and the claims files, and follows the imports of each entry point to stamp its code.
None of that changes unless a file it reads changes, so each result is kept under
`.snakemake/lenex/memo/`, named by the hash of its kind and of every file it read (their paths and
bytes); the variant checks keep what passed the same way (lenex.pipeline.variants). An edited file is
a new name, hence a new computation; nothing is ever looked up by a file's time. A kept result that
cannot be read (cut short, another Python) is computed again.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path
from typing import Callable, Iterable


def files_digest(kind: str, files: Iterable[str | Path], extra: str = "") -> str:
    """sha256 of `kind`, `extra` and each file's path and bytes (a missing file hashes as missing)."""
    digest = hashlib.sha256(f"{kind}\0{extra}\0".encode())
    for path in files:
        path = Path(path)
        digest.update(str(path).encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()


def kept_file(stamps: str | Path, kind: str, files: Iterable[str | Path], extra: str = "") -> Path:
    """Where the result of `kind` for these files' contents (and `extra`) is kept."""
    return Path(stamps) / "memo" / f"{kind}-{files_digest(kind, files, extra)[:32]}.pickle"


def remembered(stamps: str | Path, kind: str, files: Iterable[str | Path], compute: Callable[[], object],
               extra: str = ""):
    """`compute()`, or what it returned before for the same `kind`, `extra` and file contents.

    `compute` must depend on nothing else; an exception it raises is never kept, so a check that
    fails fails again on the next run."""
    kept = kept_file(stamps, kind, files, extra)
    try:
        with open(kept, "rb") as handle:
            return pickle.load(handle)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
        pass
    value = compute()
    kept.parent.mkdir(parents=True, exist_ok=True)
    temporary = kept.with_name(f".{kept.name}.{os.getpid()}")
    with open(temporary, "wb") as handle:
        pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
    temporary.replace(kept)
    return value
