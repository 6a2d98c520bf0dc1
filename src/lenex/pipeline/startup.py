"""What the Snakefile checks before anything else, each failure one line and exit 1:

- the working directory is a lenex checkout (the workflow reads config/ and writes results/
  relative to it): `snakemake -s <checkout>/Snakefile` from another folder says to run it from
  the checkout or with `--directory`, instead of a FileNotFoundError traceback;
- every config file it loads (config/config.yaml, config/schemes.yaml and each `--configfile`)
  is valid YAML without a duplicate key, named with file and line (Snakemake's loader names no
  line and lets the last of two equal keys win). A `--configfile` with a syntax error is loaded
  by Snakemake before the Snakefile runs, so it keeps Snakemake's message;
- no resource of the profile (`default-resources`, `set-resources`) still holds a `$VAR`: Snakemake
  expands environment variables in a profile and leaves an unset one as it is, so an unset
  `$LENEX_SLURM_PARTITION` would reach sbatch as `-p $LENEX_SLURM_PARTITION`.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from ..files import read_yaml

CONFIG = Path("config") / "config.yaml"
VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def _raw_items(resources) -> list[tuple[str, object]]:
    """(name, value as written) of a Snakemake Resources object or a plain mapping."""
    if not resources:
        return []
    return [(name, getattr(value, "raw", value)) for name, value in resources.items()]


def unexpanded_variable(default_resources, overwrite_resources, environ=None) -> str | None:
    """The first profile resource naming `$VAR` where VAR is not set in `environ` (default: this
    process's environment; Snakemake expands a set one when it evaluates the job's resources), as
    one line naming the resource and the variable; None if none."""
    environ = os.environ if environ is None else environ
    places = [("default-resources", _raw_items(default_resources))]
    places += [(f"set-resources of rule {rule}", _raw_items(values)) for rule, values in (overwrite_resources or {}).items()]
    for where, items in places:
        for name, value in items:
            unset = [m for m in VARIABLE.finditer(value) if m[1] not in environ] if isinstance(value, str) else []
            if unset:
                found = unset[0]
                return (f"profile {where}: {name} is {value!r}, but environment variable {found[1]} is not set; "
                        f"export {found[1]}=... (or write the value into the profile) and rerun")
    return None


def checkout_problem(basedir, cwd=None) -> str | None:
    """Why the working directory cannot run the workflow of `basedir` (its Snakefile's folder)."""
    cwd = Path.cwd() if cwd is None else Path(cwd)
    if (cwd / CONFIG).is_file():
        return None
    checkout = Path(basedir).resolve()
    if (checkout / CONFIG).is_file():
        return (f"{cwd} is not a lenex checkout (no {CONFIG}): the workflow reads config/ and writes results/ "
                f"in its working directory; run it from {checkout} or add --directory {checkout}")
    return f"{cwd / CONFIG} not found: run snakemake from a lenex checkout"


def check_config_files(paths) -> None:
    """read_yaml of each file: a syntax error or a duplicate key is one ValueError naming file and line."""
    for path in paths:
        read_yaml(path)


def check_startup(workflow, config_files) -> None:
    """The Snakefile's first call: the checkout, then `config_files` and the `--configfile`s."""
    problem = checkout_problem(workflow.basedir)
    if problem is None:
        try:
            check_config_files([*config_files, *workflow.overwrite_configfiles])
        except ValueError as err:
            problem = str(err)
    if problem is None:
        settings = getattr(workflow, "resource_settings", None)
        problem = unexpanded_variable(getattr(settings, "default_resources", None),
                                      getattr(settings, "overwrite_resources", None))
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        sys.exit(1)
