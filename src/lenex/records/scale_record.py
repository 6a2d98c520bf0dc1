"""The scale study's point record as both its writer and its readers see it: where a point keeps
the scores of each protocol. The study (lenex.scale_study) writes the records and the claims
(lenex.claims.scale) read them; both import this module, so neither imports the other."""
from __future__ import annotations

# Protocols scored beside the LEX one (every point's `ppl` and `ratio`), and the record's field
# for each: {"ppl", "ratio", "segments", "span"} (lenex.scale_study.study.last_token_scores).
PROTOCOL_FIELDS = {"last-token": "last_token"}


def scores_of(record: dict, protocol: str) -> dict | None:
    """A point's scores ({"ppl", "ratio", ...}) with `protocol`: the LEX protocol's are the
    record's own fields; another's, its PROTOCOL_FIELDS entry (None when it was not scored so)."""
    if protocol == "lex":
        return record
    if protocol not in PROTOCOL_FIELDS:
        raise ValueError(f"unknown protocol {protocol!r}; known: lex, {', '.join(PROTOCOL_FIELDS)}")
    return record.get(PROTOCOL_FIELDS[protocol])
