"""The study's record, results/scale-study/points.jsonl: one JSON object per trained point.

A point is complete when its ratios cover every multiple its phenomenon asks for now; a multiple
added to the config after a point was recorded is measured on the point's kept model (the record
says when and at which revision, under `added`), or, with that model gone, by training it again.
A new largest multiple widens the scored span (the LEX protocol scores the same tokens at every
length), so then every length is measured again and the record replaced. A protocol added to a
phenomenon (`protocols: [lex, last-token]`) is measured the same way: on the kept model, or by
training it again.
"""
from __future__ import annotations

import fcntl
import json
from pathlib import Path

from ..files import atomic_write_text
from ..records.scale_record import PROTOCOL_FIELDS, scores_of


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


def record_point(path: Path, record: dict) -> None:
    """Add or replace one point (by key, in place): the file is rewritten atomically, never left
    half-written, under a lock, so that two sweeps run side by side (`--only` each) lose no line."""
    with open(path.parent / f".{path.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        points = read_points(path)
        points[record["key"]] = record
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
