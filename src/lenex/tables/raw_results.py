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

Each line carries `record_sha256`, the digest of the record it was collected from (its JSON in
this file's compact form): a line edited afterwards no longer matches it, and a line that differs
from the evaluation file still on disk is named with that file (lines of raw results from before
the digest are compared by content where the file is there).

Renderers read recorded inputs through `read_recorded(path)`: from the file itself, or, when the
environment variable LENEX_RAW names raw-results files (the workflow's `from_raw` mode), from
those files only; a path they do not hold is then an error, never a stale file on disk. Either way
every number is checked first (lenex.records.checks), a record's own digest too, and each record
knows its file (`Recorded.source`), for the errors of the table builders.

Bound to what they were computed from: an evaluation records the digests of the corpus files it
scored (`data_sha256`: its meta.json's `meta_sha256` and its split's `sha256`); where that
meta.json is on disk it must still say them (`check_inputs_current`: read by the table jobs, and
by rule raw_results' input function for every collected record at DAG build, where a meta.json
newer than the record is left to Snakemake's mtime rerun), so a corpus prepared again or restored
after its evaluations, even with its old mtime, is one error naming both files.

Stored once, compressed: a raw-results file whose name ends in .xz (the committed parts of a
reference run, lenex.records.stored) is read as the text it holds, and LENEX_RAW may name a
paper's parts together in place of one whole-run file (lenex.pipeline.recorded.Recorded.stored_raw).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
from pathlib import Path

from ..cli import run_cli
from ..files import read_json
from ..records.checks import check_recorded
from ..records.stored import read_text, write_text

RAW_ENV = "LENEX_RAW"
DIGEST = "record_sha256"
_PLACE = ("file", "item", "items", DIGEST)


def record_digest(record: dict) -> str:
    """sha256 of a record's JSON as raw results write it (keys in their order, floats as repr)."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
        return [{"file": path, DIGEST: record_digest(content), **_checked(path, content)}]
    if isinstance(content, list) and all(isinstance(r, dict) for r in content):
        if not content:
            return [{"file": path, "items": 0}]
        return [{"file": path, "item": i, DIGEST: record_digest(record), **_checked(path, record)}
                for i, record in enumerate(content)]
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
    merged file is the one a run in one go would have written. Each line is kept as its part
    holds it (with its digest, or without one where the part predates digests)."""
    groups, source = {}, {}
    for part in parts:
        text = read_text(part)
        parse(text, part)  # every line checked (form, order, digest) before any is kept
        for path, lines in _lines_by_file(text).items():
            if path in groups:
                raise ValueError(f"{path} is in two parts: {source[path]} and {part}")
            groups[path], source[path] = lines, part
    return "".join(line + "\n" for path in sorted(groups) for line in groups[path])


def _lines_by_file(text: str) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for line in text.splitlines():
        groups.setdefault(json.loads(line)["file"], []).append(line)
    return groups


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
        digest = record.pop(DIGEST, None)
        if digest is not None:
            item = {k: v for k, v in record.items() if k != "item"}
            if record_digest(item) != digest:
                raise ValueError(f"{source} line {number} ({path}) was edited after it was collected: its "
                                 f"{DIGEST} is not that of its record; collect it again (rule raw_results)")
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


def read_raw(paths: list[str], over: list[str] = ()) -> dict[str, object]:
    """path -> content over several raw-results files (one whole-run file, or a reference run's
    parts: together what `merge` joins, so a file in two of them is an error), with the re-runs'
    (`over`, rule table_rerun) laid over them: a re-run's evaluations and training curves replace
    the reference run's records at the same paths. A corpus's meta.json stays the reference run's
    (a re-run's page refuses one whose corpus differs, lenex.tables.rerun; two re-runs' metas of one
    corpus may differ in what they record of its fetch, as the source's fetch time). Two re-runs
    holding one path they lay over must hold the same content there."""
    files: dict[str, object] = {}
    held_by: dict[str, str] = {}
    for raw in paths:
        for path, content in _parsed(raw).items():
            if path in held_by:
                raise ValueError(f"{path} is in two raw-results files: {held_by[path]} and {raw}")
            files[path], held_by[path] = content, raw
    laid: dict[str, tuple[str, object]] = {}  # path -> the first re-run holding it, its content there
    for raw in over:
        for path, content in _parsed(raw).items():
            if Path(path).name == "meta.json" and path in files:
                continue  # the reference run's stays
            if path in laid and laid[path][1] != content:
                raise ValueError(f"{path} differs between the re-runs {laid[path][0]} and {raw}")
            laid.setdefault(path, (raw, content))
            files[path] = content
    return files


def _parsed(raw: str) -> dict[str, object]:
    if not Path(raw).exists():
        raise FileNotFoundError(f"raw results {raw} not found (written by rule raw_results of a pipeline run)")
    return parse(read_text(raw), raw)


#: In LENEX_RAW, what separates the raw results from the re-runs laid over them (read_raw's `over`).
OVER = "+"


def raw_env_value(paths: list[str], over: list[str] = ()) -> str:
    """LENEX_RAW's value naming these raw results and the re-runs laid over them."""
    return " ".join([*paths, *([OVER, *over] if over else [])])


def raw_layers(value: str) -> tuple[list[str], list[str]]:
    """(raw results, re-runs laid over them) of a LENEX_RAW value (raw_env_value's inverse)."""
    names = value.split()
    cut = names.index(OVER) if OVER in names else len(names)
    return names[:cut], names[cut + 1:]


def laid_over() -> list[str]:
    """The re-runs LENEX_RAW lays over the raw results (none when unset or none is laid over)."""
    return raw_layers(os.environ.get(RAW_ENV, ""))[1]


@functools.cache
def _store(raw_files: str) -> dict[str, object]:
    """read_raw of the files LENEX_RAW names (raw_env_value), once per process."""
    return read_raw(*raw_layers(raw_files))


def on_disk(path: str) -> object:
    """A recorded file as raw results hold it (a meta.json's card facts), for comparing with them."""
    content = read_json(path)
    return card_facts(content) if Path(path).name == "meta.json" and isinstance(content, dict) else content


def check_against_disk(path: str, content, raw: str) -> None:
    """Raw results agree with the evaluation file they were collected from, where it is on disk."""
    if not Path(path).is_file():
        return
    disk = on_disk(path)
    if disk != content:
        raise ValueError(f"{raw} holds another {path} than the file on disk ({first_difference(content, disk)}): "
                         "the raw line was edited, or the file changed after it was collected; "
                         f"collect the raw results again (delete {raw}, rule raw_results)")


def check_collected(raw: str) -> None:
    """A normal run's check of raw results it collected before (rule raw_results' input function):
    every line still has its digest's content, and equals its evaluation file wherever that file
    is on disk and not newer (a newer file is collected again by the rule, so it is no error)."""
    path = Path(raw)
    if not path.is_file():
        return
    collected_at = path.stat().st_mtime
    for recorded, content in parse(read_text(path), raw).items():
        source = Path(recorded)
        if source.is_file() and source.stat().st_mtime <= collected_at:
            check_against_disk(recorded, content, raw)
            for record, where in _each_record(content, recorded):
                check_inputs_current(record, where, source.stat().st_mtime)


def first_difference(raw, disk, where: str = "") -> str:
    """'item 0 ppl: 500 in the raw results, 1059.5 on disk', the first field where two JSON values differ."""
    if isinstance(raw, dict) and isinstance(disk, dict):
        for key in [*raw, *(k for k in disk if k not in raw)]:
            if raw.get(key, "(none)") != disk.get(key, "(none)"):
                return first_difference(raw.get(key, "(none)"), disk.get(key, "(none)"), f"{where}{key} ")
    if isinstance(raw, list) and isinstance(disk, list) and len(raw) == len(disk):
        for index, (a, b) in enumerate(zip(raw, disk)):
            if a != b:
                return first_difference(a, b, f"{where}item {index} ")
    return f"{where.strip() or 'content'}: {raw!r:.60} in the raw results, {disk!r:.60} on disk"


class Recorded(dict):
    """A recorded object (an evaluation's record) that knows the file it was read from."""
    __slots__ = ("source",)

    def __init__(self, content: dict, source: str):
        super().__init__(content)
        self.source = source


def _told_source(content, path: str):
    if isinstance(content, dict):
        return Recorded(content, path)
    if isinstance(content, list):
        return [Recorded(r, f"{path} item {i}") if isinstance(r, dict) else r for i, r in enumerate(content)]
    return content


@functools.lru_cache(maxsize=256)
def _meta_digests(meta_file: str, size: int, mtime_ns: int) -> dict[str, str]:
    """{file path: digest} a prepared corpus's meta.json records now: its own and its splits'."""
    meta = read_json(meta_file)
    folder = Path(meta_file).parent
    digests = {str(Path(meta_file)): meta.get("meta_sha256")} if isinstance(meta, dict) else {}
    for info in (meta.get("splits") or {}).values() if isinstance(meta, dict) else ():
        if isinstance(info, dict) and "file" in info:
            digests[str(folder / info["file"])] = info.get("sha256")
    return digests


def check_inputs_current(record: dict, path: str, written_at: float | None = None) -> None:
    """The corpus files an evaluation record says it scored (`data_sha256`) still have those
    digests, by their meta.json where it is on disk (no token file is read). Given the record's
    mtime (`written_at`, at DAG build), a meta.json newer than it is left to Snakemake, which reruns
    the evaluation for it; the check is for one that looks older (restored with its mtime)."""
    recorded = record.get("data_sha256")
    if not isinstance(recorded, dict):
        return
    for used, digest in recorded.items():
        meta_file = used if Path(used).name == "meta.json" else str(Path(used).parent / "meta.json")
        meta = Path(meta_file)
        if not meta.is_file():
            continue
        stat = meta.stat()
        if written_at is not None and stat.st_mtime > written_at:
            continue
        current = _meta_digests(meta_file, stat.st_size, stat.st_mtime_ns).get(str(Path(used)))
        if current is not None and current != digest:
            raise ValueError(f"{path} was computed from {used} with sha256 {digest[:12]}..., but {meta_file} now "
                             f"records {current[:12]}... (the corpus was prepared again or restored after the "
                             f"evaluation): rerun it with `snakemake --cores 2 --force {path.split(' item ')[0]}` "
                             "(what reads it then reruns)")


def _each_record(content, path: str):
    if isinstance(content, dict):
        yield content, path
    elif isinstance(content, list):
        for index, item in enumerate(content):
            if isinstance(item, dict):
                yield item, f"{path} item {index}"


def holds_recorded(path) -> bool:
    """Whether `read_recorded(path)` has it to read: LENEX_RAW's raw results hold it (when set), else
    the file is on disk. For what a run may not have recorded (a run's training curves, recorded
    since lenex.training.curve: the committed runs before it hold none)."""
    raw_files = os.environ.get(RAW_ENV, "").strip()
    return str(path) in _store(raw_files) if raw_files else Path(path).is_file()


def read_recorded(path) -> object:
    """A recorded input of a renderer (evaluation result, corpus meta.json): from LENEX_RAW's
    raw-results files when it is set (compared with the file where it is on disk), else from the
    file; its numbers checked (lenex.records.checks) either way."""
    raw_files = os.environ.get(RAW_ENV, "").strip()
    if raw_files:
        store = _store(raw_files)
        if str(path) not in store:
            raise KeyError(f"{path} is not among the raw results in {raw_files}; re-collect them (rule raw_results)")
        content = store[str(path)]
        check_against_disk(str(path), content, raw_files)
        check_recorded(content, f"{path} (raw results {raw_files})", str(path))
    else:
        content = read_json(path)
        check_recorded(content, str(path))
    for record, where in _each_record(content, str(path)):
        check_inputs_current(record, where)
    return _told_source(content, str(path))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    gather = sub.add_parser("collect", help="write the raw results of these recorded files")
    gather.add_argument("--files", nargs="*", default=[], help="recorded JSON files (evaluations, meta.json)")
    gather.add_argument("--out", required=True, help="the raw-results file (stored compressed if it ends in .xz)")
    join = sub.add_parser("merge", help="join the raw results of a reference run's recorded parts")
    join.add_argument("--parts", nargs="+", required=True, help="raw results of each part (rule raw_results_part)")
    join.add_argument("--out", required=True, help="the joined file (stored compressed if it ends in .xz)")
    args = parser.parse_args(argv)
    write_text(args.out, collect(args.files) if args.command == "collect" else merge(args.parts))


if __name__ == "__main__":
    run_cli(main)
