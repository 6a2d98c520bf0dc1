# The receptive-field paper (Chi et al. 2023): one model per (corpus, variant, seed), since the
# paper trains on each dataset separately; the last-token protocol (Section 3.4), the empirical
# receptive field (Section 5.1) and cache-window inference (Appendix B) per model; Tables 1-5 and
# Figures 4-13. Its models are the train rule's (results/<preset>/models/receptive-field/<corpus>/
# <variant>/seed<s>.pt, lenex.receptive_field.paper.ReceptiveField.model_spec). Its interface:
# lenex.receptive_field.paper; scale rules and file lists: lenex.receptive_field.targets.
#   snakemake --cores 2 results/tiny/receptive-field.md         # the whole paper
#   snakemake --cores 2 results/tiny/tables/receptive-field/table2.md

RF = pipeline.settings.paper("receptive-field")


# Section 3.4: the same N last tokens scored at every L_ex of Tables 1-4, and Section 5.1: c_m
# and the ERF when predicting the (4 x L_tr)-th token; one job per model. Its `window_option`
# and `measure_options` are what the cache-window measurement (below) changes.
rule receptive_field_evaluate:
    input:
        model="results/{preset}/models/receptive-field/{corpus}/{variant}/seed{seed}.pt",
        data=lambda wc: pipeline.paths.data_files(wc.preset, wc.corpus),
        code=lambda wc: pipeline.code.stamp(
            "lenex.receptive_field.evaluate", wc.preset, RF.name, wc.variant
        ),
    output:
        result="results/{preset}/eval/receptive-field/{corpus}/{variant}/seed{seed}/last_token.json",
        erf="results/{preset}/eval/receptive-field/{corpus}/{variant}/seed{seed}/erf.json",
    log:
        "results/{preset}/logs/eval/receptive-field/{corpus}/{variant}/seed{seed}/evaluate.log",
    wildcard_constraints:
        seed=r"\d+",
    conda:
        ENV
    threads: pipeline.resources.stage_threads("evaluate", RF.name)
    resources:
        **pipeline.resources.stage_resources("evaluate", RF.name),
    params:
        module="lenex.receptive_field.evaluate",
        data="results/{preset}/data/{corpus}",
        train_length=lambda wc: pipeline.settings.train_length(wc.preset, RF.name),
        multiples=lambda wc: RF.multiples(pipeline.settings, "last-token"),
        window_option="",
        span=lambda wc: pipeline.settings.experiment(RF.name)["span_multiple"],
        segments=lambda wc: RF.view(pipeline.settings, wc.preset, wc.variant)[
            "experiment"
        ]["segments"],
        measure_options=lambda wc, output: RF.erf_options(
            pipeline.settings, wc.preset, wc.variant, output.erf
        ),
        batch_tokens=lambda wc: pipeline.settings.paper_preset(wc.preset, RF.name)[
            "eval"
        ]["batch_tokens"],
        extra=lambda wc: quoted_json(
            {
                "variant": wc.variant,
                "corpus": wc.corpus,
                "seed": int(wc.seed),
                "paper": RF.name,
                "preset": wc.preset,
            }
        ),
        expect=lambda wc: pipeline.identities.expect(
            wc.preset, RF.name, wc.variant, wc.seed, corpus=wc.corpus
        ),
    shell:
        "python -m lenex.pipeline.launch {params.module} --checkpoint {input.model} --data {params.data}"
        " --train-length {params.train_length} --multiples {params.multiples}"
        " {params.window_option}--span-multiple {params.span} --segments {params.segments}"
        " {params.measure_options} --batch-tokens {params.batch_tokens}"
        " --threads {threads} --extra {params.extra} --expect {params.expect} --out {output.result} > {log} 2>&1"


# Appendix B: cache-window inference (w-bar = 4 x L_tr), checked against the sliding mask and
# timed against re-encoding.
use rule receptive_field_evaluate as receptive_field_cache_window with:
    input:
        model=rules.receptive_field_evaluate.input.model,
        data=rules.receptive_field_evaluate.input.data,
        code=lambda wc: pipeline.code.stamp(
            "lenex.receptive_field.cache_eval", wc.preset, RF.name, wc.variant
        ),
    output:
        result="results/{preset}/eval/receptive-field/{corpus}/{variant}/seed{seed}/cache_window.json",
    log:
        "results/{preset}/logs/eval/receptive-field/{corpus}/{variant}/seed{seed}/cache_window.log",
    params:
        module="lenex.receptive_field.cache_eval",
        multiples=lambda wc: RF.multiples(pipeline.settings, "cache-window"),
        window_option=RF.window_option(),
        measure_options=lambda wc: RF.timing_option(pipeline.settings, wc.preset),


# Figures 4-7 and 11-13 draw c_m of the figure's models (seed 1); 8-10 are exact, from Eq. (6).
rule receptive_field_figure:
    input:
        erf=pipeline.recorded.inputs(
            lambda wc: RF.figure_recorded(pipeline.paths, wc.preset, wc.figure),
            RF.name,
        ),
        code=pipeline.code.stamp("lenex.receptive_field.figures"),
    output:
        png=report(
            "results/{preset}/figures/receptive-field/figure{figure}.png",
            **pipeline.report.figure_report("figure{figure}", RF.name),
        ),
        pdf="results/{preset}/figures/receptive-field/figure{figure}.pdf",
        # its numbers for the claims: ERF rows (Figures 4-7, 11-13) or Eq. (6)'s exact values (8-10)
        cells="results/{preset}/figures/receptive-field/figure{figure}.cells.json",
    log:
        "results/{preset}/logs/figures/receptive-field/figure{figure}.log",
    wildcard_constraints:
        figure=r"\d+",
    conda:
        ENV
    params:
        kind=lambda wc: RF.figure_kind(pipeline.settings, wc.figure),
        title=lambda wc: pipeline.settings.figure_title(RF.name, wc.figure),
        erf=lambda wc: RF.figure_recorded(pipeline.paths, wc.preset, wc.figure),
        raw=pipeline.recorded.raw_env(RF.name),
        expect=lambda wc: pipeline.identities.results_expect(
            wc.preset, RF.name, workflow.rules
        ),
    shell:
        "{params.raw}python -m lenex.pipeline.launch lenex.receptive_field.figures {params.kind} --erf {params.erf}"
        " --title {params.title} --expect {params.expect} --out-png {output.png} --out-pdf {output.pdf}"
        " --out-cells {output.cells} --number {wildcards.figure} > {log} 2>&1"
