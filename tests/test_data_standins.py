"""Offline stand-ins: the Python standard library (GitHub role) and the chitchat
conversations read from inside their wheel (QMSum role)."""
import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from lenex.data import chitchat, fetch, stdlib


# ------------------------------------------------------------------------- stdlib
def make_tree(root: Path) -> Path:
    files = {
        "argparse.py": "import os\n",
        "json/__init__.py": "from .decoder import x\n",
        "json/decoder.py": "x = 1\n",
        "json/empty/__init__.py": "",  # empty: listed, but no document
        "test/test_json.py": "assert True\n",
        "test/support/__init__.py": "helper = 1\n",
        "lib2to3/tests/data/bom.py": "broken(\n",
        "idlelib/idle_test/htest.py": "x\n",
        "idlelib/editor.py": "class Editor: pass\n",
        "unittest/test_loose.py": "x\n",
        "pydoc_data/topics.py": "topics = {}\n",
        "site-packages/numpy/core.py": "x\n",
        "__pycache__/argparse.cpython-311.py": "x\n",
        "config-3.11-x86_64-linux-gnu/python-config.py": "x\n",
        "_sysconfigdata__linux_x86_64-linux-gnu.py": "build_time_vars = {}\n",
        "README.txt": "not python\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_stdlib_hand_made_tree(tmp_path):
    root = make_tree(tmp_path / "lib")
    docs = stdlib.read_python_stdlib(root)
    assert [(d.doc_id, d.group) for d in docs] == [
        ("python_stdlib/argparse.py", "python_stdlib/argparse"),
        ("python_stdlib/idlelib/editor.py", "python_stdlib/idlelib"),
        ("python_stdlib/json/__init__.py", "python_stdlib/json"),
        ("python_stdlib/json/decoder.py", "python_stdlib/json"),
    ]
    assert docs[3].text == "x = 1\n"  # code kept byte for byte


def test_stdlib_record_fingerprints_the_file_list(tmp_path):
    root = make_tree(tmp_path / "lib")
    record = stdlib.stdlib_source_record(root)
    assert record["files"] == 5 and record["root"] == str(root)
    lines = "".join(f"{rel}\t{hashlib.sha256((root / rel).read_bytes()).hexdigest()}\n"
                    for rel in ["argparse.py", "idlelib/editor.py", "json/__init__.py",
                                "json/decoder.py", "json/empty/__init__.py"])
    assert record["sha256"] == hashlib.sha256(lines.encode()).hexdigest()
    (root / "test" / "test_more.py").write_text("changed tests do not matter\n")
    assert stdlib.stdlib_source_record(root)["sha256"] == record["sha256"]
    (root / "json" / "decoder.py").write_text("x = 2\n")
    assert stdlib.stdlib_source_record(root)["sha256"] != record["sha256"]


def test_stdlib_real_listing():
    _, files = stdlib.stdlib_files()
    names = {f.as_posix() for f in files}
    assert {"argparse.py", "json/decoder.py", "asyncio/tasks.py"} <= names
    assert len(files) > 300
    banned = {"test", "tests", "idle_test", "pydoc_data", "site-packages", "__pycache__"}
    assert not any(set(f.parts) & banned or f.name.startswith("test_") for f in files)
    record = stdlib.stdlib_source_record()
    assert record["files"] == len(files) and len(record["sha256"]) == 64


def test_stdlib_missing_root(tmp_path):
    with pytest.raises(FileNotFoundError, match="standard library folder not found"):
        stdlib.read_python_stdlib(tmp_path / "nope")


# ------------------------------------------------------------------------- chitchat
def utterance(sender, text, t="2018-05-02T19:38:15Z"):
    return {"text": text, "timestamp": t, "sender": sender}


CONVERSATIONS = {
    "c2": {"messages": [[utterance("u-9", "Hello"), utterance("u-9", "How are you?")],
                        [utterance("u-3", "good\nthanks")],
                        [utterance("u-9", "Great")]],
           "start": "2018-05-02T19:38:01Z", "prompt": "Say hi", "ratings": {"witty": 3}},
    "c1": {"messages": [[utterance("u-1", "anyone there?")]], "start": "2018-05-03T00:00:00Z"},
    "c3": {"messages": [[utterance("x", "a")], [utterance("y", "b")], [utterance("z", "c")],
                        [utterance("x", "  ")]], "start": "2018-05-04T00:00:00Z"},
}


def make_wheel(path: Path, data=CONVERSATIONS) -> Path:
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("chitchat_dataset/__init__.py", "")
        wheel.writestr(chitchat.DATASET_MEMBER, json.dumps(data))
        wheel.writestr("chitchat_dataset-0.9.0.dist-info/METADATA", "Name: chitchat-dataset\n")
    return path


def test_chitchat_wheel_transcripts(tmp_path):
    docs = chitchat.read_chitchat_wheel(make_wheel(tmp_path / "c.whl"))
    assert [d.doc_id for d in docs] == ["chitchat/c2", "chitchat/c3"]  # c1: one speaker
    assert docs[0].text == "A: Hello How are you?\nB: good thanks\nA: Great"
    assert docs[1].text == "A: a\nB: b\nC: c"  # the empty last turn is dropped
    assert docs[0].group == "chitchat/c2"
    everything = chitchat.read_chitchat_wheel(tmp_path / "c.whl", min_speakers=1)
    assert everything[0].text == "A: anyone there?"


def test_chitchat_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="fetch chitchat"):
        chitchat.read_chitchat_wheel(tmp_path / "missing.whl")
    (tmp_path / "bad.whl").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a wheel"):
        chitchat.read_chitchat_wheel(tmp_path / "bad.whl")
    mixed = {"c": {"messages": [[utterance("a", "x"), utterance("b", "y")]]}}
    with pytest.raises(ValueError, match="conversation 'c' is malformed: a turn mixes senders"):
        chitchat.read_chitchat_wheel(make_wheel(tmp_path / "m.whl", mixed))
    with pytest.raises(FileNotFoundError, match="no fetched chitchat wheel"):
        fetch.fetched_file(tmp_path / "empty", "chitchat")


def test_speaker_letters_and_percentile():
    assert [chitchat.speaker_letter(i) for i in (0, 1, 25, 26, 27)] == ["A", "B", "Z", "AA", "AB"]
    assert chitchat.percentile([1, 2, 3, 4], 50) == 2.5
    assert chitchat.percentile([10, 0, 20, 30, 40], 90) == pytest.approx(36.0)  # 4 * 0.9 = 3.6


def test_chitchat_stats_on_hand_made_wheel(tmp_path):
    make_wheel(tmp_path / "chitchat_dataset-0.9.0-py3-none-any.whl")
    stats = chitchat.corpus_stats(chitchat.read_chitchat(tmp_path))
    assert stats["documents"] == 2 and stats["turns"] == 6 and stats["turns_median"] == 3
    assert stats["tokens"] > 0 and stats["tokens_median"] <= stats["tokens_p90"] <= stats["tokens_max"]


@pytest.mark.slow
def test_real_wheel_download_and_read(tmp_path):
    """Really downloads the pinned 8 MB wheel from PyPI (skipped if PyPI is unreachable)."""
    try:
        meta = fetch.fetch("chitchat", tmp_path / "chitchat")
    except RuntimeError as e:
        if "could not download" in str(e):
            pytest.skip(f"PyPI unreachable: {str(e).splitlines()[0]}")
        raise
    assert meta["sha256"] == fetch.CHITCHAT_SHA256 and meta["kind"] == "wheel"
    docs = chitchat.read_chitchat(tmp_path / "chitchat")
    assert len(docs) == 4017  # chitchat-dataset 0.9.0: conversations with two speakers
    assert all(d.text.startswith("A: ") and "\nB: " in d.text for d in docs)
