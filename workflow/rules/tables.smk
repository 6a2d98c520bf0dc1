# Table stage: paper / ours / difference for every cell, with the scale in the header.


rule table_header:
    input:
        evaluations=recorded(table_evaluations),
        metas=recorded(table_corpora),
        train_meta=recorded(
            lambda wc: data_files(wc.preset, training_corpus(wc.paper))[-1]
        ),
    output:
        "results/{preset}/tables/{paper}/table{table}.header.json",
    log:
        "results/{preset}/logs/tables/{paper}/table{table}.header.log",
    conda:
        ENV
    params:
        preset_file=lambda wc: str(CONFIG_DIR / "presets" / f"{wc.preset}.yaml"),
        corpora=lambda wc: quoted_json(config["corpora"]),
        train_note=lambda wc: shlex.quote(experiment(wc.paper)["train_stands_in_for"]),
        unavailable=lambda wc: quoted_json(table_unavailable(wc)),
        evaluations=table_evaluations,
        metas=table_corpora,
        train_meta=lambda wc: data_files(wc.preset, training_corpus(wc.paper))[-1],
        raw=raw_env(),
    shell:
        "{params.raw}python -m lenex.header --preset-file {params.preset_file} --paper {wildcards.paper}"
        " --corpora {params.corpora} --metas {params.metas} --train-meta {params.train_meta}"
        " --train-stands-in-for {params.train_note} --unavailable {params.unavailable}"
        " --results {params.evaluations} --out {output} > {log} 2>&1"


rule render_table:
    input:
        evaluations=recorded(table_evaluations),
        header="results/{preset}/tables/{paper}/table{table}.header.json",
        spec="config/experiments/{paper}.yaml",
    output:
        md="results/{preset}/tables/{paper}/table{table}.md",
        tex="results/{preset}/tables/{paper}/table{table}.tex",
        cells="results/{preset}/tables/{paper}/table{table}.cells.json",
    log:
        "results/{preset}/logs/tables/{paper}/table{table}.log",
    conda:
        ENV
    params:
        evaluations=table_evaluations,
        raw=raw_env(),
        schemes=lambda wc: table_schemes(wc.paper, wc.table),
    shell:
        "{params.raw}python -m lenex.tables.render --spec {input.spec} --table-key table{wildcards.table}"
        " --extra-schemes {params.schemes} --results {params.evaluations} --header {input.header}"
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
        "python -m lenex.tables.report --spec {input.spec} --preset {wildcards.preset}"
        " --tables {input.tables} --figures {input.figures} --claims {input.claims}"
        " --out {output} > {log} 2>&1"
