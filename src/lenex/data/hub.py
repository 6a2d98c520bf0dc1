"""The papers' real evaluation and training corpora, read from the Hugging Face hub by
name on a networked machine, or from a local copy in the hub's schema.

One reader per corpus, ``read_<corpus>(spec) -> list[Document]``, registered in
``HUB_READERS`` (``@HUB_READERS.register(name=...)``, lenex.registry). Spec keys every reader accepts:
  ``name``, ``config``, ``split``   hub dataset (defaults: the papers' corpus, below)
  ``path``                          a local json/jsonl(.gz/.zst)/parquet file, a folder of
                                    them, or a glob, in the hub's schema: used instead
                                    of the hub name
  ``data_files``                    the same, in ``datasets.load_dataset`` form (a
                                    str, list, or {split: files}); ``format`` names the
                                    builder (json / parquet) when it cannot be inferred
  ``streaming``                     read lazily (default on for the large corpora)
  ``limit``                         stop after this many documents
Rows are read through ``datasets.load_dataset`` as in ``sources.hf.read_hf_dataset``; local
files are always streamed (nothing is converted or cached).

When the hub cannot be reached (``HF_HUB_OFFLINE=1``, no network) or the name is
unknown, the reader raises one RuntimeError naming the dataset and asking for a local
``path``. ``HUB_NOTES`` says, per corpus, where the data lives now and what to download.
"""
from __future__ import annotations

import hashlib
import heapq
import logging
import random
from collections.abc import Callable, Iterable, Iterator
from glob import glob
from pathlib import Path
from typing import Any

from ..registry import Registry
from .documents import Document, strip_gutenberg_boilerplate

log = logging.getLogger(__name__)

#: The readers by corpus name (the ``corpus:`` of a ``source: hub`` spec), each registered below.
HUB_READERS = Registry("hub corpus")

HUB_NOTES = {
    "qmsum": (
        "QMSum as packaged by SCROLLS: hub `tau/scrolls`, config `qmsum`, field `input` = "
        "query, a blank line, then the meeting transcript. `tau/scrolls` was published with a "
        "loading script (scrolls.py + one zip per task), which `datasets` >= 4 no longer "
        "runs; if it fails, download qmsum.zip from https://www.scrolls-benchmark.com "
        "(jsonl rows: id, pid, input, output) and pass `path`."),
    "arxiv": (
        "arXiv scientific papers of Cohan et al. 2018: hub `scientific_papers` config `arxiv` "
        "(moved to `armanc/scientific_papers`), field `article`. It is a loading-script "
        "dataset and no longer loads with recent `datasets`; convert the original "
        "arxiv-dataset (jsonl with `article_text` lists) or an old parquet export to rows "
        "with an `article` string and pass `path`."),
    "openwebtext2": (
        "The Pile's OpenWebText2 subset (`meta.pile_set_name` == 'OpenWebText2'). "
        "`EleutherAI/pile` has been taken off the hub: pass local Pile shards "
        "(jsonl or jsonl.zst, rows {text, meta: {pile_set_name}}) as `path`."),
    "github": (
        "The Pile's GitHub subset (`meta.pile_set_name` == 'Github'). `EleutherAI/pile` has "
        "been taken off the hub: pass local Pile shards as `path`."),
    "narrativeqa": (
        "NarrativeQA stories: hub `deepmind/narrativeqa` (parquet), nested field "
        "`document.text`, one document per `document.id` (rows repeat a story per question)."),
    "pile_mix": (
        "The LEX §4.1 training mixture: Pile subsets Books3, OpenWebText2, StackExchange, "
        "PubMed Abstracts, Wikipedia (en), Gutenberg (PG-19), BookCorpus2, NIH ExPorter, "
        "Pile-CC. `EleutherAI/pile` is gone from the hub (copies without Books3 exist under "
        "other names): pass local Pile shards as `path`."),
}

# `meta.pile_set_name` values of the subsets LEX §4.1 trains on.
LEX_PILE_SUBSETS = ("Books3", "OpenWebText2", "StackExchange", "PubMed Abstracts",
                    "Wikipedia (en)", "Gutenberg (PG-19)", "BookCorpus2", "NIH ExPorter",
                    "Pile-CC")
_FORMATS = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}
_COMPRESSIONS = ("", ".gz", ".zst", ".bz2", ".xz")


# ---------------------------------------------------------------- rows from hub or disk
def local_files(path: str) -> list[str]:
    """The data files a ``path`` names: a file, a folder (its json/jsonl/parquet files,
    compressed or not, recursively) or a glob."""
    p = Path(path)
    if p.is_file():
        return [str(p)]
    if p.is_dir():
        files = [str(f) for f in sorted(p.rglob("*")) if f.is_file() and _format_of(str(f))]
    else:
        files = sorted(f for f in glob(path, recursive=True) if Path(f).is_file())
    if not files:
        raise FileNotFoundError(f"no json/jsonl/parquet data files at {path}")
    return files


def _format_of(filename: str) -> str | None:
    for compression in _COMPRESSIONS:
        for suffix, builder in _FORMATS.items():
            if filename.endswith(suffix + compression):
                return builder
    return None


def _first_file(data_files: Any) -> str:
    if isinstance(data_files, dict):
        data_files = next(iter(data_files.values()))
    if isinstance(data_files, (list, tuple)):
        data_files = data_files[0]
    return str(data_files)


def load_rows(corpus: str, spec: dict, name: str, config: str | None, split: str,
              streaming: bool) -> Iterable[dict]:
    """Rows of the hub dataset, or of the local copy the spec names instead."""
    import datasets  # slow import; only these readers need it

    data_files = spec.get("data_files")
    if spec.get("path") is not None:
        data_files = local_files(str(spec["path"]))
    if data_files is not None:
        builder = spec.get("format") or _format_of(_first_file(data_files))
        if builder is None:
            raise ValueError(f"{corpus}: cannot tell the format of {_first_file(data_files)}; "
                             "set `format: json` or `format: parquet`")
        # Plain file lists load as split "train"; a {split: files} dict keeps its names.
        local_split = split if isinstance(data_files, dict) else "train"
        try:
            rows = datasets.load_dataset(builder, data_files=data_files, split=local_split,
                                         streaming=True)
        except Exception as e:
            raise RuntimeError(f"{corpus}: could not read local files {data_files!r} as "
                               f"{builder}: {type(e).__name__}: {e}") from e
        return _naming_files(rows, corpus, data_files, builder)
    name = spec.get("name", name)
    config = spec.get("config", config)
    try:
        return datasets.load_dataset(name, config, split=split, streaming=streaming)
    except Exception as e:  # offline, unknown name, loading script: many types, one message
        raise RuntimeError(
            f"{corpus}: could not load Hugging Face dataset {name!r} (config={config!r}, "
            f"split={split!r}): {type(e).__name__}: {e}. Pass a local copy in the hub's "
            f"schema with `path:` (json/jsonl/parquet). Note: {HUB_NOTES[corpus]}"
        ) from e


def _naming_files(rows: Iterable[dict], corpus: str, data_files: Any,
                  builder: str) -> Iterator[dict]:
    """Streamed files are parsed while iterating: name them if one turns out malformed."""
    try:
        yield from rows
    except (ValueError, OSError) as e:  # pyarrow's ArrowInvalid is a ValueError
        raise ValueError(f"{corpus}: malformed {builder} in {data_files!r}: "
                         f"{type(e).__name__}: {e}") from e


def get_field(row: dict, field: str) -> Any:
    """``row["document"]["text"]`` for ``field="document.text"``; a missing key is a
    KeyError that lists what the row has at that level."""
    value: Any = row
    for i, key in enumerate(field.split(".")):
        if not isinstance(value, dict) or key not in value:
            where = ".".join(field.split(".")[:i]) or "row"
            have = sorted(value) if isinstance(value, dict) else type(value).__name__
            raise KeyError(f"field {field!r}: {where} has no {key!r} (it has {have})")
        value = value[key]
    return value


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def documents_from_rows(corpus: str, rows: Iterable[dict], text_of: Callable[[dict], str],
                        key_of: Callable[[dict, str], str],
                        limit: int | None = None) -> list[Document]:
    """One Document per distinct key (the first row wins), in stream order; each is its
    own split group. Empty texts are skipped."""
    docs: list[Document] = []
    seen: set[str] = set()
    for row in rows:
        if limit is not None and len(docs) >= limit:
            break
        text = (text_of(row) or "").strip()
        if not text:
            continue
        key = key_of(row, text)
        if key in seen:
            continue
        seen.add(key)
        doc_id = f"{corpus}/{key}"
        docs.append(Document(doc_id, doc_id, text))
    if not docs:
        raise ValueError(f"{corpus}: no non-empty documents read")
    log.info("%s: %d documents", corpus, len(docs))
    return docs


def _opts(spec: dict, split: str, streaming: bool) -> tuple[str, bool, int | None]:
    return spec.get("split", split), spec.get("streaming", streaming), spec.get("limit")


# ---------------------------------------------------------------- one reader per corpus
def qmsum_transcript(model_input: str) -> str:
    """SCROLLS puts the query first and the transcript after the first blank line
    (``query\\n\\ntranscript``); keep the transcript."""
    _query, sep, transcript = model_input.partition("\n\n")
    if not sep:
        raise ValueError(f"QMSum input has no blank line after the query: {model_input[:80]!r}")
    return transcript


@HUB_READERS.register(name="qmsum")
def read_qmsum(spec: dict) -> list[Document]:
    """One document per distinct meeting transcript (SCROLLS rows repeat a meeting for
    each of its queries; rows carry no meeting id, so the transcript's hash is the key).
    Split: the LEX paper does not name it; default ``test``."""
    split, streaming, limit = _opts(spec, "test", False)
    rows = load_rows("qmsum", spec, "tau/scrolls", "qmsum", split, streaming)
    field = spec.get("text_field", "input")
    return documents_from_rows("qmsum", rows, lambda r: qmsum_transcript(get_field(r, field)),
                               lambda r, text: text_digest(text), limit)


@HUB_READERS.register(name="arxiv")
def read_arxiv(spec: dict) -> list[Document]:
    """Cohan et al. 2018 arXiv papers, field ``article``, split ``test`` (the segmented-
    sequences paper reports on its test set)."""
    split, streaming, limit = _opts(spec, "test", True)
    rows = load_rows("arxiv", spec, "scientific_papers", "arxiv", split, streaming)
    field = spec.get("text_field", "article")
    return documents_from_rows("arxiv", rows, lambda r: get_field(r, field),
                               lambda r, text: text_digest(text), limit)


def _pile_subset_reader(corpus: str, set_name: str):
    def read(spec: dict) -> list[Document]:
        split, streaming, limit = _opts(spec, "test", True)
        rows = load_rows(corpus, spec, "EleutherAI/pile", None, split, streaming)
        wanted = (r for r in rows if get_field(r, "meta.pile_set_name") == set_name)
        return documents_from_rows(corpus, wanted, lambda r: get_field(r, "text"),
                                   lambda r, text: text_digest(text), limit)
    read.__name__ = f"read_{corpus}"
    read.__doc__ = (f"Pile documents whose ``meta.pile_set_name`` is {set_name!r}, "
                    "deduplicated by text; default split ``test`` for a hub copy.")
    return read


read_openwebtext2 = HUB_READERS.register(_pile_subset_reader("openwebtext2", "OpenWebText2"), name="openwebtext2")
read_github = HUB_READERS.register(_pile_subset_reader("github", "Github"), name="github")


@HUB_READERS.register(name="narrativeqa")
def read_narrativeqa(spec: dict) -> list[Document]:
    """NarrativeQA stories (``document.text``), one per ``document.id``, Gutenberg
    licence stripped (many stories are Gutenberg books). Default split ``test``."""
    split, streaming, limit = _opts(spec, "test", True)
    rows = load_rows("narrativeqa", spec, "deepmind/narrativeqa", None, split, streaming)
    return documents_from_rows(
        "narrativeqa", rows, lambda r: strip_gutenberg_boilerplate(get_field(r, "document.text")),
        lambda r, text: str(get_field(r, "document.id")), limit)


# ---------------------------------------------------------------- LEX training mixture
def mixture_targets(weights: dict[str, float], char_budget: int) -> dict[str, int]:
    """Characters per subset: the budget split in proportion to the weights (rounded
    down; the remainder goes to the largest weights first, so targets sum to the budget)."""
    unknown = sorted(set(weights) - set(LEX_PILE_SUBSETS))
    if unknown:
        raise ValueError(f"pile_mix weights name subsets outside LEX §4.1: {unknown}; "
                         f"expected `meta.pile_set_name` values among {list(LEX_PILE_SUBSETS)}")
    if any(not isinstance(w, (int, float)) or w < 0 for w in weights.values()):
        raise ValueError(f"pile_mix weights must be non-negative numbers: {weights}")
    total = sum(weights.values())
    if total <= 0 or char_budget <= 0:
        raise ValueError("pile_mix needs a positive char_budget and at least one positive weight")
    exact = {s: char_budget * w / total for s, w in weights.items() if w > 0}
    targets = {s: int(x) for s, x in exact.items()}
    by_remainder = sorted(exact, key=lambda s: (-(exact[s] - targets[s]), s))
    for s in by_remainder[: char_budget - sum(targets.values())]:
        targets[s] += 1
    return targets


class _KeyedSample:
    """The documents with the smallest random keys whose characters first reach
    ``target``, kept in bounded memory while streaming (a max-heap on the key)."""

    def __init__(self, target: int):
        self.target, self.chars, self.heap = target, 0, []
        self.seen_chars = 0

    def offer(self, key: float, doc_id: str, text: str) -> None:
        self.seen_chars += len(text)
        heapq.heappush(self.heap, (-key, doc_id, text))
        self.chars += len(text)
        while self.heap and self.chars - len(self.heap[0][2]) >= self.target:
            self.chars -= len(heapq.heappop(self.heap)[2])

    def take(self) -> list[tuple[str, str]]:
        """(doc_id, text) in key order; the last text is cut so the total is exact."""
        out, need = [], self.target
        for neg_key, doc_id, text in sorted(self.heap, reverse=True):
            if need <= 0:
                break
            out.append((doc_id, text[:need]))
            need -= len(out[-1][1])
        return out


def sample_mixture(records: Iterable[tuple[str, str]], weights: dict[str, float],
                   char_budget: int, seed: int = 0) -> list[Document]:
    """Sample (pile_set_name, text) records so each subset gets exactly its share of
    ``char_budget`` characters: documents are drawn uniformly at random (a seeded key per
    record, taken in key order) and the last one drawn is cut to fit. Records of other
    subsets are skipped; doc ids carry the record's index in the stream. A subset whose
    records hold fewer characters than its share is an error."""
    targets = mixture_targets(weights, char_budget)
    samples = {s: _KeyedSample(t) for s, t in targets.items()}
    rng = random.Random(seed)
    for index, (set_name, text) in enumerate(records):
        if set_name in samples and text:
            samples[set_name].offer(rng.random(), f"pile/{set_name}/{index}", text)
    short = {s: (x.seen_chars, x.target) for s, x in samples.items() if x.seen_chars < x.target}
    if short:
        raise ValueError("pile_mix: not enough text for the weights (subset: have, need "
                         f"characters) {short}; add shards or lower char_budget")
    docs = []
    for set_name in sorted(samples):
        docs += [Document(doc_id, doc_id, text) for doc_id, text in samples[set_name].take()]
    log.info("pile_mix: %d documents, %s", len(docs),
             ", ".join(f"{s} {t} chars" for s, t in sorted(targets.items())))
    return docs


def pile_records(rows: Iterable[dict]) -> Iterator[tuple[str, str]]:
    for row in rows:
        yield get_field(row, "meta.pile_set_name"), get_field(row, "text")


@HUB_READERS.register(name="pile_mix")
def read_pile_mix(spec: dict) -> list[Document]:
    """The LEX §4.1 mixture from Pile rows: spec ``weights`` ({pile_set_name: weight},
    only LEX's nine subsets), ``char_budget`` (characters in all), ``seed`` (default 0)."""
    for key in ("weights", "char_budget"):
        if key not in spec:
            raise KeyError(f"pile_mix spec needs {key!r} (weights: {{pile_set_name: weight}}, "
                           "char_budget: total characters)")
    targets = mixture_targets(spec["weights"], int(spec["char_budget"]))  # fail before I/O
    split, streaming, _ = _opts(spec, "train", True)
    rows = load_rows("pile_mix", spec, "EleutherAI/pile", None, split, streaming)
    log.info("pile_mix targets: %s", targets)
    return sample_mixture(pile_records(rows), spec["weights"], int(spec["char_budget"]),
                          int(spec.get("seed", 0)))
