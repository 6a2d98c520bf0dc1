# lenex: regenerate the tables and figures of three length-extrapolation papers.
#   snakemake --cores 2                                   # every table of config `preset`
#   snakemake --cores 2 results/tiny/tables/lex/table2.md # one table, at one scale
import importlib.util
import sys

# Before lenex is imported: the lenex Python finds must be this checkout's src/lenex
# (workflow/scripts/own_checkout.py says why, in plain Python).
_spec = importlib.util.spec_from_file_location(
    "own_checkout", f"{workflow.basedir}/workflow/scripts/own_checkout.py"
)
_own_checkout = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_own_checkout)
_problem = _own_checkout.foreign_lenex(workflow.basedir)
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
# (each paper package registers itself in its paper.py, lenex.pipeline.papers), so the Snakefile names none.
for paper_rules in pipeline.settings.paper_rule_files():

    include: paper_rules


include: "workflow/rules/claims.smk"
include: "workflow/rules/raw.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/fairseq.smk"
include: "workflow/rules/hf_profile.smk"
include: "workflow/rules/sweeps.smk"
include: "workflow/rules/scale_study.smk"


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
