"""lenex.data: tokenizer, text readers, group split, token files (small fixtures only)."""
import json
import socket

import numpy as np
import pytest

from lenex.data import prepare as prep
from lenex.data.corpus import read_corpus
from lenex.data.sources.text_dir import read_text_dir
from lenex.data.documents import strip_gutenberg_boilerplate
from lenex.data.tokenizer import _build_gpt2, get_tokenizer
from lenex.data.store import load_split

PARAGRAPH = ("It was the best of times, it was the worst of times; naïve café — 1848!\n\n"
             "  Indented line\twith tab, 'quotes' and <|endoftext|> written as text.\n")


def test_gpt2_known_ids():
    tok = get_tokenizer("gpt2")
    assert tok.encode("Hello world") == [15496, 995]
    assert tok.encode(" the") == [262]
    assert tok.eot_token == 50256 and tok.vocab_size == 50257 and tok.name == "gpt2"
    assert tok.decode(tok.encode(PARAGRAPH)) == PARAGRAPH
    # the literal marker is plain text, never the EOT id
    assert tok.eot_token not in tok.encode("<|endoftext|>")
    assert tok.encode_batch(["Hello world", " the"]) == [[15496, 995], [262]]


def test_unknown_tokenizer_names_itself():
    with pytest.raises(ValueError, match="llama-9"):
        get_tokenizer("llama-9")


def test_gpt2_builds_without_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("tokenizer tried to open a network connection")
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    assert _build_gpt2().encode("Hello world") == [15496, 995]


def test_strip_gutenberg_new_and_old_markers():
    new = ("The Project Gutenberg EBook of X\r\nlicence\r\n"
           "*** START OF THIS PROJECT GUTENBERG EBOOK X ***\r\nBody line.\r\n"
           "*** END OF THIS PROJECT GUTENBERG EBOOK X ***\r\nProject Gutenberg licence\r\n")
    assert strip_gutenberg_boilerplate(new) == "Body line."
    old = ("**The Project Gutenberg Etext of Y**\nsmall print\n"
           "*END*THE SMALL PRINT! FOR PUBLIC DOMAIN ETEXTS*Ver.04.29.93*END*\n\n"
           "Old body.\n\nEnd of the Project Gutenberg Etext of Y\n")
    assert strip_gutenberg_boilerplate(old) == "Old body."
    assert strip_gutenberg_boilerplate("  no markers\n") == "no markers"


@pytest.fixture
def text_corpus(tmp_path):
    """Twelve small 'books' (one latin-1) in a directory, one group each."""
    root = tmp_path / "books"
    (root / "sub").mkdir(parents=True)
    for i in range(11):
        (root / f"book{i:02d}.txt").write_text(f"Book {i}.\n" + PARAGRAPH * (i + 1))
    (root / "sub" / "latin.txt").write_bytes("Caf\xe9 cr\xe8me, na\xefve.".encode("latin-1"))
    (root / "notes.md").write_text("not a book")
    return root


def test_read_text_dir(text_corpus):
    with pytest.raises(ValueError, match=r"latin\.txt is not valid UTF-8.*fallback_encoding"):
        read_text_dir(text_corpus)  # non-UTF-8 bytes are an error unless the spec allows them
    docs = read_text_dir(text_corpus, fallback_encoding="latin-1")
    assert len(docs) == 12 and "notes" not in {d.doc_id for d in docs}
    latin = next(d for d in docs if d.doc_id == "sub/latin")
    assert latin.text == "Café crème, naïve." and latin.encoding == "latin-1"


def test_read_text_dir_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        read_text_dir(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="no non-empty"):
        read_text_dir(tmp_path)


def test_unknown_source_names_itself(tmp_path):
    with pytest.raises(ValueError, match="carrier-pigeon"):
        read_corpus({"source": "carrier-pigeon"}, tmp_path)


def test_split_groups_deterministic_and_disjoint():
    groups = [f"g{i}" for i in range(40)]
    a = prep.split_groups(groups, 7, 0.1, 0.1)
    assert a == prep.split_groups(list(reversed(groups)), 7, 0.1, 0.1)  # order-free
    assert a != prep.split_groups(groups, 8, 0.1, 0.1)
    assert sorted(sum(a.values(), [])) == sorted(groups)  # a partition
    assert len(a["test"]) == 4 and len(a["valid"]) == 4
    tiny = prep.split_groups(["a", "b", "c"], 0, 0.01, 0.01)
    assert len(tiny["test"]) == len(tiny["valid"]) == len(tiny["train"]) == 1
    with pytest.raises(ValueError, match="groups"):
        prep.split_groups(["a", "b"], 0, 0.1, 0.1)


def _prepare(text_corpus, out, **kw):
    spec = {"source": "text_dir", "path": str(text_corpus), "fallback_encoding": "latin-1"}
    return prep.prepare(spec, text_corpus.parent, out, seed=kw.pop("seed", 1234), **kw)


def test_prepare_round_trip(text_corpus, tmp_path):
    out = tmp_path / "data"
    meta = _prepare(text_corpus, out)
    tok = get_tokenizer()
    texts = {d.doc_id: d.text for d in read_text_dir(text_corpus, fallback_encoding="latin-1")}
    seen_groups, seen_docs = set(), []
    for split in prep.SPLITS:
        s = load_split(out, split)
        assert s.tokens.dtype == np.uint16 and not s.tokens.flags.writeable
        assert s.meta["n_docs"] == s.n_docs >= 1
        assert not seen_groups & set(s.meta["groups"])  # no group in two splits
        seen_groups |= set(s.meta["groups"])
        assert np.all(s.tokens[s.doc_offsets[1:] - 1] == tok.eot_token)  # EOT after each doc
        for doc_id, ids in zip(s.meta["doc_ids"], s.documents()):
            assert tok.decode(ids) == texts[doc_id]
            seen_docs.append(doc_id)
    assert sorted(seen_docs) == sorted(texts)
    assert meta["splits"]["test"]["non_utf8_doc_ids"] in ([], ["sub/latin"])
    on_disk = json.loads((out / "meta.json").read_text())
    assert on_disk["seed"] == 1234 and on_disk["dtype"] == "uint16"
    assert on_disk["tokenizer"] == "gpt2" and on_disk["source"]["source"] == "text_dir"


def test_prepare_same_seed_same_bytes(text_corpus, tmp_path):
    a, b, c = (_prepare(text_corpus, tmp_path / n, seed=s) for n, s in
               (("a", 5), ("b", 5), ("c", 6)))
    assert a["splits"] == b["splits"]
    assert (tmp_path / "a" / "test.bin").read_bytes() == (tmp_path / "b" / "test.bin").read_bytes()
    assert a["splits"]["test"]["doc_ids"] != c["splits"]["test"]["doc_ids"]


def test_prepare_rerun_replaces_existing(text_corpus, tmp_path):
    out = tmp_path / "data"
    _prepare(text_corpus, out, seed=1)
    (out / "stale.txt").write_text("old")
    _prepare(text_corpus, out, seed=2)
    assert not (out / "stale.txt").exists()
    assert json.loads((out / "meta.json").read_text())["seed"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["books", "data"]


def test_prepare_failure_leaves_nothing(text_corpus, tmp_path, monkeypatch):
    real_write = prep._write_split

    def crash_on_valid(directory, split, *args):
        if split == "valid":
            raise OSError("disk full (simulated)")
        return real_write(directory, split, *args)
    monkeypatch.setattr(prep, "_write_split", crash_on_valid)
    with pytest.raises(OSError, match="simulated"):
        _prepare(text_corpus, tmp_path / "data")
    assert not (tmp_path / "data").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["books"]  # no temp dir left


def test_min_test_tokens_grows_test(text_corpus, tmp_path):
    small = _prepare(text_corpus, tmp_path / "a")["splits"]["test"]["n_tokens"]
    big = _prepare(text_corpus, tmp_path / "b", min_test_tokens=3 * small)["splits"]["test"]
    assert big["n_tokens"] >= 3 * small
    with pytest.raises(ValueError, match="min-test-tokens"):
        _prepare(text_corpus, tmp_path / "c", min_test_tokens=10**9)


def test_uint16_overflow_is_refused(text_corpus, tmp_path, monkeypatch):
    class Huge:
        name, vocab_size, eot_token = "huge", 100_000, 99_999
    monkeypatch.setattr(prep, "get_tokenizer", lambda name: Huge())
    with pytest.raises(ValueError, match="uint16"):
        _prepare(text_corpus, tmp_path / "data")


def test_load_split_missing_and_corrupt(text_corpus, tmp_path):
    with pytest.raises(FileNotFoundError, match="snakemake"):
        load_split(tmp_path / "absent", "train")
    out = tmp_path / "data"
    _prepare(text_corpus, out)
    with open(out / "valid.bin", "ab") as f:
        f.write(b"\x00")
    with pytest.raises(ValueError, match="valid.bin"):
        load_split(out, "valid")
    (out / "test.bin").unlink()
    with pytest.raises(FileNotFoundError, match="test.bin"):
        load_split(out, "test")


def test_prepare_cli(text_corpus, tmp_path):
    spec = json.dumps({"source": "text_dir", "path": str(text_corpus), "fallback_encoding": "latin-1"})
    prep.main(["--source-spec", spec, "--resources", str(tmp_path), "--out",
               str(tmp_path / "cli"), "--seed", "3", "--valid-fraction", "0.2"])
    meta = json.loads((tmp_path / "cli" / "meta.json").read_text())
    assert meta["valid_fraction"] == 0.2 and len(meta["splits"]["valid"]["groups"]) == 2


def test_short_documents_are_skipped_counted_and_do_not_move_splits(text_corpus, tmp_path):
    full = _prepare(text_corpus, tmp_path / "a")
    sizes = {doc: n for s in full["splits"].values()
             for doc, n in zip(s["doc_ids"], np.diff(s["doc_offsets"]) - 1)}
    cut = sorted(sizes.values())[3]  # the three shortest documents fall below it
    short = _prepare(text_corpus, tmp_path / "b", min_doc_tokens=cut)
    skipped = short["skipped"]["too_short"]
    assert skipped["count"] == 3 and skipped["min_tokens"] == cut
    assert sorted(skipped["doc_ids"]) == sorted(d for d, n in sizes.items() if n < cut)
    for split in prep.SPLITS:  # everything kept stays in the split it had
        kept = set(short["splits"][split]["doc_ids"])
        assert kept == set(full["splits"][split]["doc_ids"]) - set(skipped["doc_ids"])
    with pytest.raises(ValueError, match="every document is shorter than 1000000 tokens"):
        _prepare(text_corpus, tmp_path / "c", min_doc_tokens=10**6)
    assert not (tmp_path / "c").exists()
