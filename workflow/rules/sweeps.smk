# Emergence sweeps (docs/emergence.md): one variable of one setting at a time
# (config/sweeps.yaml), each point a scale-study point of one model and seed. A part is the
# unit of a recorded reference run (<= 2.5 h, fixed in results/scale-study/sweeps/plan.json):
#   snakemake --cores 2 results/scale-study/sweeps/lex-budget/parts/p1.json --config sweeps=True
# Inputs come from lenex.scale_study.sweep_rules; the jobs are lenex.scale_study.sweep_run's.
# config/sweeps.yaml is read only when a sweep target is asked for (sweep_rules.sweeps_config).
# The rules that run a sweep exist only with `--config sweeps=True` (lenex.pipeline.settings):
# the papers' claims read a sweep's committed records (points, parts, emergence page) as recorded
# results, so no other run, and no `make tables`, ever reruns a sweep.
from lenex.claims import emergence as claims_emergence
from lenex.scale_study import predictions, sweep_rules


wildcard_constraints:
    sweep=r"[A-Za-z0-9_.-]+",
    point=r"[A-Za-z0-9_.-]+__(train_tokens|n_head|corpus)-[A-Za-z0-9_.-]+__seed\d+",
    tokenizer=r"gpt2|bpe-\d+",


if pipeline.settings.sweeps:

    rule sweep_corpus:
        input:
            lambda wc: sweep_rules.corpus_inputs(
                sweep_rules.sweeps_config(workflow.basedir), wc.corpus, wc.tokenizer
            ),
        output:
            "results/scale-study/sweep-work/corpora/{corpus}/data/{tokenizer}/meta.json",
        log:
            "results/scale-study/sweep-work/logs/corpus-{corpus}-{tokenizer}.log",
        conda:
            ENV
        shell:
            "python -m lenex.pipeline.launch lenex.scale_study.sweep_run corpus {wildcards.corpus} > {log} 2>&1"

    # A point's model is rule train's (workflow/rules/train.smk; its spec:
    # lenex.scale_study.studies), at results/scale-study/models/sweeps/<sweep>/<point>.pt, its
    # resumable state under sweep-work/train/; this job scores it and records the point.
    rule sweep_point:
        input:
            unpack(
                lambda wc: sweep_rules.point_inputs(
                    sweep_rules.sweeps_config(workflow.basedir), wc.sweep, wc.point
                )
            ),
        output:
            "results/scale-study/sweeps/{sweep}/points/{point}.json",
        log:
            "results/scale-study/sweeps/{sweep}/logs/{point}.log",
        conda:
            ENV
        threads: 1
        shell:
            "python -m lenex.pipeline.launch lenex.scale_study.sweep_run point {wildcards.sweep} {wildcards.point}"
            " --threads {threads} > {log} 2>&1"

    rule sweep_part:
        input:
            lambda wc: sweep_rules.part_inputs(wc.sweep, wc.part),
        output:
            "results/scale-study/sweeps/{sweep}/parts/{part}.json",
        log:
            "results/scale-study/sweeps/{sweep}/logs/part-{part}.log",
        conda:
            ENV
        shell:
            "python -m lenex.pipeline.launch lenex.scale_study.sweep_run part-record {wildcards.sweep} {wildcards.part}"
            " > {log} 2>&1"

    rule sweep_report:
        input:
            lambda wc: sweep_rules.report_inputs(wc.sweep),
        output:
            "results/scale-study/sweeps/{sweep}/emergence.md",
            "results/scale-study/sweeps/{sweep}/emergence.png",
            "results/scale-study/sweeps/{sweep}/emergence.json",
        log:
            "results/scale-study/sweeps/{sweep}/logs/report.log",
        conda:
            ENV
        shell:
            "python -m lenex.pipeline.launch lenex.scale_study.sweep_run report {wildcards.sweep} > {log} 2>&1"


# Where each phenomenon would show: every budget series of the committed points forecast at one
# GPU-day (gpu) and at the GPU stage, the paper's point as anchor (lenex.scale_study.predictions);
# the emergence records give the old rule's reading beside each.
rule emergence_predictions:
    input:
        records=claims_emergence.emergence_files(workflow.basedir),
        points=predictions.record_files(workflow.basedir),
        config=predictions.config_files(workflow.basedir),
    output:
        "results/scale-study/sweeps/predictions.md",
    log:
        "results/scale-study/sweeps/logs/predictions.log",
    conda:
        ENV
    shell:
        "python -m lenex.pipeline.launch lenex.scale_study.sweep_run predictions > {log} 2>&1"


# The training curves of the sweeps' points (lenex.scale_study.sweep_curves, docs/curves.md): each
# sweep's final validation loss against budget, per seed, from the recorded points' curves (a point
# recorded before points kept theirs: "no curve recorded"). Reads committed records only: `make tables`
# renders it too.
rule sweep_curves:
    input:
        points=sweep_rules.recorded_points(workflow.basedir),
        config="config/sweeps.yaml",
        code=pipeline.code.stamp("lenex.scale_study.sweep_run"),
    output:
        md="results/scale-study/sweeps/curves.md",
        png="results/scale-study/sweeps/curves.png",
    log:
        "results/scale-study/sweeps/logs/curves.log",
    conda:
        ENV
    shell:
        "python -m lenex.pipeline.launch lenex.scale_study.sweep_run curves > {log} 2>&1"
