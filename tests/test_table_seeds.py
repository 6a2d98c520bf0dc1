"""A table cell over seeds (lenex.tables.seeds, lenex.experiment.presets.seed_list): the mean of each seed's
model, its sample std and each seed's value, as the tables print and the cells files carry them."""

import math

import pytest

from lenex.experiment.presets import seed_list, train_seed
from lenex.tables.cells import table_cells
from lenex.tables.paper_results import load_paper_results
from lenex.tables.seeds import mean_over_seeds, mean_std, seeds_fact
from lenex.tables.table_data import build_table


def _record(variant, seed, ppl, length=64, mask="causal", digest="t1", **extra):
    return {"variant": variant, "corpus": "pg22", "mask": mask, "length": length, "train_length": 64, "seed": seed,
            "ppl": ppl, "scored_tokens_sha256": digest, "checkpoint": f"{variant}/seed{seed}.pt",
            "span_nll": [math.log(ppl)] * 2, **extra}


def test_seed_list_and_training_seeds():
    assert seed_list({"experiment": {"seeds": 3}}) == [1, 2, 3] and seed_list({}) == [1]
    assert train_seed(1, 1) == 1 and train_seed(7, 3) == 9  # seed 1 is the preset's own run
    for bad in (0, 1.5, True, "2"):
        with pytest.raises(ValueError, match="experiment.seeds must be a whole number of at least 1"):
            seed_list({"name": "p", "experiment": {"seeds": bad}})
    with pytest.raises(ValueError, match="seeds are numbered from 1"):
        train_seed(1, 0)


def test_mean_over_seeds_by_hand():
    merged = mean_over_seeds([_record("rope", 2, 30.0), _record("rope", 1, 20.0), _record("rope", 3, 40.0),
                              _record("alibi", 1, 10.0)], "ppl")
    rope, alibi = (next(r for r in merged if r["variant"] == v) for v in ("rope", "alibi"))
    assert rope["ppl"] == 30.0 and rope["ppl_std"] == pytest.approx(10.0)  # sqrt((100 + 0 + 100) / 2)
    assert rope["seeds"] == [1, 2, 3] and rope["seed_values"] == {"1": 20.0, "2": 30.0, "3": 40.0}
    # a mean over models keeps no one model's own fields; a single seed keeps its pieces (one model)
    assert not {"seed", "checkpoint", "span_nll"} & set(rope)
    assert alibi["ppl_std"] is None and alibi["span_nll"] == [math.log(10.0)] * 2 and alibi["seeds"] == [1]
    assert mean_std([4.0]) == (4.0, None) and mean_std([1.0, 3.0]) == (2.0, pytest.approx(math.sqrt(2)))


def test_masks_and_lengths_are_separate_cells_and_older_records_pass_through():
    old = {"variant": "rope", "corpus": "pg22", "mask": "causal", "length": 64, "ppl": 5.0}
    merged = mean_over_seeds([_record("rope", 1, 2.0), _record("rope", 1, 4.0, mask="blockwise"),
                              _record("rope", 1, 6.0, length=128), old], "ppl")
    assert sorted(r["ppl"] for r in merged) == [2.0, 4.0, 5.0, 6.0] and merged[-1] is old


def test_seeds_of_a_cell_must_score_the_same_tokens_and_agree():
    with pytest.raises(ValueError, match="the seeds of cell .* scored different tokens"):
        mean_over_seeds([_record("rope", 1, 2.0), _record("rope", 2, 3.0, digest="t2")], "ppl")
    with pytest.raises(ValueError, match="two different results for .* seed 1: 2.0 and 3.0"):
        mean_over_seeds([_record("rope", 1, 2.0), _record("rope", 1, 3.0)], "ppl")


def test_a_table_cell_is_the_mean_with_its_std_and_every_seeds_value():
    spec = {"paper": "lex", "table": 4, "metric": "ppl", "paper_train_length": 1024, "columns": [1],
            "sections": [{"dataset": "pg22", "corpus": "pg22", "rows": [
                {"label": "RoPE", "method": "zeta-0", "variant": "rope", "mask": "causal"}]}]}
    paper = load_paper_results()
    table = build_table(spec, [_record("rope", 1, 20.0), _record("rope", 2, 22.0)], paper, {"train_length": 64})
    cell = table.sections[0].rows[0].cells[0]
    assert cell.ours_text == "21.00 ± 1.41" and cell.n_seeds == 2 and cell.ours_std == pytest.approx(math.sqrt(2))
    record = table_cells(table)["cells"][0]
    assert record["ours_seeds"] == {"1": 20.0, "2": 22.0} and record["n_seeds"] == 2 and "ours_pieces" not in record
    one = build_table(spec, [_record("rope", 1, 20.0)], paper, {"train_length": 64}).sections[0].rows[0].cells[0]
    assert one.ours_text == "20.00" and one.n_seeds == 1 and one.ours_pieces["unit"] == "span"


def test_the_header_says_the_seeds_per_model():
    assert seeds_fact([_record("rope", 1, 2.0), _record("rope", 2, 2.0)]) == (
        "2 seeds per model; each cell the mean over seeds ± sample std (ddof = 1)")
    assert seeds_fact([_record("rope", 1, 2.0)]) == "1 seed per model" and seeds_fact([]) is None
    mixed = seeds_fact([{"variant": "a", "seeds": [1, 2, 3]}, {"model": "b", "seed": 1}])
    assert mixed.startswith("1 seed: b; 3 seeds: a")
