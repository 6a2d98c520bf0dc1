"""The evaluations LEX's tables read (lenex.lex.targets) and the one "mask beyond L_tr" rule
(lenex.tables.table_data.evaluation_mask) that they and the table cells share."""

import pytest
import yaml

from lenex.lex import targets
from lenex.tables.table_data import evaluation_mask
from test_workflow import REPO

EXPERIMENT = yaml.safe_load((REPO / "config/experiments/lex.yaml").read_text())
LEX_ROW = {"variant": "xpos", "mask": "causal", "mask_beyond_train": "blockwise"}


@pytest.mark.parametrize("length, expected", [(16, "causal"), (32, "causal"), (33, "blockwise"), (256, "blockwise")])
def test_mask_beyond_train_applies_only_past_the_training_length(length, expected):
    assert evaluation_mask(LEX_ROW, length, 32) == expected


def test_row_without_a_mask_beyond_keeps_its_mask():
    assert evaluation_mask({"mask": "sliding"}, 256, 32) == "sliding"
    assert evaluation_mask({"mask": "causal", "mask_beyond_train": ""}, 256, 32) == "causal"


@pytest.mark.parametrize("multiple, train_length, expected", [(0.25, 32, 8), (1, 32, 32), (8, 32, 256), (0.5, 1024, 512)])
def test_eval_length_is_a_whole_multiple_of_the_training_length(multiple, train_length, expected):
    assert targets.eval_length(multiple, train_length) == expected


def test_eval_length_names_a_length_that_is_not_whole():
    with pytest.raises(ValueError, match=r"0.25 x L_tr = 2.5 is not a whole number"):
        targets.eval_length(0.25, 10)


def test_table3_reads_resolutions_with_bca_only_for_lex_beyond_train_length():
    paths = targets.table_results("tiny", EXPERIMENT["tables"]["table3"], 32, [1])
    root = "results/tiny/resolution/lex"
    # 5 rows x 2 columns, less one: "LEX" and "LEX without BCA" are the same causal file at 1x.
    assert paths == sorted([
        f"{root}/{v}/seed1/pg22/causal/L{n}.json" for v in ("transformer", "alibi", "rope") for n in (32, 64)
    ] + [f"{root}/xpos/seed1/pg22/causal/L32.json", f"{root}/xpos/seed1/pg22/blockwise/L64.json",
         f"{root}/xpos/seed1/pg22/causal/L64.json"])


def test_table4_reads_every_row_with_bca_at_8x():
    paths = targets.table_results("tiny", EXPERIMENT["tables"]["table4"], 32, [1])
    variants = ("xpos", "xpos_no_rotation", "rope", "xpos_scalar_zeta")
    assert paths == sorted([f"results/tiny/eval/lex/{v}/seed1/pg22/causal/L32.json" for v in variants]
                           + [f"results/tiny/eval/lex/{v}/seed1/pg22/blockwise/L256.json" for v in variants])


def test_every_seed_has_its_model_and_its_own_result_of_every_cell():
    spec = EXPERIMENT["tables"]["table4"]
    one, two = targets.table_results("tiny", spec, 32, [1]), targets.table_results("tiny", spec, 32, [1, 2])
    assert len(two) == 2 * len(one) and set(one) < set(two)
    assert "results/tiny/eval/lex/rope/seed2/pg22/blockwise/L256.json" in two
    assert targets.model_path("tiny", "rope", 2) == "results/tiny/models/lex/rope/seed2.pt"
    assert targets.cell_path("tiny", ("resolution", "xpos", "pg22", "causal", 64), 3) == \
        "results/tiny/resolution/lex/xpos/seed3/pg22/causal/L64.json"


def test_unavailable_corpora_are_skipped_and_named():
    spec = EXPERIMENT["tables"]["table2"]
    corpora = {s["corpus"] for s in spec["sections"]}
    assert corpora == {"pg22", "qmsum"}
    skip = {"qmsum": "no apt-get here"}
    paths = targets.table_results("tiny", spec, 32, [1], skip_corpus=lambda c: c in skip)
    assert paths and all("/pg22/" in p for p in paths)
    assert targets.table_corpora(spec, lambda c: c in skip) == ["pg22"]
    assert targets.table_unavailable(spec, skip.get) == {"qmsum": "no apt-get here"}
    assert targets.section_results("tiny", spec, 32, "qmsum", [1]) == [
        p for p in targets.table_results("tiny", spec, 32, [1]) if "/qmsum/" in p]


def test_section_results_of_table2_are_figure1s_pg22_evaluations():
    spec = EXPERIMENT["tables"]["table2"]
    pg22 = targets.section_results("tiny", spec, 32, "pg22", [1, 2])
    # 4 variants x 6 lengths (1/4 .. 8 x L_tr) x 2 seeds; LEX beyond L_tr with BCA.
    assert len(pg22) == 4 * len(spec["columns"]) * 2 and all("/pg22/" in p for p in pg22)
    assert "results/tiny/eval/lex/xpos/seed2/pg22/blockwise/L256.json" in pg22
    assert "results/tiny/eval/lex/xpos/seed1/pg22/causal/L256.json" not in pg22


def test_evaluated_cells_list_every_table_cell_once_per_seed():
    tables = EXPERIMENT["tables"]
    cells = targets.evaluated_cells(tables, 32, [1, 2])
    every = sorted(set().union(*(targets.table_cells(spec, 32) for spec in tables.values())))
    for seed in (1, 2):  # each cell once for each seed's model, in the cells' order
        assert [c[:5] for c in cells if c[5] == seed] == every
    assert len(cells) == 2 * len(every)
    # Table 3 reads resolutions of PG22 only
    assert {(c[0], c[2]) for c in cells if c[0] == "resolution"} == {("resolution", "pg22")}
    paths = {targets.cell_path("tiny", c[:5], c[5]) for c in cells}
    assert paths == set().union(*(targets.table_results("tiny", spec, 32, [1, 2]) for spec in tables.values()))