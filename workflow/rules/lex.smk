# The LEX paper (Sun et al. 2023): its models are the generic train rule's, its perplexities and
# attention resolutions (Table 3) the evaluation rules' (evaluate.smk: its cells are
# Lex.evaluation_cells), its tables the generic paper_table; here its table headers and its two
# figures. Its interface and file lists: lenex.lex.paper, lenex.lex.targets.
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
        raw=pipeline.recorded.raw_env(
            LEX.name,
            lambda wc: LEX.table_recorded(pipeline.paths, wc.preset, wc.table)[
                "results"
            ],
        ),
    shell:
        "{params.raw}python -m lenex.pipeline.launch lenex.tables.header {params.arguments}"
        " --out {output} > {log} 2>&1"


# The header of a table rendered from the reference run's records alone (rule paper_table_reference).
use rule lex_table_header as lex_table_header_reference with:
    input:
        evaluations=pipeline.recorded.inputs(
            lambda wc: LEX.table_recorded(pipeline.paths, wc.preset, wc.table)[
                "results"
            ],
            reference=True,
        ),
        metas=pipeline.recorded.inputs(
            lambda wc: LEX.table_recorded(pipeline.paths, wc.preset, wc.table)[
                "metas"
            ],
            reference=True,
        ),
        train_meta=pipeline.recorded.inputs(
            lambda wc: LEX.header_recorded(pipeline.paths, wc.preset), reference=True
        ),
        code=pipeline.code.stamp("lenex.tables.header"),
    output:
        "results/{preset}/reruns/{paper}/reference/table{table}.header.json",
    log:
        "results/{preset}/logs/reruns/{paper}/reference/table{table}.header.log",
    params:
        raw=pipeline.recorded.raw_env(LEX.name, reference=True),


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
        raw=pipeline.recorded.raw_env(
            LEX.name, lambda wc: LEX.figure_recorded(pipeline.paths, wc.preset, "1")
        ),
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
