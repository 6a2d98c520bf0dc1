"""Long public-domain books read from SWORD Bible-software modules in Debian ``sword-*``
packages: C. H. Spurgeon's *Treasury of David* (1869-1885, one document per Psalm),
Matthew Henry's *Concise Commentary* (1706-1721, one per biblical book), the Scofield
Reference Notes (1917), and two Bible translations (King James, World English Bible),
one document per biblical book. All are marked public domain in their module's .conf.

A SWORD "z" module (ModDrv zText, zCom, zCom4) keeps its text in compressed blocks::

    <root>/<pkg>/root/usr/share/sword/mods.d/<module>.conf    DataPath, BlockType, CompressType, ...
    <root>/<pkg>/root/usr/share/sword/<DataPath>/{ot,nt}.<b|c>zs  block index: per block
                                       three little-endian uint32 (offset, compressed size, size)
    <root>/<pkg>/root/usr/share/sword/<DataPath>/{ot,nt}.<b|c>zz  the zlib-compressed blocks

("b" files when BlockType=BOOK, "c" when CHAPTER.) A block holds the OSIS XML of one
book (or chapter) in verse order; each block is one Document, its markup removed:
paragraph, line and title elements become line breaks, notes (cross-references and
footnotes) are dropped, every other tag is removed and its text kept. Only ZIP (zlib)
compression and UTF-8 are read; anything else is one clear error naming the module.

Split groups: the two translations share a group per biblical book ("bible/Gen"), so a
book's KJV and WEB texts (14% of 8-word shingles shared, measured) never straddle
splits; commentaries group per block ("tdavid/Ps.23"): the Treasury shares 1% of its
shingles with the KJV Psalms, Henry 0.1% with the KJV Genesis (measured).
"""
from __future__ import annotations

import html
import re
import struct
import zlib
from collections.abc import Iterable
from pathlib import Path

from .documents import Document
from .fetch import unpacked_root

SWORD_PACKAGES = ("sword-comm-tdavid", "sword-comm-mhcc", "sword-comm-scofield",
                  "sword-text-kjv", "sword-text-web")
SWORD_DIR = "usr/share/sword"
LAYOUT = f"<root>/<sword pkg>/root/{SWORD_DIR}/mods.d/*.conf + <DataPath>/{{ot,nt}}.{{b,c}}z{{s,z}}"
BLOCK_LETTER = {"BOOK": "b", "CHAPTER": "c"}
TEXT_DRIVERS = ("zText", "zText4")  # Bibles: grouped by book across translations
COMMENTARY_DRIVERS = ("zCom", "zCom4")
_INDEX_ENTRY = struct.Struct("<III")
_BREAK = re.compile(r"<(?:div|p|lg|l|lb|title|chapter)\b[^>]*>|</(?:div|p|lg|l|title)>")
_NOTE = re.compile(r"<note\b[^>]*>.*?</note>", re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
_OSIS_ID = re.compile(r'osisID="([^"]+)"')


def read_conf(path: Path) -> dict[str, str]:
    """The first section of a SWORD .conf as {key: value} plus "module" (the [name])."""
    conf: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            if "module" in conf:
                break
            conf["module"] = line[1:-1]
        elif "=" in line and "module" in conf:
            key, value = line.split("=", 1)
            conf.setdefault(key.strip(), value.strip())
    if "module" not in conf:
        raise ValueError(f"{path}: no [module] section")
    return conf


def osis_to_text(osis: str) -> str:
    """Plain text of an OSIS fragment (see the module docstring), one paragraph per line."""
    text = _NOTE.sub("", osis)
    text = _BREAK.sub("\n", text)
    text = html.unescape(_TAG.sub("", text))
    text = re.sub(r"[ \t\r\f\v]+", " ", text)
    return re.sub(r" *\n[ \n]*", "\n", text).strip()


def read_blocks(index: bytes, data: bytes, name: str) -> list[str]:
    """The decompressed blocks of one testament, in order (empty blocks skipped)."""
    if len(index) % _INDEX_ENTRY.size:
        raise ValueError(f"{name}: block index of {len(index)} bytes is not a whole number "
                         f"of {_INDEX_ENTRY.size}-byte entries")
    blocks = []
    for offset, size, _ in _INDEX_ENTRY.iter_unpack(index):
        if size == 0:
            continue
        if offset + size > len(data):
            raise ValueError(f"{name}: block at {offset}+{size} runs past the data file "
                             f"({len(data)} bytes)")
        try:
            blocks.append(zlib.decompress(data[offset:offset + size]).decode("utf-8"))
        except (zlib.error, UnicodeDecodeError) as err:
            raise ValueError(f"{name}: block at {offset} is not zlib-compressed UTF-8 ({err})") from None
    return blocks


def _check_conf(conf: dict[str, str], path: Path) -> str:
    """The block-file letter of a module this reader can read, else one clear error."""
    problems = []
    if conf.get("ModDrv") not in TEXT_DRIVERS + COMMENTARY_DRIVERS:
        problems.append(f"ModDrv {conf.get('ModDrv')!r} is not one of {TEXT_DRIVERS + COMMENTARY_DRIVERS}")
    if conf.get("CompressType", "ZIP").upper() != "ZIP":
        problems.append(f"CompressType {conf.get('CompressType')!r} is not ZIP")
    if conf.get("Encoding", "").upper() != "UTF-8":
        problems.append(f"Encoding {conf.get('Encoding')!r} is not UTF-8")
    if conf.get("BlockType", "BOOK").upper() not in BLOCK_LETTER:
        problems.append(f"BlockType {conf.get('BlockType')!r} is not BOOK or CHAPTER")
    if problems:
        raise ValueError(f"{path}: cannot read module {conf['module']}: " + "; ".join(problems))
    return BLOCK_LETTER[conf.get("BlockType", "BOOK").upper()]


def read_module(sword_dir: Path, conf_path: Path) -> list[Document]:
    """One Document per non-empty block of the module that ``conf_path`` describes."""
    conf = read_conf(conf_path)
    letter = _check_conf(conf, conf_path)
    data_dir = sword_dir / conf.get("DataPath", "").strip("./").rstrip("/")
    module = conf["module"].lower()
    is_text = conf["ModDrv"] in TEXT_DRIVERS
    docs = []
    for testament in ("ot", "nt"):
        index, data = data_dir / f"{testament}.{letter}zs", data_dir / f"{testament}.{letter}zz"
        if not index.is_file():
            continue
        for block in read_blocks(index.read_bytes(), data.read_bytes(), f"{module}/{testament}"):
            ids = _OSIS_ID.findall(block)
            text = osis_to_text(block)
            if not ids or not text:
                continue  # the importer's milestone block, or an empty chapter
            key = ids[0]
            group = f"bible/{key.split('.')[0]}" if is_text else f"{module}/{key}"
            docs.append(Document(f"{module}/{key}", group, text))
    if not docs:
        raise FileNotFoundError(f"module {conf['module']} ({conf_path}) has no text blocks "
                                f"under {data_dir}")
    return docs


def read_sword_modules(root: str | Path, packages: Iterable[str] = SWORD_PACKAGES) -> list[Document]:
    """Every module of ``packages`` (unpacked under ``root`` by ``python -m
    lenex.data.debian``), one Document per block, sorted by doc_id
    ("tdavid/Ps.23", "engkjv2006eb/Gen", ...)."""
    root, docs = Path(root), []
    for package in packages:
        sword_dir = unpacked_root(root, package) / SWORD_DIR
        confs = sorted((sword_dir / "mods.d").glob("*.conf"))
        if not confs:
            raise FileNotFoundError(f"no SWORD module in {package} under {root} (expected {LAYOUT}); "
                                    f"fetch it with: python -m lenex.data.debian --out {root} {package}")
        for conf_path in confs:
            docs += read_module(sword_dir, conf_path)
    ids = [d.doc_id for d in docs]
    clashes = sorted({i for i in ids if ids.count(i) > 1})
    if clashes:
        raise ValueError(f"SWORD blocks with the same module/osisID under {root}: {clashes[:5]}")
    return sorted(docs, key=lambda d: d.doc_id)
