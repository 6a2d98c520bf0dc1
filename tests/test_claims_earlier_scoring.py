"""Claims judged on re-runs beside the verdicts the reference run's records give (lenex.claims.earlier_scoring)."""
import pytest

from lenex.claims.earlier_scoring import earlier_record, earlier_section, earlier_table

CELLS = ["results/w/tables/lex/table2.cells.json", "results/w/tables/lex/table3.cells.json"]
EARLIER = ["results/w/reruns/lex/reference/table2.cells.json", "results/w/tables/lex/table3.cells.json"]


def records(**verdicts):
    return [{"id": i, "verdict": v, "on_paper": "holds"} for i, v in verdicts.items()]


def test_the_moved_verdicts_and_both_sides_counts_are_listed():
    now = records(a="holds", b="contradicted", c="inconclusive")
    before = records(a="holds", b="inconclusive", c="inconclusive")
    record = earlier_record(CELLS, EARLIER, now, before)
    assert record["replaced"] == [{"today": CELLS[0], "earlier": EARLIER[0]}]
    assert record["moved"] == [{"id": "b", "earlier": "inconclusive", "current": "contradicted"}]
    document = {"paper": "lex", "claims": now, "earlier_scoring": record}
    page = "\n".join(earlier_section(document))
    assert "(table2)" in page and f"`{EARLIER[0]}`" in page
    assert "| the reference run's | 3 | 1 | 0 | 2 | 0 | 0 |" in page
    assert "| the re-runs' | 3 | 1 | 1 | 1 | 0 | 0 |" in page
    assert "| b | inconclusive | contradicted |" in page
    summary = "\n".join(earlier_table([document, {"paper": "rf", "claims": now}]))
    assert "- b (lex): inconclusive → contradicted" in summary and "| rf |" not in summary


def test_no_move_says_so_and_no_earlier_side_adds_nothing():
    now = records(a="holds")
    document = {"paper": "lex", "claims": now, "earlier_scoring": earlier_record(CELLS, EARLIER, now, now)}
    assert earlier_section(document)[-1] == "No verdict moved."
    assert earlier_section({"paper": "lex", "claims": now}) == [] and earlier_table([{"claims": now}]) == []


def test_the_earlier_side_reads_the_same_tables():
    with pytest.raises(ValueError, match="--earlier-cells names 1 cells files, --cells 2"):
        earlier_record(CELLS, EARLIER[:1], [], [])
