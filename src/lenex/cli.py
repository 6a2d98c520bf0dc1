"""Entry-point wrapper: bad input ends with one line naming what is wrong, not a traceback."""

from __future__ import annotations

import sys

# Errors that mean "your input is wrong"; anything else is a bug and keeps its traceback.
USER_ERRORS = (ValueError, KeyError, FileNotFoundError, RuntimeError)


def run_cli(main) -> None:
    try:
        main()
    except USER_ERRORS as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)
