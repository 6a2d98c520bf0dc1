# What every rule reads, as named parts of one object: `pipeline` (lenex.pipeline.workflow.Pipeline)
# has `settings` (config, presets, experiments, the papers from the registry, lenex.pipeline.papers),
# `paths` (corpora and their files), `resources`, `evaluation`, `identities`, `checks`, `code`,
# `recorded`, `targets`, `report` and `hf`. The rule files hold rules and thin calls
# (`pipeline.<part>.<method>(...)`); the parts are tested without Snakemake.
from lenex.pipeline.paths import FETCHABLE
from lenex.pipeline.resources import (
    drop_local_rate_limit,
    start_fork_server,
    stop_fork_server,
)
from lenex.pipeline.settings import quoted_json
from lenex.pipeline.user_errors import one_line_errors
from lenex.pipeline.workflow import Pipeline

one_line_errors()
pipeline = Pipeline(config, workflow.basedir)
ENV = "../../envs/lenex.yaml"


# results/scale-study/ is the scale study's folder (workflow/rules/scale_study.smk), not a preset's:
# without the lookahead its tokenizer and corpora would match the presets' rules too.
wildcard_constraints:
    preset=r"(?!scale-study/)[A-Za-z0-9_-]+",
    paper=r"[a-z-]+",
    variant=r"[A-Za-z0-9_-]+",
    corpus=r"[A-Za-z0-9_-]+",
    mask=r"[a-z]+",
    length=r"\d+",
    seed=r"\d+",
    table=r"\d+",
    part=r"[a-z0-9]+(-[a-z0-9]+)*",
    seeds=r"\d+-\d+",
    package=r"[a-z0-9][a-z0-9.+-]*",
    fetchable="|".join(FETCHABLE),
