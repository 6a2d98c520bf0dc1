"""docs/architecture.md's trace of one LEX Table 2 cell, from training to its page, checked against
the workflow so it cannot drift: each step's rule writes the file the trace names and runs the
module it names (a forced dry run of LEX's page and raw results at tiny), a step without a file of
its own is a rule of the workflow that runs its module, and every function the trace says a rule's
inputs come from exists."""

import importlib
import re

import pytest
from test_workflow import REPO, planned_jobs, scratch_workflow, snakemake
from test_workflow_rules import RULES, rule_names

DOC = REPO / "docs/architecture.md"
SECTION = "## One LEX Table 2 cell, from training to its page"
#: What the dry run plans: the page the cell ends on, and the raw results that hold it.
TARGETS = ("results/tiny/lex.md", "results/tiny/raw/lex.jsonl")


def trace_rows(text: str) -> list[dict]:
    """The trace's table rows: step, rule, module, files written and functions, each backticked."""
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) != 5 or cells[0] == "step" or not cells[0].strip("-"):
            continue
        ticked = [re.findall(r"`([^`]+)`", cell) for cell in cells]
        rows.append({"step": cells[0], "rule": ticked[1][0], "module": ticked[2][0], "files": ticked[3],
                     "functions": ticked[4]})
    return rows


def resolve(dotted: str):
    """The object a dotted name names: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise ImportError(dotted)


def test_the_trace_is_read_from_its_table():
    text = (f"{SECTION}\n\n| step | rule | module | writes | inputs from |\n|---|---|---|---|---|\n"
            "| train | `train` | `lenex.training.train` | `a.pt`, `b.pt` | `lenex.pipeline.paths.Paths.data_files` |\n"
            "| alone | `evaluate` | `lenex.scoring.evaluate` | the same file | |\n\n## Next\n| x | `y` | `z` | `w` | |\n")
    assert trace_rows(text) == [
        {"step": "train", "rule": "train", "module": "lenex.training.train", "files": ["a.pt", "b.pt"],
         "functions": ["lenex.pipeline.paths.Paths.data_files"]},
        {"step": "alone", "rule": "evaluate", "module": "lenex.scoring.evaluate", "files": [], "functions": []}]
    assert resolve("lenex.pipeline.paths.Paths.data_files").__name__ == "data_files"
    with pytest.raises(AttributeError):
        resolve("lenex.pipeline.paths.Paths.no_such_method")


def test_the_trace_goes_from_training_to_the_page():
    rows = trace_rows(DOC.read_text(encoding="utf-8"))
    rules = [row["rule"] for row in rows]
    assert "train" in rules and rules[-1] == "paper_report" and rows[-1]["files"] == ["results/tiny/lex.md"]
    cell = "results/tiny/eval/lex/rope/seed1/pg22/causal/L128.json"
    assert [row["rule"] for row in rows if cell in row["files"]] == ["lex_eval__tiny_rope_s1_pg22"]
    assert rules.index("train") < rules.index("lex_eval__tiny_rope_s1_pg22") < rules.index("paper_table")


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> dict[str, tuple[str, str]]:
    """File -> (rule, module) of every job a forced dry run of TARGETS plans."""
    run = snakemake("-n", "--forceall", "-p", *TARGETS, cwd=scratch_workflow(tmp_path_factory.mktemp("trace")))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    writers = {}
    for rule, outputs, words in planned_jobs(run.stdout):
        module = words[words.index("lenex.pipeline.launch") + 1]
        writers.update({path: (rule, module) for path in outputs})
    return writers


def test_each_step_of_the_trace_is_a_rule_of_the_workflow_writing_its_file(planned):
    rule_text = "\n".join(path.read_text() for path in RULES)
    for row in trace_rows(DOC.read_text(encoding="utf-8")):
        assert importlib.util.find_spec(row["module"]) is not None, row
        for path in row["files"]:
            assert planned.get(path) == (row["rule"], row["module"]), (row["step"], path, planned.get(path))
        if not row["files"]:  # a path the dry run at tiny does not take: the rule, running its module
            assert row["rule"] in rule_names() and re.search(rf"\b{re.escape(row['module'])}\b", rule_text), row
        for function in row["functions"]:
            assert callable(resolve(function)), (row["step"], function)
