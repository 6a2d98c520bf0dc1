"""How the rule files are written: one table rule per paper on the shared table interface, one
ruleorder only (LEX's per-model evaluation over the one-cell rules), one name per paper in rule
names, short files. Static reads of workflow/rules."""

import re

import yaml

from test_workflow import REPO

RULES = sorted((REPO / "workflow/rules").glob("*.smk"))
PAPERS = yaml.safe_load((REPO / "config/config.yaml").read_text())["papers"]


def rule_names() -> list[str]:
    names = []
    for path in RULES:
        text = path.read_text()
        names += re.findall(r"^\s*rule (\w+):", text, re.M)
        names += re.findall(r"^use rule \w+ as (\w+) with:", text, re.M)
    return names


def test_the_only_ruleorder_puts_lex_evaluation_jobs_over_the_one_cell_rules():
    files = [*RULES, REPO / "Snakefile"]
    assert not [p.name for p in files if re.search(r"^\s*ruleorder:", p.read_text(), re.M)]
    orders = {p.name: re.findall(r"workflow\.ruleorder\((.*)\)", p.read_text()) for p in files}
    assert {name: found for name, found in orders.items() if found} == {
        "lex.smk": ['_name, "evaluate" if _stage == "eval" else "resolution"']}


def test_every_paper_implements_the_table_interface_in_its_own_rule():
    text = "\n".join(p.read_text() for p in RULES)
    for paper in PAPERS:
        name = paper.replace("-", "_")
        assert re.search(rf"^use rule paper_table as {name}_table with:", text, re.M), paper
    # the interface itself builds nothing: its {paper} wildcard matches no path
    assert 'paper=r"(?!)"' in (REPO / "workflow/rules/tables.smk").read_text()


def test_rule_names_use_one_name_per_paper():
    names = rule_names()
    assert len(names) == len(set(names))
    assert not [n for n in names if n.startswith(("rf_", "seg_", "sandwich_"))], names
    assert {"receptive_field_train", "receptive_field_evaluate", "receptive_field_table", "lex_table",
            "segmented_table"} <= set(names)


def test_rule_files_are_short_and_common_is_generic():
    lengths = {p.name: len(p.read_text().splitlines()) for p in RULES}
    assert max(lengths.values()) <= 400, lengths
    assert lengths["common.smk"] < 300
    common = (REPO / "workflow/rules/common.smk").read_text()
    assert not re.search(r"^def (lex|receptive_field|rf|seg|segmented)_", common, re.M)


def test_a_local_run_drops_snakemakes_job_rate_limit_and_a_cluster_run_keeps_it():
    """common.smk's onstart helper (see its docstring: Snakemake's rate-limit timers pile up)."""
    from types import SimpleNamespace

    text = (REPO / "workflow/rules/common.smk").read_text()
    scope = {}
    for name in ("drop_local_rate_limit", "local_run"):
        exec(text[text.index(f"def {name}"):].split("\n\n\n")[0], scope)
    for executor, kept in (("local", False), ("slurm", True)):
        limiter = object()
        workflow = SimpleNamespace(executor_plugin=SimpleNamespace(name=executor),
                                   scheduler=SimpleNamespace(job_rate_limiter=limiter))
        scope["drop_local_rate_limit"](workflow)
        assert (workflow.scheduler.job_rate_limiter is limiter) == kept, executor
    scope["drop_local_rate_limit"](SimpleNamespace())  # a Snakemake without these attributes: nothing to do
    assert "drop_local_rate_limit(workflow)" in (REPO / "Snakefile").read_text().split("onstart:")[1]
