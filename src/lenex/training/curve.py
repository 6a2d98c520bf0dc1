"""A training run's curve: its loss against the tokens it has seen, from the `metrics.jsonl` lenex's
trainer writes (lenex.training.train), as one small JSON file (docs/curves.md).

    python -m lenex.training.curve METRICS OUT --checkpoint PT      # tokens per step from the checkpoint
    python -m lenex.training.curve METRICS OUT --tokens-per-step N  # or given

The trainer appends one record per log interval (`step`, `loss`, `lr`, `grad_norm`, `tokens_per_s`),
with `valid_loss` where it validated (every `eval_every` steps). A curve keeps, per record, the
tokens seen (step x tokens per step), the train loss and the validation loss where recorded. The
final checkpoint's own validation loss (computed after the last step, lenex.training.train._finish)
is the last validation point where the metrics have none at that step. Its summary: final train
loss, final and best validation loss, and `valid_slope_per_doubling` (`slope_per_doubling`: the
change of validation loss per doubling of tokens over the last interval between two validation
points), negative while the loss still falls; `still_falling` says it falls by more than
STILL_FALLING nats per doubling; and `train_slope_last_doubling` (the mean train loss over the
last doubling of tokens minus that over the doubling before), which a run that validates only at
its end (the scale study's and the sweeps' points) still has.

Strict: a file that is empty, has a line that is not JSON (a half-written last line too: a
finished run's metrics are whole), or a record without `step` or `loss` (what another trainer
writes, e.g. the fairseq backend's validation-only rows) is one error naming the file, the line
and the field. The curve is written atomically with its content digest (lenex.files.atomic_write_result);
one made from a checkpoint names it and its content digest (`checkpoint`, `checkpoint_sha256`).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from ..cli import run_cli
from ..digests import CONTENT_KEY
from ..files import atomic_write_result

FORMAT = "lenex-training-curve-v1"
#: What every record of lenex's trainer holds.
REQUIRED = ("step", "loss")
#: A validation loss falling by more than this many nats per doubling of tokens is "still falling".
STILL_FALLING = 0.01


def slope_per_doubling(tokens: list[float], losses: list[float]) -> float | None:
    """The change of loss per doubling of tokens over the last interval, (l2 - l1) / log2(t2 / t1)
    for the last two points; None with fewer than two points (or no interval: equal tokens)."""
    if len(tokens) != len(losses):
        raise ValueError(f"{len(tokens)} token counts for {len(losses)} losses")
    if len(tokens) < 2:
        return None
    (t1, l1), (t2, l2) = (tokens[-2], losses[-2]), (tokens[-1], losses[-1])
    if t1 <= 0 or t2 <= t1:
        return None
    return (l2 - l1) / math.log2(t2 / t1)


def train_slope_last_doubling(tokens: list[float], losses: list[float]) -> float | None:
    """The change of mean train loss per doubling of tokens over the run's last doubling: the mean
    loss of the records in (T/2, T] minus that of the records in (T/4, T/2], T the last record's
    tokens (one doubling apart, so the difference is per doubling). A window mean, not the last two
    records, because a logged train loss is one noisy batch's. None where either window has no record.
    It reads a run that validates only at its end; the learning-rate schedule's decay is part of it."""
    if len(tokens) != len(losses):
        raise ValueError(f"{len(tokens)} token counts for {len(losses)} losses")
    if not tokens or tokens[-1] <= 0:
        return None
    end = tokens[-1]
    last = [l for t, l in zip(tokens, losses) if end / 2 < t <= end]
    before = [l for t, l in zip(tokens, losses) if end / 4 < t <= end / 2]
    if not last or not before:
        return None
    return sum(last) / len(last) - sum(before) / len(before)


def slope_cells(summary: dict | None) -> tuple[str, str]:
    """A curve summary's two slopes as the pages print them (the diagnostics' tables, the sweeps'
    curves page): the validation slope per doubling, marked "(still falling)" where it is, and the
    train loss's change over the last doubling; — where a slope is absent."""
    summary = summary or {}
    valid, train = summary.get("valid_slope_per_doubling"), summary.get("train_slope_last_doubling")
    valid_cell = "—" if valid is None else f"{valid:+.3f}" + (" (still falling)" if summary.get("still_falling") else "")
    return valid_cell, "—" if train is None else f"{train:+.3f}"


def read_records(path) -> list[dict]:
    """The records of a metrics.jsonl, each with `step` and `loss` as numbers; anything else is one
    ValueError naming the file and line (and the field)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such metrics file (the training run left none)")
    lines = path.read_text(encoding="utf-8").splitlines()
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            last = " (a half-written last line: the run was cut off; rerun it)" if number == len(lines) else ""
            raise ValueError(f"{path}:{number}: not a JSON record ({err.msg}){last}") from None
        if not isinstance(record, dict):
            raise ValueError(f"{path}:{number}: not a JSON object")
        for field in REQUIRED:
            value = record.get(field)
            if field not in record:
                raise ValueError(f"{path}:{number}: no field {field!r} (lenex's trainer writes "
                                 f"{', '.join(REQUIRED)} in every record; this file is another trainer's?)")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{path}:{number}: {field} is {value!r}, not a finite number")
        records.append(record)
    if not records:
        raise ValueError(f"{path}: empty metrics file (no record): the training run logged no step")
    steps = [r["step"] for r in records]
    if any(b <= a for a, b in zip(steps, steps[1:])):
        raise ValueError(f"{path}: steps not increasing ({steps[:6]}...): two runs' metrics in one file?")
    return records


def checkpoint_facts(path) -> dict:
    """What a curve takes from a self-describing checkpoint (lenex.records.checkpoint): its tokens per
    step (tokens seen / steps), its step and its final validation loss."""
    from ..records.checkpoint import read_checkpoint

    payload = read_checkpoint(path)
    step, seen = payload.get("step"), payload.get("tokens_seen")
    if not isinstance(step, int) or not isinstance(seen, int) or step <= 0 or seen % step:
        raise ValueError(f"checkpoint {path} records no whole tokens per step (step {step!r}, tokens_seen "
                         f"{seen!r}): pass --tokens-per-step")
    return {"tokens_per_step": seen // step, "step": step, "valid_loss": payload.get("valid_loss"),
            "checkpoint_sha256": payload.get(CONTENT_KEY)}


def curve_of(records: list[dict], tokens_per_step: int, source: str, final: dict | None = None) -> dict:
    """The curve (see the module's docstring) of a run's records; `final`: the checkpoint's step and
    validation loss, its last validation point where the records have none at that step."""
    if not isinstance(tokens_per_step, int) or tokens_per_step <= 0:
        raise ValueError(f"tokens per step must be a positive whole number, not {tokens_per_step!r}")
    points = []
    for record in records:
        point = {"step": record["step"], "tokens": record["step"] * tokens_per_step, "train_loss": record["loss"]}
        if isinstance(record.get("valid_loss"), (int, float)):
            point["valid_loss"] = record["valid_loss"]
        points.append(point)
    from_checkpoint = False
    if final and isinstance(final.get("valid_loss"), (int, float)) and final.get("step") == points[-1]["step"] \
            and "valid_loss" not in points[-1]:
        points[-1]["valid_loss"], from_checkpoint = final["valid_loss"], True
    valid = [p for p in points if "valid_loss" in p]
    slope = slope_per_doubling([p["tokens"] for p in valid], [p["valid_loss"] for p in valid])
    best = min(valid, key=lambda p: p["valid_loss"]) if valid else None
    summary = {"steps": points[-1]["step"], "tokens": points[-1]["tokens"], "final_train_loss": points[-1]["train_loss"],
               "final_valid_loss": valid[-1]["valid_loss"] if valid else None,
               "best_valid_loss": best["valid_loss"] if best else None,
               "best_valid_tokens": best["tokens"] if best else None,
               "valid_points": len(valid), "final_valid_from_checkpoint": from_checkpoint,
               "valid_slope_per_doubling": slope,
               "train_slope_last_doubling": train_slope_last_doubling([p["tokens"] for p in points],
                                                                      [p["train_loss"] for p in points]),
               "still_falling": None if slope is None else slope < -STILL_FALLING}
    return {"format": FORMAT, "tokens_per_step": tokens_per_step, "tokens_per_step_from": source,
            "points": points, "summary": summary}


def training_curve(metrics, tokens_per_step: int | None = None, checkpoint=None) -> dict:
    """The curve of the run whose metrics.jsonl is `metrics`: tokens per step from `checkpoint`
    (with its final validation loss) or given."""
    if (tokens_per_step is None) == (checkpoint is None):
        raise ValueError("give the tokens per step either from a checkpoint or as a number (one of the two)")
    records = read_records(metrics)
    if checkpoint is not None:
        facts = checkpoint_facts(checkpoint)
        if facts["step"] != records[-1]["step"]:
            raise ValueError(f"{metrics} ends at step {records[-1]['step']}, its checkpoint {checkpoint} at step "
                             f"{facts['step']}: not the same run (or the run is not finished)")
        curve = curve_of(records, facts["tokens_per_step"], f"checkpoint {checkpoint}", facts)
        # which checkpoint it is the curve of, by content (lenex.digests), as the evaluations record theirs
        return {**curve, "checkpoint": str(checkpoint), "checkpoint_sha256": facts["checkpoint_sha256"]}
    return curve_of(records, tokens_per_step, "argument")


def no_curve(reason: str) -> dict:
    """The curve file of a run that records no curve lenex reads, saying why."""
    if not reason.strip():
        raise ValueError("a curve file without a curve says why: give a reason")
    return {"format": FORMAT, "none": reason}


def write_curve(curve: dict, out) -> None:
    atomic_write_result(out, curve, cell=f"training curve {out}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("metrics", help="a training run's metrics.jsonl (lenex.training.train)")
    parser.add_argument("out", help="the curve's JSON file")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--checkpoint", help="the run's final checkpoint: its tokens per step and final validation loss")
    source.add_argument("--tokens-per-step", type=int, help="tokens per optimizer step (batch size x sequence length)")
    source.add_argument("--none", metavar="REASON", help="write a curve file saying why the run has none (its "
                        "trainer's metrics are not lenex's); the metrics are not read")
    args = parser.parse_args(argv)
    if args.none is not None:
        write_curve(no_curve(args.none), args.out)
        return
    write_curve(training_curve(args.metrics, args.tokens_per_step, args.checkpoint), args.out)


if __name__ == "__main__":
    run_cli(main)
