# Scale study (docs/scale-study.md): at what budget, shape and tokenizer do the papers'
# failures show? Every point of config/scale-study.yaml's grid is a model and a record:
#   snakemake --cores 2 scale_study --config scale_study=True
# (what `python -m lenex.scale_study` runs) trains and scores the points points.jsonl does not hold
# complete, gathers them into it and renders the pages; `scale_study_only=<part of a key>` trains
# only those points, `scale_study_train=False` none (add `--forcerun scale_study_points
# scale_study_report` to render points.jsonl and the pages from the committed records alone).
# Targets come from lenex.scale_study.study_rules; the jobs are lenex.scale_study.study's, but the
# training: the points' models are rule train's (lenex.scale_study.studies gives their specs).
# config/scale-study.yaml is read only when a study target is asked for. The rules exist only
# with `--config scale_study=True` (lenex.pipeline.settings): the papers' claims read the
# committed points.jsonl as a recorded result, so no other run, and no `make tables`, ever trains
# a study point.


wildcard_constraints:
    study_point=r"[A-Za-z0-9_.-]+__(gpt2|bpe-\d+)__\d+x\d+__\d+",
    study_tokenizer=r"gpt2|bpe-\d+",


if pipeline.settings.scale_study:
    # Imported only here: the study's jobs' module imports torch, which a DAG without the study
    # must not pay for (seconds on every no-op rerun).
    from lenex.scale_study import study_rules

    # The study brought up to date. The pending points' records are asked for here, by name:
    # Snakemake builds a missing file only for a job that has to run, and the gather's output,
    # the committed points.jsonl, is present (a point pending is a fact of its contents).
    rule scale_study:
        input:
            lambda wc: study_rules.study_targets(
                study_rules.study_config(workflow.basedir),
                workflow.basedir,
                pipeline.settings.scale_study_only,
                pipeline.settings.scale_study_train,
            ),

    rule scale_study_tokenizer:
        input:
            lambda wc: study_rules.tokenizer_inputs(
                study_rules.study_config(workflow.basedir),
                wc.study_tokenizer,
                workflow.basedir,
            ),
        output:
            "results/scale-study/tokenizer/{study_tokenizer}.json",
        log:
            "results/scale-study/logs/tokenizer-{study_tokenizer}.log",
        conda:
            ENV
        shell:
            "python -m lenex.pipeline.launch lenex.scale_study.study tokenizer {wildcards.study_tokenizer}"
            " > {log} 2>&1"

    rule scale_study_data:
        input:
            lambda wc: study_rules.data_inputs(
                study_rules.study_config(workflow.basedir),
                wc.study_tokenizer,
                workflow.basedir,
            ),
        output:
            "results/scale-study/data/{study_tokenizer}/meta.json",
        log:
            "results/scale-study/logs/data-{study_tokenizer}.log",
        conda:
            ENV
        shell:
            "python -m lenex.pipeline.launch lenex.scale_study.study data {wildcards.study_tokenizer}"
            " > {log} 2>&1"

    # A point's model is trained by rule train (workflow/rules/train.smk; its spec:
    # lenex.scale_study.studies) at results/scale-study/models/study/<point>.pt, kept, not
    # committed: a point measured again (a multiple or protocol added to the config) is scored on
    # it; with it gone, trained again. An interrupted training resumes from its state in
    # results/scale-study/train/<point>/.
    # temp(): a record lives until the gather has added it to points.jsonl, the store; the next
    # time the point is pending (the config asks more of it) it is scored again.
    rule scale_study_point:
        input:
            unpack(
                lambda wc: study_rules.point_inputs(
                    study_rules.study_config(workflow.basedir), wc.study_point
                )
            ),
        output:
            temp("results/scale-study/records/{study_point}.json"),
        log:
            "results/scale-study/logs/point-{study_point}.log",
        conda:
            ENV
        threads: 1
        shell:
            "python -m lenex.pipeline.launch lenex.scale_study.study point {wildcards.study_point}"
            " --threads {threads} --record {output} > {log} 2>&1"

    # update(): the job adds the pending points' records to the committed store in place (the
    # lines keep the order they were first recorded in); with none pending it has no input, and
    # forced it writes the same bytes back.
    rule scale_study_points:
        input:
            lambda wc: study_rules.gather_inputs(
                study_rules.study_config(workflow.basedir),
                workflow.basedir,
                pipeline.settings.scale_study_only,
                pipeline.settings.scale_study_train,
            ),
        output:
            update("results/scale-study/points.jsonl"),
        log:
            "results/scale-study/logs/points.log",
        conda:
            ENV
        shell:
            "python -m lenex.pipeline.launch lenex.scale_study.study gather --records {input} > {log} 2>&1"

    rule scale_study_report:
        input:
            points="results/scale-study/points.jsonl",
            config="config/scale-study.yaml",
        output:
            "results/scale-study/README.md",
            "results/scale-study/ratio.png",
        log:
            "results/scale-study/logs/report.log",
        conda:
            ENV
        shell:
            "python -m lenex.pipeline.launch lenex.scale_study.study report --config {input.config} > {log} 2>&1"
