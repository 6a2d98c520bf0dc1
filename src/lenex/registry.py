"""One registry per kind of extension (position schemes, attention masks, corpus sources, hub
corpora, papers, checkpoint formats): a name -> member mapping, filled two ways and only two.

- In the tree, a member registers itself where it is defined: `KIND.register` as a decorator on
  its class or function, or called on its object (`PAPER = PAPERS.register(Lex())`). The registry
  finds those modules itself, by the pattern `members` it is given, so a new file in the right
  place needs no list edited and no reinstall: `lenex.positions.*` (every module of a package,
  imported on the first lookup), `lenex.*.paper` (the module `paper` of each package of lenex) or
  `lenex.data.sources.{name}` (the one module of the name asked for, imported only then, so a
  lookup imports no other member; the names are listed from the files).
- Outside the tree, a module named by a string is imported (`load_module`): the value of an entry
  point of the registry's group (`entry_points`, a package installed with pip; `module:attribute`
  registers that object under the entry point's name), or a module a config names (a position
  scheme's `position_module`: a dotted name or a path to a .py file). What the module registers
  itself counts, and what the registry's `collect` takes from it (a scheme file need not know the
  registry). An entry point naming a lenex module is left out: the tree's members are found in
  the tree, and such an entry point is a leftover of an older install.

An unknown name is one error line naming the known ones (`unknown`), a ValueError that `in` and
`.get` see as a KeyError.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import pkgutil
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from pathlib import Path
from types import ModuleType

TREE = "lenex"


class UnknownName(ValueError, KeyError):
    """A name no member has: a ValueError in the user's terms, a KeyError to mapping lookups."""

    __str__ = BaseException.__str__  # KeyError's would quote the line


def _described(member) -> str:
    return f"{getattr(member, '__module__', '?')}.{getattr(member, '__qualname__', type(member).__qualname__)}"


class Registry(MutableMapping):
    """Members of one `kind` by name (see the module's docstring).

    members: where the tree's members are defined (`pkg.*`, `pkg.*.module` or `pkg.{name}`).
    entry_points: the group whose entry points add members from outside the tree.
    member_type: what an entry point's object must be. known, hint: the unknown-name line's words.
    collect: (module, its name as given) -> the members a module from outside defines without
    registering them itself."""

    def __init__(self, kind: str, *, members: str | None = None, entry_points: str | None = None,
                 member_type: type | None = None, known: str = "known", hint: str = "",
                 collect: Callable[[ModuleType, str], Iterable] | None = None):
        self.kind, self.members, self.group, self.member_type = kind, members, entry_points, member_type
        self.known_word, self.hint, self.collect = known, hint, collect
        self._members: dict = {}
        self._discovered = False
        self._loaded: dict[str, ModuleType] = {}

    # -- registering
    def register(self, member=None, *, name: str | None = None, origin: str | None = None):
        """Add `member` under `name` (default: its `name`) and return it; without a member, a
        decorator. Another member under a taken name is an error naming both."""
        if member is None:
            return lambda found: self.register(found, name=name, origin=origin)
        name = name or member.name
        taken = self._members.get(name)
        if taken is not None and taken is not member:
            where = origin or getattr(member, "__module__", "?")
            raise ValueError(f"{self.kind} {name!r} of module {where!r} clashes with {_described(taken)}")
        self._members[name] = member
        return member

    # -- the mapping (a lookup finds the tree's members and the entry points' first)
    def __getitem__(self, name):
        self._discover(name)
        try:
            return self._members[name]
        except KeyError:
            raise UnknownName(self.unknown(name)) from None

    def __contains__(self, name) -> bool:
        self._discover(name)
        return name in self._members

    def __iter__(self) -> Iterator[str]:
        self._discover()
        listed = list(self._members)
        if self._lazy:
            listed += sorted(set(self.in_tree_modules()) - set(listed))
        return iter(listed)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __setitem__(self, name, member) -> None:
        self._members[name] = member

    def __delitem__(self, name) -> None:
        del self._members[name]

    def names(self) -> tuple[str, ...]:
        """Every member's name, sorted (a lazy registry's from its files, none imported)."""
        return tuple(sorted(self))

    def unknown(self, name, detail: str = "") -> str:
        """The one line for an unknown name: the name, then the known ones."""
        return f"unknown {self.kind} {name!r}{detail}; {self.known_word}: {', '.join(self.names()) or 'none'}{self.hint}"

    # -- the tree's members
    @property
    def _lazy(self) -> bool:
        return bool(self.members) and self.members.endswith(".{name}")

    def in_tree_modules(self) -> dict[str, str]:
        """Where the tree's members are defined, none imported: the part of the name the pattern's
        wildcard matches -> the module (`lex` -> `lenex.lex.paper`)."""
        if not self.members:
            return {}
        package, _, rest = self.members.replace(".{name}", ".*").partition(".*")
        inner = rest.removeprefix(".")
        found = {}
        for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
            if info.name.startswith("_"):
                continue
            if not inner:
                found[info.name] = f"{package}.{info.name}"
            elif info.ispkg and (Path(info.module_finder.path) / info.name / f"{inner}.py").is_file():
                found[info.name] = f"{package}.{info.name}.{inner}"
        return dict(sorted(found.items()))

    def _discover(self, name=None) -> None:
        if self._lazy and name is not None and name not in self._members:
            module = self.in_tree_modules().get(name)
            if module is not None:
                importlib.import_module(module)
                if name not in self._members:  # a module put there without its registration
                    raise TypeError(f"{module} registers no {self.kind} {name!r}")
        if not self._discovered:
            self.refresh()

    def refresh(self) -> None:
        """Import the tree's members (those not imported yet) and load the entry points again."""
        self._discovered = True  # first: a member's module may look the registry up while imported
        try:
            if self.members and not self._lazy:
                for module in self.in_tree_modules().values():
                    importlib.import_module(module)
            for point in self.outside_entry_points():
                self._entry_point(point)
        except BaseException:
            self._discovered = False
            raise

    # -- members from outside the tree
    def outside_entry_points(self) -> list:
        """The entry points of the registry's group that name code outside the tree (none loaded)."""
        if not self.group:
            return []
        from importlib import metadata

        return [point for point in metadata.entry_points(group=self.group)
                if point.value.split(":")[0].split(".")[0] != TREE]

    def _entry_point(self, point) -> None:
        module, _, attribute = point.value.partition(":")
        loaded = self.load_module(module.strip())
        if not attribute:
            return
        member = getattr(loaded, attribute.strip(), None)
        if (self.member_type and not isinstance(member, self.member_type)) or getattr(member, "name", point.name) != point.name:
            what = self.member_type.__name__ if self.member_type else self.kind
            raise TypeError(f"entry point {point.name} = {point.value} ({self.group}) is not the {what} named {point.name!r}")
        self.register(member, name=point.name, origin=module)

    def load_module(self, module: str) -> ModuleType:
        """Import `module` (a dotted name, or a path to a .py file) once, and register what the
        registry collects from it. A module that is missing or raises is one error naming it."""
        if module in self._loaded:
            return self._loaded[module]
        loaded = _imported_file(module, self.kind) if module.endswith(".py") else _imported(module, self.kind)
        if self.collect is not None:
            for member in self.collect(loaded, module):
                self.register(member, origin=module)
        self._loaded[module] = loaded
        return loaded


def _import_failure(kind: str, module: str, err: Exception, origin: Path | None) -> str:
    """One line for a module that raised while imported: the module, the line of its own file that
    raised (the last frame in it; a syntax error's own line) and the exception."""
    line = err.lineno if isinstance(err, SyntaxError) and err.filename and origin and \
        Path(err.filename).resolve() == origin else None
    for frame in traceback.extract_tb(err.__traceback__):
        if origin is not None and Path(frame.filename).resolve() == origin:
            line = frame.lineno
    where = f" at line {line}" if line else ""
    return f"{kind} module {module!r} raised {type(err).__name__}{where} when imported: {err}"


def _imported_file(module: str, kind: str) -> ModuleType:
    path = Path(module)
    if not path.is_file():
        raise ValueError(f"{kind} module {module!r} not found (a path is read from {Path.cwd()})")
    # A unique, stable module name per file, so two files both called mine.py do not collide.
    prefix = "lenex_" + kind.split()[-1]
    name = f"{prefix}_{path.stem}_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    try:
        spec.loader.exec_module(loaded)
    except Exception as err:  # the user's code: whatever it raises is said in its terms
        sys.modules.pop(name, None)
        raise ValueError(_import_failure(kind, module, err, path.resolve())) from err
    return loaded


def _imported(module: str, kind: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        raise ValueError(f"{kind} module {module!r} cannot be imported: {err}") from err
    except Exception as err:
        found = importlib.util.find_spec(module)
        raise ValueError(_import_failure(kind, module, err, Path(found.origin).resolve() if found and found.origin
                                         else None)) from err
