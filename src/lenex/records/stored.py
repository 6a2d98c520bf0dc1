"""Committed records stored xz-compressed (`<name>.xz`), read as if they were the plain file.

The raw results of the reference runs and their Snakemake logs are text that compresses 4x (raw
results: 17-digit floats) to 20x (logs), and the working tree travels whole to the GPU machine,
where it must leave room for wheels and a corpus (docs/raw-results.md, "Stored compressed").
xz rather than gzip: 17% smaller on the raw results, and its format holds no timestamp or file
name, so the same text always gives the same bytes (for one liblzma; readers only ever see the
decompressed text, which is what the digests and byte-identity checks are about).

    python -m lenex.records.stored compress results/archive/workstation-949ba5e/raw/*.jsonl

replaces each file by `<file>.xz` once the compressed bytes are checked to give the file back.
"""

from __future__ import annotations

import argparse
import lzma
from pathlib import Path

from ..cli import run_cli
from ..files import atomic_write

SUFFIX = ".xz"
PRESET = 9  # lzma's strongest standard preset: ~12 MB of raw results compress in seconds


def compressed(text: str) -> bytes:
    """The stored bytes of `text` (UTF-8, xz)."""
    return lzma.compress(text.encode("utf-8"), format=lzma.FORMAT_XZ, preset=PRESET)


def read_text(path: str | Path) -> str:
    """A stored text file: decompressed when its name ends in .xz, else read as it is."""
    path = Path(path)
    if path.name.endswith(SUFFIX):
        try:
            return lzma.decompress(path.read_bytes()).decode("utf-8")
        except lzma.LZMAError as err:
            raise ValueError(f"{path}: not a readable xz file ({err}); restore it from git") from None
    return path.read_text(encoding="utf-8")


def write_text(path: str | Path, text: str) -> None:
    """Write `text` atomically, compressed when the name ends in .xz."""
    if str(path).endswith(SUFFIX):
        atomic_write(path, lambda tmp: Path(tmp).write_bytes(compressed(text)))
    else:
        atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def existing(path: str | Path, compressed_first: bool = False) -> str | None:
    """`path` or `path.xz`, whichever is on disk (the compressed one first if `compressed_first`);
    None when neither is."""
    plain, packed = str(path), f"{path}{SUFFIX}"
    for candidate in ((packed, plain) if compressed_first else (plain, packed)):
        if Path(candidate).is_file():
            return candidate
    return None


def compress_file(path: str | Path) -> Path:
    """Replace a plain file by its compressed copy `<path>.xz`, once that copy reads back as the file."""
    path = Path(path)
    if path.name.endswith(SUFFIX):
        raise ValueError(f"{path} is compressed already")
    text = path.read_text(encoding="utf-8")
    target = path.with_name(path.name + SUFFIX)
    write_text(target, text)
    if read_text(target) != text:
        target.unlink()
        raise ValueError(f"{target}: the compressed copy does not read back as {path}; {path} kept")
    path.unlink()
    return target


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    pack = sub.add_parser("compress", help="replace each file by <file>.xz (checked to read back)")
    pack.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    for name in args.files:
        print(compress_file(name))


if __name__ == "__main__":
    run_cli(main)
