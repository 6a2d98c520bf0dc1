"""fairseq as a second training backend (docs/fairseq.md): binarize lenex's token files for
fairseq, build the `fairseq-train` command line from a preset, run it with lenex's architecture
(`lenex.fairseq_plugin`) and convert the result to a lenex checkpoint."""

from __future__ import annotations

import importlib.util

INSTALL_HINT = "fairseq is not installed in this environment: run `make setup-fairseq`"


def require_fairseq() -> None:
    """Stop with one line naming the set-up command when fairseq cannot be imported."""
    if importlib.util.find_spec("fairseq") is None:
        raise SystemExit(INSTALL_HINT)
