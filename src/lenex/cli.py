"""Entry-point wrapper: bad input ends with one line naming what is wrong, not a traceback."""

from __future__ import annotations

import sys

# Errors that mean "your input is wrong"; anything else is a bug and keeps its traceback.
USER_ERRORS = (ValueError, KeyError, OSError, RuntimeError)


def run_cli(main, argv=None) -> None:
    """Run main(argv); a user error exits with status 2 after one `error: ...` line."""
    try:
        main(argv)
    except USER_ERRORS as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)
