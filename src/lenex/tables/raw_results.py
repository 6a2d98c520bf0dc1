"""Raw results: every recorded file a paper's tables, figures and pages are rendered from, in one
compact JSON-lines file per paper and preset (`results/<preset>/raw/<paper>.jsonl`), so that
`make tables` re-renders them byte-identically without the evaluation outputs (docs/raw-results.md).

    python -m lenex.tables.raw_results collect --out results/tiny/raw/lex.jsonl --files R.json ..

One line per record, tidy: an evaluation's fields (paper, variant, corpus, mask, length, ppl,
tokens, scored_tokens_sha256, checkpoint, model_config, git_rev, device, date, seed ...) beside
`file`, the path the pipeline wrote it to, and `item`, its place in that file when the file holds
a list (a receptive-field model's lengths). A corpus's meta.json (the data-card facts headers
quote) is one line too, without its document index (the per-split lists of document ids, offsets
and groups, which only readers of the token files use: 0.6 MB of the 0.7 MB LEX raw results at
tiny). Everything else comes back exactly: floats round-trip, key order is kept.

Renderers read recorded inputs through `read_recorded(path)`: from the file itself, or, when the
environment variable LENEX_RAW names raw-results files (the workflow's `from_raw` mode), from
those files only; a path they do not hold is then an error, never a stale file on disk.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
from pathlib import Path

from ..cli import run_cli
from ..files import atomic_write_text, read_json

RAW_ENV = "LENEX_RAW"
_PLACE = ("file", "item", "items")


def card_facts(meta: dict) -> dict:
    """A corpus meta.json without its document index: each split's list-valued fields."""
    splits = {name: {k: v for k, v in split.items() if not isinstance(v, list)}
              for name, split in meta.get("splits", {}).items()}
    return {**meta, "splits": splits} if "splits" in meta else meta


def file_lines(path: str, content) -> list[dict]:
    """The raw-results lines of one recorded file."""
    if Path(path).name == "meta.json" and isinstance(content, dict):
        content = card_facts(content)
    if isinstance(content, dict):
        return [{"file": path, **_checked(path, content)}]
    if isinstance(content, list) and all(isinstance(r, dict) for r in content):
        if not content:
            return [{"file": path, "items": 0}]
        return [{"file": path, "item": i, **_checked(path, record)} for i, record in enumerate(content)]
    raise ValueError(f"{path}: a recorded file must hold a JSON object or a list of objects")


def _checked(path: str, record: dict) -> dict:
    clash = [k for k in _PLACE if k in record]
    if clash:
        raise ValueError(f"{path}: a recorded record may not have the key(s) {clash} (the raw file's own)")
    return record


def collect(paths: list[str]) -> str:
    """The raw-results text of these files, sorted by path (one line per record)."""
    return text_of({path: read_json(path) for path in set(paths)})


def text_of(files: dict[str, object]) -> str:
    """Raw-results lines of recorded files (path -> content), sorted by path."""
    lines = [json.dumps(line, ensure_ascii=False, separators=(",", ":"))
             for path in sorted(files) for line in file_lines(path, files[path])]
    return "".join(line + "\n" for line in lines)


def merge(parts: list[str]) -> str:
    """The raw results of a reference run made in recorded parts (rule raw_results_part): the
    parts' recorded files together, each exactly once, in `collect`'s order and form, so the
    merged file is the one a run in one go would have written."""
    files, source = {}, {}
    for part in parts:
        for path, content in parse(Path(part).read_text(encoding="utf-8"), part).items():
            if path in files:
                raise ValueError(f"{path} is in two parts: {source[path]} and {part}")
            files[path], source[path] = content, part
    return text_of(files)


def parse(text: str, source: str = "raw results") -> dict[str, object]:
    """path -> the JSON the pipeline wrote there, rebuilt from raw-results lines."""
    files: dict[str, object] = {}
    for number, line in enumerate(text.splitlines(), 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{source} line {number} is not valid JSON: {err}") from err
        path = record.pop("file", None)
        if not isinstance(path, str):
            raise ValueError(f"{source} line {number} has no `file`")
        if record.pop("items", None) == 0:
            files[path] = []
        elif "item" in record:
            item = record.pop("item")
            records = files.setdefault(path, [])
            if not isinstance(records, list) or item != len(records):
                raise ValueError(f"{source} line {number}: item {item} of {path} out of order")
            records.append(record)
        elif path in files:
            raise ValueError(f"{source} line {number}: {path} recorded twice")
        else:
            files[path] = record
    return files


@functools.cache
def _store(raw_files: str) -> dict[str, object]:
    files: dict[str, object] = {}
    for raw in raw_files.split():
        if not Path(raw).exists():
            raise FileNotFoundError(f"raw results {raw} not found (written by rule raw_results of a pipeline run)")
        files.update(parse(Path(raw).read_text(encoding="utf-8"), raw))
    return files


def read_recorded(path) -> object:
    """A recorded input of a renderer (evaluation result, corpus meta.json): from LENEX_RAW's
    raw-results files when it is set, else from the file."""
    raw_files = os.environ.get(RAW_ENV, "").strip()
    if raw_files:
        store = _store(raw_files)
        if str(path) not in store:
            raise KeyError(f"{path} is not among the raw results in {raw_files}; re-collect them (rule raw_results)")
        return store[str(path)]
    return read_json(path)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    gather = sub.add_parser("collect", help="write the raw results of these recorded files")
    gather.add_argument("--files", nargs="*", default=[], help="recorded JSON files (evaluations, meta.json)")
    gather.add_argument("--out", required=True)
    join = sub.add_parser("merge", help="join the raw results of a reference run's recorded parts")
    join.add_argument("--parts", nargs="+", required=True, help="raw results of each part (rule raw_results_part)")
    join.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    atomic_write_text(args.out, collect(args.files) if args.command == "collect" else merge(args.parts))


if __name__ == "__main__":
    run_cli(main)
