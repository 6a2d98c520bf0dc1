"""fairseq as a second training backend (docs/fairseq.md): binarize lenex's token files for
fairseq, build the `fairseq-train` command line from a preset, run it with lenex's architecture
(`lenex.fairseq_plugin`) and convert the result to a lenex checkpoint."""

from __future__ import annotations

import argparse
import importlib.util
import json

INSTALL_HINT = "fairseq is not installed in this environment: run `make setup-fairseq`"


def require_fairseq() -> None:
    """Stop with one line naming the set-up command when fairseq cannot be imported."""
    if importlib.util.find_spec("fairseq") is None:
        raise SystemExit(INSTALL_HINT)


def json_command(description: str, step, **arguments: str):
    """main(argv) of a one-step command: every keyword becomes a required --option (its value the
    help text) passed to `step` in order; what `step` returns is printed as one JSON line."""
    def main(argv=None) -> None:
        parser = argparse.ArgumentParser(description=description)
        for name, help_text in arguments.items():
            parser.add_argument(f"--{name}", required=True, help=help_text)
        args = parser.parse_args(argv)
        print(json.dumps(step(*(getattr(args, name) for name in arguments))))

    return main
