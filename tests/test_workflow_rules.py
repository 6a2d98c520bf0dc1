"""How the rule files are written: one table rule per paper on the shared table interface (no
ruleorder), one name per paper in rule names, short files. Static reads of workflow/rules."""

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


def test_no_ruleorder_anywhere():
    assert not [p.name for p in [*RULES, REPO / "Snakefile"] if re.search(r"^\s*ruleorder:", p.read_text(), re.M)]


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
