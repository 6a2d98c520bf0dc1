"""Real-corpus adapters (lenex.data.hub) on small local files shaped like each hub
schema, and their one clear error when the hub cannot be reached (tests run with
HF_HUB_OFFLINE=1, see conftest.py)."""
import collections
import json
import os

import pandas as pd
import pytest

from lenex.data import hub

OFFLINE = os.environ.get("HF_HUB_OFFLINE") == "1"


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# ------------------------------------------------------------------------- QMSum
MEETINGS = {"m1": "A: Let's start.\nB: The remote control budget is tight.\n\nC: Agreed.",
            "m2": "Professor: The recogniser works.\nPhD: On clean speech only."}
QMSUM_ROWS = [  # SCROLLS schema: one row per query, the meeting repeated
    {"id": "q1", "pid": "q1_0", "input": "Summarize the budget.\n\n" + MEETINGS["m1"], "output": "x"},
    {"id": "q2", "pid": "q2_0", "input": "What did C say?\n\n" + MEETINGS["m1"], "output": "y"},
    {"id": "q3", "pid": "q3_0", "input": "Summarize the meeting.\n\n" + MEETINGS["m2"], "output": "z"},
    {"id": "q4", "pid": "q4_0", "input": "Who spoke first?\n\n" + MEETINGS["m1"], "output": "w"},
]


def test_qmsum_one_document_per_meeting_without_queries(tmp_path):
    path = write_jsonl(tmp_path / "qmsum_test.jsonl", QMSUM_ROWS)
    docs = hub.read_qmsum({"path": str(path)})
    assert [d.text for d in docs] == [MEETINGS["m1"], MEETINGS["m2"]]  # blank line inside kept
    assert len({d.group for d in docs}) == 2
    assert all(d.doc_id.startswith("qmsum/") for d in docs)
    assert len(hub.read_qmsum({"path": str(path), "limit": 1})) == 1


def test_qmsum_transcript_split():
    assert hub.qmsum_transcript("Q?\n\nA: hi\n\nB: bye") == "A: hi\n\nB: bye"
    with pytest.raises(ValueError, match="no blank line"):
        hub.qmsum_transcript("a query without transcript")


def test_qmsum_parquet_folder(tmp_path):
    (tmp_path / "qmsum").mkdir()
    pd.DataFrame(QMSUM_ROWS).to_parquet(tmp_path / "qmsum" / "test.parquet")
    assert len(hub.read_qmsum({"path": str(tmp_path / "qmsum")})) == 2


# ------------------------------------------------------------------------- arXiv
def test_arxiv_article_field_and_data_files(tmp_path):
    rows = [{"article": f"we study problem {i} .\nresults follow .", "abstract": "short",
             "section_names": "introduction\nresults"} for i in range(4)]
    rows.append({"article": "", "abstract": "an empty article", "section_names": ""})
    path = write_jsonl(tmp_path / "arxiv.jsonl", rows)
    docs = hub.read_arxiv({"data_files": str(path)})
    assert [d.text for d in docs] == [r["article"] for r in rows[:4]]
    assert len(hub.read_arxiv({"path": str(path), "limit": 2})) == 2
    with pytest.raises(KeyError, match="'body'.*has no 'body'.*'abstract', 'article'"):
        hub.read_arxiv({"path": str(path), "text_field": "body"})


# ------------------------------------------------------------------------- NarrativeQA
def narrativeqa_row(story_id, text, question):
    return {"document": {"id": story_id, "kind": "gutenberg", "url": "http://x", "file_size": 1,
                         "word_count": 3, "start": "", "end": "",
                         "summary": {"text": "sum", "tokens": ["sum"], "url": "u", "title": "t"},
                         "text": text},
            "question": {"text": question, "tokens": question.split()},
            "answers": [{"text": "a", "tokens": ["a"]}]}


def test_narrativeqa_nested_text_deduplicated(tmp_path):
    book = ("*** START OF THE PROJECT GUTENBERG EBOOK X ***\nOnce upon a time.\n"
            "*** END OF THE PROJECT GUTENBERG EBOOK X ***\nlicence")
    rows = [narrativeqa_row("s1", book, "Who?"), narrativeqa_row("s2", "INT. HOUSE - NIGHT", "Where?"),
            narrativeqa_row("s1", book, "When?"), narrativeqa_row("s2", "INT. HOUSE - NIGHT", "Why?")]
    pd.DataFrame(rows).to_parquet(tmp_path / "test.parquet")
    docs = hub.read_narrativeqa({"path": str(tmp_path / "test.parquet")})
    assert [(d.doc_id, d.text) for d in docs] == [("narrativeqa/s1", "Once upon a time."),
                                                 ("narrativeqa/s2", "INT. HOUSE - NIGHT")]


def test_get_field_names_what_is_missing():
    row = {"document": {"id": 1, "text": "t"}}
    assert hub.get_field(row, "document.text") == "t"
    with pytest.raises(KeyError, match=r"document has no 'txt' \(it has \['id', 'text'\]\)"):
        hub.get_field(row, "document.txt")
    with pytest.raises(KeyError, match="row has no 'doc'"):
        hub.get_field(row, "doc.text")


# ------------------------------------------------------------------------- Pile subsets
def pile_row(set_name, text):
    return {"text": text, "meta": {"pile_set_name": set_name}}


PILE_ROWS = [pile_row("OpenWebText2", "a web page"), pile_row("Github", "def f():\n    return 1\n"),
             pile_row("ArXiv", "\\section{x}"), pile_row("OpenWebText2", "another page"),
             pile_row("Github", "int main() { return 0; }"),
             pile_row("OpenWebText2", "a web page")]  # a duplicate


def test_pile_subsets_by_meta_set_name(tmp_path):
    path = write_jsonl(tmp_path / "val.jsonl", PILE_ROWS)
    owt = hub.read_openwebtext2({"path": str(path)})
    assert [d.text for d in owt] == ["a web page", "another page"]
    github = hub.read_github({"path": str(path)})
    assert [d.text for d in github] == ["def f():\n    return 1", "int main() { return 0; }"]


def test_pile_jsonl_zst(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    data = "".join(json.dumps(r) + "\n" for r in PILE_ROWS).encode()
    (tmp_path / "shards").mkdir()
    (tmp_path / "shards" / "00.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(data))
    docs = hub.read_github({"path": str(tmp_path / "shards")})
    assert len(docs) == 2 and docs[1].text == "int main() { return 0; }"


def test_local_path_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no json/jsonl/parquet data files at"):
        hub.read_github({"path": str(tmp_path / "missing")})
    (tmp_path / "bad.jsonl").write_text('{"text": "a", "meta": {"pile_set_name": "Github"}}\n{oops\n')
    with pytest.raises(ValueError, match=r"github: malformed json in \[.*bad\.jsonl'\]"):
        hub.read_github({"path": str(tmp_path / "bad.jsonl")})
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="cannot tell the format"):
        hub.read_arxiv({"data_files": str(tmp_path / "notes.txt")})


# ------------------------------------------------------------------------- hub offline
@pytest.mark.skipif(not OFFLINE, reason="needs HF_HUB_OFFLINE=1 (set by conftest)")
@pytest.mark.parametrize("corpus,hub_name", [
    ("qmsum", "tau/scrolls"), ("arxiv", "scientific_papers"), ("openwebtext2", "EleutherAI/pile"),
    ("github", "EleutherAI/pile"), ("narrativeqa", "deepmind/narrativeqa"),
    ("pile_mix", "EleutherAI/pile")])
def test_hub_unreachable_is_one_clear_error(corpus, hub_name):
    spec = {"weights": {"Books3": 1}, "char_budget": 100} if corpus == "pile_mix" else {}
    with pytest.raises(RuntimeError) as err:
        hub.HUB_READERS[corpus](spec)
    message = str(err.value)
    assert message.startswith(f"{corpus}: could not load Hugging Face dataset {hub_name!r}")
    assert "`path:`" in message and hub.HUB_NOTES[corpus] in message


@pytest.mark.skipif(not OFFLINE, reason="needs HF_HUB_OFFLINE=1 (set by conftest)")
def test_unknown_hub_name_is_the_same_error():
    with pytest.raises(RuntimeError, match="could not load Hugging Face dataset "
                                           "'lenex-test/no-such-dataset'.*`path:`"):
        hub.read_narrativeqa({"name": "lenex-test/no-such-dataset"})


def test_registry_covers_every_note():
    assert set(hub.HUB_READERS) == set(hub.HUB_NOTES)


# ------------------------------------------------------------------------- LEX mixture
def test_mixture_targets_hand_computed():
    # 10 * 2/3 = 6.67 -> 6 (+1 for the larger remainder), 10 * 1/3 = 3.33 -> 3
    assert hub.mixture_targets({"Books3": 2, "Pile-CC": 1}, 10) == {"Books3": 7, "Pile-CC": 3}
    assert hub.mixture_targets({"Books3": 1, "Pile-CC": 1, "BookCorpus2": 0}, 9) == \
        {"Books3": 5, "Pile-CC": 4}  # equal remainders: alphabetical; weight 0 is unused
    with pytest.raises(ValueError, match=r"outside LEX §4.1: \['Github'\]"):
        hub.mixture_targets({"Github": 1}, 10)
    with pytest.raises(ValueError, match="non-negative"):
        hub.mixture_targets({"Books3": -1}, 10)


@pytest.fixture
def made_up_pile(tmp_path):
    """Nine LEX subsets plus two outside it; documents of varied length."""
    rows = []
    for i in range(60):
        for set_name in hub.LEX_PILE_SUBSETS + ("Github", "ArXiv"):
            rows.append(pile_row(set_name, f"{set_name} doc {i} " + "w" * (i * 7 % 50)))
    return write_jsonl(tmp_path / "pile.jsonl", rows)


def test_pile_mix_shares_follow_weights(made_up_pile):
    weights = {"Books3": 0.5, "Pile-CC": 0.3, "StackExchange": 0.15, "Wikipedia (en)": 0.05}
    spec = {"path": str(made_up_pile), "weights": weights, "char_budget": 2000, "seed": 3}
    docs = hub.read_pile_mix(spec)
    chars = collections.Counter()
    for d in docs:
        chars[d.doc_id.split("/")[1]] += len(d.text)
    assert dict(chars) == {"Books3": 1000, "Pile-CC": 600, "StackExchange": 300,
                           "Wikipedia (en)": 100}
    for d in docs:  # each text comes from its own subset (the cut one may be short)
        subset = d.doc_id.split("/")[1]
        assert d.text.startswith(subset) or subset.startswith(d.text)
    # Seeded: the same seed draws the same documents, another seed others.
    assert [d.doc_id for d in hub.read_pile_mix(spec)] == [d.doc_id for d in docs]
    other = hub.read_pile_mix(dict(spec, seed=4))
    assert [d.doc_id for d in other] != [d.doc_id for d in docs]


def test_pile_mix_draws_across_the_whole_stream(made_up_pile):
    """A uniform draw, not the first rows: over seeds, early and late rows both appear."""
    picked = set()
    for seed in range(5):
        docs = hub.read_pile_mix({"path": str(made_up_pile), "weights": {"Books3": 1},
                                  "char_budget": 300, "seed": seed})
        # doc ids carry the stream index; 11 subsets per round of the fixture
        picked |= {int(d.doc_id.rsplit("/", 1)[1]) // 11 for d in docs}
    assert min(picked) < 20 and max(picked) >= 40


def test_pile_mix_not_enough_text(made_up_pile):
    with pytest.raises(ValueError, match=r"not enough text.*'Books3': \(\d+, 1000000\)"):
        hub.read_pile_mix({"path": str(made_up_pile), "weights": {"Books3": 1},
                           "char_budget": 1_000_000})
    with pytest.raises(KeyError, match="char_budget"):
        hub.read_pile_mix({"path": str(made_up_pile), "weights": {"Books3": 1}})


def test_keyed_sample_keeps_smallest_keys():
    sample = hub._KeyedSample(target=5)
    for key, text in [(0.9, "aaaa"), (0.1, "bb"), (0.5, "ccc"), (0.3, "dd"), (0.7, "e")]:
        sample.offer(key, text, text)
    # key order: bb (0.1), dd (0.3), ccc (0.5, cut to 1 char) -> 2 + 2 + 1 = 5
    assert sample.take() == [("bb", "bb"), ("dd", "dd"), ("ccc", "c")]
