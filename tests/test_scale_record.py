"""lenex.records.scale_record: where a scale-study point keeps each protocol's scores (read by the claims and
by the study's own write-up, written by the study)."""
import pytest

from lenex.records.scale_record import PROTOCOL_FIELDS, scores_of

POINT = {"ppl": {"64": 10.0}, "ratio": {"1": 1.0, "8": 3.5}, "last_token": {"ratio": {"1": 1.0, "8": 1.2}}}


def test_the_lex_protocol_reads_the_points_own_fields_and_another_its_field():
    assert scores_of(POINT, "lex") is POINT
    assert scores_of(POINT, "last-token") == {"ratio": {"1": 1.0, "8": 1.2}}
    assert PROTOCOL_FIELDS == {"last-token": "last_token"}


def test_a_point_not_scored_with_a_protocol_has_no_scores_of_it():
    assert scores_of({"ratio": {"1": 1.0}}, "last-token") is None


def test_an_unknown_protocol_is_one_error_naming_the_known_ones():
    with pytest.raises(ValueError, match="unknown protocol 'cache'; known: lex, last-token"):
        scores_of(POINT, "cache")
