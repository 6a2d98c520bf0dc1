"""A table's cells run again for some seeds, beside the committed run's: what moved, and by how much.

A re-run (rule table_rerun) trains a table's models again at the code of the day (after a change of
what an evaluation scores, say) and records its cells' raw results. Its page (rule table_rerun_page)
reads those and the committed reference run's raw results, and puts side by side, for the seeds the
re-run holds:
- each cell (corpus, variant, length): the committed mean ppl and the re-run's, each with what it
  scored, and the per-seed difference of ln ppl (re-run - committed) with its 95% t interval;
- each row (corpus, variant): its rise from L_tr to its longest length, ln ppl(longest) - ln ppl(L_tr),
  committed beside re-run, each with its interval over seeds, and their paired difference.
A difference whose interval holds 0 is inconclusive, whichever way it points. The comparison is
refused where a cell's committed record is missing or its corpus differs (the meta's digest the
evaluation recorded): the two would not be the same models on the same text.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, dataclass

import numpy as np

from ..cli import run_cli
from ..claims.intervals import t_of_differences
from ..files import atomic_write_text, read_json
from ..records.stored import read_text
from .raw_results import parse

ALPHA = 0.05
#: The record fields a cell is read by (the LEX protocol's perplexity records carry them all).
CELL_FIELDS = ("corpus", "variant", "length", "seed", "nll")


@dataclass(frozen=True)
class Interval:
    """A mean of per-seed values and its 95% t interval (None with fewer than 2 seeds)."""
    mean: float
    low: float | None
    high: float | None
    seeds: int

    @property
    def reading(self) -> str:
        """'higher' / 'lower' where the interval excludes 0, else 'inconclusive'."""
        if self.low is None:
            return "inconclusive (one seed)"
        if self.low > 0:
            return "higher"
        if self.high < 0:
            return "lower"
        return "inconclusive"


def interval_of(values: list[float]) -> Interval:
    """The mean of `values` (one per seed) with its t interval over them."""
    if len(values) < 2:
        return Interval(float(values[0]), None, None, len(values))
    low, high = t_of_differences(values, "paired t over seeds").interval(ALPHA)
    return Interval(float(np.mean(values)), low, high, len(values))


def cell_records(files: dict[str, object]) -> dict[tuple, dict[int, tuple[str, dict]]]:
    """(corpus, variant, length) -> seed -> (path, record), for the perplexity records among `files`."""
    cells: dict[tuple, dict[int, tuple[str, dict]]] = {}
    for path, record in files.items():
        if not isinstance(record, dict) or "nll" not in record:
            continue
        missing = [f for f in CELL_FIELDS if f not in record]
        if missing:
            raise ValueError(f"{path}: a perplexity record without {', '.join(missing)}")
        key = (record["corpus"], record["variant"], int(record["length"]))
        cells.setdefault(key, {})[int(record["seed"])] = (path, record)
    return cells


def scored_words(record: dict) -> str:
    """What one evaluation scored, in words, from its record."""
    scored = record.get("scored")
    if not scored:
        return f"{record.get('tokens', '?')} tokens, the first test documents in id order (not recorded)"
    return (f"{scored['spans']} spans of {scored['span']} from {scored['documents_scored']} of {scored['documents']} "
            f"test documents ({scored['token_share']:.1%} of the split)")


@dataclass(frozen=True)
class CellComparison:
    corpus: str
    variant: str
    length: int
    mask: str
    seeds: list[int]
    ppl_committed: float  # geometric mean over the seeds: exp of the mean ln ppl
    ppl_rerun: float
    difference: Interval  # ln ppl, re-run - committed, per seed
    scored_committed: str
    scored_rerun: str


@dataclass(frozen=True)
class RiseComparison:
    corpus: str
    variant: str
    from_length: int
    to_length: int
    committed: Interval  # ln ppl(to) - ln ppl(from), per seed
    rerun: Interval
    difference: Interval  # re-run's rise - committed's, per seed


def training_corpus(record: dict) -> str | None:
    """The digest of the training corpus's meta that a model's identity records."""
    return (record.get("identity") or {}).get("corpus_meta_sha256")


#: What says two builds of an evaluation corpus hold the same text: its tokenizer and each split's size.
CORPUS_FACTS = ("tokenizer", "vocab_size", "splits")


def check_same_corpora(rerun: dict[str, object], committed: dict[str, object]) -> None:
    """Every corpus meta the re-run recorded equals the committed run's in CORPUS_FACTS."""
    for path, meta in rerun.items():
        if not path.endswith("/meta.json"):
            continue
        if path not in committed:
            raise ValueError(f"the committed run records no {path}: the re-run read a corpus it did not")
        for fact in CORPUS_FACTS:
            if meta.get(fact) != committed[path].get(fact):
                raise ValueError(f"{path}: the re-run's {fact} differs from the committed run's "
                                 f"({meta.get(fact)!r} against {committed[path].get(fact)!r}): not the same corpus")


def _paired(rerun: dict, committed: dict, key: tuple) -> list[int]:
    seeds = sorted(rerun[key])
    absent = [s for s in seeds if s not in committed.get(key, {})]
    if absent:
        corpus, variant, length = key
        raise ValueError(f"the committed run holds no {corpus} {variant} L={length} record of seed {absent[0]}: "
                         "a re-run is compared with the committed cells of its own seeds")
    for seed in seeds:
        path, new = rerun[key][seed]
        old_path, old = committed[key][seed]
        if training_corpus(new) != training_corpus(old):
            raise ValueError(f"{path}'s model trained on another corpus than the committed {old_path}'s "
                             "(their identities' corpus_meta_sha256 differ): the two are not the same models")
        if new.get("mask") != old.get("mask"):
            raise ValueError(f"{path} ran mask {new.get('mask')!r}, the committed {old_path} {old.get('mask')!r}")
    return seeds


def compare_cells(rerun: dict, committed: dict) -> list[CellComparison]:
    """Every cell of the re-run beside the committed run's cell, seed by seed (cell_records' form)."""
    out = []
    for key in sorted(rerun):
        seeds = _paired(rerun, committed, key)
        new = [rerun[key][s][1] for s in seeds]
        old = [committed[key][s][1] for s in seeds]
        corpus, variant, length = key
        out.append(CellComparison(
            corpus, variant, length, new[0].get("mask", "?"), seeds,
            math.exp(float(np.mean([r["nll"] for r in old]))), math.exp(float(np.mean([r["nll"] for r in new]))),
            interval_of([n["nll"] - o["nll"] for n, o in zip(new, old)]),
            scored_words(old[0]), scored_words(new[0])))
    return out


def compare_rises(rerun: dict, committed: dict) -> list[RiseComparison]:
    """Each row's rise from L_tr (the records' train_length) to its longest length, committed beside re-run."""
    rows: dict[tuple, list[int]] = {}
    for corpus, variant, length in rerun:
        rows.setdefault((corpus, variant), []).append(length)
    out = []
    for (corpus, variant), lengths in sorted(rows.items()):
        longest = max(lengths)
        train_length = int(next(iter(rerun[(corpus, variant, longest)].values()))[1].get("train_length", 0))
        if train_length not in lengths or longest == train_length:
            continue
        low_key, high_key = (corpus, variant, train_length), (corpus, variant, longest)
        seeds = sorted(set(_paired(rerun, committed, low_key)) & set(_paired(rerun, committed, high_key)))

        def rise(records, seed):
            return records[high_key][seed][1]["nll"] - records[low_key][seed][1]["nll"]

        old = [rise(committed, s) for s in seeds]
        new = [rise(rerun, s) for s in seeds]
        out.append(RiseComparison(corpus, variant, train_length, longest, interval_of(old), interval_of(new),
                                  interval_of([n - o for n, o in zip(new, old)])))
    return out


def _signed(x: float | None) -> str:
    return "—" if x is None else f"{x:+.3f}"


def _interval_cell(i: Interval) -> str:
    if i.low is None:
        return f"{i.mean:+.3f}"
    return f"{i.mean:+.3f} [{i.low:+.3f}, {i.high:+.3f}]"


def run_line(run: dict | None, revisions: list[str]) -> str:
    """How the re-run was made: its recorded command and wall time (lenex.pipeline.reference_record),
    and the revisions its evaluations record."""
    from ..pipeline.reference_record import wall_time_text

    where = f"at revision {', '.join(f'`{r}`' for r in revisions) or 'not recorded'}"
    if run is None:
        return f"Its run is not recorded (no run record beside it); its evaluations were made {where}."
    return f"Its run: `{run['command']}`, {wall_time_text(run)}, {where}."


def render(title: str, cells: list[CellComparison], rises: list[RiseComparison], sources: dict,
           run_text: str = "") -> str:
    """The page: the rises first (what the claims read), then every cell."""
    seeds = sorted({s for c in cells for s in c.seeds})
    lines = [f"# {title}", "",
             f"The re-run (`{sources['rerun']}`) trained the table's models again for seeds "
             f"{', '.join(map(str, seeds))} and scored each cell by the code of its revision; the committed "
             f"cells of the same seeds come from {', '.join(f'`{p}`' for p in sources['committed'])}. "
             "Differences are of ln ppl, re-run minus committed, each seed's models paired, with 95% t intervals "
             "over the seeds; one whose interval holds 0 is inconclusive, whichever way it points "
             "(lenex.tables.rerun).", *(["", run_text] if run_text else []), "",
             "## Rise from L_tr to the longest length", "",
             "| corpus | variant | lengths | committed rise | re-run rise | re-run - committed | reading |",
             "|---|---|---|---|---|---|---|"]
    for r in rises:
        lines.append(f"| {r.corpus} | {r.variant} | {r.from_length} -> {r.to_length} | {_interval_cell(r.committed)} "
                     f"| {_interval_cell(r.rerun)} | {_interval_cell(r.difference)} | {r.difference.reading} |")
    lines += ["", "## Every cell", "",
              "| corpus | variant | length | mask | ppl committed | ppl re-run | Δ ln ppl | reading |",
              "|---|---|---|---|---|---|---|---|"]
    for c in cells:
        lines.append(f"| {c.corpus} | {c.variant} | {c.length} | {c.mask} | {c.ppl_committed:.2f} | {c.ppl_rerun:.2f} "
                     f"| {_interval_cell(c.difference)} | {c.difference.reading} |")
    lines += ["", "## What each scored", "",
              "Every length of a corpus scores the same tokens (docs/lex.md), so one line per corpus says it.", "",
              "| corpus | committed | re-run |", "|---|---|---|"]
    first = {}
    for c in cells:
        first.setdefault(c.corpus, c)
    lines += [f"| {corpus} | {c.scored_committed} | {c.scored_rerun} |" for corpus, c in sorted(first.items())]
    return "\n".join(lines) + "\n"


def read_raw(paths: list[str]) -> dict[str, object]:
    files: dict[str, object] = {}
    for path in paths:
        for name, content in parse(read_text(path), path).items():
            if name in files:
                raise ValueError(f"{name} is in two of the raw results read: {', '.join(paths)}")
            files[name] = content
    return files


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rerun", required=True, help="the re-run's raw results (rule table_rerun)")
    parser.add_argument("--committed", nargs="+", required=True, help="the committed run's raw results (its parts)")
    parser.add_argument("--run-record", nargs="*", default=[], help="the re-run's record (reference_record --record)")
    parser.add_argument("--title", required=True)
    parser.add_argument("--out-md", required=True)
    parser.add_argument("--out-json", required=True)
    args = parser.parse_args(argv)
    rerun_files, committed_files = read_raw([args.rerun]), read_raw(args.committed)
    check_same_corpora(rerun_files, committed_files)
    rerun, committed = cell_records(rerun_files), cell_records(committed_files)
    if not rerun:
        raise ValueError(f"{args.rerun} holds no perplexity record to compare")
    cells, rises = compare_cells(rerun, committed), compare_rises(rerun, committed)
    sources = {"rerun": args.rerun, "committed": args.committed}
    if len(args.run_record) > 1:
        raise ValueError(f"one run record, got {len(args.run_record)}")
    run = read_json(args.run_record[0]) if args.run_record else None
    revisions = sorted({r["git_rev"] for seeds in rerun.values() for _, r in seeds.values() if r.get("git_rev")})
    atomic_write_text(args.out_json, json.dumps({"sources": sources, "cells": [asdict(c) for c in cells],
                                                 "rises": [asdict(r) for r in rises]}, indent=1) + "\n")
    atomic_write_text(args.out_md, render(args.title, cells, rises, sources, run_line(run, revisions)))


if __name__ == "__main__":
    run_cli(main)
