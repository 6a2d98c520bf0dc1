# lenex: regenerate the tables and figures of three length-extrapolation papers.
#   snakemake --cores 2                                   # every table of config `preset`
#   snakemake --cores 2 results/tiny/tables/lex/table2.md # one table, at one scale
import sys


# Before lenex is imported: the lenex Python finds must be this checkout's src/lenex. A copy of a
# checkout whose venv has lenex installed editable (`cp -a`) would otherwise run, and code-stamp,
# the original checkout's code. Plain Python here: the imported lenex cannot vouch for itself.
def _foreign_lenex(checkout):
    import importlib.util
    from pathlib import Path

    ours = Path(checkout, "src", "lenex")
    if not (ours / "__init__.py").is_file():
        return None  # a workflow folder without the code (the tests' scratch copies)
    found = importlib.util.find_spec("lenex")
    imported = Path(found.origin).resolve().parent if found and found.origin else None
    if imported == ours.resolve():
        return None
    return (
        f"Python imports lenex from {imported or 'nowhere'}, not this checkout's {ours}: run "
        f"`pip install -e .` in {checkout} (with the venv you run snakemake from), or set PYTHONPATH={ours.parent}"
    )


_problem = _foreign_lenex(workflow.basedir)
if _problem:
    print(f"error: {_problem}", file=sys.stderr)
    sys.exit(1)


from lenex.pipeline.startup import check_startup

# Before Snakemake's own loader (no line named, the last of two equal keys wins, and a file with
# `__use_yte__: true` is evaluated as Python): the checkout is the working directory, and each config
# file is valid YAML and plain data: no duplicate key, YTE template or Python tag (lenex.files.read_yaml).
# A --configfile was loaded by Snakemake's command line before this line runs: refused here all the same.
check_startup(workflow, ["config/config.yaml", "config/schemes.yaml"])


configfile: "config/config.yaml"
configfile: "config/schemes.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/plan.smk"


# Each configured paper's own rules, workflow/rules/<package>.smk: the papers come from the registry
# (entry points `lenex.papers`, lenex.pipeline.papers), so the Snakefile names none.
for paper_rules in pipeline.settings.paper_rule_files():

    include: paper_rules


include: "workflow/rules/claims.smk"
include: "workflow/rules/raw.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/fairseq.smk"
include: "workflow/rules/hf_profile.smk"
include: "workflow/rules/sweeps.smk"


onstart:
    drop_local_rate_limit(workflow)
    start_fork_server(workflow)


onsuccess:
    stop_fork_server()


onerror:
    stop_fork_server()


rule all:
    default_target: True
    input:
        pipeline.targets.all_inputs(config["preset"]),
