"""read_hf_dataset on local files, and its failure modes (never touches the hub)."""
import json
import os
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from lenex.data.corpus import read_corpus
from lenex.data.sources.hf import read_hf_dataset

ROWS = [{"text": f"Book number {i}.\nIt has lines.", "title": f"t{i}"} for i in range(5)]


@pytest.fixture
def jsonl(tmp_path):
    path = tmp_path / "books.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def test_jsonl_and_limit(jsonl):
    docs = read_hf_dataset("json", data_files=str(jsonl), split="train")
    assert [d.text for d in docs] == [r["text"] for r in ROWS]
    assert len({d.group for d in docs}) == 5  # one group per row
    assert len(read_hf_dataset("json", data_files=str(jsonl), split="train", limit=2)) == 2


def test_parquet_other_text_field(tmp_path):
    path = tmp_path / "books.parquet"
    pd.DataFrame(ROWS).rename(columns={"text": "body"}).to_parquet(path)
    docs = read_hf_dataset("parquet", data_files=str(path), split="train", text_field="body")
    assert [d.text for d in docs] == [r["text"] for r in ROWS]


def test_streaming(jsonl):
    docs = read_hf_dataset("json", data_files=str(jsonl), split="train", streaming=True)
    assert len(docs) == 5


def test_missing_text_field_lists_columns(jsonl):
    with pytest.raises(KeyError, match="content.*title"):
        read_hf_dataset("json", data_files=str(jsonl), split="train", text_field="content")


def test_read_corpus_hf_spec(jsonl, tmp_path):
    spec = {"source": "hf", "name": "json", "data_files": str(jsonl), "split": "train"}
    assert len(read_corpus(spec, tmp_path)) == 5


def test_offline_hub_name_fails_fast_and_clearly():
    # A fresh interpreter: huggingface_hub reads HF_HUB_OFFLINE when it is imported.
    code = textwrap.dedent("""
        from lenex.data.sources.hf import read_hf_dataset
        try:
            read_hf_dataset("lenex-test/no-such-dataset")
        except RuntimeError as e:
            print("MESSAGE:", e)
    """)
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60)
    assert "could not load Hugging Face dataset 'lenex-test/no-such-dataset'" in proc.stdout, \
        proc.stderr[-2000:]
    assert "offline?" in proc.stdout
