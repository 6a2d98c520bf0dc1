# The LEX paper (Sun et al. 2023): its models and perplexities are the generic train and
# evaluate rules; here its tables (header + render), attention resolution (Table 3) and its two
# figures. File lists: lenex.lex.targets (through lex_table_recorded, recorded.smk).
#   snakemake --cores 2 results/tiny/lex.md                 # the whole paper
#   snakemake --cores 2 results/tiny/tables/lex/table2.md   # one table


# The scale, models and corpora a table describes, gathered once from its results and metas.
rule lex_table_header:
    input:
        evaluations=recorded(
            lambda wc: lex_table_recorded(wc.preset, wc.table)["results"]
        ),
        metas=recorded(lambda wc: lex_table_recorded(wc.preset, wc.table)["metas"]),
        train_meta=recorded(lambda wc: train_meta(wc.preset, LEX)),
    output:
        "results/{preset}/tables/{paper}/table{table}.header.json",
    log:
        "results/{preset}/logs/tables/{paper}/table{table}.header.log",
    wildcard_constraints:
        paper=LEX,
    conda:
        ENV
    params:
        preset_file=lambda wc: str(CONFIG_DIR / "presets" / f"{wc.preset}.yaml"),
        corpora=lambda wc: quoted_json(config["corpora"]),
        train_note=shlex.quote(experiment(LEX)["train_stands_in_for"]),
        unavailable=lambda wc: quoted_json(
            lex_targets.table_unavailable(
                table_spec(LEX, wc.table), corpus_unavailable
            )
        ),
        evaluations=lambda wc: lex_table_recorded(wc.preset, wc.table)["results"],
        metas=lambda wc: lex_table_recorded(wc.preset, wc.table)["metas"],
        train_meta=lambda wc: train_meta(wc.preset, LEX),
        raw=raw_env(LEX),
    shell:
        "{params.raw}python -m lenex.pipeline.launch lenex.tables.header --preset-file {params.preset_file} --paper {wildcards.paper}"
        " --corpora {params.corpora} --metas {params.metas} --train-meta {params.train_meta}"
        " --train-stands-in-for {params.train_note} --unavailable {params.unavailable}"
        " --results {params.evaluations} --out {output} > {log} 2>&1"


use rule paper_table as lex_table with:
    input:
        evaluations=recorded(
            lambda wc: lex_table_recorded(wc.preset, wc.table)["results"]
        ),
        header="results/{preset}/tables/{paper}/table{table}.header.json",
        spec="config/experiments/{paper}.yaml",
    wildcard_constraints:
        paper=LEX,
    params:
        renderer="lenex.tables.render",
        arguments=lambda wc, input: (
            "--results "
            + " ".join(lex_table_recorded(wc.preset, wc.table)["results"])
            + f" --header {input.header}"
        ),


# Attention resolution R(s) (LEX Eq. 3-4, section 4.3) of one model at one length under one
# mask, from s[n] averaged over the same test texts the perplexity tables score: for one cell
# no table reads (the tables' cells come from evaluate_model below).
use rule evaluate as resolution with:
    output:
        "results/{preset}/resolution/{paper}/{variant}/{corpus}/{mask}/L{length}.json",
    log:
        "results/{preset}/logs/resolution/{paper}/{variant}/{corpus}/{mask}/L{length}.log",
    params:
        module="lenex.lex.resolution",


# One evaluation job per model, measure and corpus: every perplexity or resolution cell of the
# LEX tables on that corpus that reads the model, scored in one process that loads it once
# (lenex.lex.evaluate_model), each cell still its own file. The cells depend on the preset (its
# L_tr), so a rule is made here per preset and job; it takes precedence over the one-cell rules.
for _preset in PRESET_NAMES:
    for (_variant, _stage, _corpus), _cells in lex_evaluation_jobs(_preset).items():
        _name = f"lex_{_stage}__{_preset}_{_variant}_{_corpus}".replace("-", "_")

        rule:
            name:
                _name
            input:
                model=f"results/{_preset}/models/{LEX}/{_variant}.pt",
                data=data_files(_preset, _corpus),
            output:
                [c["out"] for c in _cells],
            log:
                f"results/{_preset}/logs/{_stage}/{LEX}/{_variant}/{_corpus}.log",
            conda:
                ENV
            threads: rule_resources(_preset, "evaluate", "threads", 1, LEX)
            resources:
                # the preset's evaluate runtime bounds one cell; this job scores len(_cells)
                **stage_resources_at(_preset, "evaluate", LEX, runs=len(_cells)),
            params:
                cells=quoted_json(_cells),
                span=eval_length(_preset, experiment(LEX)["span_multiple"], LEX),
                max_tokens=paper_preset(_preset, LEX)["eval"]["max_tokens"],
                batch_tokens=paper_preset(_preset, LEX)["eval"]["batch_tokens"],
            shell:
                "python -m lenex.pipeline.launch lenex.lex.evaluate_model --checkpoint {input.model} --cells {params.cells}"
                " --span {params.span} --max-tokens {params.max_tokens} --batch-tokens {params.batch_tokens}"
                " --threads {threads} > {log} 2>&1"

        workflow.ruleorder(_name, "evaluate" if _stage == "eval" else "resolution")


# Figure 1: perplexity against length, from the PG22 evaluations of Table 2 (nothing else).
rule lex_figure1:
    input:
        results=recorded(lambda wc: lex_section_recorded(wc.preset, 2, "pg22"), LEX),
        spec="config/experiments/lex.yaml",
    output:
        png=reported_figure("results/{preset}/figures/lex/figure1.png", LEX),
        pdf="results/{preset}/figures/lex/figure1.pdf",
    log:
        "results/{preset}/logs/figures/lex/figure1.log",
    conda:
        ENV
    params:
        results=lambda wc: lex_section_recorded(wc.preset, 2, "pg22"),
        raw=raw_env(LEX),
        schemes=lambda wc: table_schemes(LEX, 2),
    shell:
        "{params.raw}python -m lenex.pipeline.launch lenex.lex.figures figure1 --spec {input.spec} --table-key table2"
        " --extra-schemes {params.schemes} --dataset pg22 --results {params.results} --preset {wildcards.preset}"
        " --out-png {output.png} --out-pdf {output.pdf} > {log} 2>&1"


# Figure 2: the analytic g_zeta[n] (Eq. 10) at the paper's head dimension (Table 7: 1024 / 16)
# up to its longest evaluation length (8 x 1024), whatever the preset: no model is involved.
rule lex_figure2:
    output:
        png=reported_figure("results/{preset}/figures/lex/figure2.png", LEX),
        pdf="results/{preset}/figures/lex/figure2.pdf",
    log:
        "results/{preset}/logs/figures/lex/figure2.log",
    conda:
        ENV
    params:
        head_dim=lambda wc: paper_preset("paper", LEX)["model"]["d_model"]
        // paper_preset("paper", LEX)["model"]["n_head"],
        max_distance=lambda wc: eval_length(
            "paper", experiment(LEX)["span_multiple"], LEX
        ),
    shell:
        "python -m lenex.pipeline.launch lenex.lex.figures figure2 --head-dim {params.head_dim}"
        " --max-distance {params.max_distance} --gamma 0.4 --scale-base 512"
        " --out-png {output.png} --out-pdf {output.pdf} > {log} 2>&1"
