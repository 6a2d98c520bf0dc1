"""Many cells of one model in one process, the entry point of every evaluation job (its group of
cells, lenex.pipeline.evaluation: one model's cells of a corpus and measure at a CPU preset, one cell
at a GPU preset): the model is loaded once and each cell is written to its
own result file, exactly as the one-cell entry points write it (lenex.scoring.evaluate for perplexity,
lenex.lex.resolution for attention resolution), so tables stay cell-addressed.

    python -m lenex.lex.evaluate_model --checkpoint M.pt --span S --max-tokens N --batch-tokens B \\
        --cells '[{"stage": "eval", "data": DIR, "mask": "causal", "length": 64, "out": R.json,
                   "extra": {...}}, ...]'

Why: a job pays ~1 s to start Python and import torch before any work, more than a tiny cell's
scoring; one job for many cells instead of one per cell removes most of that (docs/pipeline-speed.md).
"""

from __future__ import annotations

import argparse
import json
import logging

from ..cli import run_cli, start_run
from ..device import pick_device
from ..scoring.evaluate import score as perplexity
from ..records.provenance import add_expect_argument, load_checked
from .resolution import score as resolution

log = logging.getLogger("lenex.lex.evaluate_model")
MEASURES = {"eval": perplexity, "resolution": resolution}
CELL_KEYS = {"stage", "data", "mask", "length", "out"}


def check_cells(cells) -> list[dict]:
    """The cells, each with its keys and a known stage; one clear error naming the first bad one."""
    if not isinstance(cells, list) or not cells:
        raise ValueError("--cells must be a non-empty JSON list of cells")
    for i, cell in enumerate(cells):
        missing = CELL_KEYS - set(cell) if isinstance(cell, dict) else CELL_KEYS
        if missing:
            raise ValueError(f"cell {i} ({cell!r}) lacks {', '.join(sorted(missing))}")
        if cell["stage"] not in MEASURES:
            raise ValueError(f"cell {i}: unknown stage {cell['stage']!r}; known: {', '.join(MEASURES)}")
    return cells


def run(checkpoint, cells: list[dict], span: int, max_tokens: int, batch_tokens: int, split="test",
        device="auto", expect=None) -> list[dict]:
    """Score each cell in the order given; every cell's result file is written as it is done.
    The checkpoint is checked against every cell's corpus and `expect` before any is scored."""
    check_cells(cells)
    corpora = sorted({str(cell["data"]) for cell in cells})
    model, payload = load_checked(checkpoint, corpora, expect, cells[0]["out"])
    model.to(pick_device(device))
    results = []
    for i, cell in enumerate(check_cells(cells), 1):
        log.info("cell %d/%d: %s %s %s L=%d", i, len(cells), cell["stage"], cell["data"], cell["mask"], cell["length"])
        measure = MEASURES[cell["stage"]]
        results.append(measure(model, payload, checkpoint, cell["data"], cell["length"], span, cell["out"],
                               cell["mask"], split=split, max_tokens=max_tokens, batch_tokens=batch_tokens,
                               extra=cell.get("extra")))
    return results


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--cells", required=True, help="JSON list of cells: stage, data, mask, length, out, extra")
    parser.add_argument("--span", type=int, required=True, help="scored span: the longest length of the tables")
    parser.add_argument("--split", default="test")
    parser.add_argument("--max-tokens", type=int, default=65536)
    parser.add_argument("--batch-tokens", type=int, default=16384)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--device", default="auto", help="auto (GPU if any), cpu, cuda ...")
    add_expect_argument(parser)
    args = parser.parse_args(argv)
    start_run(args)
    run(args.checkpoint, json.loads(args.cells), args.span, args.max_tokens, args.batch_tokens, args.split, args.device,
        args.expect)


if __name__ == "__main__":
    run_cli(main)
