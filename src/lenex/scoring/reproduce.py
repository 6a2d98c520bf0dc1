"""Are models trained again the committed run's models? Score them as the committed run scored.

A re-run (rule table_rerun) trains a table's models again, with the committed run's seeds and training
code, and scores them by today's rule. Its training corpus is rebuilt from its sources, so it is the
committed one only where the identities' corpus_meta_sha256 agree (lenex.tables.rerun says where they
do not). Whether its differences come from what is scored or from other models is answered here: each
re-trained model is scored again on cells of the committed run, by the rule those were scored by (a
record with no `scored` was scored by `first-documents`), and its NLL and scored tokens are compared
with the committed record's:

    python -m lenex.scoring.reproduce --committed RAW.. --cells PATH.. --out CHECK.json

`--cells` names committed evaluation files (paths inside the raw results); each is scored with its
record's checkpoint path, corpus, length, span, mask and token budget, into a scratch file. The
output records each cell's committed and reproduced NLL, whether the scored tokens are the same ones
(their sha256), the training corpus digest of each model scored (committed and re-trained), and `reproduced`: every cell's tokens equal and |ΔNLL| <= `--tolerance`.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from ..cli import run_cli
from ..files import atomic_write_text
from .evaluate import run

#: How close a model trained again must score, in nats per token: CPU training with the same seed and
#: code repeats its arithmetic, so only summation order (threads, library versions) may differ.
TOLERANCE = 1e-3


def rule_of(record: dict) -> str:
    """The scoring rule a committed evaluation was made by (records before the rule was recorded: the first documents')."""
    return (record.get("scored") or {}).get("rule", "first-documents")


def compared(record: dict, again: dict, tolerance: float) -> dict:
    """One cell: the committed and reproduced NLL, their difference and whether the tokens are the same."""
    delta = again["nll"] - record["nll"]
    same_tokens = again["scored_tokens_sha256"] == record["scored_tokens_sha256"]
    return {"committed_nll": record["nll"], "reproduced_nll": again["nll"], "delta_nll": delta,
            "same_tokens": same_tokens, "reproduced": same_tokens and abs(delta) <= tolerance,
            "committed_corpus_meta_sha256": (record.get("identity") or {}).get("corpus_meta_sha256"),
            "reproduced_corpus_meta_sha256": (again.get("identity") or {}).get("corpus_meta_sha256")}


def reproduce(committed: dict[str, dict], cells: list[str], tolerance: float = TOLERANCE) -> dict:
    """Score each named committed cell again on the model at its record's checkpoint path."""
    out = {}
    with tempfile.TemporaryDirectory() as scratch:
        for i, cell in enumerate(cells):
            if cell not in committed:
                raise ValueError(f"{cell} is not among the committed raw results")
            r = committed[cell]
            if "corpus" not in r:
                raise ValueError(f"{cell}: its record names no corpus")
            corpus_dir = str(Path(*Path(cell).parts[:2]) / "data" / r["corpus"])  # results/<preset>/data/<corpus>
            again = run(r["checkpoint"], corpus_dir, r["length"], r["span"], f"{scratch}/{i}.json", r["mask"],
                        r.get("mask_options") or {}, r.get("split", "test"), r["tokens"], device="cpu",
                        scored_rule=rule_of(r))
            out[cell] = {"checkpoint": r["checkpoint"], "rule": rule_of(r), **compared(r, again, tolerance)}
    return {"tolerance": tolerance, "reproduced": all(c["reproduced"] for c in out.values()), "cells": out}


def main(argv=None) -> None:
    from ..tables.raw_results import read_raw

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--committed", nargs="+", required=True, help="the committed run's raw results")
    parser.add_argument("--cells", nargs="+", required=True, help="committed evaluation files to score again")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE, help="largest |ΔNLL| that counts as the same")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    result = reproduce(read_raw(args.committed), args.cells, args.tolerance)
    atomic_write_text(args.out, json.dumps(result, indent=1) + "\n")
    print(f"reproduced: {result['reproduced']} ({sum(c['reproduced'] for c in result['cells'].values())} "
          f"of {len(result['cells'])} cells)")


if __name__ == "__main__":
    run_cli(main)
