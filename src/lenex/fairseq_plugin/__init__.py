"""lenex's transformer inside fairseq: `fairseq-train --user-dir src/lenex/fairseq_plugin --arch lenex_lm ...`.

fairseq imports this directory as a top-level module named `fairseq_plugin` (its `--user-dir`
mechanism, the one TorchScale uses), so every import here is absolute (`lenex....`).
"""

from lenex.fairseq_plugin import model  # noqa: F401  (registers the `lenex_lm` model and architecture)
