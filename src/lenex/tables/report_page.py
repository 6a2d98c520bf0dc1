"""One Markdown result page (a table, a dataset card, a claims page) as a self-contained HTML
page for the Snakemake report, whose viewer shows HTML in a frame but offers Markdown only
as a download. A table also gets a caption: its scale line and the bullets that name a
stand-in corpus, taken from the table's own header (written by its renderer, not here).

    python -m lenex.tables.report_page --md results/tiny/tables/lex/table2.md \\
        --out-html results/tiny/report/tables/lex/table2.html \\
        --out-caption results/tiny/report/tables/lex/table2.caption.html

Local images the page links to (a card's lengths.png) are embedded as data URIs, so the
page needs nothing beside it once inside the report.

    python -m lenex.tables.report_page --contents results/tiny/report/contents.txt --files a.html b.png
"""

from __future__ import annotations

import argparse
import base64
import html
import mimetypes
import re
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

from ..cli import run_cli
from ..files import atomic_write_text

# Bullets of a table header that say which corpus stood in for which: every renderer writes
# "<paper's corpus> -> <stand-in>" for evaluation corpora and "stands in for" for training data.
STAND_IN_MARKERS = (" -> ", "stands in for")

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.2em; color: #1e293b; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.4em; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border: 1px solid #cbd5e1; padding: 0.25em 0.6em; text-align: left; }
th { background: #f1f5f9; }
td { font-variant-numeric: tabular-nums; white-space: nowrap; }
code { background: #f1f5f9; padding: 0 0.2em; }
img { max-width: 100%; }
"""


@dataclass
class PageHeader:
    """What a result page says before its first section: title, scale line and bullets."""
    title: str
    scale: str | None = None
    bullets: list[str] = field(default_factory=list)

    def stand_ins(self) -> list[str]:
        return [b for b in self.bullets if any(m in b for m in STAND_IN_MARKERS)]


def parse_header(markdown: str, source: str = "page") -> PageHeader:
    """Title ('# ...'), scale line ('**...**') and bullets ('- ...') up to the first '## '."""
    title, scale, bullets = None, None, []
    for line in markdown.splitlines():
        if line.startswith("## "):
            break
        if line.startswith("# ") and title is None:
            title = line[2:].strip()
        elif line.startswith("**") and line.rstrip().endswith("**") and scale is None:
            scale = line.strip()[2:-2]
        elif line.startswith("- "):
            bullets.append(line[2:].strip())
    if title is None:
        raise ValueError(f"{source} has no '# ' title line")
    return PageHeader(title, scale, bullets)


def _markdown() -> MarkdownIt:
    # Raw HTML in a page is shown as text, not interpreted: pages are data, not markup.
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def embed_images(markdown: str, folder: Path) -> str:
    """Replace the target of every local image link '![alt](file)' by the file as a data URI."""
    def embed(match: re.Match) -> str:
        target = match.group(2)
        if re.match(r"[a-z]+:", target):
            return match.group(0)
        path = folder / target
        if not path.is_file():
            raise FileNotFoundError(f"image {target!r} linked from a page in {folder} not found at {path}")
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f"![{match.group(1)}](data:{mime};base64,{data})"
    return re.sub(r"!\[([^\]]*)\]\(([^)\s]+)\)", embed, markdown)


def render_page(markdown: str, title: str, folder: Path) -> str:
    """The page as one HTML document: no script, no external resource."""
    body = _markdown().render(embed_images(markdown, folder))
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n"
            f"<body>\n{body}</body></html>\n")


def render_caption(header: PageHeader) -> str:
    """The scale line and the stand-in bullets as an HTML fragment (the report's caption)."""
    if header.scale is None:
        raise ValueError(f"table {header.title!r} has no scale line ('**Ours: ...**')")
    lines = [f"**{header.scale}**", ""] + [f"- {b}" for b in header.stand_ins()]
    return _markdown().render("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m lenex.tables.report_page", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--md", help="the Markdown page")
    parser.add_argument("--out-html")
    parser.add_argument("--out-caption", help="write the scale and stand-in caption (tables)")
    parser.add_argument("--contents", help="instead: write the report's file list (--files) here")
    parser.add_argument("--files", nargs="*", default=[])
    args = parser.parse_args(argv)
    if args.contents:
        atomic_write_text(args.contents, "".join(f"{path}\n" for path in args.files))
        return
    if not args.md or not args.out_html:
        parser.error("--md and --out-html are required (or --contents)")
    md_path = Path(args.md)
    markdown = md_path.read_text(encoding="utf-8")
    header = parse_header(markdown, str(md_path))
    if args.out_caption:
        atomic_write_text(args.out_caption, render_caption(header))
    atomic_write_text(args.out_html, render_page(markdown, header.title, md_path.parent))


if __name__ == "__main__":
    run_cli(main)
