# Table stage: the interface every paper's table rule implements, and the whole-paper page.


# The table interface: each paper's table rule is `use rule paper_table as <paper>_table with:`
# (lex.smk, receptive_field.smk, segmented.smk), which names its inputs, pins {paper} to itself
# and gives its renderer (params.renderer: a module run with -m) and the renderer's own
# arguments (params.arguments, one string; rendering code in lenex.tables / the paper package).
# Every renderer takes --spec, --table-key, --extra-schemes and writes Markdown, LaTeX and the
# cells file (what the claims read). This template builds nothing: its {paper} matches no path.
rule paper_table:
    input:
        spec="config/experiments/{paper}.yaml",
    output:
        md="results/{preset}/tables/{paper}/table{table}.md",
        tex="results/{preset}/tables/{paper}/table{table}.tex",
        cells="results/{preset}/tables/{paper}/table{table}.cells.json",
    log:
        "results/{preset}/logs/tables/{paper}/table{table}.log",
    wildcard_constraints:
        paper=r"(?!)",  # an empty look-ahead: matches nothing, a paper's rule pins its own
    conda:
        ENV
    params:
        renderer=None,
        arguments="",
        raw=raw_env(),
        schemes=lambda wc: table_schemes(wc.paper, wc.table),
    shell:
        "{params.raw}python -m lenex.pipeline.launch {params.renderer} --spec {input.spec} --table-key table{wildcards.table}"
        " --extra-schemes {params.schemes} {params.arguments}"
        " --out-md {output.md} --out-tex {output.tex}"
        " --out-cells {output.cells} > {log} 2>&1"


# Whole-paper target: one page gathering every table and figure the experiment file declares,
# so `snakemake --cores 2 results/<preset>/<paper>.md` regenerates the whole paper.
rule paper_report:
    input:
        tables=lambda wc: paper_tables(wc.preset, wc.paper),
        figures=lambda wc: paper_figures(wc.preset, wc.paper),
        claims="results/{preset}/claims/{paper}.md",
        spec="config/experiments/{paper}.yaml",
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
        " --out {output} > {log} 2>&1"
