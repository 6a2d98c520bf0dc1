"""Errors in the user's terms while Snakemake builds the DAG: a name that is no table, model or
paper, raw results edited after they were collected. Raised inside an input function, a plain
exception reaches the user as Snakemake's `InputFunctionException` with a traceback; under
Snakemake (`one_line_errors()`, called by workflow/rules/common.smk) `refuse` prints one line and
exits instead, and elsewhere (the tests, a script) it is a ValueError like any other."""

from __future__ import annotations

import contextlib
import sys

_ONE_LINE = {"on": False}


def one_line_errors(on: bool = True) -> None:
    """Refusals end the run with one line on stderr (the workflow's mode), or raise (`on=False`)."""
    _ONE_LINE["on"] = on


def refuse(message: str):
    """Stop on a user's mistake: one line `error: <message>` and exit 1 under Snakemake, else ValueError."""
    if _ONE_LINE["on"]:
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(1)
    raise ValueError(message)


@contextlib.contextmanager
def quiet_refusals():
    """Refusals raise ValueError for a while (a check whose failure is a warning, not the end)."""
    was, _ONE_LINE["on"] = _ONE_LINE["on"], False
    try:
        yield
    finally:
        _ONE_LINE["on"] = was


def known(names) -> str:
    """The names a user could have meant, sorted, as one list."""
    return ", ".join(sorted(names)) or "none"
