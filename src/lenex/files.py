"""Atomic, durable writes and JSON reads that name their file.

Every output is written under a temporary name in its own folder, synced to disk and renamed
into place once complete (then the folder is synced, so the rename survives a power loss):
an interrupted job never leaves a truncated file that Snakemake (or a reader) would take as
finished."""

from __future__ import annotations

import errno
import glob
import json
import os
import re
import shutil
import tempfile
import uuid
from pathlib import Path


def _fsync_path(path: str | Path, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0))
    try:
        os.fsync(fd)
    except OSError:  # some file systems cannot sync a directory; the rename itself is still atomic
        if not directory:
            raise
    finally:
        os.close(fd)


def atomic_write(path: str | Path, write) -> None:
    """Call write(tmp_path) and move the result to `path` only once it is complete and on disk.
    The temporary name carries the writer's pid; once the write succeeds, temporary files of the
    same target left by writers that no longer run (a job killed mid-write) are removed. A full
    disk is one error naming the file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}-", suffix=".tmp")
    os.close(fd)
    try:
        try:
            write(tmp)
            # mkstemp creates 0600 files; outputs are meant to be shared like any other file.
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            _fsync_path(tmp)
        except (OSError, RuntimeError) as err:
            _raise_if_disk_full(err, path)
            raise
        os.replace(tmp, path)
        _fsync_path(path.parent, directory=True)
        remove_stale_temporaries(path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


# torch.save reports a failed write (a full disk among others) as a RuntimeError of its zip writer.
_TORCH_WRITE_FAILED = ("inline_container.cc", "PytorchStreamWriter failed")
FULL_DISK_BYTES = 1 << 20  # less free space than this when a write fails: the disk is full


def _raise_if_disk_full(err: BaseException, path: Path) -> None:
    """Turn a write error caused by a full disk into one line naming the file (torch says only
    "[enforce fail at inline_container.cc:672] . unexpected pos ...", Python names no file)."""
    full = isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT)
    if not full and any(mark in str(err) for mark in _TORCH_WRITE_FAILED):
        full = shutil.disk_usage(path.parent).free < FULL_DISK_BYTES  # measured before the partial file goes
    if full:
        first = (str(err).splitlines() or [type(err).__name__])[0]
        raise OSError(errno.ENOSPC, f"disk full: could not write {path} ({shutil.disk_usage(path.parent).free} "
                      f"bytes free on its file system; {first[:80]}): free space and rerun") from None


# mkstemp's random part: 8 of [a-z0-9_]; a writer's pid before it (older names have none).
_TEMPORARY = re.compile(r"(?:(\d+)-)?[a-z0-9_]{8}")


def _temporary_writer(name: str, target: str) -> tuple[bool, int | None]:
    """(whether `name` is a temporary file of `target`, the pid of its writer if it says)."""
    middle = name[len(target) + 2:-len(".tmp")]
    found = _TEMPORARY.fullmatch(middle)
    return found is not None, int(found[1]) if found and found[1] else None


def remove_stale_temporaries(path: str | Path) -> list[Path]:
    """Remove the temporary files of `path` whose writer no longer runs on this host (or that
    carry no pid: written before the pid was part of the name); the ones removed."""
    path = Path(path)
    removed = []
    for candidate in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        ours, pid = _temporary_writer(candidate.name, path.name)
        if not ours or pid is not None and (pid == os.getpid() or process_runs(pid)):
            continue  # a write in progress (this process's, or another's still running)
        candidate.unlink(missing_ok=True)
        removed.append(candidate)
    return removed


def process_runs(pid: int) -> bool:
    """Whether process `pid` runs on this host (someone else's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def replace_dir(new: str | Path, target: str | Path) -> None:
    """Rename the finished folder `new` to `target` (same file system). rename() cannot
    overwrite a non-empty folder, so an old `target` is moved aside first and removed after:
    a reader sees the old or the new complete folder, never a mix."""
    new, target = Path(new), Path(target)
    old = None
    if target.exists():
        old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
        os.replace(target, old)
    os.replace(new, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def read_json(path: str | Path):
    """json.loads of a file; a syntax error (e.g. a truncated file) names the file, line and column."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: line {err.lineno} column {err.colno}: {err.msg} "
                         "(a truncated or hand-edited file? rebuild it)") from None


def read_yaml(path: str | Path):
    """yaml.safe_load of a file, as plain data only; every refusal is one line naming the file and
    line (under Snakemake's DAG build `lenex.pipeline.user_errors.refuse` ends the run with it,
    elsewhere it is a ValueError):

    - a syntax error, with line and column (PyYAML says `"<unicode string>"` when given the text,
      and Snakemake's config loader names nothing);
    - a key given twice in one mapping (PyYAML keeps the last one silently: `steps:` twice in a
      preset would train the second value unnoticed);
    - YTE template syntax (`__use_yte__`, `__definitions__`, `__variables__`, a key or value
      starting with `?`): Snakemake evaluates a config file holding `__use_yte__: true` as Python
      expressions, so a config file could run code;
    - a Python tag (`!!python/name:...`): Snakemake's loader (yaml.FullLoader) builds such objects."""
    import yaml

    path = Path(path)
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_unique_key_loader())
    except _DuplicateKey as err:
        _refuse_yaml(f"{path}: line {err.line}: duplicate key {err.key!r} (first at line {err.first}); keep one")
    except _Template as err:
        _refuse_yaml(f"{path}: line {err.line}: {err.what} is YTE template syntax, which Snakemake evaluates as "
                     "Python code; lenex's config files are plain data: write the values out")
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        tag = re.search(r"tag '(?:tag:yaml\.org,2002:)?([^']*)'", problem)
        if tag and tag[1].startswith("python/"):
            _refuse_yaml(f"{path}: {where}tag !!{tag[1]} asks for a Python object (Snakemake's loader "
                         "resolves such tags); lenex's config files are plain data: remove the tag")
        _refuse_yaml(f"{path}: {where}{problem} (not valid YAML)")


def _refuse_yaml(message: str):
    from .pipeline.user_errors import refuse  # one line under Snakemake, a ValueError elsewhere

    refuse(message)


class _DuplicateKey(Exception):
    def __init__(self, key, line: int, first: int):
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


class _Template(Exception):
    def __init__(self, what: str, line: int):
        super().__init__(what)
        self.what, self.line = what, line


#: Keys YTE (Snakemake's config templating) reads as instructions rather than data.
YTE_KEYS = ("__use_yte__", "__definitions__", "__variables__")


def _unique_key_loader():
    """yaml.SafeLoader refusing a key given twice in one mapping (merge keys `<<` may still be
    overridden, as YAML intends) and YTE template syntax."""
    import yaml

    # libyaml's parser where PyYAML was built with it (~10x faster: the DAG build reads every
    # config file); the construction below is Python either way, so the check is the same.
    class UniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        def construct_mapping(self, node, deep=False):
            first_line = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                if key in YTE_KEYS:
                    raise _Template(f"the key {key}", line)
                try:
                    if key in first_line:
                        raise _DuplicateKey(key, line, first_line[key])
                except TypeError:  # an unhashable key: SafeLoader names it itself
                    continue
                first_line[key] = line
            return super().construct_mapping(node, deep=deep)

        def construct_yaml_str(self, node):
            value = super().construct_yaml_str(node)
            if value.startswith("?"):  # YTE: `?if ...`, `?for ...` keys, `?<expression>` values
                raise _Template(f"{value[:30]!r} (a string starting with '?')", node.start_mark.line + 1)
            return value

    UniqueKeyLoader.add_constructor("tag:yaml.org,2002:str", UniqueKeyLoader.construct_yaml_str)
    return UniqueKeyLoader


def atomic_write_result(path: str | Path, result, cell: str = "", indent: int | None = 1) -> None:
    """Write an evaluator's JSON result, each record (the object, or each object of a list) with
    the digest of its content (`content_sha256`, lenex.digests.sealed), which its readers compare
    (lenex.records.checks.check_recorded); a NaN or infinity anywhere in it is an error naming the
    cell (what was evaluated) and the key, and nothing is written (JSON has no NaN; a table would
    print it as a number)."""
    from .digests import sealed
    from .records.checks import first_non_finite

    found = first_non_finite(result)
    if found:
        raise ValueError(f"{cell or path}: non-finite result ({found[0]} = {found[1]}); {path} not written")
    if isinstance(result, dict):
        result = sealed(result)
    elif isinstance(result, list):
        result = [sealed(item) if isinstance(item, dict) else item for item in result]
    atomic_write_text(path, json.dumps(result, indent=indent, allow_nan=False) + "\n")
# Metadata that would move between two renders of the same figure (render date, the plotting
# library's version) is left out, so a figure re-rendered from the same numbers is byte-identical.
FIXED_FIGURE_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}


def save_figure(fig, path: str | Path, **options) -> None:
    """Write a matplotlib figure atomically, its format from the suffix (png, pdf), fixed metadata."""
    fmt = Path(path).suffix[1:]
    if fmt not in FIXED_FIGURE_METADATA:
        raise ValueError(f"figure {path}: unknown format {fmt!r}; known: {', '.join(FIXED_FIGURE_METADATA)}")
    atomic_write(path, lambda tmp: fig.savefig(tmp, format=fmt, metadata=FIXED_FIGURE_METADATA[fmt], **options))
