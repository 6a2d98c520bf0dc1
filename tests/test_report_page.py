"""Result pages rendered for the Snakemake report: header parsing, caption, embedded images."""

import base64
import subprocess
import sys

import pytest

from lenex.tables.report_page import parse_header, render_caption, render_page

TABLE = """# Perplexity by length (LEX Table 2)

**Ours: preset `tiny`, 2 layers × 64 wide — NOT the paper's scale**

- Model size: 1M parameters
- Training data: train split of `pg22`; stands in for the paper's training mix
- PG22: PG22 (books) -> offline stand-in: Shakespeare; test split 10 documents

Each cell: paper / ours / Δ.

## PG22

| Method | 1×L_tr |
|---|---|
| LEX | 26.59 / 369.79 / +343.20 |

- a bullet after the first section is not part of the header
"""


def test_header_title_scale_and_stand_ins():
    header = parse_header(TABLE)
    assert header.title == "Perplexity by length (LEX Table 2)"
    assert header.scale == "Ours: preset `tiny`, 2 layers × 64 wide — NOT the paper's scale"
    assert len(header.bullets) == 3
    assert header.stand_ins() == [
        "Training data: train split of `pg22`; stands in for the paper's training mix",
        "PG22: PG22 (books) -> offline stand-in: Shakespeare; test split 10 documents",
    ]


def test_caption_is_scale_and_stand_ins_only():
    caption = render_caption(parse_header(TABLE))
    assert caption.startswith("<p><strong>Ours: preset <code>tiny</code>")
    assert caption.count("<li>") == 2
    assert "Model size" not in caption
    assert "PG22 (books) -&gt; offline stand-in" in caption


def test_page_is_one_html_table_document(tmp_path):
    page = render_page(TABLE, "T", tmp_path)
    assert page.startswith("<!doctype html>")
    assert "<td>26.59 / 369.79 / +343.20</td>" in page
    assert "<script" not in page and "http" not in page


def test_raw_html_in_a_page_is_text_not_markup(tmp_path):
    page = render_page("# T\n\n<script>alert(1)</script>\n", "T", tmp_path)
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_local_image_is_embedded(tmp_path):
    (tmp_path / "lengths.png").write_bytes(b"\x89PNG fake")
    page = render_page("# Card\n\n![lengths](lengths.png)\n", "Card", tmp_path)
    encoded = base64.b64encode(b"\x89PNG fake").decode()
    assert f'src="data:image/png;base64,{encoded}"' in page


def test_missing_image_names_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="'lengths.png'"):
        render_page("# Card\n\n![lengths](lengths.png)\n", "Card", tmp_path)


def test_page_without_title_or_table_without_scale_is_an_error():
    with pytest.raises(ValueError, match="card.md has no '# ' title line"):
        parse_header("no title\n", "card.md")
    with pytest.raises(ValueError, match="no scale line"):
        render_caption(parse_header("# T\n\n- a -> b\n"))


def test_cli_writes_page_and_caption(tmp_path):
    md = tmp_path / "table2.md"
    md.write_text(TABLE, encoding="utf-8")
    out, caption = tmp_path / "out" / "table2.html", tmp_path / "out" / "table2.caption.html"
    subprocess.run([sys.executable, "-m", "lenex.tables.report_page", "--md", str(md), "--out-html", str(out),
                    "--out-caption", str(caption)], check=True)
    assert "<h1>Perplexity by length (LEX Table 2)</h1>" in out.read_text(encoding="utf-8")
    assert "offline stand-in" in caption.read_text(encoding="utf-8")
    bad = subprocess.run([sys.executable, "-m", "lenex.tables.report_page", "--md", str(tmp_path / "none.md"),
                          "--out-html", str(out)], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and "none.md" in bad.stderr


def test_cli_writes_the_contents_list(tmp_path):
    out = tmp_path / "report" / "contents.txt"
    subprocess.run([sys.executable, "-m", "lenex.tables.report_page", "--contents", str(out),
                    "--files", "a/table2.html", "b/figure1.png"], check=True)
    assert out.read_text(encoding="utf-8") == "a/table2.html\nb/figure1.png\n"
