# Table stage: one rule renders every paper's tables, and the whole-paper page.


# The table interface: each paper's `Paper` (lenex.pipeline.papers) names its renderer (a module
# run with -m; rendering code in lenex.tables / the paper package), the recorded files a table
# reads (under from_raw: its raw results), its other inputs and the renderer's own arguments.
# Every renderer takes --spec, --table-key, --extra-schemes and writes Markdown, LaTeX and the
# cells file (what the claims read).
rule paper_table:
    input:
        unpack(
            lambda wc: pipeline.settings.paper(wc.paper).table_inputs(
                pipeline.paths, wc.preset, wc.table
            )
        ),
        recorded=pipeline.recorded.inputs(
            lambda wc: pipeline.recorded.table_recorded(wc.paper, wc.preset, wc.table)
        ),
        spec="config/experiments/{paper}.yaml",
        code=lambda wc: pipeline.code.stamp(
            pipeline.settings.paper(wc.paper).table_renderer
        ),
    # update(), as the claims' outputs: a table job that fails (a record missing a field its cells
    # need, a corpus changed since its evaluation) puts the previous table back instead of deleting it.
    output:
        md=update("results/{preset}/tables/{paper}/table{table}.md"),
        tex=update("results/{preset}/tables/{paper}/table{table}.tex"),
        cells=update("results/{preset}/tables/{paper}/table{table}.cells.json"),
    log:
        "results/{preset}/logs/tables/{paper}/table{table}.log",
    conda:
        ENV
    params:
        renderer=lambda wc: pipeline.settings.paper(wc.paper).table_renderer,
        arguments=lambda wc: pipeline.settings.paper(wc.paper).table_arguments(
            pipeline.paths, wc.preset, wc.table
        ),
        raw=pipeline.recorded.raw_env(
            listed=lambda wc: pipeline.recorded.table_recorded(
                wc.paper, wc.preset, wc.table
            )
        ),
        schemes=lambda wc: pipeline.settings.table_schemes(wc.paper, wc.table),
        # a result file holding another cell's or model's result is an error, never a row
        expect=lambda wc: pipeline.identities.results_expect(
            wc.preset, wc.paper, workflow.rules
        ),
    shell:
        "{params.raw}python -m lenex.pipeline.launch {params.renderer} --spec {input.spec} --table-key table{wildcards.table}"
        " --extra-schemes {params.schemes} {params.arguments} --expect {params.expect}"
        " --out-md {output.md} --out-tex {output.tex}"
        " --out-cells {output.cells} > {log} 2>&1"


# A re-run of a table's cells for some seeds (rule table_rerun) beside the committed run's cells of
# those seeds (lenex.tables.rerun): it reads the two raw results and what is committed beside the
# re-run (its run record; a check of its models by the committed rule), so `make tables` renders it too.
rule table_rerun_page:
    input:
        rerun="results/{preset}/reruns/{paper}/table{table}.seeds{seeds}.jsonl.xz",
        committed=lambda wc: pipeline.recorded.stored_raw(wc.preset, wc.paper),
        run=lambda wc: pipeline.recorded.rerun_beside(
            wc.preset, wc.paper, wc.table, wc.seeds, "run"
        ),
        reproduce=lambda wc: pipeline.recorded.rerun_beside(
            wc.preset, wc.paper, wc.table, wc.seeds, "reproduce"
        ),
        code=pipeline.code.stamp("lenex.tables.rerun"),
    output:
        md="results/{preset}/reruns/{paper}/table{table}.seeds{seeds}.md",
        json="results/{preset}/reruns/{paper}/table{table}.seeds{seeds}.json",
        curves_png="results/{preset}/reruns/{paper}/table{table}.seeds{seeds}.curves.png",
    log:
        "results/{preset}/logs/reruns/{paper}/table{table}.seeds{seeds}.page.log",
    conda:
        ENV
    params:
        train_meta=lambda wc: pipeline.paths.train_meta(wc.preset, wc.paper),
    shell:
        "python -m lenex.pipeline.launch lenex.tables.rerun --rerun {input.rerun} --committed {input.committed}"
        " --run-record {input.run} --reproduce {input.reproduce} --train-meta {params.train_meta}"
        " --title '{wildcards.paper} Table {wildcards.table}, seeds {wildcards.seeds}: the re-run beside the committed run'"
        " --out-md {output.md} --out-json {output.json} --out-curves-png {output.curves_png} > {log} 2>&1"


# A table whose committed re-runs hold every seed it reads is rendered from them under from_raw
# (lenex.pipeline.recorded.Recorded.superseding: every renderer of the paper reads the re-runs'
# evaluations in place of the reference run's). The same table rendered from the reference run's
# records alone: its old numbers, and the cells the claims' earlier side reads (rule paper_claims).
use rule paper_table as paper_table_reference with:
    input:
        unpack(
            lambda wc: pipeline.targets.reference_table_inputs(
                wc.preset, wc.paper, wc.table
            )
        ),
        recorded=pipeline.recorded.inputs(
            lambda wc: pipeline.recorded.table_recorded(wc.paper, wc.preset, wc.table),
            reference=True,
        ),
        spec="config/experiments/{paper}.yaml",
        code=lambda wc: pipeline.code.stamp(
            pipeline.settings.paper(wc.paper).table_renderer
        ),
    output:
        md="results/{preset}/reruns/{paper}/reference/table{table}.md",
        tex="results/{preset}/reruns/{paper}/reference/table{table}.tex",
        cells="results/{preset}/reruns/{paper}/reference/table{table}.cells.json",
    log:
        "results/{preset}/logs/reruns/{paper}/reference/table{table}.log",
    params:
        arguments=lambda wc: pipeline.targets.reference_table_arguments(
            wc.preset, wc.paper, wc.table
        ),
        raw=pipeline.recorded.raw_env(reference=True),


# Diagnostics of every paper (lenex.tables.diagnostics): the beyond-L_tr perplexity from its tables' cells
# and the loss by position of its evaluations beyond L_tr, ours, beside the papers' metrics; then its
# models' training curves (written by rule train; under from_raw those its raw results hold, a run
# recorded before curves saying it has none: docs/curves.md).
rule paper_diagnostics:
    input:
        cells=lambda wc: pipeline.targets.paper_cells(wc.preset, wc.paper),
        recorded=pipeline.recorded.inputs(
            lambda wc: pipeline.settings.paper(wc.paper).diagnostic_recorded(
                pipeline.paths, wc.preset
            )
        ),
        curves=pipeline.recorded.inputs(
            lambda wc: pipeline.recorded.curve_files(wc.preset, wc.paper)
        ),
        code=pipeline.code.stamp("lenex.tables.diagnostics"),
    output:
        md="results/{preset}/diagnostics/{paper}.md",
        png=report(
            "results/{preset}/diagnostics/{paper}.png",
            **pipeline.report.diagnostics_report(),
        ),
        pdf="results/{preset}/diagnostics/{paper}.pdf",
        curves_png=report(
            "results/{preset}/diagnostics/{paper}.curves.png",
            **pipeline.report.diagnostics_report("curves", "training curves (ours)"),
        ),
    log:
        "results/{preset}/logs/diagnostics/{paper}.log",
    conda:
        ENV
    params:
        results=lambda wc: pipeline.settings.paper(wc.paper).diagnostic_recorded(
            pipeline.paths, wc.preset
        ),
        curves=lambda wc: pipeline.recorded.curve_files(wc.preset, wc.paper),
        arguments=lambda wc: pipeline.targets.diagnostic_arguments(wc.paper),
        raw=pipeline.recorded.raw_env(),
        expect=lambda wc: pipeline.identities.results_expect(
            wc.preset, wc.paper, workflow.rules
        ),
    shell:
        "{params.raw}python -m lenex.pipeline.launch lenex.tables.diagnostics --paper {wildcards.paper} --preset {wildcards.preset}"
        " {params.arguments} --cells {input.cells} --results {params.results} --expect {params.expect}"
        " --curves {params.curves} --out-md {output.md} --out-png {output.png} --out-pdf {output.pdf}"
        " --out-curves-png {output.curves_png} > {log} 2>&1"


# Whole-paper target: one page gathering every table and figure the experiment file declares,
# so `snakemake --cores 2 results/<preset>/<paper>.md` regenerates the whole paper.
rule paper_report:
    input:
        tables=lambda wc: pipeline.targets.paper_tables(wc.preset, wc.paper),
        figures=lambda wc: pipeline.targets.paper_figures(wc.preset, wc.paper),
        claims="results/{preset}/claims/{paper}.md",
        diagnostics="results/{preset}/diagnostics/{paper}.md",
        reruns=lambda wc: pipeline.recorded.rerun_pages(wc.preset, [wc.paper]),
        spec="config/experiments/{paper}.yaml",
        code=pipeline.code.stamp("lenex.tables.report"),
    output:
        "results/{preset}/{paper}.md",
    log:
        "results/{preset}/logs/tables/{paper}.report.log",
    wildcard_constraints:
        paper=r"(?!claims\.)[a-z-]+",  # results/<preset>/claims.md is rule claims_summary's
    conda:
        ENV
    shell:
        "python -m lenex.pipeline.launch lenex.tables.report --spec {input.spec} --preset {wildcards.preset}"
        " --tables {input.tables} --figures {input.figures} --claims {input.claims}"
        " --diagnostics {input.diagnostics} --reruns {input.reruns} --out {output} > {log} 2>&1"
