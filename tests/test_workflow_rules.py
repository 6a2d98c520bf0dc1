"""How the rule files are written: one table rule for every paper (through each paper's interface),
one ruleorder only (the evaluation groups' rules over their measures' rules), one name per paper in rule
names, rules and thin calls only (the workflow's Python is in lenex.pipeline), short files. Static
reads of workflow/rules."""

import re

import yaml

from test_workflow import REPO

RULES = sorted((REPO / "workflow/rules").glob("*.smk"))
PAPERS = yaml.safe_load((REPO / "config/config.yaml").read_text())["papers"]


def rule_names() -> list[str]:
    """The rules the rule files name, and the measures' rules evaluate.smk's one rule block makes
    whatever the presets (the rules it makes per preset and group are not counted)."""
    from lenex.pipeline.evaluation import MEASURE_RULES

    names = list(MEASURE_RULES.values())
    for path in RULES:
        text = path.read_text()
        names += re.findall(r"^\s*rule (\w+):", text, re.M)
        names += re.findall(r"^use rule \w+ as (\w+) with:", text, re.M)
    return names


def test_the_only_ruleorder_puts_evaluation_groups_over_their_measures_rules():
    files = [*RULES, REPO / "Snakefile"]
    assert not [p.name for p in files if re.search(r"^\s*ruleorder:", p.read_text(), re.M)]
    orders = {p.name: re.findall(r"workflow\.ruleorder\((.*)\)", p.read_text()) for p in files}
    assert {name: found for name, found in orders.items() if found} == {
        "evaluate.smk": ["*_order"]}
    from lenex.pipeline.evaluation import MEASURE_RULES  # a cell alone is its measure's rule's job

    assert MEASURE_RULES == {"eval": "evaluate", "resolution": "resolution"}


def test_one_table_rule_renders_every_papers_tables_through_its_interface():
    from lenex.pipeline.papers import paper_named

    text = "\n".join(p.read_text() for p in RULES)
    # one variant of it, for every paper alike: a table re-runs supersede, rendered from the reference run alone
    assert re.search(r"^rule paper_table:", text, re.M)
    assert re.findall(r"^use rule paper_table as (\w+)", text, re.M) == ["paper_table_reference"]
    for paper in PAPERS:  # each paper's renderer, as its Paper names it (no rule file names it)
        renderer = paper_named(paper).table_renderer
        assert (REPO / "src" / (renderer.replace(".", "/") + ".py")).is_file(), (paper, renderer)
        assert renderer not in text, (paper, renderer)


def test_rule_names_use_one_name_per_paper():
    names = rule_names()
    assert len(names) == len(set(names))
    assert not [n for n in names if n.startswith(("rf_", "seg_", "sandwich_"))], names
    assert {"train", "receptive_field_evaluate", "paper_table", "lex_table_header",
            "segmented_evaluate"} <= set(names)


# Snakemake's directives that open a block of rule syntax (not Python).
DIRECTIVE = re.compile(r"^(\s*)(rule\b|use rule\b|checkpoint\b|wildcard_constraints:|localrules:|ruleorder:|"
                       r"onstart:|onsuccess:|onerror:|configfile:|include:|report:|workdir:|envvars:)")


def python_lines(text: str) -> list[str]:
    """The lines of a rule file that are Python of its own: neither a comment, nor blank, nor inside
    a Snakemake directive's block (a rule's input functions are calls, counted with the rule)."""
    found, block_indent = [], None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if block_indent is not None and indent > block_indent:
            continue
        block_indent = None
        match = DIRECTIVE.match(line)
        if match:
            block_indent = len(match[1])
            continue
        found.append(line)
    return found


def test_python_lines_counts_what_is_outside_rules():
    text = ("from x import y\n\n# a comment\nrule a:\n    input:\n        lambda wc: y(wc),\n\n"
            "for p in y():\n    rule:\n        name:\n            p\n    z = p\n")
    assert python_lines(text) == ["from x import y", "for p in y():", "    z = p"]


def test_the_rule_files_hold_rules_and_thin_calls():
    """The workflow's Python is in lenex.pipeline and the papers' packages, tested without Snakemake:
    what the rule files define themselves (imports, names, the LEX rule loop) stays within 150 lines."""
    counts = {p.name: len(python_lines(p.read_text())) for p in RULES}
    assert sum(counts.values()) <= 150, counts
    defined = [p.name for p in RULES if re.search(r"^\s*def \w+", p.read_text(), re.M)]
    assert not defined, f"functions defined in rule files (move them to lenex.pipeline): {defined}"


def test_rule_files_are_short():
    lengths = {p.name: len(p.read_text().splitlines()) for p in RULES}
    assert max(lengths.values()) <= 400, lengths


def test_a_local_run_drops_snakemakes_job_rate_limit_and_a_cluster_run_keeps_it():
    """lenex.pipeline.resources.drop_local_rate_limit (its docstring: Snakemake's rate-limit timers pile up)."""
    from types import SimpleNamespace

    from lenex.pipeline.resources import drop_local_rate_limit

    for executor, kept in (("local", False), ("slurm", True)):
        limiter = object()
        workflow = SimpleNamespace(executor_plugin=SimpleNamespace(name=executor),
                                   scheduler=SimpleNamespace(job_rate_limiter=limiter))
        drop_local_rate_limit(workflow)
        assert (workflow.scheduler.job_rate_limiter is limiter) == kept, executor
    drop_local_rate_limit(SimpleNamespace())  # a Snakemake without these attributes: nothing to do
    assert "drop_local_rate_limit(workflow)" in (REPO / "Snakefile").read_text().split("onstart:")[1]


TRAINERS = ("lenex.training.train", "lenex.segmented.continued", "lenex.fairseq_backend.train")


def test_one_rule_trains_every_model_the_workflow_trains():
    """Rule train (and its multi-node form) is the only rule whose command trains: no rule file names a
    trainer, and neither the scale study's nor the sweeps' jobs train (their points are train's models,
    lenex.scale_study.studies)."""
    text = "\n".join(line for p in RULES for line in p.read_text().splitlines() if not line.lstrip().startswith("#"))
    assert [t for t in TRAINERS if t in text] == []
    assert re.findall(r"command=lambda wc, threads: pipeline\.specs\.of\(wc\)\.command\(threads\)", text) != []
    blocks = re.findall(r"^rule (\w+):(?:\n(?!rule |use rule ).*)*?pipeline\.specs\.of\(wc\)\.command", text, re.M)
    assert blocks == ["train"]
    # its variants are the same rule (`use rule train as`): several nodes, fairseq's cross-check folder
    assert sorted(re.findall(r"^use rule train as (\w+)", text, re.M)) == ["crosscheck_train", "train_multinode"]
    jobs = [REPO / "src/lenex/scale_study" / f for f in ("study.py", "sweep_run.py")]
    imports_trainer = r"^\s*from (\.\.|lenex\.)training(\.train import| import .*\btrain\b)"
    assert [p.name for p in jobs if re.search(imports_trainer, p.read_text(), re.M)] == []
