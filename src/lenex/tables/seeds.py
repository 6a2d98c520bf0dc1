"""A table cell over seeds: every model a claim compares is trained with seeds 1..n (each a separate
training run of the same variant, lenex.experiment.presets.seed_list), and each cell is the mean of its seeds'
values with their sample std and every seed's value (the claims pair two cells seed by seed,
lenex.claims.intervals).

`mean_over_seeds` turns per-seed records (an evaluation's record with its `seed`) into one record
per cell: the first seed's record with `<metric>` the mean, `<metric>_std` the sample std (ddof = 1;
None for one seed), `seeds` the seed list and `seed_values` each seed's value. Records without a
`seed` (already a mean, or written before seeds) pass through unchanged. The seeds of one cell
must score the very same tokens (their recorded `scored_tokens_sha256`), so that comparisons pair.

A cell never quietly loses a seed: a record of a seeded cell without its `seed`, or without the
metric its siblings have, is an error naming its file (lenex.tables.raw_results.read_recorded
tells each record its file), and every cell of one model (the cell key without mask and length)
has the same seeds.
"""

from __future__ import annotations

import numpy as np

from ..records.run_facts import RUN_FACTS

#: What one seed's model has of its own: not a fact of the mean.
PER_MODEL_FIELDS = ("seed", "checkpoint", "seconds", "checkpoint_sha256", "data_sha256", "content_sha256")
#: Per-piece NLLs of one model (lenex.tables.table_data.PIECE_FIELDS): kept where a cell has one
#: seed (its pieces are then the cell's replication), dropped for a mean over seeds.
PIECE_FIELDS = ("span_nll", "segment_nll", "piece_nll")
#: The fields that name one cell of the generic tables (LEX, receptive field).
CELL_KEY = ("variant", "corpus", "mask", "length", "train_length")


def mean_std(values) -> tuple[float, float | None]:
    """The mean and the sample standard deviation (ddof = 1; None for a single value)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or not len(values):
        raise ValueError("a mean over seeds needs at least one value")
    return float(values.mean()), (float(values.std(ddof=1)) if len(values) > 1 else None)


def source(record: dict) -> str:
    """The file a record was read from (lenex.tables.raw_results.Recorded), else its checkpoint."""
    return getattr(record, "source", None) or f"the record of {record.get('checkpoint', 'an unnamed checkpoint')}"


def group_by_seed(records: list[dict], metric: str, key=CELL_KEY) -> tuple[dict[tuple, dict[int, dict]], list[dict]]:
    """({cell key: {seed: record}}, the records that pass through: no `seed`, or no `metric`).
    Two different values for one cell and seed is an error (a stale or mixed-up results set), and
    so is a record that would silently leave its cell's mean: one without `seed` or without
    `metric` in a cell whose other records have them (naming the files)."""
    groups: dict[tuple, dict[int, dict]] = {}
    passed = []
    for record in records:
        if "seed" not in record or record.get(metric) is None:
            passed.append(record)
            continue
        cell = tuple(record.get(field) for field in key)
        by_seed = groups.setdefault(cell, {})
        seed = int(record["seed"])
        if seed in by_seed and by_seed[seed][metric] != record[metric]:
            raise ValueError(f"two different results for {dict(zip(key, cell))} seed {seed}: "
                             f"{by_seed[seed][metric]} and {record[metric]} ({source(by_seed[seed])}; {source(record)})")
        by_seed[seed] = record
    for record in passed:
        cell = tuple(record.get(field) for field in key)
        if cell not in groups:
            continue
        seeded = ", ".join(f"seed {s}: {source(r)}" for s, r in sorted(groups[cell].items()))
        if "seed" not in record:
            raise ValueError(f"{source(record)}: no 'seed' field, but the other results of its cell "
                             f"{dict(zip(key, cell))} record theirs ({seeded}): rebuild it (its evaluation writes the seed)")
        raise ValueError(f"{source(record)}: no {metric!r} field (seed {record['seed']}), which the mean over seeds of "
                         f"its cell {dict(zip(key, cell))} needs ({seeded}): rebuild it with its evaluation")
    return groups, passed


def check_model_seeds(groups: dict[tuple, dict[int, dict]], key=CELL_KEY) -> None:
    """Every cell of one model (the key's fields other than mask and length) has the same seeds: a
    cell with fewer would be a mean over fewer seeds than its row says."""
    place = [i for i, field in enumerate(key) if field not in ("mask", "length")]
    seeds_of: dict[tuple, set] = {}
    for cell, by_seed in groups.items():
        seeds_of.setdefault(tuple(cell[i] for i in place), set()).update(by_seed)
    for cell, by_seed in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        model = tuple(cell[i] for i in place)
        missing = sorted(seeds_of[model] - set(by_seed))
        if missing:
            have = ", ".join(f"seed {s}: {source(r)}" for s, r in sorted(by_seed.items()))
            raise ValueError(f"cell {dict(zip(key, cell))} has no result of seed(s) {missing}, which its model's other "
                             f"cells have ({have}): its evaluation is missing from the table's inputs")


def check_same_tokens(cell: tuple, by_seed: dict[int, dict]) -> None:
    """Every seed of a cell scored the same tokens (where the evaluator records them)."""
    digests = {r.get("scored_tokens_sha256") for r in by_seed.values()}
    if len(digests) > 1:
        raise ValueError(f"the seeds of cell {cell} scored different tokens ({len(digests)} token sets): "
                         "rerun their evaluations at one preset")


def merged_record(by_seed: dict[int, dict], metric: str) -> dict:
    """One cell's record from its seeds' records (the module's docstring)."""
    seeds = sorted(by_seed)
    values = [by_seed[s][metric] for s in seeds]
    mean, std = mean_std(values)
    dropped = PER_MODEL_FIELDS + (PIECE_FIELDS if len(seeds) > 1 else ())
    merged = {k: v for k, v in by_seed[seeds[0]].items() if k not in dropped}
    merged.update({metric: mean, f"{metric}_std": std, "seeds": seeds,
                   "seed_values": {str(s): v for s, v in zip(seeds, values)}})
    for fact in RUN_FACTS:  # seeds run apart (another revision, day or machine): the header names each
        distinct = sorted({str(by_seed[s][fact]) for s in seeds if by_seed[s].get(fact) is not None})
        if len(distinct) > 1:
            merged[fact] = distinct
    return merged


def mean_over_seeds(records: list[dict], metric: str, key=CELL_KEY) -> list[dict]:
    """Per-seed records -> one record per cell (sorted by cell), then the records that pass through."""
    groups, passed = group_by_seed(records, metric, key)
    check_model_seeds(groups, key)
    out = []
    for cell, by_seed in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        check_same_tokens(cell, by_seed)
        out.append(merged_record(by_seed, metric))
    return out + passed


def seeds_fact(records: list[dict]) -> str | None:
    """The header line saying how many seeds each model (its `variant`, or the segmented paper's
    `model`) has, from per-seed records' `seed` or merged records' `seeds`; None without records."""
    per_model: dict[str, set] = {}
    for record in records:
        seeds = record.get("seeds") or [record.get("seed", 1)]
        name = record.get("variant", record.get("model"))
        per_model.setdefault(str(name), set()).update(int(s) for s in seeds)
    if not per_model:
        return None
    counts: dict[int, list[str]] = {}
    for model, seeds in sorted(per_model.items()):
        counts.setdefault(len(seeds), []).append(model)
    if len(counts) == 1:
        count = next(iter(counts))
        text = f"{count} seed{'s' if count > 1 else ''} per model"
    else:
        text = "; ".join(f"{n} seed{'s' if n > 1 else ''}: {', '.join(models)}" for n, models in sorted(counts.items()))
    return text + ("; each cell the mean over seeds ± sample std (ddof = 1)" if max(counts) > 1 else "")
