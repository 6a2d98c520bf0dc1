"""Tests for lenex.tables: paper numbers, cell lookup, rendering and the CLI."""
import json
import re
from pathlib import Path

import pytest
import yaml

from lenex.cli import run_cli
from lenex.tables.paper_results import load_paper_results, paper_value
from lenex.tables.render import build_table, main, render_latex, render_markdown

PACKAGED_CSV = Path(__file__).parents[1] / "src/lenex/paper_results.csv"
SHARED_CSV = Path(__file__).parents[1].parent / "shared/paper_results/paper_results.csv"

ROWS = [
    {"label": "Transformer", "method": "transformer", "variant": "transformer", "mask": "causal"},
    {"label": "LEX", "method": "lex", "variant": "xpos", "mask": "causal",
     "mask_beyond_train": "blockwise"},
]
SPEC = {
    "paper": "lex", "table": 2, "title": "Perplexity by evaluation length (LEX Table 2)",
    "metric": "ppl", "paper_train_length": 1024, "columns": [0.25, 1, 2],
    "paper_scale": {"n_layer": 24, "d_model": 1024, "steps": 50000},
    "sections": [
        {"dataset": "pg22", "label": "PG22", "corpus": "pg22", "rows": ROWS},
        {"dataset": "qmsum", "label": "QMSum", "corpus": None, "rows": ROWS},
    ],
}
HEADER = {"preset": "tiny", "n_params": 3_300_000, "n_layer": 2, "d_model": 64, "n_head": 4,
          "train_length": 64, "steps": 200, "tokens_seen": 819_200, "git_rev": "abc1234",
          "stand_ins": {"pg22": "PG22 → offline stand-in: Shakespeare + Milton, test split 5000 tokens"}}


def result(variant, mask, length, ppl, corpus="pg22"):
    return {"variant": variant, "corpus": corpus, "mask": mask, "length": length,
            "train_length": 64, "ppl": ppl, "tokens": 1000}


RESULTS = [
    result("transformer", "causal", 64, 31.00),
    result("xpos", "causal", 64, 27.00),
    result("xpos", "causal", 128, 99.99),      # must NOT be used beyond L_tr
    result("xpos", "blockwise", 128, 26.00),   # the one LEX uses at 2x
    result("xpos", "blockwise", 64, 11.11),    # must NOT be used at 1x
    result("transformer", "causal", 64, 5.0, corpus="qmsum"),  # section has corpus null
]


@pytest.fixture(scope="module")
def paper_df():
    return load_paper_results()


@pytest.fixture(scope="module")
def table(paper_df):
    return build_table(SPEC, RESULTS, paper_df, HEADER)


def cell(table, section, row, column):
    return table.sections[section].rows[row].cells[column]


def test_paper_value_lookup(paper_df):
    assert paper_value(paper_df, "lex", 2, "pg22", "transformer", 1024) == 30.54
    assert paper_value(paper_df, "lex", "2", "pg22", "transformer", "1024") == 30.54
    assert paper_value(paper_df, "lex", 2, "pg22", "transformer", 999) is None
    assert paper_value(paper_df, "lex", 2, "nosuchset", "transformer", 1024) is None


def test_delta_and_format(table):
    c = cell(table, 0, 0, 1)  # Transformer @ 1x: paper 30.54, ours 31.00
    assert (c.paper_text, c.ours_text, c.delta_text) == ("30.54", "31.00", "+0.46")
    assert c.text == "30.54 / 31.00 / +0.46"
    lex_1x = cell(table, 0, 1, 1)  # paper 26.59, ours 27.00 (causal, not the blockwise 11.11)
    assert lex_1x.ours_text == "27.00" and lex_1x.mask == "causal"
    assert lex_1x.delta_text == "+0.41"


def test_small_values_keep_two_significant_digits():
    from lenex.tables.formatting import format_delta, format_metric

    # An attention resolution of 0.0012 must not print as 0.00; ppl keeps 2 decimals, none from 1000.
    assert [format_metric(v) for v in (0.0012335, 5.5549e-05, 0.0, 0.98, 369.794, 12747.41)] == [
        "0.0012", "5.6e-05", "0.00", "0.98", "369.79", "12747"]
    assert [format_delta(v) for v in (-0.97877, 0.0034, -12155.3)] == ["-0.98", "+0.0034", "-12155"]


def test_mask_beyond_train_picks_blockwise_only_beyond(table):
    lex_2x = cell(table, 0, 1, 2)  # paper 25.53 at 2048; ours at 128 tokens
    assert lex_2x.mask == "blockwise"
    assert lex_2x.ours_text == "26.00" and lex_2x.delta_text == "+0.47"
    assert "99.99" not in render_markdown(table)
    assert "11.11" not in render_markdown(table)


def test_large_and_negative_values(paper_df):
    results = [result("transformer", "causal", 128, 20.0)]  # paper 132.46 at 2048
    t = build_table(SPEC, results, paper_df, HEADER)
    assert cell(t, 0, 0, 2).text == "132.46 / 20.00 / -112.46"
    results = [result("transformer", "causal", 128, 12345.678)]
    assert cell(build_table(SPEC, results, paper_df, HEADER), 0, 0, 2).text \
        == "132.46 / 12346 / +12213"


def test_missing_result_says_not_computed(table):
    c = cell(table, 0, 0, 0)  # no transformer result at 16 tokens
    assert c.status == "not computed" and c.ours is None and c.delta is None
    assert c.text == "38.1 / not computed / —"


def test_corpus_null_section_is_not_computed_yet(table):
    cells = [c for r in table.sections[1].rows for c in r.cells]
    assert all(c.ours_text == "not computed yet" and c.ours is None for c in cells)
    assert cells[1].paper_text == "16.05"  # the paper's number is still shown
    assert "5.00" not in render_markdown(table)  # the qmsum result must not leak in


def test_unavailable_corpus_says_why(paper_df):
    header = {**HEADER, "unavailable": {"pg22": "this machine has no apt-get"}}
    t = build_table(SPEC, RESULTS, paper_df, header)
    cells = [c for r in t.sections[0].rows for c in r.cells]
    assert all(c.status == "not computed" and c.ours is None for c in cells)
    assert t.sections[0].stand_in == "not computed: this machine has no apt-get"
    assert "not computed: this machine has no apt-get" in render_markdown(t)


def test_missing_paper_number_is_dash(paper_df):
    spec = dict(SPEC, columns=[0.5, 3])  # 3x = 3072 tokens: not in the paper
    t = build_table(spec, [result("transformer", "causal", 192, 40.0)], paper_df, HEADER)
    assert cell(t, 0, 0, 1).text == "— / 40.00 / —"


def test_markdown_header_and_columns(table):
    md = render_markdown(table)
    assert "preset `tiny`" in md
    assert ("Ours: preset `tiny`, 2 layers × 64 wide, 4 heads, L_tr = 64, 200 steps — "
            "NOT the paper's scale (24 layers × 1024 wide, L_tr = 1024, 50k steps)") in md
    assert "¼×L_tr (paper 256 / ours 16)" in md
    assert "3.3M parameters" in md and "abc1234" in md
    assert "Shakespeare + Milton" in md
    assert "| Transformer | 38.1 / not computed / — | 30.54 / 31.00 / +0.46 |" in md


def test_markdown_tables_have_one_line_per_row(table):
    lines = [l for l in render_markdown(table).splitlines() if l.startswith("|")]
    assert len(lines) == 2 * (2 + len(ROWS))  # header + rule + rows, per section
    assert all(l.count(" |") == len(table.columns) + 1 for l in lines if "---" not in l)
    assert all(l.count("---|") == len(table.columns) + 1 for l in lines if "---" in l)


def test_other_train_length_results_are_ignored(paper_df):
    stale = dict(result("transformer", "causal", 64, 42.0), train_length=128)
    assert cell(build_table(SPEC, [stale], paper_df, HEADER), 0, 0, 1).ours is None


def test_latex_is_syntactically_plausible(table):
    tex = render_latex(table)
    body = re.sub(r"\\[{}]", "", tex)  # escaped braces do not count
    assert body.count("{") == body.count("}")
    assert tex.count(r"\begin{tabular}") == tex.count(r"\end{tabular}") == 1
    assert r"\toprule" in tex and r"\bottomrule" in tex
    assert re.search(r"(?<!\\)_(?![{])", re.sub(r"\$[^$]*\$", "", tex)) is None
    assert r"L\_tr" in tex and r"\texttt{tiny}" in tex and "×" not in tex and "—" not in tex
    assert r"\caption{" in tex and "NOT the paper's scale" in tex
    assert r"Shakespeare + Milton" in tex
    # every table row has one cell per column plus the label
    for line in tex.splitlines():
        if line.startswith(("Transformer", "LEX")):
            assert line.count(" & ") == len(table.columns)


def test_cli_writes_files_and_reports_errors(tmp_path, capsys):
    spec_file = tmp_path / "exp.yaml"
    spec_file.write_text(yaml.safe_dump({"name": "x", "tables": {"table2": SPEC}}))
    header = tmp_path / "header.json"
    header.write_text(json.dumps(HEADER))
    paths = []
    for i, r in enumerate(RESULTS):
        paths.append(tmp_path / f"r{i}.json")
        paths[-1].write_text(json.dumps(r))
    out_md, out_tex = tmp_path / "out/t.md", tmp_path / "out/t.tex"
    args = ["--spec", str(spec_file), "--header", str(header),
            "--out-md", str(out_md), "--out-tex", str(out_tex), "--results", *map(str, paths)]
    run_cli(main, ["--table-key", "table2", *args])
    assert "30.54 / 31.00 / +0.46" in out_md.read_text()
    assert r"\end{tabular}" in out_tex.read_text()
    assert sorted(p.name for p in out_md.parent.iterdir()) == ["t.md", "t.tex"]

    with pytest.raises(SystemExit) as stop:
        run_cli(main, ["--table-key", "table9", *args])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "table9" in err and "table2" in err

    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(SystemExit) as stop:
        run_cli(main, ["--table-key", "table2", *args, str(bad)])
    assert stop.value.code == 2
    assert str(bad) in capsys.readouterr().err


def test_packaged_csv_equals_shared():
    if not SHARED_CSV.exists():
        pytest.skip(f"{SHARED_CSV} not present")
    assert PACKAGED_CSV.read_bytes() == SHARED_CSV.read_bytes()
