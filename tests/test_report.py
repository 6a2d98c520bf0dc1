"""The whole-paper page (lenex.tables.report)."""

import pytest

from lenex.tables.report import build_page, demote_headings, main

SPEC = {
    "paper": "lex", "title": "A Length-Extrapolatable Transformer",
    "tables": {"table2": {"title": "Perplexity"}},
    "figures": {"figure1": {"title": "ppl by length"}},
}


def test_demote_headings_skips_code_fences():
    text = "# A\n## B\n```\n# not a heading\n```\nplain # text"
    assert demote_headings(text) == "## A\n### B\n```\n# not a heading\n```\nplain # text"


@pytest.fixture
def inputs(tmp_path):
    tables = tmp_path / "tables" / "lex"
    figures = tmp_path / "figures" / "lex"
    tables.mkdir(parents=True)
    figures.mkdir(parents=True)
    (tables / "table2.md").write_text("# Perplexity\n\n| a |\n|---|\n| 1 |\n")
    (figures / "figure1.png").write_bytes(b"png")
    return tmp_path, [str(tables / "table2.md"), str(tables / "table2.tex")], [str(figures / "figure1.png")]


def test_page_includes_every_table_and_links_every_figure(inputs):
    root, tables, figures = inputs
    page = build_page(SPEC, "tiny", tables, figures, root / "lex.md")
    assert page.startswith("# A Length-Extrapolatable Transformer\n")
    assert "## Perplexity\n\n| a |" in page  # the table itself, headings one level down
    assert "![Figure 1](figures/lex/figure1.png)" in page
    assert "[figure1.pdf](figures/lex/figure1.pdf)" in page
    assert "- [Perplexity](tables/lex/table2.md)" in page


def test_a_declared_table_without_input_is_named(inputs):
    root, _, figures = inputs
    with pytest.raises(ValueError, match="no input for table2"):
        build_page(SPEC, "tiny", [], figures, root / "lex.md")


def test_cli_writes_the_page(inputs, tmp_path):
    root, tables, figures = inputs
    spec = tmp_path / "lex.yaml"
    spec.write_text("paper: lex\ntables: {table2: {title: T}}\nfigures: {figure1: {title: F}}\n")
    main(["--spec", str(spec), "--preset", "tiny", "--tables", *tables, "--figures", *figures,
          "--out", str(root / "lex.md")])
    assert "![Figure 1](figures/lex/figure1.png)" in (root / "lex.md").read_text()


def test_page_ends_with_the_claims_table_when_given(inputs):
    root, tables, figures = inputs
    claims = root / "claims" / "lex.md"
    claims.parent.mkdir()
    claims.write_text("# Claims of `lex`, checked at preset `tiny`\n\n| id | claim |\n|---|---|\n| a | b |\n")
    page = build_page(SPEC, "tiny", tables, figures, root / "lex.md", claims)
    assert "- [Claims checked by machine](claims/lex.md)" in page
    assert page.endswith("## Claims of `lex`, checked at preset `tiny`\n\n| id | claim |\n|---|---|\n| a | b |\n")
    assert "Claims" not in build_page(SPEC, "tiny", tables, figures, root / "lex.md")


def test_a_tables_rerun_is_linked_under_it(inputs):
    root, tables, figures = inputs
    rerun = str(root / "reruns" / "lex" / "table2.seeds1-3.md")
    page = build_page(SPEC, "tiny", tables, figures, root / "lex.md", reruns=[rerun])
    assert ("| 1 |\n\nThis table's seeds 1-3 were re-run by the code of a later revision, beside these cells: "
            "[table2.seeds1-3.md](reruns/lex/table2.seeds1-3.md).") in page
    with pytest.raises(ValueError, match="re-runs no table the experiment file declares"):
        build_page(SPEC, "tiny", tables, figures, root / "lex.md", reruns=[str(root / "reruns/lex/table9.seeds1-3.md")])
