"""The README stays a user's path: short, opening with the two commands that work on a fresh
machine (and that CI runs), and naming only files that exist. The docs pages' links exist too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_LINES = 200
#: Top-level entries whose paths the README may name in backticks; anything else in backticks
#: (targets under results/<preset>/, commands, options) is not a file of the repository.
CHECKED_ROOTS = ("src", "docs", "config", "workflow", "scripts", "tests", "benchmarks", "profiles",
                 "envs", ".ci", "Makefile", "Snakefile", "pyproject.toml")
#: In the README, committed results (the reference runs' pages) are checked too; other results/
#: paths are targets (docs/ also name reference-run files still to come).
COMMITTED_RESULTS = ("results/workstation/", "results/archive/", "results/README.md")
PAGES = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\s]+)`")
PLACEHOLDER = re.compile(r"[<>{}*$]")


def relative_links(text: str) -> list[str]:
    """Targets of Markdown links that point into the repository (no URL, no same-page anchor)."""
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t) and not t.startswith("#")]


def named_paths(text: str, committed_results: bool = True) -> list[str]:
    """Repository paths written in backticks: under a checked top-level entry (or committed
    results), no placeholder."""
    paths = []
    for token in CODE.findall(text):
        token = token.rstrip(".,:;")
        if PLACEHOLDER.search(token):
            continue
        committed = committed_results and token.startswith(COMMITTED_RESULTS)
        if token.split("/")[0] not in CHECKED_ROOTS and not committed:
            continue
        paths.append(token)
    return paths


def layout_paths(text: str) -> list[str]:
    """The entries of the README's layout block: the first column of each line, nested by indent
    under the last entry ending in '/' one level up (`src/lenex/` then `  positions/`)."""
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    paths, parents = [], {}
    for line in block.splitlines():
        if not line.strip() or line.startswith(" " * 20):  # blank, or a description's continuation
            continue
        indent = len(line) - len(line.lstrip(" "))
        names = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0].split()
        parent = parents.get(indent - 2, "") if indent else ""
        for name in names:
            paths.append(parent + name)
            if name.endswith("/"):
                parents[indent] = parent + name
    return paths


def test_readme_is_at_most_200_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; at most {MAX_LINES} (method notes go in docs/)"


def test_readme_opens_with_the_two_fresh_machine_commands():
    text = README.read_text(encoding="utf-8")
    first_block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines()]
    assert commands == ["make run", "make test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^run:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    ci = [line.strip() for line in (ROOT / ".ci/run").read_text(encoding="utf-8").splitlines()]
    assert "make test" in ci and "make run" in ci, ".ci/run must run the README's two commands"


def heading_anchors(text: str) -> set[str]:
    """GitHub's anchors of a Markdown page's headings: lower case, punctuation dropped, spaces to '-'."""
    headings = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", text, flags=re.S), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def broken_links(path: Path) -> list[str]:
    """Relative links of one page whose file, or whose #anchor in that file, does not exist."""
    broken = []
    for target in relative_links(path.read_text(encoding="utf-8")):
        file, _, anchor = target.partition("#")
        linked = path.parent / file
        if not linked.exists() or (anchor and anchor not in heading_anchors(linked.read_text(encoding="utf-8"))):
            broken.append(target)
    return broken


@pytest.mark.parametrize("page", PAGES)
def test_relative_links_exist(page):
    missing = broken_links(ROOT / page)
    assert not missing, f"{page} links to files or anchors that do not exist: {missing}"


def test_readme_layout_names_only_existing_paths():
    named = layout_paths(README.read_text(encoding="utf-8"))
    assert len(named) > 20  # an empty list would check nothing
    missing = [p for p in named if not (ROOT / p).exists()]
    assert not missing, f"README.md's layout names paths that do not exist: {missing}"


@pytest.mark.parametrize("page", PAGES)
def test_named_paths_exist(page):
    """Paths in backticks are relative to the repository root, in the README and in docs/."""
    named = named_paths((ROOT / page).read_text(encoding="utf-8"), committed_results=page == "README.md")
    missing = [p for p in named if not (ROOT / p).exists()]
    assert not missing, f"{page} names paths that do not exist: {missing}"


def test_the_path_checks_catch_a_missing_path(tmp_path):
    text = ("`src/lenex/nowhere.py`, `results/<preset>/x.md`, `results/tiny/lex.md`, `results/workstation/x.md`,"
            " [a](docs/nowhere.md), [b](https://x.org), [c](#layout)\n")
    assert named_paths(text) == ["src/lenex/nowhere.py", "results/workstation/x.md"]
    assert relative_links(text) == ["docs/nowhere.md"]
    page = tmp_path / "page.md"
    page.write_text("# Top\n## The newcomer test\n[a](page.md#the-newcomer-test) [b](page.md#gone) [c](gone.md)\n")
    assert broken_links(page) == ["page.md#gone", "gone.md"]
    layout = "## Layout\n\n```\nsrc/lenex/     the package\n  positions/   registry\n  a.py b.py    two\n```\n"
    assert layout_paths(layout) == ["src/lenex/", "src/lenex/positions/", "src/lenex/a.py", "src/lenex/b.py"]
