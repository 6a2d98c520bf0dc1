"""PG22 builder on a hand-made Gutenberg catalog and mirror (no network)."""
import csv
import datetime as dt
import subprocess
import sys

import pytest

from lenex.data import pg22
from lenex.data.sources.text_dir import read_text_dir

HEADER = ("The Project Gutenberg eBook of {title}\n\nThis eBook is for the use of anyone "
          "anywhere.\n\n*** START OF THE PROJECT GUTENBERG EBOOK {title} ***\n")
FOOTER = ("\n*** END OF THE PROJECT GUTENBERG EBOOK {title} ***\n\nSection 1. General "
          "Terms of Use and Redistributing Project Gutenberg electronic works\n")

# Text#, Type, Issued, Title, Language, why it is (not) kept
CATALOG = [
    (101, "Text", "2020-01-01", "New Year Book", "en", "kept: the first day after the cutoff"),
    (102, "Text", "2019-12-31", "Cutoff Day Book", "en", "dropped: issued on the cutoff"),
    (103, "Text", "2005-06-01", "Old Book", "en", "dropped: before the cutoff"),
    (104, "Text", "2022-03-04", "Livre", "fr", "dropped: French"),
    (105, "Sound", "2021-01-01", "Audio Book", "en", "dropped: not a text"),
    (106, "Text", "2021-05-05", "Bilingual Book", "fr; en", "kept: en among the codes"),
    (107, "Text", "2023-07-07", "Middle English", "enm", "dropped: enm is not en"),
    (108, "Text", "2022-02-02", "Not Mirrored", "en", "missing in the mirror"),
    (109, "Text", "2022-09-09", "Only Licence", "en", "empty after the strip"),
    (110, "Text", "2024-10-10", "Flat Layout", "en", "kept: <id>.txt layout"),
]


def write_catalog(path, rows=CATALOG):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["Text#", "Type", "Issued", "Title", "Language", "Authors",
                         "Subjects", "LoCC", "Bookshelves"])
        for book_id, kind, issued, title, lang, _ in rows:
            writer.writerow([book_id, kind, issued, title, lang, "Someone, 1900-1980", "", "", ""])
    return path


def book(title, body):
    return HEADER.format(title=title) + body + FOOTER.format(title=title)


@pytest.fixture
def catalog_and_mirror(tmp_path):
    catalog = write_catalog(tmp_path / "pg_catalog.csv")
    mirror = tmp_path / "mirror"
    files = {
        "101/pg101.txt": book("New Year Book", "It was the first day of the year."),
        "cache/epub/106/pg106.txt": book("Bilingual Book", "Bonjour. Hello there."),
        "109/pg109.txt": book("Only Licence", ""),
        "110.txt": book("Flat Layout", "A flat file.\r\nWith Windows line ends."),
        # Books the rule drops are in the mirror too: they must still not be read.
        "102/pg102.txt": book("Cutoff Day Book", "too early"),
        "103/pg103.txt": book("Old Book", "much too early"),
    }
    for rel, text in files.items():
        (mirror / rel).parent.mkdir(parents=True, exist_ok=True)
        (mirror / rel).write_text(text, encoding="utf-8")
    return catalog, mirror


def test_selection_rule(tmp_path):
    entries = pg22.select_pg22(write_catalog(tmp_path / "c.csv"))
    assert [e.id for e in entries] == [101, 106, 108, 109, 110]
    assert entries[0] == pg22.CatalogEntry(101, "New Year Book", dt.date(2020, 1, 1), "en")
    later = pg22.select_pg22(tmp_path / "c.csv", after=dt.date(2022, 6, 30))
    assert [e.id for e in later] == [109, 110]


def test_is_english():
    assert pg22.is_english("en") and pg22.is_english("de;en") and pg22.is_english(" fr ; en ")
    assert not pg22.is_english("enm") and not pg22.is_english("") and not pg22.is_english("fr")


def test_build_writes_books_and_selection(catalog_and_mirror, tmp_path):
    catalog, mirror = catalog_and_mirror
    out = tmp_path / "pg22"
    counts = pg22.build_pg22(catalog, mirror, out)
    assert counts == {"kept": 3, "missing_in_mirror": 1, "empty_after_strip": 1, "selected": 5}
    assert sorted(p.name for p in (out / "books").iterdir()) == ["101.txt", "106.txt", "110.txt"]
    assert (out / "books" / "101.txt").read_text() == "It was the first day of the year.\n"
    flat = (out / "books" / "110.txt").read_text()
    assert flat == "A flat file.\nWith Windows line ends.\n"
    for f in (out / "books").iterdir():
        assert "PROJECT GUTENBERG" not in f.read_text().upper()
        assert "Terms of Use" not in f.read_text()
    with open(out / "selection.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(pg22.SELECTION_COLUMNS)
    status = {int(r["id"]): r["status"] for r in rows}
    assert status == {101: "kept", 106: "kept", 108: "missing_in_mirror",
                      109: "empty_after_strip", 110: "kept"}
    by_id = {int(r["id"]): r for r in rows}
    assert by_id[101]["chars"] == str(len("It was the first day of the year."))
    assert by_id[106]["language"] == "fr; en" and by_id[106]["issued"] == "2021-05-05"
    assert by_id[108]["chars"] == "0"
    # The existing text_dir source reads the result as one document per book.
    assert sorted(d.doc_id for d in read_text_dir(out / "books")) == ["101", "106", "110"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_rebuild_replaces_whole_output(catalog_and_mirror, tmp_path):
    catalog, mirror = catalog_and_mirror
    out = tmp_path / "pg22"
    pg22.build_pg22(catalog, mirror, out)
    (out / "books" / "stale.txt").write_text("from an older build")
    counts = pg22.build_pg22(catalog, mirror, out, after=dt.date(2023, 1, 1))
    assert counts["kept"] == 1
    assert sorted(p.name for p in (out / "books").iterdir()) == ["110.txt"]


def test_failed_build_leaves_nothing(tmp_path):
    catalog = write_catalog(tmp_path / "c.csv", [CATALOG[0]])
    mirror = tmp_path / "mirror"
    (mirror / "101").mkdir(parents=True)
    (mirror / "101" / "pg101.txt").write_bytes(b"caf\xe9")  # latin-1, not UTF-8
    with pytest.raises(ValueError, match="book 101 is not valid UTF-8"):
        pg22.build_pg22(catalog, mirror, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.csv", "mirror"]
    counts = pg22.build_pg22(catalog, mirror, tmp_path / "out", fallback_encoding="latin-1")
    assert counts["kept"] == 1 and (tmp_path / "out/books/101.txt").read_text() == "café\n"


def test_bad_inputs(tmp_path):
    with pytest.raises(FileNotFoundError, match="catalog not found"):
        pg22.select_pg22(tmp_path / "nope.csv")
    (tmp_path / "bad.csv").write_text("Text#,Type,Title\n1,Text,x\n")
    with pytest.raises(ValueError, match=r"missing catalog column\(s\) \['Issued', 'Language'\]"):
        pg22.select_pg22(tmp_path / "bad.csv")
    write_catalog(tmp_path / "date.csv", [(1, "Text", "Jan 2021", "t", "en", "")])
    with pytest.raises(ValueError, match=r"date.csv:2: .*'Jan 2021'"):
        pg22.select_pg22(tmp_path / "date.csv")
    with pytest.raises(ValueError, match=r"\{id\} placeholder"):
        pg22.build_pg22(tmp_path / "date.csv", "https://example.org/books/", tmp_path / "o")
    with pytest.raises(FileNotFoundError, match="mirror folder not found"):
        pg22.build_pg22(tmp_path / "date.csv", tmp_path / "no-mirror", tmp_path / "o")


def test_cli(catalog_and_mirror, tmp_path):
    catalog, mirror = catalog_and_mirror
    cmd = [sys.executable, "-m", "lenex.data.pg22", "--catalog", str(catalog),
           "--mirror", str(mirror), "--out", str(tmp_path / "o"), "--after", "2021-12-31"]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "kept=1 missing_in_mirror=1 empty_after_strip=1 selected=3" in proc.stdout
    bad = subprocess.run(cmd[:6] + [str(tmp_path / "none"), "--out", str(tmp_path / "o2")],
                         check=False, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("error: Gutenberg mirror folder")
