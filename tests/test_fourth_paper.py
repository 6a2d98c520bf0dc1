"""A fourth paper as a throwaway (issue 50): a toy paper, package `lenex.toy`, written into a
scratch checkout (the repository's files linked, nothing of it changed) as docs/architecture.md says
a paper is added. Every file it writes is counted: besides its own package, configs and docs it
needs two, its rule file and its rows of the papers' numbers; no entry point and no reinstall (its
paper.py registers it in the tree). Nothing else names it, and still the registry, the Snakefile,
the claims check and the layering test find it."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from subprocess_env import env_with_venv
from test_architecture import import_edges, paper_packages, upward_imports, upward_names
from test_workflow import REPO, SNAKEMAKE, job_counts

from lenex.pipeline.papers import paper_named, registered

PACKAGE = '''"""A toy fourth paper (tests/test_fourth_paper.py)."""
'''
TARGETS = '''"""Which evaluations the toy paper's table reads: every row's model at every column, on the
generic `evaluate` rule's paths."""

from lenex.experiment.presets import eval_length

PAPER = "toy"


def table_results(preset: str, spec: dict, train_length: int) -> list[str]:
    return sorted(f"results/{preset}/eval/{PAPER}/{row['variant']}/seed1/{section['corpus']}/{row['mask']}/"
                  f"L{eval_length(multiple, train_length)}.json"
                  for section in spec["sections"] for row in section["rows"] for multiple in spec["columns"])
'''
PAPER = '''"""The toy paper as the workflow sees it: the generic train, evaluate and table rules make its
models, cells and table; its own rule draws Figure 1, whose numbers its claims may read."""

from lenex.experiment.presets import model_config
from lenex.pipeline.papers import PAPERS, Paper

from . import targets


class Toy(Paper):
    name = targets.PAPER
    table_renderer = "lenex.tables.render"
    figure_cells = ("figure1",)

    def model_config(self, view, experiment, variant):
        return model_config(view, variant, experiment["variants"][variant])

    def table_recorded(self, paths, preset, table):
        spec = paths.settings.table_spec(self.name, table)
        return {"results": targets.table_results(preset, spec, paths.settings.train_length(preset, self.name)),
                "metas": paths.corpus_metas(preset, ["pg22"])}

    def figure_recorded(self, paths, preset, figure):
        return self.table_recorded(paths, preset, "1")["results"]

    def table_arguments(self, paths, preset, table):
        return "--results " + " ".join(self.table_recorded(paths, preset, table)["results"])


PAPER = PAPERS.register(Toy())
'''
RULES = '''# The toy paper's own rule (tests/test_fourth_paper.py): Figure 1, with the numbers its claims read.
TOY = pipeline.settings.paper("toy")


rule toy_figure1:
    input:
        pipeline.recorded.inputs(
            lambda wc: TOY.figure_recorded(pipeline.paths, wc.preset, "1"), TOY.name
        ),
    output:
        png="results/{preset}/figures/toy/figure1.png",
        cells="results/{preset}/figures/toy/figure1.cells.json",
    log:
        "results/{preset}/logs/figures/toy/figure1.log",
    shell:
        "python -m lenex.pipeline.launch lenex.toy.figures --results {input}"
        " --out-png {output.png} --out-cells {output.cells} > {log} 2>&1"
'''
ROWS = [{"label": "RoPE", "method": "rope", "variant": "rope", "mask": "causal"},
        {"label": "ALiBi", "method": "alibi", "variant": "alibi", "mask": "causal"}]
EXPERIMENT = {"paper": "toy", "title": "A toy fourth paper", "train_corpus": "pg22",
              "train_stands_in_for": "the toy's training text", "span_multiple": 2,
              "variants": {"rope": {"position": "rope"}, "alibi": {"position": "alibi"}},
              "figures": {"figure1": {"title": "Perplexity against length (toy Figure 1)"}},
              "tables": {"table1": {"paper": "toy", "table": 1, "title": "Perplexity by length (toy Table 1)",
                                    "metric": "ppl", "paper_train_length": 512, "columns": [1, 2],
                                    "sections": [{"dataset": "pg22", "label": "PG22", "corpus": "pg22",
                                                  "rows": ROWS}]}}}
CLAIMS = {"paper": "toy", "claims": [{"id": "toy-alibi-extrapolates", "source": "Table 1",
                                      "statement": "ALiBi is below RoPE at twice the training length.",
                                      "check": {"less": ["t1/pg22/alibi@2", "t1/pg22/rope@2"]}}]}
NUMBERS = "".join(f"toy,1,pg22,{method},{length},ppl,{value},,\n"
                  for method, values in (("rope", (20.1, 80.2)), ("alibi", (20.4, 19.8)))
                  for length, value in zip((512, 1024), values))
#: What a paper may write without counting: its package, its configs, its docs.
OWN = ("src/lenex/toy/", "config/", "docs/")


class Checkout:
    """A scratch checkout: the repository's files linked (one by one in the folders the toy adds
    to) and its config copied; every file the toy writes is recorded (`touched`), relative to it."""

    def __init__(self, root: Path):
        self.root, self.touched = root / "checkout", []
        self.root.mkdir()
        for name in ("Snakefile", "envs", "results/scale-study", "workflow/schemas", "workflow/report", "workflow/scripts"):
            (self.root / name).parent.mkdir(parents=True, exist_ok=True)
            (self.root / name).symlink_to(REPO / name)
        for folder in ("workflow/rules", "src/lenex"):
            (self.root / folder).mkdir(parents=True)
            for path in (REPO / folder).iterdir():
                if path.name != "__pycache__":
                    (self.root / folder / path.name).symlink_to(path)
        shutil.copytree(REPO / "config", self.root / "config")

    def write(self, name: str, text: str, append: bool = False) -> None:
        path = self.root / name
        if path.is_symlink():  # the repository's file: the toy changes a copy of it, never the file
            path.unlink()
            path.write_text((REPO / name).read_text())
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text((path.read_text() if append else "") + text)
        self.touched.append(name)

@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """The toy paper added as docs/architecture.md's "Adding a fourth paper" says."""
    made = Checkout(tmp_path_factory.mktemp("fourth"))
    made.write("src/lenex/toy/__init__.py", PACKAGE)  # 1. its package
    made.write("src/lenex/toy/targets.py", TARGETS)
    made.write("src/lenex/toy/paper.py", PAPER)
    made.write("config/experiments/toy.yaml", yaml.safe_dump(EXPERIMENT, sort_keys=False))  # 2. its configs
    made.write("config/claims/toy.yaml", yaml.safe_dump(CLAIMS, sort_keys=False))
    config = (made.root / "config/config.yaml").read_text()
    made.write("config/config.yaml", config.replace("papers: [lex, receptive-field, segmented]",
                                                    "papers: [lex, receptive-field, segmented, toy]"))
    made.write("docs/toy.md", "# A toy fourth paper\n\nWhat it measures, and how.\n")  # its docs
    made.write("workflow/rules/toy.smk", RULES)  # 3. two files besides
    made.write("src/lenex/paper_results.csv", NUMBERS, append=True)
    return made


def test_a_fourth_paper_touches_two_files_outside_its_package_configs_and_docs(checkout):
    outside = sorted({name for name in checkout.touched if not name.startswith(OWN)})
    assert outside == ["src/lenex/paper_results.csv", "workflow/rules/toy.smk"]  # no pyproject.toml: no entry point
    assert len(outside) <= 2


@pytest.fixture
def toy_registered(checkout, monkeypatch):
    """This process finds the toy as lenex in that checkout would: its package beside lenex's, no
    entry point declared and nothing reinstalled."""
    import lenex
    from lenex.pipeline.papers import PAPERS

    monkeypatch.setattr(lenex, "__path__", [*lenex.__path__, str(checkout.root / "src/lenex")])
    registered.cache_clear()
    yield checkout
    PAPERS.pop("toy", None)
    registered.cache_clear()
    for name in [m for m in sys.modules if m == "lenex.toy" or m.startswith("lenex.toy.")]:
        del sys.modules[name]


def test_the_registry_the_rule_files_the_claims_and_the_layers_find_it(toy_registered, tmp_path):
    from lenex.pipeline.workflow import Pipeline

    root = toy_registered.root
    assert paper_named("toy").name == "toy" and set(registered()) == {"lex", "receptive-field", "segmented", "toy"}
    config = yaml.safe_load((root / "config/config.yaml").read_text())
    pipeline = Pipeline({**config, "extra_schemes": {}}, root, stamps=tmp_path)
    assert pipeline.settings.paper_rule_files()[-1] == "workflow/rules/toy.smk"
    assert pipeline.checks.checked_claims("toy") == "config/claims/toy.yaml"  # no enum of papers to edit
    papers = paper_packages()
    assert "lenex.toy" in papers  # a paper, by its paper.py alone
    assert upward_imports({("lenex.tables.render", "lenex.toy.paper"): "a", ("lenex.toy.paper", "lenex.lex.paper"): "b"},
                          papers) == ["lenex.tables.render -> lenex.toy.paper (a)", "lenex.toy.paper -> lenex.lex.paper (b)"]
    assert upward_imports(import_edges(root / "src/lenex"), papers) == []
    assert upward_names(root / "src/lenex", papers) == []


def test_the_snakefile_includes_its_rules_and_builds_its_claims(checkout):
    env = env_with_venv(PYTHONPATH=str(checkout.root / "src"))

    def snakemake(*args):
        return subprocess.run([*SNAKEMAKE, *args], cwd=checkout.root, env=env, capture_output=True, text=True,
                              timeout=600)

    listed = snakemake("--list")
    assert listed.returncode == 0 and "toy_figure1" in listed.stdout.split(), listed.stderr[-2000:]
    run = snakemake("-n", "--forceall", "results/tiny/claims/toy.md")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    counts = job_counts(run.stdout)
    # 2 models (seed 1), each at 2 lengths; the generic table rule, the toy's own figure rule, its claims
    assert {rule: counts.get(rule) for rule in ("train", "evaluate", "paper_table", "toy_figure1", "paper_claims")} == {
        "train": 2, "evaluate": 4, "paper_table": 1, "toy_figure1": 1, "paper_claims": 1}
