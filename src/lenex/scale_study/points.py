"""The study's record, results/scale-study/points.jsonl: one JSON object per trained point.

A point is complete when its ratios cover every multiple its phenomenon asks for now; a multiple
added to the config after a point was recorded is measured on the point's kept model (the record
says when and at which revision, under `added`), or, with that model gone, by training it again
(Snakemake decides which: the model is a rule's output, lenex.scale_study.study_rules). A new
largest multiple widens the scored span (the LEX protocol scores the same tokens at every
length), so then every length is measured again and the record replaced. A protocol added to a
phenomenon (`protocols: [lex, last-token]`) is measured the same way: on the kept model, or by
training it again.

points.jsonl is the store: a point's job writes its own record, and the gather (gather_points)
adds it in place of the point's line, or at the end for a new point, so the committed lines keep
the order they were first recorded in.
"""
from __future__ import annotations

import dataclasses
import fcntl
import json
from pathlib import Path

from ..files import atomic_write_text
from ..records.scale_record import PROTOCOL_FIELDS, scores_of


def point_name(key: str) -> str:
    """A point's key as one path component: the name of its model, training state and scores."""
    return key.replace("/", "__")


@dataclasses.dataclass(frozen=True)
class PointFiles:
    """Where a point's model lives (trained by the pipeline's one training rule, its spec from
    lenex.scale_study.studies), its training state and metrics (the trainer's workdir) and its scores."""

    model: Path
    workdir: Path
    scores: Path


def read_points(path: Path) -> dict[str, dict]:
    """Recorded points by key; a malformed line is one error naming the file and line."""
    points = {}
    if not path.exists():
        return points
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            record = json.loads(line)
            points[record["key"]] = record
        except (json.JSONDecodeError, KeyError, TypeError) as err:
            raise ValueError(f"{path}:{number}: not a recorded point ({err}); remove the line to rerun it") from None
    return points


def same_model(record: dict, measured: dict) -> bool:
    """Whether a fresh record was measured on the recorded point's model (its training's outcome,
    to the bit: training on CPU is deterministic, so a model trained again from the same state may
    be the same one)."""
    return all(record.get(k) == measured.get(k) for k in ("steps", "tokens_seen", "final_loss", "valid_loss"))


ADDED_FACTS = ("command", "finished_utc", "git_rev", "device", "date")


def merged_record(recorded: dict | None, measured: dict) -> dict:
    """What the store keeps of a point measured again: the recorded point completed by the new
    lengths and protocols when `measured` is of the same model over the same span (the largest
    multiple), else `measured` itself."""
    if (recorded is None or not same_model(recorded, measured)
            or max(recorded["multiples"]) != max(measured["multiples"])):
        return measured
    return with_added_scores(recorded, measured, {k: measured[k] for k in ADDED_FACTS if k in measured})


def gather_points(path: Path, measured: list[dict]) -> None:
    """Add the point records `measured` to the store at `path`, each merged with its recorded line
    (merged_record) and kept in its place; the store is rewritten even with none (the same bytes)."""
    with open(path.parent / f".{path.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        points = read_points(path)
        for record in measured:
            points[record["key"]] = merged_record(points.get(record["key"]), record)
        atomic_write_text(path, "".join(json.dumps(p, sort_keys=True) + "\n" for p in points.values()))


def length_ratios(ppl_by_length: dict[int, float], train_length: int, multiples: list[int]) -> dict[str, float]:
    """{k: ppl(k L_tr) / ppl(L_tr)} for every multiple k (keys as strings, for JSON)."""
    missing = [k for k in {1, *multiples} if k * train_length not in ppl_by_length]
    if missing:
        raise ValueError(f"no perplexity at {sorted(k * train_length for k in missing)} tokens "
                         f"(L_tr {train_length}); have {sorted(ppl_by_length)}")
    base = ppl_by_length[train_length]
    return {str(k): ppl_by_length[k * train_length] / base for k in multiples}


def missing_multiples(record: dict, multiples: list[int]) -> list[int]:
    """The multiples the config asks for that a recorded point has no ratio at."""
    return [k for k in multiples if str(k) not in record["ratio"]]


def missing_protocols(record: dict, multiples: list[int], protocols: list[str]) -> list[str]:
    """The protocols besides LEX's that the config asks for and a recorded point has no scores
    of, or none at one of the multiples."""
    return [protocol for protocol in protocols if protocol != "lex"
            for scores in [scores_of(record, protocol)]
            if scores is None or any(str(k) not in scores["ratio"] for k in multiples)]


def with_added_scores(record: dict, measured: dict, facts: dict) -> dict:
    """`record` completed by `measured` (a fresh record of the same model at more lengths, or
    with another protocol's scores): its ppl and ratios gain the new lengths, it gains the
    protocols it lacked, everything else (training facts, when it was first recorded) stays,
    and `added` lists what was measured later, when and at which revision."""
    base = str(record["train_length"])
    if abs(measured["ppl"][base] / record["ppl"][base] - 1) > 1e-6:
        raise ValueError(f"{record['key']}: ppl(L_tr) {measured['ppl'][base]:.4f} is not the recorded "
                         f"{record['ppl'][base]:.4f}: the kept model is not the one recorded")
    new = missing_multiples(record, measured["multiples"])
    protocols = [p for p, field in PROTOCOL_FIELDS.items() if field in measured and measured[field] != record.get(field)]
    scores = {PROTOCOL_FIELDS[p]: measured[PROTOCOL_FIELDS[p]] for p in protocols}
    added = list(record.get("added", [])) + [{"multiples": new, **({"protocols": protocols} if protocols else {}),
                                              **facts}]
    return {**record, "multiples": measured["multiples"], "ppl": {**record["ppl"], **measured["ppl"]},
            "ratio": {**record["ratio"], **measured["ratio"]}, **scores, "added": added}
