"""A table's cells run again for some seeds, beside the committed run's: what moved, and by how much.

A re-run (rule table_rerun) trains a table's models again at the code of the day (after a change of
what an evaluation scores, say) and records its cells' raw results. Its page (rule table_rerun_page)
reads those and the committed reference run's raw results, and puts side by side, for the seeds the
re-run holds:
- each cell (corpus, variant, length): the committed mean ppl and the re-run's, each with what it
  scored, and the per-seed difference of ln ppl (re-run - committed) with its 95% t interval;
- each row (corpus, variant): its rise from L_tr to its longest length, ln ppl(longest) - ln ppl(L_tr),
  committed beside re-run, each with its interval over seeds, and their paired difference.
A difference whose interval holds 0 is inconclusive, whichever way it points.

The pairing needs the same models on the same text. A missing committed cell, or an evaluation corpus
whose facts differ (tokenizer, each split's size and, where both record one, its digest), stops the
page. Models that trained on another corpus than the committed ones are not the same models: the
paired differences are refused and the page says why, showing each run's cells and rises unpaired.
Which corpus a model trained on is decided by one of two rules (`pairing`), the page naming it:
- a re-run that records its training corpus's meta (every re-run since re-runs record it) pairs
  when that meta and the committed run's agree on every fact both record
  (lenex.data.rebuild_check.shared_differences: documents and tokens per split and per component,
  the tokenizer, each package's version and sha256), and each run's models name one training corpus;
- one that does not is judged by its models' identities: their corpus_meta_sha256 must equal the
  committed models'. The digest of meta.json changes whenever meta.json gains a fact, so it can only
  pair runs made by the same preparing code; the first rule is why a re-run records the meta.

`--reproduce` adds what a re-run's plan did not ask for, labelled so: lenex.scoring.reproduce's
scores of the re-trained models on the committed cells by the committed rule. Those split a cell's
change in two, each paired over seeds on the same models or the same rule: the scoring rule's effect
(re-run - reproduced: the same re-trained models, today's rule against the committed one) and the
models' change (reproduced - committed: the same rule, re-trained models against the committed ones).
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..cli import run_cli
from ..claims.intervals import t_of_differences
from ..data.rebuild_check import shared_differences
from ..files import atomic_write_text, read_json
from .raw_results import read_raw
from .training_curves import plot, section, split_curves

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
    difference: Interval | None  # ln ppl, re-run - committed, per seed; None where the models differ
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
    difference: Interval | None  # re-run's rise - committed's, per seed; None where the models differ


def training_corpus(record: dict) -> str | None:
    """The digest of the training corpus's meta that a model's identity records."""
    return (record.get("identity") or {}).get("corpus_meta_sha256")


#: What says two builds of an evaluation corpus hold the same text: its tokenizer and each split's
#: facts. A split's digest (`sha256`, recorded by metas from 2026-12) is compared where both have one.
CORPUS_FACTS = ("tokenizer", "vocab_size")
SPLIT_FACTS = ("file", "n_docs", "n_tokens")


def corpus_differences(new: dict, old: dict) -> list[str]:
    """What two corpus metas record differently among the facts both record, in words."""
    out = [f"{fact} {new.get(fact)!r} against {old.get(fact)!r}" for fact in CORPUS_FACTS
           if new.get(fact) != old.get(fact)]
    new_splits, old_splits = new.get("splits") or {}, old.get("splits") or {}
    for split in sorted(set(new_splits) | set(old_splits)):
        if split not in new_splits or split not in old_splits:
            out.append(f"split {split} only in the {'re-run' if split in new_splits else 'committed run'}'s")
            continue
        a, b = new_splits[split], old_splits[split]
        facts = SPLIT_FACTS + (("sha256",) if "sha256" in a and "sha256" in b else ())
        out += [f"{split}.{fact} {a.get(fact)!r} against {b.get(fact)!r}" for fact in facts if a.get(fact) != b.get(fact)]
    return out


def check_same_corpora(rerun: dict[str, object], committed: dict[str, object], train_meta: str = "") -> None:
    """Every evaluation corpus meta the re-run recorded matches the committed run's (corpus_differences);
    the training corpus's (`train_meta`) decides the models' pairing instead (`pairing`)."""
    for path, meta in rerun.items():
        if not path.endswith("/meta.json") or path == train_meta:
            continue
        if path not in committed:
            raise ValueError(f"the committed run records no {path}: the re-run read a corpus it did not")
        differences = corpus_differences(meta, committed[path])
        if differences:
            raise ValueError(f"{path}: the re-run's splits differs from the committed run's "
                             f"({'; '.join(differences)}): not the same corpus")


@dataclass(frozen=True)
class ModelChange:
    """A re-trained model whose training corpus is not the committed model's."""
    variant: str
    seed: int
    rerun_corpus: str | None  # its identity's corpus_meta_sha256
    committed_corpus: str | None


def model_cells(rerun: dict, committed: dict):
    """(variant, seed, re-run record, committed record or None) for every cell of every re-run model
    (cell_records' form): what the pairing rules read each model's training corpus from."""
    for key, seeds in rerun.items():
        for seed, (_, new) in seeds.items():
            old = committed.get(key, {}).get(seed)
            yield key[1], seed, new, None if old is None else old[1]


def other_models(rerun: dict, committed: dict) -> list[ModelChange]:
    """The re-run's models (variant, seed) that trained on another corpus than the committed model
    scored in the same cell (their records' training_corpus), each once."""
    out = {}
    for variant, seed, new, old in model_cells(rerun, committed):
        if old is not None and training_corpus(new) != training_corpus(old):
            out.setdefault((variant, seed), ModelChange(variant, seed, training_corpus(new), training_corpus(old)))
    return [out[k] for k in sorted(out)]


DIGEST_RULE = "digest"
SHARED_FACTS_RULE = "shared facts"


@dataclass(frozen=True)
class Pairing:
    """Whether the re-run's models are the committed ones, by which rule, and if not why."""
    rule: str  # DIGEST_RULE or SHARED_FACTS_RULE
    changes: tuple[ModelChange, ...]  # the models refused, each once
    why: tuple[str, ...] = ()  # SHARED_FACTS_RULE: what the training metas or the models disagree on
    facts_compared: int = 0

    @property
    def same(self) -> bool:
        return not self.changes


def pairing(rerun: dict, committed: dict, rerun_train: dict | None = None,
            committed_train: dict | None = None) -> Pairing:
    """The rule that says whether the re-run's models (cell_records' form) trained on the committed
    models' corpus: by the training metas' shared facts where the re-run recorded its own
    (`rerun_train`), else by the identities' digests (other_models)."""
    if rerun_train is None:
        return Pairing(DIGEST_RULE, tuple(other_models(rerun, committed)))
    if committed_train is None:
        raise ValueError("the committed run records no meta of the training corpus the re-run recorded: "
                         "nothing to pair its models with")
    differences, _, compared = shared_differences(rerun_train, committed_train)
    models = {}  # (variant, seed) -> (re-run digest, committed digest)
    for variant, seed, new, old in model_cells(rerun, committed):
        models.setdefault((variant, seed), (training_corpus(new), training_corpus(old) if old else None))
    why = [f"training corpus {d}" for d in differences]
    for side, digests in (("re-run", {n for n, _ in models.values()}), ("committed run", {o for _, o in models.values()})):
        if None in digests or len(digests) != 1:
            why.append(f"the {side}'s models name {len(digests - {None})} training corpora"
                       f"{' (some none)' if None in digests else ''}, not one")
    changes = tuple(ModelChange(v, s, *models[(v, s)]) for v, s in sorted(models)) if why else ()
    return Pairing(SHARED_FACTS_RULE, changes, tuple(why), compared)


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
        if new.get("mask") != old.get("mask"):
            raise ValueError(f"{path} ran mask {new.get('mask')!r}, the committed {old_path} {old.get('mask')!r}")
    return seeds


def compare_cells(rerun: dict, committed: dict, paired: bool = True) -> list[CellComparison]:
    """Every cell of the re-run beside the committed run's cell, seed by seed (cell_records' form);
    `paired` False (other models): the two means without their difference."""
    out = []
    for key in sorted(rerun):
        seeds = _paired(rerun, committed, key)
        new = [rerun[key][s][1] for s in seeds]
        old = [committed[key][s][1] for s in seeds]
        corpus, variant, length = key
        out.append(CellComparison(
            corpus, variant, length, new[0].get("mask", "?"), seeds,
            math.exp(float(np.mean([r["nll"] for r in old]))), math.exp(float(np.mean([r["nll"] for r in new]))),
            interval_of([n["nll"] - o["nll"] for n, o in zip(new, old)]) if paired else None,
            scored_words(old[0]), scored_words(new[0])))
    return out


def rise_rows(rerun: dict) -> list[tuple[tuple, tuple]]:
    """Each row's (corpus, variant, L_tr) and (corpus, variant, longest length) cell keys, where the
    row holds L_tr (the records' train_length) and a longer length."""
    rows: dict[tuple, list[int]] = {}
    for corpus, variant, length in rerun:
        rows.setdefault((corpus, variant), []).append(length)
    out = []
    for (corpus, variant), lengths in sorted(rows.items()):
        longest = max(lengths)
        train_length = int(next(iter(rerun[(corpus, variant, longest)].values()))[1].get("train_length", 0))
        if train_length in lengths and longest != train_length:
            out.append(((corpus, variant, train_length), (corpus, variant, longest)))
    return out


def compare_rises(rerun: dict, committed: dict, paired: bool = True) -> list[RiseComparison]:
    """Each row's rise from L_tr to its longest length (rise_rows), committed beside re-run."""
    out = []
    for low_key, high_key in rise_rows(rerun):
        (corpus, variant, train_length), longest = low_key, high_key[2]
        seeds = sorted(set(_paired(rerun, committed, low_key)) & set(_paired(rerun, committed, high_key)))

        def rise(records, seed):
            return records[high_key][seed][1]["nll"] - records[low_key][seed][1]["nll"]

        old = [rise(committed, s) for s in seeds]
        new = [rise(rerun, s) for s in seeds]
        out.append(RiseComparison(corpus, variant, train_length, longest, interval_of(old), interval_of(new),
                                  interval_of([n - o for n, o in zip(new, old)]) if paired else None))
    return out


@dataclass(frozen=True)
class Split:
    """One cell's or rise's change split in two (module docstring): both paired over the same seeds."""
    corpus: str
    variant: str
    lengths: str  # "L" for a cell, "L_tr -> longest" for a rise
    seeds: list[int]
    rule: Interval  # re-run - reproduced: the same re-trained models, today's rule against the committed one
    models: Interval  # reproduced - committed: the same rule, re-trained models against the committed ones
    same_tokens: bool  # every reproduced score read the committed record's tokens


def reproduced_nll(reproduce: dict, path: str, committed_record: dict) -> tuple[float, bool]:
    """A committed cell's NLL on its re-trained model by the committed rule (lenex.scoring.reproduce's
    record of it) and whether it read the committed tokens."""
    from ..scoring.reproduce import rule_of

    cell = reproduce.get(path)
    if cell is None:
        raise KeyError(path)
    if cell["rule"] != rule_of(committed_record):
        raise ValueError(f"{path} was reproduced by rule {cell['rule']!r}, but the committed record was scored by "
                         f"{rule_of(committed_record)!r}: not the committed run's scoring")
    if abs(cell["committed_nll"] - committed_record["nll"]) > 1e-12:
        raise ValueError(f"{path}: the reproduce check's committed NLL {cell['committed_nll']} is not the committed "
                         f"record's {committed_record['nll']}: it read other raw results")
    return float(cell["reproduced_nll"]), bool(cell["same_tokens"])


def split_changes(rerun: dict, committed: dict, reproduce: dict) -> tuple[list[Split], list[Split]]:
    """Every cell and rise whose committed cells of every seed the reproduce check scored again
    (`reproduce`: its `cells`), its change split into the scoring rule's effect and the models'."""
    def triples(key):
        seeds = _paired(rerun, committed, key)
        out = {}
        for seed in seeds:
            path, old = committed[key][seed]
            try:
                again, same = reproduced_nll(reproduce, path, old)
            except KeyError:
                return None
            out[seed] = (old["nll"], again, rerun[key][seed][1]["nll"], same)
        return out

    cells, by_key = [], {}
    for key in sorted(rerun):
        values = triples(key)
        if values is None:
            continue
        by_key[key] = values
        seeds = sorted(values)
        cells.append(Split(key[0], key[1], str(key[2]), seeds,
                           interval_of([values[s][2] - values[s][1] for s in seeds]),
                           interval_of([values[s][1] - values[s][0] for s in seeds]),
                           all(values[s][3] for s in seeds)))
    rises = []
    for low_key, high_key in rise_rows(rerun):
        if low_key not in by_key or high_key not in by_key:
            continue
        low, high = by_key[low_key], by_key[high_key]
        seeds = sorted(set(low) & set(high))
        rise = {s: [high[s][i] - low[s][i] for i in range(3)] for s in seeds}  # committed, reproduced, re-run
        rises.append(Split(low_key[0], low_key[1], f"{low_key[2]} -> {high_key[2]}", seeds,
                           interval_of([rise[s][2] - rise[s][1] for s in seeds]),
                           interval_of([rise[s][1] - rise[s][0] for s in seeds]),
                           all(low[s][3] and high[s][3] for s in seeds)))
    return cells, rises


def rerun_curves(files: dict[str, object]) -> tuple[dict[str, dict], list[str]]:
    """({path: curve} of the re-trained models' training curves the re-run recorded, [paths of those
    that say their trainer kept none]), as the diagnostics read theirs (training_curves.split_curves)."""
    return split_curves({path: content for path, content in sorted(files.items()) if "/curves/" in path})


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


def _reading(i: Interval | None) -> str:
    return "refused (other models)" if i is None else i.reading


def _difference_cell(i: Interval | None) -> str:
    return "refused" if i is None else _interval_cell(i)


def pairing_lines(pairing: Pairing) -> list[str]:
    """By which rule the models were paired and, where they are refused, why."""
    if pairing.rule == SHARED_FACTS_RULE:
        rule = (f"**Models paired by the training corpus's recorded facts**: its meta in each run's raw results, "
                f"compared on the {pairing.facts_compared} facts both record (lenex.data.rebuild_check), "
                "each run's models naming one training corpus.")
    else:
        rule = ("**Models paired by their identities' `corpus_meta_sha256`** (the digest of the training corpus's "
                "meta): the re-run records no meta of its training corpus to compare by its facts.")
    lines = ["", rule]
    if pairing.same:
        return lines
    models = ", ".join(f"{c.variant} seed {c.seed}" for c in pairing.changes)
    if pairing.rule == SHARED_FACTS_RULE:
        lines += ["", "**Refused: not the same models.** What the two runs' training corpora or models disagree on:"]
        lines += [f"- {why}" for why in pairing.why]
    else:
        digests = sorted({(c.rerun_corpus, c.committed_corpus) for c in pairing.changes}, key=str)
        lines += ["", "**Refused: not the same models.** The re-run's models trained on another corpus than the "
                  "committed ones (their identities' `corpus_meta_sha256`, the digest of the training corpus's meta):"]
        lines += [f"- re-run `{new or 'not recorded'}` against committed `{old or 'not recorded'}`"
                  for new, old in digests]
    lines += ["", f"Models concerned: {models}. The paired differences of ln ppl (re-run - committed) would "
              "mix what is scored with what was learnt, so they are not given; each run's cells and rises are "
              "shown unpaired, each rise with its own interval over its own models' seeds."]
    return lines


def split_lines(cells: list[Split], rises: list[Split], source: str) -> list[str]:
    """The section that splits each change into the scoring rule's effect and the models' (--reproduce)."""
    if not cells:
        return []
    lines = ["", "## Added after the re-run (not in its plan): the scoring rule's effect and the models' change", "",
             f"`{source}` (lenex.scoring.reproduce) scored each re-trained model again on committed cells by the "
             "committed rule. On those cells a change splits in two, each paired over seeds: the **rule's effect** "
             "(re-run - reproduced: the same re-trained models, today's rule against the committed one) and the "
             "**models' change** (reproduced - committed: the same rule and tokens, re-trained models against the "
             "committed ones). Differences of ln ppl with 95% t intervals; one whose interval holds 0 is "
             "inconclusive, whichever way it points.", "",
             "| corpus | variant | lengths | rule's effect | reading | models' change | reading | same tokens |",
             "|---|---|---|---|---|---|---|---|"]
    for r in [*rises, *cells]:
        kind = "rise " if "->" in r.lengths else ""
        lines.append(f"| {r.corpus} | {r.variant} | {kind}{r.lengths} | {_interval_cell(r.rule)} | {r.rule.reading} "
                     f"| {_interval_cell(r.models)} | {r.models.reading} | {'yes' if r.same_tokens else 'no'} |")
    return lines


def render(title: str, cells: list[CellComparison], rises: list[RiseComparison], sources: dict,
           run_text: str = "", pairing: Pairing | None = None, splits: tuple[list, list] = ([], []),
           curves_section: list[str] = ()) -> str:
    """The page: the rises first (what the claims read), then every cell, then what each scored."""
    seeds = sorted({s for c in cells for s in c.seeds})
    lines = [f"# {title}", "",
             f"The re-run (`{sources['rerun']}`) trained the table's models again for seeds "
             f"{', '.join(map(str, seeds))} and scored each cell by the code of its revision; the committed "
             f"cells of the same seeds come from {', '.join(f'`{p}`' for p in sources['committed'])}. "
             "Differences are of ln ppl, re-run minus committed, each seed's models paired, with 95% t intervals "
             "over the seeds; one whose interval holds 0 is inconclusive, whichever way it points "
             "(lenex.tables.rerun).", *(["", run_text] if run_text else []),
             *(pairing_lines(pairing) if pairing else []), "",
             "## Rise from L_tr to the longest length", "",
             "| corpus | variant | lengths | committed rise | re-run rise | re-run - committed | reading |",
             "|---|---|---|---|---|---|---|"]
    for r in rises:
        lines.append(f"| {r.corpus} | {r.variant} | {r.from_length} -> {r.to_length} | {_interval_cell(r.committed)} "
                     f"| {_interval_cell(r.rerun)} | {_difference_cell(r.difference)} | {_reading(r.difference)} |")
    lines += ["", "## Every cell", "",
              "| corpus | variant | length | mask | ppl committed | ppl re-run | Δ ln ppl | reading |",
              "|---|---|---|---|---|---|---|---|"]
    for c in cells:
        lines.append(f"| {c.corpus} | {c.variant} | {c.length} | {c.mask} | {c.ppl_committed:.2f} | {c.ppl_rerun:.2f} "
                     f"| {_difference_cell(c.difference)} | {_reading(c.difference)} |")
    lines += ["", "## What each scored", "",
              "Every length of a corpus scores the same tokens (docs/lex.md), so one line per corpus says it.", "",
              "| corpus | committed | re-run |", "|---|---|---|"]
    first = {}
    for c in cells:
        first.setdefault(c.corpus, c)
    lines += [f"| {corpus} | {c.scored_committed} | {c.scored_rerun} |" for corpus, c in sorted(first.items())]
    lines += split_lines(*splits, sources.get("reproduce", ""))
    if curves_section:
        lines += ["", *curves_section]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rerun", required=True, help="the re-run's raw results (rule table_rerun)")
    parser.add_argument("--committed", nargs="+", required=True, help="the committed run's raw results (its parts)")
    parser.add_argument("--run-record", nargs="*", default=[], help="the re-run's record (reference_record --record)")
    parser.add_argument("--reproduce", nargs="*", default=[],
                        help="lenex.scoring.reproduce's check of the re-trained models, where one was made")
    parser.add_argument("--train-meta", required=True,
                        help="the path of the training corpus's meta.json, as both raw results name it")
    parser.add_argument("--title", required=True)
    parser.add_argument("--out-md", required=True)
    parser.add_argument("--out-json", required=True)
    parser.add_argument("--out-curves-png", help="the re-trained models' training curves, drawn (their section on the page)")
    args = parser.parse_args(argv)
    rerun_files, committed_files = read_raw([args.rerun]), read_raw(args.committed)
    check_same_corpora(rerun_files, committed_files, args.train_meta)
    # a cell's committed record is the one at the re-run's path: the committed run also holds other
    # masks' records of the same corpus, variant and length (the ablations'), which are other cells
    rerun = cell_records(rerun_files)
    committed = cell_records({path: committed_files[path] for path in rerun_files if path in committed_files})
    if not rerun:
        raise ValueError(f"{args.rerun} holds no perplexity record to compare")
    paired = pairing(rerun, committed, rerun_files.get(args.train_meta), committed_files.get(args.train_meta))
    cells, rises = compare_cells(rerun, committed, paired.same), compare_rises(rerun, committed, paired.same)
    sources = {"rerun": args.rerun, "committed": args.committed}
    for option, given in (("run record", args.run_record), ("reproduce check", args.reproduce)):
        if len(given) > 1:
            raise ValueError(f"one {option}, got {len(given)}")
    run = read_json(args.run_record[0]) if args.run_record else None
    splits: tuple[list, list] = ([], [])
    if args.reproduce:
        sources["reproduce"] = args.reproduce[0]
        splits = split_changes(rerun, committed, read_json(args.reproduce[0])["cells"])
    revisions = sorted({r["git_rev"] for seeds in rerun.values() for _, r in seeds.values() if r.get("git_rev")})
    atomic_write_text(args.out_json, json.dumps({
        "sources": sources, "pairing_rule": paired.rule, "same_models": paired.same,
        "other_models": [asdict(c) for c in paired.changes], "not_paired_because": list(paired.why),
        "cells": [asdict(c) for c in cells], "rises": [asdict(r) for r in rises],
        "split": {"cells": [asdict(c) for c in splits[0]], "rises": [asdict(r) for r in splits[1]]}},
        indent=1) + "\n")
    curves_section = []
    if args.out_curves_png:
        curves, missing = rerun_curves(rerun_files)
        preset, _, paper = Path(args.rerun).parts[-4:-1]
        stem = Path(args.rerun).name.split(".jsonl")[0].replace(".seeds", ", seeds ")
        plot(curves, f"{paper} {stem} re-trained", preset, args.out_curves_png)
        curves_section = section(curves, missing, Path(args.out_curves_png).name,
                                 "Training curves of the re-trained models")
    atomic_write_text(args.out_md, render(args.title, cells, rises, sources, run_line(run, revisions), paired,
                                          splits, curves_section))


if __name__ == "__main__":
    run_cli(main)
