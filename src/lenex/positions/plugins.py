"""Position schemes from outside the built-in registry: a module (a dotted name such as
`lenex.positions.mine`, or a path to a .py file anywhere) whose PositionScheme subclasses are
added to POSITIONS when it is imported. A model config names the module (`position_module`),
so every process that builds the model (training, evaluation, continued pretraining) imports it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
import traceback
from pathlib import Path
from types import ModuleType

from .base import NAME_PATTERN, PositionScheme

_LOADED: dict[str, ModuleType] = {}


def is_file_module(module: str) -> bool:
    """A path to a .py file (else a dotted module name)."""
    return module.endswith(".py")


def _import_failure(module: str, err: Exception, origin: Path | None) -> str:
    """One line for a scheme module that raised while imported: the module, the line of its own
    file that raised (the last frame in it; a syntax error's own line) and the exception."""
    line = err.lineno if isinstance(err, SyntaxError) and err.filename and origin and \
        Path(err.filename).resolve() == origin else None
    for frame in traceback.extract_tb(err.__traceback__):
        if origin is not None and Path(frame.filename).resolve() == origin:
            line = frame.lineno
    where = f" at line {line}" if line else ""
    return f"position scheme module {module!r} raised {type(err).__name__}{where} when imported: {err}"


def load_scheme_module(module: str, registry: dict) -> ModuleType:
    """Import `module` once and add each PositionScheme subclass it defines to `registry` under
    its `name`. A name that is already taken by another class is an error naming both."""
    if module in _LOADED:
        return _LOADED[module]
    if is_file_module(module):
        path = Path(module)
        if not path.is_file():
            raise ValueError(f"position scheme module {module!r} not found (a path is read from {Path.cwd()})")
        # A unique, stable module name per file, so two files both called mine.py do not collide.
        name = f"lenex_scheme_{path.stem}_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]}"
        spec = importlib.util.spec_from_file_location(name, path)
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[name] = loaded
        try:
            spec.loader.exec_module(loaded)
        except Exception as err:  # the user's code: whatever it raises is said in its terms
            sys.modules.pop(name, None)
            raise ValueError(_import_failure(module, err, path.resolve())) from err
    else:
        try:
            loaded = importlib.import_module(module)
        except ModuleNotFoundError as err:
            raise ValueError(f"position scheme module {module!r} cannot be imported: {err}") from err
        except Exception as err:
            found = importlib.util.find_spec(module)
            raise ValueError(_import_failure(module, err, Path(found.origin).resolve() if found and found.origin
                                             else None)) from err
    found = [cls for _, cls in inspect.getmembers(loaded, inspect.isclass)
             if issubclass(cls, PositionScheme) and cls.__module__ == loaded.__name__ and cls.name]
    if not found:
        raise ValueError(f"position scheme module {module!r} defines no PositionScheme subclass with a `name`")
    for cls in found:
        if not NAME_PATTERN.match(cls.name):
            raise ValueError(f"position scheme {cls.name!r} of module {module!r}: a scheme name is letters, digits, "
                             "'_' and '-' (it names preset keys, variants' schemes and files)")
        taken = registry.get(cls.name)
        if taken is not None and taken is not cls:
            raise ValueError(f"position scheme {cls.name!r} of module {module!r} clashes with "
                             f"{taken.__module__}.{taken.__name__}")
        registry[cls.name] = cls
    _LOADED[module] = loaded
    return loaded


def default_module(position: str) -> str | None:
    """`lenex.positions.<position>` when that file exists: a scheme added to the registry folder
    needs no `module` entry."""
    try:
        found = importlib.util.find_spec(f"{__package__}.{position}")
    except (ImportError, ValueError):
        return None
    return None if found is None else f"{__package__}.{position}"
