# The LEX paper (Sun et al. 2023): its models and perplexities are the generic train and
# evaluate rules, its tables the generic paper_table; here its table headers, attention
# resolution (Table 3) and its two figures. Its interface and file lists: lenex.lex.paper,
# lenex.lex.targets.
#   snakemake --cores 2 results/tiny/lex.md                 # the whole paper
#   snakemake --cores 2 results/tiny/tables/lex/table2.md   # one table

LEX = pipeline.paper("lex")


# The scale, models and corpora a table describes, gathered once from its results and metas.
rule lex_table_header:
    input:
        evaluations=pipeline.recorded(
            lambda wc: LEX.table_recorded(pipeline, wc.preset, wc.table)["results"]
        ),
        metas=pipeline.recorded(
            lambda wc: LEX.table_recorded(pipeline, wc.preset, wc.table)["metas"]
        ),
        train_meta=pipeline.recorded(
            lambda wc: LEX.header_recorded(pipeline, wc.preset)
        ),
        code=pipeline.code("lenex.tables.header"),
    output:
        "results/{preset}/tables/{paper}/table{table}.header.json",
    log:
        "results/{preset}/logs/tables/{paper}/table{table}.header.log",
    wildcard_constraints:
        paper=LEX.name,
    conda:
        ENV
    params:
        arguments=lambda wc: LEX.header_arguments(pipeline, wc.preset, wc.table),
        raw=pipeline.raw_env(LEX.name),
    shell:
        "{params.raw}python -m lenex.pipeline.launch lenex.tables.header {params.arguments}"
        " --out {output} > {log} 2>&1"


# Attention resolution R(s) (LEX Eq. 3-4, section 4.3) of one model at one length under one
# mask, from s[n] averaged over the same test texts the perplexity tables score: a cell at a GPU
# preset, or one no table reads (at a CPU preset the tables' cells come from evaluate_model below).
use rule evaluate as resolution with:
    input:
        model=rules.evaluate.input.model,
        data=rules.evaluate.input.data,
        code=lambda wc: pipeline.code(
            "lenex.lex.resolution", wc.preset, wc.paper, wc.variant
        ),
    output:
        "results/{preset}/resolution/{paper}/{variant}/seed{seed}/{corpus}/{mask}/L{length}.json",
    log:
        "results/{preset}/logs/resolution/{paper}/{variant}/seed{seed}/{corpus}/{mask}/L{length}.log",
    params:
        module="lenex.lex.resolution",


# At a CPU preset, one evaluation job per model (variant and seed), measure and corpus: every
# perplexity or resolution cell of the LEX tables on that corpus that reads the model, scored in
# one process that loads it once (lenex.lex.evaluate_model), each cell still its own file. The
# cells depend on the preset (its L_tr and seeds), so a rule is made here per preset and job
# (LEX.evaluation_jobs); it takes precedence over the one-cell rules.
for _preset in pipeline.preset_names:
    for (_variant, _seed, _stage, _corpus), _cells in LEX.evaluation_jobs(
        pipeline, _preset
    ).items():
        _name = f"lex_{_stage}__{_preset}_{_variant}_s{_seed}_{_corpus}".replace(
            "-", "_"
        )

        rule:
            name:
                _name
            input:
                model=LEX.model_path(_preset, _variant, _seed),
                data=pipeline.data_files(_preset, _corpus),
                code=pipeline.code(
                    "lenex.lex.evaluate_model", _preset, LEX.name, _variant
                ),
            output:
                [c["out"] for c in _cells],
            log:
                f"results/{_preset}/logs/{_stage}/{LEX.name}/{_variant}/seed{_seed}/{_corpus}.log",
            conda:
                ENV
            threads: pipeline.rule_resources(_preset, "evaluate", "threads", 1, LEX.name)
            resources:
                # the preset's evaluate runtime bounds one cell; this job scores len(_cells)
                **pipeline.stage_resources_at(
                    _preset, "evaluate", LEX.name, runs=len(_cells)
                ),
            params:
                cells=quoted_json(_cells),
                span=pipeline.eval_length(
                    _preset, pipeline.experiment(LEX.name)["span_multiple"], LEX.name
                ),
                max_tokens=pipeline.paper_preset(_preset, LEX.name)["eval"][
                    "max_tokens"
                ],
                batch_tokens=pipeline.paper_preset(_preset, LEX.name)["eval"][
                    "batch_tokens"
                ],
                expect=pipeline.expect(_preset, LEX.name, _variant, _seed),
            shell:
                "python -m lenex.pipeline.launch lenex.lex.evaluate_model --checkpoint {input.model} --cells {params.cells}"
                " --span {params.span} --max-tokens {params.max_tokens} --batch-tokens {params.batch_tokens}"
                " --threads {threads} --expect {params.expect} > {log} 2>&1"

        workflow.ruleorder(_name, "evaluate" if _stage == "eval" else "resolution")


# Figure 1: perplexity against length, from the PG22 evaluations of Table 2 (nothing else).
rule lex_figure1:
    input:
        results=pipeline.recorded(
            lambda wc: LEX.figure_recorded(pipeline, wc.preset, "1"), LEX.name
        ),
        spec="config/experiments/lex.yaml",
        code=pipeline.code("lenex.lex.figures"),
    output:
        png=report(
            "results/{preset}/figures/lex/figure1.png",
            **pipeline.figure_report("figure1", LEX.name),
        ),
        pdf="results/{preset}/figures/lex/figure1.pdf",
    log:
        "results/{preset}/logs/figures/lex/figure1.log",
    conda:
        ENV
    params:
        results=lambda wc: LEX.figure_recorded(pipeline, wc.preset, "1"),
        raw=pipeline.raw_env(LEX.name),
        schemes=lambda wc: pipeline.table_schemes(LEX.name, 2),
        expect=lambda wc: pipeline.results_expect(wc.preset, LEX.name, workflow.rules),
    shell:
        "{params.raw}python -m lenex.pipeline.launch lenex.lex.figures figure1 --spec {input.spec} --table-key table2"
        " --extra-schemes {params.schemes} --dataset pg22 --results {params.results} --preset {wildcards.preset}"
        " --expect {params.expect}"
        " --out-png {output.png} --out-pdf {output.pdf} > {log} 2>&1"


# Figure 2: the analytic g_zeta[n] (Eq. 10) at the paper's head dimension (Table 7: 1024 / 16)
# up to its longest evaluation length (8 x 1024), whatever the preset: no model is involved.
rule lex_figure2:
    input:
        code=pipeline.code("lenex.lex.figures"),
    output:
        png=report(
            "results/{preset}/figures/lex/figure2.png",
            **pipeline.figure_report("figure2", LEX.name),
        ),
        pdf="results/{preset}/figures/lex/figure2.pdf",
        cells="results/{preset}/figures/lex/figure2.cells.json",
    log:
        "results/{preset}/logs/figures/lex/figure2.log",
    conda:
        ENV
    params:
        head_dim=lambda wc: LEX.paper_head_dim(pipeline),
        max_distance=lambda wc: pipeline.eval_length(
            "paper", pipeline.experiment(LEX.name)["span_multiple"], LEX.name
        ),
    shell:
        "python -m lenex.pipeline.launch lenex.lex.figures figure2 --head-dim {params.head_dim}"
        " --max-distance {params.max_distance} --gamma 0.4 --scale-base 512"
        " --out-png {output.png} --out-pdf {output.pdf} --out-cells {output.cells} > {log} 2>&1"
