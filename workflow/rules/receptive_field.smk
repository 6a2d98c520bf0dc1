# The receptive-field paper (Chi et al. 2023): one model per (corpus, variant, seed), since the
# paper trains on each dataset separately; the last-token protocol (Section 3.4), the empirical
# receptive field (Section 5.1) and cache-window inference (Appendix B) per model; Tables 1-5 and
# Figures 4-13. Scale rules and file lists: lenex.receptive_field.targets.
#   snakemake --cores 2 results/tiny/receptive-field.md         # the whole paper
#   snakemake --cores 2 results/tiny/tables/receptive-field/table2.md


# One model per (corpus, variant, seed): the train rule with the seed's training config.
use rule train as receptive_field_train with:
    input:
        lambda wc: data_files(wc.preset, wc.corpus) + scheme_files(RF, wc.variant),
    output:
        "results/{preset}/models/receptive-field/{corpus}/{variant}/seed{seed}.pt",
    log:
        "results/{preset}/logs/train/receptive-field/{corpus}/{variant}/seed{seed}.log",
    wildcard_constraints:
        seed=r"\d+",
    threads: stage_threads("train", RF)
    resources:
        **stage_resources("train", RF),
    params:
        model=lambda wc: quoted_json(
            rf_targets.model_config(wc.variant, experiment(RF), rf_view(wc))
        ),
        train=lambda wc: quoted_json(
            {
                **rf_view(wc)["train"],
                "seed": rf_targets.train_seed(
                    paper_preset(wc.preset, RF), int(wc.seed)
                ),
            }
        ),
        data="results/{preset}/data/{corpus}",
        workdir="results/{preset}/train/receptive-field/{corpus}/{variant}/seed{seed}",
        threads=process_threads(RF),
        launcher=train_launcher_of("lenex.train", RF),


# Section 3.4: the same N last tokens scored at every L_ex of Tables 1-4, and Section 5.1: c_m
# and the ERF when predicting the (4 x L_tr)-th token; one job per model. Its `window_option`
# and `measure_options` are what the cache-window measurement (below) changes.
rule receptive_field_evaluate:
    input:
        model="results/{preset}/models/receptive-field/{corpus}/{variant}/seed{seed}.pt",
        data=lambda wc: data_files(wc.preset, wc.corpus),
    output:
        result="results/{preset}/eval/receptive-field/{corpus}/{variant}/seed{seed}/last_token.json",
        erf="results/{preset}/eval/receptive-field/{corpus}/{variant}/seed{seed}/erf.json",
    log:
        "results/{preset}/logs/eval/receptive-field/{corpus}/{variant}/seed{seed}/evaluate.log",
    wildcard_constraints:
        seed=r"\d+",
    conda:
        ENV
    threads: stage_threads("evaluate", RF)
    resources:
        **stage_resources("evaluate", RF),
    params:
        module="lenex.receptive_field.evaluate",
        data="results/{preset}/data/{corpus}",
        train_length=lambda wc: paper_preset(wc.preset, RF)["model"]["train_length"],
        multiples=lambda wc: " ".join(
            str(m) for m in rf_targets.last_token_multiples(experiment(RF))
        ),
        window_option="",
        span=lambda wc: experiment(RF)["span_multiple"],
        segments=lambda wc: rf_view(wc)["experiment"]["segments"],
        measure_options=lambda wc, output: (
            f"--erf-out {output.erf} --erf-multiple {rf_targets.ERF_MULTIPLE}"
            f" --erf-segments {rf_view(wc)['experiment']['erf_segments']}"
        ),
        batch_tokens=lambda wc: paper_preset(wc.preset, RF)["eval"]["batch_tokens"],
        extra=lambda wc: quoted_json(
            {
                "variant": wc.variant,
                "corpus": wc.corpus,
                "seed": int(wc.seed),
                "paper": RF,
                "preset": wc.preset,
            }
        ),
    shell:
        "python -m lenex.pipeline.launch {params.module} --checkpoint {input.model} --data {params.data}"
        " --train-length {params.train_length} --multiples {params.multiples}"
        " {params.window_option}--span-multiple {params.span} --segments {params.segments}"
        " {params.measure_options} --batch-tokens {params.batch_tokens}"
        " --threads {threads} --extra {params.extra} --out {output.result} > {log} 2>&1"


# Appendix B: cache-window inference (w-bar = 4 x L_tr), checked against the sliding mask and
# timed against re-encoding.
use rule receptive_field_evaluate as receptive_field_cache_window with:
    output:
        result="results/{preset}/eval/receptive-field/{corpus}/{variant}/seed{seed}/cache_window.json",
    log:
        "results/{preset}/logs/eval/receptive-field/{corpus}/{variant}/seed{seed}/cache_window.log",
    params:
        module="lenex.receptive_field.cache_eval",
        multiples=lambda wc: " ".join(
            str(m) for m in rf_targets.cache_multiples(experiment(RF))
        ),
        window_option=f"--window-multiple {rf_targets.CACHE_WINDOW_MULTIPLE} ",
        measure_options=lambda wc: "--timing-tokens "
        + str(paper_preset(wc.preset, RF)["experiment"]["cache_timing_tokens"]),


# Rendered by lenex.receptive_field.table: seeds, t-tests, ERF.
use rule paper_table as receptive_field_table with:
    input:
        recorded=recorded(
            lambda wc: sum(
                receptive_field_table_recorded(wc.preset, wc.table).values(), []
            ),
            RF,
        ),
        spec="config/experiments/{paper}.yaml",
        preset_file=lambda wc: str(CONFIG_DIR / "presets" / f"{wc.preset}.yaml"),
    wildcard_constraints:
        paper=RF,
    params:
        renderer="lenex.receptive_field.table",
        arguments=receptive_field_table_arguments,


# Figures 4-7 and 11-13 draw c_m of the figure's models (seed 1); 8-10 are exact, from Eq. (6).
rule receptive_field_figure:
    input:
        erf=recorded(
            lambda wc: receptive_field_figure_recorded(wc.preset, wc.figure), RF
        ),
    output:
        png=reported_figure(
            "results/{preset}/figures/receptive-field/figure{figure}.png", RF
        ),
        pdf="results/{preset}/figures/receptive-field/figure{figure}.pdf",
    log:
        "results/{preset}/logs/figures/receptive-field/figure{figure}.log",
    wildcard_constraints:
        figure=r"\d+",
    conda:
        ENV
    params:
        kind=lambda wc: (
            "erf"
            if experiment(RF)["figures"][f"figure{wc.figure}"].get("variants")
            else f"figure{wc.figure}"
        ),
        title=lambda wc: shlex.quote(
            experiment(RF)["figures"][f"figure{wc.figure}"]["title"]
        ),
        erf=lambda wc: receptive_field_figure_recorded(wc.preset, wc.figure),
        raw=raw_env(RF),
    shell:
        "{params.raw}python -m lenex.pipeline.launch lenex.receptive_field.figures {params.kind} --erf {params.erf}"
        " --title {params.title} --out-png {output.png} --out-pdf {output.pdf} > {log} 2>&1"
