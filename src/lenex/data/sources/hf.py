"""Any dataset ``datasets.load_dataset`` reads (``name``: a hub name on a networked machine, or
"json"/"parquet"/"text" with ``data_files`` for local files): one document and group per row."""
from __future__ import annotations

from typing import Any

from ..documents import Document, strip_gutenberg_boilerplate
from . import SOURCES, Local

_OPTIONS = ("config", "split", "text_field", "data_files", "streaming", "limit")


def read_hf_dataset(name: str, config: str | None = None, split: str = "test",
                    text_field: str = "text", data_files: Any = None,
                    streaming: bool = False, limit: int | None = None) -> list[Document]:
    """The non-empty ``text_field`` of each row of split ``split``, up to ``limit`` rows."""
    import datasets  # slow import; only this reader needs it

    try:
        ds = datasets.load_dataset(name, config, split=split, data_files=data_files,
                                   streaming=streaming)
    except Exception as e:  # hub/network errors come in many types; keep the cause
        raise RuntimeError(
            f"could not load Hugging Face dataset {name!r} (config={config!r}, "
            f"split={split!r}) (offline? set a local path): {type(e).__name__}: {e}"
        ) from e
    columns = ds.column_names  # None for streaming datasets with unknown features
    if columns is not None and text_field not in columns:
        raise KeyError(f"text field {text_field!r} not in dataset {name!r}; "
                       f"available columns: {columns}")
    docs = []
    for i, row in enumerate(ds):
        if limit is not None and i >= limit:
            break
        if text_field not in row:  # streaming datasets may not know their columns
            raise KeyError(f"text field {text_field!r} not in dataset {name!r}; "
                           f"available columns: {sorted(row)}")
        text = strip_gutenberg_boilerplate(row[text_field] or "")
        if text:
            doc_id = f"{name}/{split}/{i}"
            docs.append(Document(doc_id, doc_id, text))
    if not docs:
        raise ValueError(f"dataset {name!r} split {split!r} has no non-empty {text_field!r}")
    return docs


def read(spec, resources_dir):
    return read_hf_dataset(spec["name"], **{k: spec[k] for k in _OPTIONS if k in spec})


SOURCE = SOURCES.register(Local(read), name="hf")
