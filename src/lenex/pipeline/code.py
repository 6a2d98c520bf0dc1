"""Code as an input: a job reruns when the library code it runs changes, and only then.

A job's code is what its entry point (`python -m lenex.<module>`) imports from lenex, read from the
source without importing it (`import` and `from ... import` statements anywhere in a file, followed
file by file), plus the package data those files name (the table templates, paper_results.csv),
plus the modules a registry defined in those files imports by itself (lenex.registry: `members=
"lenex.<package>.*"`, every module of a package, which no import statement names; `discovered_files`).
One exception keeps a scheme's edit to its own models: the position-scheme registry imports every
scheme, but a job counts only the scheme of the model it trains or scores (`scheme_files`), and a file that imports a scheme's code by name (Figures 8-10
draw the Sandwich profile) counts that scheme. So editing ALiBi's slopes reruns the ALiBi models'
trainings and evaluations and what reads them; editing the table renderer re-renders the tables.

The hash covers the files' paths relative to src/lenex and their bytes, so a moved checkout has
the same hashes. Each job reads it as an input file, a stamp in a folder named by the hash, in
`.snakemake/lenex/code/` (as the variant checks stamp theirs, lenex.pipeline.variants): a code
change is a new input file, which Snakemake's input trigger reruns the job for. A stamp's mtime is
set to the epoch, so a stamp written anew (a fresh clone, .snakemake removed) never makes a job
look older than its inputs; its text lists the files hashed.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
from pathlib import Path

from .memo import files_digest, remembered

ROOT = Path(__file__).resolve().parents[1]  # src/lenex
PACKAGE = "lenex"
#: A registry package whose members a job counts by what its model uses (see the docstring).
SCHEME_REGISTRY = "positions"
_MEMBER = re.compile(r"^\s+name\s*=\s*[\"']([\w-]+)[\"']", re.M)  # a scheme class's registry name (`log-distance`)
#: A registry that imports every module of a package (lenex.registry.Registry's `members="lenex.<package>.*"`).
_WHOLE_PACKAGE = re.compile(r"""\bRegistry\([^)]*\bmembers\s*=\s*["']lenex\.([\w.]+)\.\*["']""")


@functools.cache
def _tree(path: Path):
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def module_file(dotted: str) -> Path | None:
    """src/lenex/a/b.py or src/lenex/a/b/__init__.py for lenex.a.b; None outside lenex."""
    parts = dotted.split(".")
    if parts[0] != PACKAGE:
        return None
    base = ROOT.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _dotted(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = [PACKAGE, *relative.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    """The module an `from X import ...` in `path` names, made absolute."""
    if not node.level:
        return node.module or ""
    package = _dotted(path) if path.name == "__init__.py" else _dotted(path).rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _reexport(package_init: Path, name: str) -> Path | None:
    """The submodule a package's __init__ takes `name` from (`from .alibi import alibi_slopes`)."""
    for node in ast.walk(_tree(package_init)):
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            return module_file(_absolute(package_init, node))
    return None


@functools.cache
def imported_files(path: Path) -> frozenset[Path]:
    """The lenex files one file imports (module level or inside a function), a name taken from a
    package resolved to the submodule that defines it."""
    found = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found |= {module_file(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(path, node)
            for alias in node.names:
                sub = module_file(f"{base}.{alias.name}")
                if sub is not None:
                    found.add(sub)
                    continue
                found.add(module_file(base))
                if module_file(base) is not None and module_file(base).name == "__init__.py":
                    found.add(_reexport(module_file(base), alias.name))
    found.discard(None)
    found.discard(path)
    return frozenset(found)


@functools.cache
def discovered_files(path: Path) -> frozenset[Path]:
    """The modules a registry defined in `path` imports at its first lookup: every module of the
    package its `members` pattern names (a member added there counts with no import naming it)."""
    found = set()
    for package in _WHOLE_PACKAGE.findall(path.read_text(encoding="utf-8")):
        found |= {p for p in ROOT.joinpath(*package.split(".")).glob("*.py") if not p.name.startswith("_")}
    found.discard(path)
    return frozenset(found)


@functools.cache
def scheme_members() -> dict[str, Path]:
    """Registry name -> the file of each built-in position scheme (its class's `name = "..."`)."""
    members = {}
    for path in sorted((ROOT / SCHEME_REGISTRY).glob("*.py")):
        for name in _MEMBER.findall(path.read_text(encoding="utf-8")):
            members[name] = path
    return members


def _is_member(path: Path) -> bool:
    return path in set(scheme_members().values())


@functools.cache
def closure(start: Path) -> frozenset[Path]:
    """Every lenex file `start` runs, the scheme registry's own imports of its members left out."""
    registry = ROOT / SCHEME_REGISTRY / "__init__.py"
    seen, todo = {start}, [start]
    while todo:
        current = todo.pop()
        listed = [(path, current == registry) for path in imported_files(current)]
        for path, by_registry in listed + [(path, True) for path in discovered_files(current)]:
            if by_registry and _is_member(path):
                continue  # the registry imports every scheme; a job counts its model's (scheme_files)
            if path not in seen:
                seen.add(path)
                todo.append(path)
    return frozenset(seen)


@functools.cache
def data_files() -> tuple[Path, ...]:
    """Package data: the files under src/lenex that are not Python."""
    return tuple(sorted(p for p in ROOT.rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")
                        and "__pycache__" not in p.parts))


def with_data(files) -> set[Path]:
    """`files` and the package data any of them names (by file name)."""
    named = {d for d in data_files() for f in files if f.suffix == ".py" and d.name in f.read_text(encoding="utf-8")}
    return set(files) | named


def scheme_files(position: str | None, module_files=()) -> set[Path]:
    """The code of one position scheme: its built-in file and what that imports (xPos: RoPE's), or
    the files of a scheme of your own (`module_files`, lenex.experiment.schemes.module_files)."""
    own = {Path(f).resolve() for f in module_files}
    member = scheme_members().get(position or "")
    return own | (set(closure(member)) if member else set())


def job_files(module: str, position: str | None = None, module_files=()) -> list[Path]:
    """Every file a job of entry point `module` runs for a model of scheme `position`."""
    entry = module_file(module)
    if entry is None:
        raise ValueError(f"no lenex module {module!r} under {ROOT}")
    return sorted(with_data(closure(entry)) | scheme_files(position, module_files))


def _label(path: Path) -> str:
    """A file as the hash sees it: relative to src/lenex (or, outside it, relative to the working
    directory where possible), so a moved checkout hashes the same."""
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return os.path.relpath(path).replace(os.sep, "/")


def code_hash(files) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(_label(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def stamp_name(module: str, position: str | None = None) -> str:
    """The stamp's name before its hash: the entry module, and the scheme where one counts."""
    return module.removeprefix(f"{PACKAGE}.") + (f"+{position}" if position else "")


@functools.cache
def tree_digest() -> str:
    """One hash of every file under src/lenex: a job's files and their hash (following its imports
    through the source) are kept for it between runs (lenex.pipeline.memo); any edit computes them anew."""
    files = sorted(p for p in ROOT.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
    return files_digest("tree", files)


@functools.cache
def _job_files_and_hash(stamps: str, module: str, position: str | None, module_files: tuple) -> tuple[list[Path], str]:
    """A job's files and their hash, looked up once per DAG build (every job of an entry point and
    scheme shares them) and kept between runs for the same tree (lenex.pipeline.memo)."""
    def follow() -> tuple[list[Path], str]:
        files = job_files(module, position, module_files)
        return files, code_hash(files)

    return remembered(stamps, "code-closure", list(module_files), follow, extra=f"{tree_digest()} {module} {position}")


def code_stamp(stamps: Path, module: str, position: str | None = None, module_files=()) -> str:
    """The stamp file of a job's code (written now if missing): <stamps>/code/<name>-<hash>/files.txt.
    Each stamp has a folder of its own: Snakemake lists a folder's files once, when it first looks
    for an input there, and would take a stamp written into that folder later for missing."""
    files, digest = _job_files_and_hash(str(stamps), module, position, tuple(module_files))
    stamp = Path(stamps) / "code" / f"{stamp_name(module, position)}-{digest[:16]}" / "files.txt"
    if not stamp.exists():
        stamp.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(f"{_label(p)}\n" for p in files)
        temporary = stamp.with_name(f".{stamp.name}.{os.getpid()}")
        temporary.write_text(f"the code of {module} jobs{' for ' + position if position else ''}:\n{text}")
        os.utime(temporary, (0, 0))  # never newer than an output: only a new name reruns a job
        temporary.replace(stamp)
    return stamp.as_posix()


class CodeInputs:
    """The code stamp as a job's input: a part of `lenex.pipeline.workflow.Pipeline` (`pipeline.code`),
    reading the settings for the model a job trains or scores."""

    def __init__(self, settings):
        self.settings = settings

    def scheme_stamp(self, module: str, position: str | None) -> str:
        """The stamp of a job that trains or reads a model whose scheme its own config names (a
        study's point, lenex.pipeline.specs.STUDIES): the entry point's code and the scheme's."""
        return code_stamp(self.settings.stamps, module, position)

    def stamp(self, module: str, preset_name: str | None = None, paper: str | None = None,
              variant: str | None = None) -> str:
        """The stamp of the code a job of entry point `module` runs; for a job that trains or reads
        the model of `variant` (at a preset), its position scheme's code counts too."""
        if variant is None:
            return code_stamp(self.settings.stamps, module)
        from ..experiment.schemes import module_files

        config = self.settings.model_config(preset_name, paper, variant)
        spec = self.settings.experiment(paper)["variants"].get(variant, {})
        return code_stamp(self.settings.stamps, module, config.get("position"), module_files(spec))
