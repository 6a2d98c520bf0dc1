# The LEX paper (Sun et al. 2023): its models and perplexities are the generic train and
# evaluate rules, its tables the generic paper_table; here its table headers, attention
# resolution (Table 3) and its two figures. Its interface and file lists: lenex.lex.paper,
# lenex.lex.targets.
#   snakemake --cores 2 results/tiny/lex.md                 # the whole paper
#   snakemake --cores 2 results/tiny/tables/lex/table2.md   # one table

LEX = pipeline.settings.paper("lex")


# The scale, models and corpora a table describes, gathered once from its results and metas.
rule lex_table_header:
    input:
        evaluations=pipeline.recorded.inputs(
            lambda wc: LEX.table_recorded(pipeline.paths, wc.preset, wc.table)[
                "results"
            ]
        ),
        metas=pipeline.recorded.inputs(
            lambda wc: LEX.table_recorded(pipeline.paths, wc.preset, wc.table)["metas"]
        ),
        train_meta=pipeline.recorded.inputs(
            lambda wc: LEX.header_recorded(pipeline.paths, wc.preset)
        ),
        code=pipeline.code.stamp("lenex.tables.header"),
    output:
        "results/{preset}/tables/{paper}/table{table}.header.json",
    log:
        "results/{preset}/logs/tables/{paper}/table{table}.header.log",
    wildcard_constraints:
        paper=LEX.name,
    conda:
        ENV
    params:
        arguments=lambda wc: LEX.header_arguments(pipeline.paths, wc.preset, wc.table),
        raw=pipeline.recorded.raw_env(LEX.name),
    shell:
        "{params.raw}python -m lenex.pipeline.launch lenex.tables.header {params.arguments}"
        " --out {output} > {log} 2>&1"


# Attention resolution R(s) (LEX Eq. 3-4, section 4.3) of one model at one length under one
# mask, from s[n] averaged over the same test texts the perplexity tables score: the one-cell path
# of a resolution cell (lenex.pipeline.evaluation), at a GPU preset or for a cell no table reads.
use rule evaluate as resolution with:
    input:
        model=rules.evaluate.input.model,
        data=rules.evaluate.input.data,
        code=lambda wc: pipeline.code.stamp(
            "lenex.lex.resolution", wc.preset, wc.paper, wc.variant
        ),
    output:
        "results/{preset}/resolution/{paper}/{variant}/seed{seed}/{corpus}/{mask}/L{length}.json",
    log:
        "results/{preset}/logs/resolution/{paper}/{variant}/seed{seed}/{corpus}/{mask}/L{length}.log",
    params:
        module="lenex.lex.resolution",


# The per-model path (lenex.pipeline.evaluation): at a CPU preset, one evaluation job per model
# (variant and seed), measure and corpus scores every perplexity or resolution cell of the LEX
# tables on that corpus that reads the model, in one process that loads it once
# (lenex.lex.evaluate_model), each cell still its own file, with the arguments the one-cell rules
# give it. The cells depend on the preset (its L_tr and seeds), so a rule is made here per preset
# and job (LEX.evaluation_jobs); it takes precedence over the one-cell rule of its measure.
for _preset in pipeline.evaluation.per_model_presets(LEX.name):
    for _job in LEX.evaluation_jobs(pipeline.paths, _preset):

        rule:
            name:
                _job.name
            input:
                model=LEX.model_path(_preset, _job.variant, _job.seed),
                data=pipeline.paths.data_files(_preset, _job.corpus),
                code=pipeline.code.stamp(
                    "lenex.lex.evaluate_model", _preset, LEX.name, _job.variant
                ),
            output:
                _job.outputs,
            log:
                _job.log,
            conda:
                ENV
            threads: pipeline.settings.rule_resources(_preset, "evaluate", "threads", 1, LEX.name)
            resources:
                # the preset's evaluate runtime bounds one cell; this job scores len(_job.cells)
                **pipeline.resources.stage_resources_at(
                    _preset, "evaluate", LEX.name, runs=len(_job.cells)
                ),
            params:
                cells=quoted_json(_job.cells),
                span=pipeline.evaluation.span(_preset, LEX.name),
                max_tokens=pipeline.evaluation.setting(_preset, LEX.name, "max_tokens"),
                batch_tokens=pipeline.evaluation.setting(
                    _preset, LEX.name, "batch_tokens"
                ),
                expect=pipeline.identities.expect(
                    _preset, LEX.name, _job.variant, _job.seed
                ),
            shell:
                "python -m lenex.pipeline.launch lenex.lex.evaluate_model --checkpoint {input.model} --cells {params.cells}"
                " --span {params.span} --max-tokens {params.max_tokens} --batch-tokens {params.batch_tokens}"
                " --threads {threads} --expect {params.expect} > {log} 2>&1"

        workflow.ruleorder(_job.name, _job.one_cell_rule)


# Figure 1: perplexity against length, from the PG22 evaluations of Table 2 (nothing else).
rule lex_figure1:
    input:
        results=pipeline.recorded.inputs(
            lambda wc: LEX.figure_recorded(pipeline.paths, wc.preset, "1"), LEX.name
        ),
        spec="config/experiments/lex.yaml",
        code=pipeline.code.stamp("lenex.lex.figures"),
    output:
        png=report(
            "results/{preset}/figures/lex/figure1.png",
            **pipeline.report.figure_report("figure1", LEX.name),
        ),
        pdf="results/{preset}/figures/lex/figure1.pdf",
    log:
        "results/{preset}/logs/figures/lex/figure1.log",
    conda:
        ENV
    params:
        results=lambda wc: LEX.figure_recorded(pipeline.paths, wc.preset, "1"),
        raw=pipeline.recorded.raw_env(LEX.name),
        schemes=lambda wc: pipeline.settings.table_schemes(LEX.name, 2),
        expect=lambda wc: pipeline.identities.results_expect(
            wc.preset, LEX.name, workflow.rules
        ),
    shell:
        "{params.raw}python -m lenex.pipeline.launch lenex.lex.figures figure1 --spec {input.spec} --table-key table2"
        " --extra-schemes {params.schemes} --dataset pg22 --results {params.results} --preset {wildcards.preset}"
        " --expect {params.expect}"
        " --out-png {output.png} --out-pdf {output.pdf} > {log} 2>&1"


# Figure 2: the analytic g_zeta[n] (Eq. 10) at the paper's head dimension (Table 7: 1024 / 16)
# up to its longest evaluation length (8 x 1024), whatever the preset: no model is involved.
rule lex_figure2:
    input:
        code=pipeline.code.stamp("lenex.lex.figures"),
    output:
        png=report(
            "results/{preset}/figures/lex/figure2.png",
            **pipeline.report.figure_report("figure2", LEX.name),
        ),
        pdf="results/{preset}/figures/lex/figure2.pdf",
        cells="results/{preset}/figures/lex/figure2.cells.json",
    log:
        "results/{preset}/logs/figures/lex/figure2.log",
    conda:
        ENV
    params:
        head_dim=lambda wc: LEX.paper_head_dim(pipeline.settings),
        max_distance=lambda wc: pipeline.evaluation.span("paper", LEX.name),
        # xPos's own defaults (its Options), the gamma and B of the paper's Figure 2
        gamma=lambda wc: pipeline.settings.scheme_defaults("xpos")["gamma"],
        scale_base=lambda wc: pipeline.settings.scheme_defaults("xpos")["scale_base"],
    shell:
        "python -m lenex.pipeline.launch lenex.lex.figures figure2 --head-dim {params.head_dim}"
        " --max-distance {params.max_distance} --gamma {params.gamma} --scale-base {params.scale_base}"
        " --out-png {output.png} --out-pdf {output.pdf} --out-cells {output.cells} > {log} 2>&1"
