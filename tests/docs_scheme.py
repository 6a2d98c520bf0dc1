"""The bring-your-own example of docs/bring-your-own.md, read from the page itself: its scheme's code
block and its config entry. The tests run the scheme the page shows, so the page cannot drift from
what works (issue 50: its `log-distance` was refused by a schema pattern the tests never met)."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

DOC = Path(__file__).resolve().parents[1] / "docs" / "bring-your-own.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)


def example_code() -> str:
    """The page's scheme: its one Python block that defines a PositionScheme."""
    (code,) = [block for block in _blocks("python") if "(PositionScheme)" in block]
    return code


def example_config() -> dict:
    """The page's config entry: its YAML block with `extra_schemes`."""
    (entry,) = [block for block in _blocks("yaml") if block.startswith("extra_schemes:")]
    return yaml.safe_load(entry)


def example_position() -> str:
    """The registry name the page's scheme declares (`name = "..."`)."""
    return re.search(r'^\s+name = "([^"]+)"', example_code(), re.M)[1]


def write_example(workdir: Path) -> Path:
    """The page's scheme written where its config entry's `module` points (relative to `workdir`,
    where Snakemake runs: outside the tree) and the entry as `workdir`/schemes.yaml, returned."""
    config = example_config()
    (entry,) = config["extra_schemes"].values()
    module = (workdir / entry["module"]).resolve()
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(example_code(), encoding="utf-8")
    path = workdir / "schemes.yaml"
    workdir.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path
