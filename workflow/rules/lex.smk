# LEX-only stages: attention resolution (Table 3) and the paper's two figures.


# Attention resolution R(s) (LEX Eq. 3-4, section 4.3) of one model at one length under one
# mask, from s[n] averaged over the same test texts the perplexity tables score.
use rule evaluate as resolution with:
    output:
        "results/{preset}/resolution/{paper}/{variant}/{corpus}/{mask}/L{length}.json",
    log:
        "results/{preset}/logs/resolution/{paper}/{variant}/{corpus}/{mask}/L{length}.log",
    params:
        module="lenex.lex.resolution",


# Figure 1: perplexity against length, from the PG22 evaluations of Table 2 (nothing else).
rule lex_figure1:
    input:
        results=recorded(
            lambda wc: section_evaluations(wc.preset, "lex", 2, "pg22"), "lex"
        ),
        spec="config/experiments/lex.yaml",
    output:
        png=reported_figure("results/{preset}/figures/lex/figure1.png", "lex"),
        pdf="results/{preset}/figures/lex/figure1.pdf",
    log:
        "results/{preset}/logs/figures/lex/figure1.log",
    conda:
        ENV
    params:
        results=lambda wc: section_evaluations(wc.preset, "lex", 2, "pg22"),
        raw=raw_env("lex"),
        schemes=lambda wc: table_schemes("lex", 2),
    shell:
        "{params.raw}python -m lenex.lex.figures figure1 --spec {input.spec} --table-key table2"
        " --extra-schemes {params.schemes} --dataset pg22 --results {params.results} --preset {wildcards.preset}"
        " --out-png {output.png} --out-pdf {output.pdf} > {log} 2>&1"


# Figure 2: the analytic g_zeta[n] (Eq. 10) at the paper's head dimension (Table 7: 1024 / 16)
# up to its longest evaluation length (8 x 1024), whatever the preset: no model is involved.
rule lex_figure2:
    output:
        png=reported_figure("results/{preset}/figures/lex/figure2.png", "lex"),
        pdf="results/{preset}/figures/lex/figure2.pdf",
    log:
        "results/{preset}/logs/figures/lex/figure2.log",
    conda:
        ENV
    params:
        head_dim=lambda wc: paper_preset("paper", "lex")["model"]["d_model"]
        // paper_preset("paper", "lex")["model"]["n_head"],
        max_distance=lambda wc: eval_length(
            "paper", experiment("lex")["span_multiple"], "lex"
        ),
    shell:
        "python -m lenex.lex.figures figure2 --head-dim {params.head_dim}"
        " --max-distance {params.max_distance} --gamma 0.4 --scale-base 512"
        " --out-png {output.png} --out-pdf {output.pdf} > {log} 2>&1"
