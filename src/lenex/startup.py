"""What the Snakefile checks before anything else (issue 36), each failure one line and exit 1:

- the working directory is a lenex checkout (the workflow reads config/ and writes results/
  relative to it): `snakemake -s <checkout>/Snakefile` from another folder says to run it from
  the checkout or with `--directory`, instead of a FileNotFoundError traceback;
- every config file it loads (config/config.yaml, config/schemes.yaml and each `--configfile`)
  is valid YAML without a duplicate key, named with file and line (Snakemake's loader names no
  line and lets the last of two equal keys win). A `--configfile` with a syntax error is loaded
  by Snakemake before the Snakefile runs, so it keeps Snakemake's message.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .files import read_yaml

CONFIG = Path("config") / "config.yaml"


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
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        sys.exit(1)
