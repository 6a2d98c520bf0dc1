"""Every recorded number checked where it is read: the evaluators refuse a NaN when
they write, and the table, figure, claim and diagnostics readers refuse one, or an impossible
number, when they read, whether from the evaluation file or from its raw results (a file edited
by hand, a raw line changed after it was collected).

One pure function per question, each raising one ValueError line naming the file, the record,
the field and the value:

- finite: every float of a record (nested lists and objects too);
- in its domain: a perplexity >= 1, an NLL >= 0, an ERF within [0, length], a cumulative
  receptive-field share within [0, 1], an attention resolution R(s) <= 1 (Eq. 4 as defined:
  lenex.lex.resolution.attention_resolution; it has no lower bound), counts >= 0;
- consistent: a record's ppl is exp(nll) (a segmented record's `corpus_ppl` is, and its `ppl`, a
  mean of per-piece perplexities, is at least that by Jensen's inequality); its nll the mean of its
  spans' NLLs (`span_nll`, spans of equal size); a cells file's mean over seeds the mean of its
  seeds' values, its std theirs;
- unchanged: a record carrying `content_sha256` (lenex.digests) still has that content.
"""

from __future__ import annotations

import math

from ..digests import record_digest_error

# Relative tolerance of "ppl = exp(nll) within rounding": evaluators write both from one float64.
EXP_TOLERANCE = 1e-6
# Evaluators round each span's mean NLL to 6 decimals (lenex.scoring.evaluate.span_means).
SPAN_ROUNDING = 1e-6
# Relative slack of a mean over seeds recomputed from its seeds' values (both float64).
MEAN_TOLERANCE = 1e-9
# Rounding slack of an upper bound that holds exactly in real arithmetic (c <= 1, R(s) <= 1).
BOUND_SLACK = 1e-9

PERPLEXITIES = ("ppl", "corpus_ppl")
NLLS = ("nll", "segment_nll", "piece_nll", "span_nll", "position_nll")
RESOLUTIONS = ("resolution", "resolution_of_head_mean_s", "resolution_per_head", "resolution_per_layer")
COUNTS = ("length", "tokens", "segments", "pieces", "texts", "steps", "params", "tokens_seen", "span",
          "train_length", "documents_skipped")


def numbers(value, path: str):
    """(field path, number) of every int or float in a JSON value, depth first."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from numbers(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from numbers(item, f"{path}[{index}]")


def first_non_finite(value) -> tuple[str, float] | None:
    """(field path, number) of the first NaN or infinity in a JSON value, or None: what the
    evaluators refuse to write (lenex.files.atomic_write_result) and the readers refuse to read."""
    if _all_finite(value):
        return None
    return next((p or "value", n) for p, n in numbers(value, "") if not math.isfinite(n))


def check_finite(value, where: str) -> None:
    """Every float in a JSON value is finite (Python's json reads NaN and Infinity)."""
    found = first_non_finite(value)
    if found:
        raise ValueError(f"{where}: {found[0]} is {found[1]}: not a finite number")


def _all_finite(value) -> bool:
    # The fast pass of check_finite (a receptive-field record holds thousands of floats); the
    # slow one, `numbers`, runs only to name the field once something is not finite.
    if type(value) is float:
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(map(_all_finite, value.values()))
    if isinstance(value, list):
        return all(math.isfinite(v) if type(v) is float else _all_finite(v) for v in value)
    return True


def _bad(where: str, field: str, value, why: str) -> ValueError:
    return ValueError(f"{where}: {field} is {value!r}: {why}")


def _each(record: dict, field: str):
    for path, number in numbers(record.get(field), field):
        yield path, number


def _bounds():
    """(fields, least value or None, greatest value or None, what the bound says) of each domain."""
    return ((PERPLEXITIES, 1, None, "a perplexity is at least 1"),
            (NLLS, 0, None, "a negative log-likelihood is at least 0"),
            (COUNTS, 0, None, "a count or length is at least 0"),
            (RESOLUTIONS, None, 1 + BOUND_SLACK, "attention resolution R(s) (Eq. 4) is at most 1"))


def check_domains(record: dict, where: str) -> None:
    """Each known field of an evaluation record within its domain."""
    for fields, least, greatest, bound in _bounds():
        for field in fields:
            for path, value in _each(record, field):
                if (least is not None and value < least) or (greatest is not None and value > greatest):
                    raise _bad(where, path, value, bound)
    if "erf" in record and isinstance(record.get("length"), int):
        erf, length = record["erf"], record["length"]
        if erf is not None and not 0 <= erf <= length:
            raise _bad(where, "erf", erf, f"an effective receptive field lies within [0, length = {length}]")
    for path, value in _each(record, "c"):
        if not -BOUND_SLACK <= value <= 1 + BOUND_SLACK:
            raise _bad(where, path, value, "a cumulative receptive-field share lies within [0, 1]")


def check_consistent(record: dict, where: str) -> None:
    """ppl = exp(nll) within rounding (for a segmented record: corpus_ppl = exp(nll) <= ppl)."""
    nll = record.get("nll")
    if not isinstance(nll, (int, float)) or isinstance(nll, bool):
        return
    field = "corpus_ppl" if "corpus_ppl" in record else "ppl"
    ppl = record.get(field)
    if isinstance(ppl, (int, float)) and ppl > 0 and abs(math.log(ppl) - nll) > EXP_TOLERANCE * max(1.0, nll):
        raise _bad(where, field, ppl, f"its record's nll is {nll!r}, so {field} should be exp(nll) = "
                                      f"{math.exp(nll) if nll < 700 else math.inf:.6g}")
    if field == "corpus_ppl" and isinstance(record.get("ppl"), (int, float)) \
            and record["ppl"] < ppl * (1 - EXP_TOLERANCE):
        raise _bad(where, "ppl", record["ppl"], f"a mean of per-piece perplexities is at least corpus_ppl = {ppl!r}")


def check_span_mean(record: dict, where: str) -> None:
    """A record's nll is the mean of its spans' NLLs where the spans cover its tokens (equal spans)."""
    spans, span, tokens, nll = (record.get(k) for k in ("span_nll", "span", "tokens", "nll"))
    if not (isinstance(spans, list) and spans and isinstance(span, int) and isinstance(tokens, int)
            and isinstance(nll, (int, float)) and len(spans) * span == tokens):
        return
    mean = math.fsum(spans) / len(spans)
    if abs(mean - nll) > SPAN_ROUNDING + EXP_TOLERANCE * abs(nll):
        raise _bad(where, "nll", nll, f"the mean of its {len(spans)} span_nll values is {mean:.6f}")


def check_cells(content: dict, where: str) -> None:
    """Each cell of a cells file (lenex.tables.cells) whose seeds' values it lists: `ours` is their
    mean, `ours_std` their sample std (ddof = 1) and `n_seeds` their count."""
    for index, cell in enumerate(content.get("cells") or []):
        seeds = cell.get("ours_seeds") if isinstance(cell, dict) else None
        if not isinstance(seeds, dict) or not seeds or not isinstance(cell.get("ours"), (int, float)):
            continue
        values = list(seeds.values())
        name = f"cell {index} ({cell.get('row')}, {cell.get('corpus')}, length {cell.get('our_length')})"
        mean = math.fsum(values) / len(values)
        if abs(cell["ours"] - mean) > MEAN_TOLERANCE * max(1.0, abs(mean)):
            raise _bad(where, f"{name} ours", cell["ours"], f"the mean of its seeds' values {seeds} is {mean!r}")
        if cell.get("n_seeds") is not None and cell["n_seeds"] != len(values):
            raise _bad(where, f"{name} n_seeds", cell["n_seeds"], f"it lists {len(values)} seeds' values")
        std = cell.get("ours_std")
        if isinstance(std, (int, float)) and len(values) > 1:
            expected = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))
            if abs(std - expected) > MEAN_TOLERANCE * max(1.0, expected) + 1e-12:
                raise _bad(where, f"{name} ours_std", std, f"the sample std of its seeds' values is {expected!r}")


def check_record(record: dict, where: str) -> None:
    """One recorded evaluation (or any recorded object): finite, in its domains, consistent."""
    check_finite(record, where)
    check_domains(record, where)
    check_consistent(record, where)
    check_span_mean(record, where)
    if isinstance(record.get("cells"), list):
        check_cells(record, where)


def check_unchanged(record: dict, where: str, file: str) -> None:
    """A record carrying a content digest still has the content it was written with."""
    why = record_digest_error(record)
    if why:
        raise ValueError(f"{where}: {why}: it was changed after it was written; delete it and rebuild it with "
                         f"`snakemake --cores 2 --force {file}` (what reads it then reruns)")


def check_recorded(content, path: str, file: str | None = None) -> None:
    """A recorded file's content as a renderer reads it: an object, or a list of objects (each
    named by its index and length). `file` (default `path`) is the file named in the fix."""
    file = file or path
    if isinstance(content, list):
        for index, item in enumerate(content):
            if isinstance(item, dict):
                length = f", length {item['length']}" if "length" in item else ""
                check_unchanged(item, f"{path} item {index}{length}", file)
                check_record(item, f"{path} item {index}{length}")
    elif isinstance(content, dict):
        check_unchanged(content, path, file)
        check_record(content, path)
