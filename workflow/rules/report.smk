# The Snakemake report of one preset (`make report PRESET=<preset>`): every table, figure,
# dataset card and claims page that exists under results/<preset>/, one category per paper
# (subcategories Tables, Figures, Claims) and one for the dataset cards. Pages are Markdown,
# which the report only offers as a download, so each is rendered to a self-contained HTML page
# (lenex.tables.report_page); figures are flagged where their rules write them (report() with
# pipeline.report.figure_report). Method notes: docs/report.md.


rule report_table:
    input:
        "results/{preset}/tables/{paper}/table{table}.md",
    output:
        html=report(
            "results/{preset}/report/tables/{paper}/table{table}.html",
            caption="../report/table.rst",
            category=lambda wc: pipeline.report.paper_title(wc.paper),
            subcategory="Tables",
            labels=lambda wc: {
                "table": pipeline.report.result_label(
                    wc.paper, "table", f"table{wc.table}"
                )
            },
        ),
        caption="results/{preset}/report/tables/{paper}/table{table}.caption.html",
    log:
        "results/{preset}/logs/report/tables/{paper}/table{table}.log",
    conda:
        ENV
    shell:
        "python -m lenex.pipeline.launch lenex.tables.report_page --md {input} --out-html {output.html}"
        " --out-caption {output.caption} > {log} 2>&1"


rule report_card:
    input:
        md="results/{preset}/data/{corpus}/CARD.md",
        png="results/{preset}/data/{corpus}/lengths.png",
    output:
        report(
            "results/{preset}/report/data/{corpus}.html",
            caption="../report/card.rst",
            category="Datasets",
            subcategory="Dataset cards",
            labels=lambda wc: {
                "corpus": wc.corpus,
                "stands in for": pipeline.paths.corpus_spec(wc.preset, wc.corpus).get(
                    "stands_in_for", "-"
                ),
            },
        ),
    log:
        "results/{preset}/logs/report/data/{corpus}.log",
    conda:
        ENV
    shell:
        "python -m lenex.pipeline.launch lenex.tables.report_page --md {input.md} --out-html {output} > {log} 2>&1"


# Claims pages (results/<preset>/claims/<paper>.md, from the claims rule) join the report as
# soon as they exist: report_files lists them, this rule renders them.
use rule report_card as report_claims with:
    input:
        md="results/{preset}/claims/{paper}.md",
    output:
        report(
            "results/{preset}/report/claims/{paper}.html",
            caption="../report/claims.rst",
            category=lambda wc: pipeline.report.paper_title(wc.paper),
            subcategory="Claims",
            labels=lambda wc: {"claims": pipeline.report.paper_title(wc.paper)},
        ),
    log:
        "results/{preset}/logs/report/claims/{paper}.log",


# The report's target: what it shows, one path a line. Written by Python, not printf: Snakemake
# times a job by file timestamps, and one that ends within the clock's tick gets runtime 0,
# which collapses the report's log-scale runtime chart.
rule report_contents:
    input:
        lambda wc: pipeline.report.report_files(wc.preset),
    output:
        "results/{preset}/report/contents.txt",
    log:
        "results/{preset}/logs/report/contents.log",
    conda:
        ENV
    shell:
        "python -m lenex.pipeline.launch lenex.tables.report_page --contents {output} --files {input} > {log} 2>&1"
