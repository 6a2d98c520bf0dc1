# The receptive-field paper (Chi et al. 2023): one model per (corpus, variant, seed), since the
# paper trains on each dataset separately; the last-token protocol (Section 3.4), the empirical
# receptive field (Section 5.1) and cache-window inference (Appendix B) per model; Tables 1-5 and
# Figures 4-13. Scale rules and file lists: lenex.receptive_field.targets.
#   snakemake --cores 2 results/tiny/receptive-field.md         # the whole paper
#   snakemake --cores 2 results/tiny/tables/receptive-field/table2.md
from lenex.receptive_field import targets as rf

RF = rf.PAPER


# Rendered by lenex.receptive_field.table (seeds, t-tests, ERF), not the generic renderer.
ruleorder: rf_table > render_table


rule rf_train:
    input:
        lambda wc: data_files(wc.preset, wc.corpus) + scheme_files(RF, wc.variant),
    output:
        "results/{preset}/models/receptive-field/{corpus}/{variant}/seed{seed}.pt",
    log:
        "results/{preset}/logs/train/receptive-field/{corpus}/{variant}/seed{seed}.log",
    wildcard_constraints:
        seed=r"\d+",
    conda:
        ENV
    threads: lambda wc: rule_resources(wc.preset, "train", "threads", 1, RF)
    resources:
        mem_mb=lambda wc: rule_resources(wc.preset, "train", "mem_mb", 2000, RF),
        runtime=lambda wc: rule_resources(wc.preset, "train", "runtime", 60, RF),
        gpu=lambda wc: rule_resources(wc.preset, "train", "gpus", 0, RF),
    params:
        model=lambda wc: quoted_json(
            rf.model_config(wc.variant, experiment(RF), paper_preset(wc.preset, RF))
        ),
        train=lambda wc: quoted_json(
            {
                **paper_preset(wc.preset, RF)["train"],
                "seed": rf.train_seed(paper_preset(wc.preset, RF), int(wc.seed)),
            }
        ),
        data="results/{preset}/data/{corpus}",
        workdir="results/{preset}/train/receptive-field/{corpus}/{variant}/seed{seed}",
        threads=lambda wc, threads: max(
            1, threads // max(1, rule_resources(wc.preset, "train", "gpus", 0, RF))
        ),
        launcher=lambda wc: (
            "torchrun --standalone --nproc_per_node "
            f"{rule_resources(wc.preset, 'train', 'gpus', 0, RF)} -m lenex.train"
            if rule_resources(wc.preset, "train", "gpus", 0, RF) > 1
            else "python -m lenex.train"
        ),
    shell:
        "{params.launcher} --model-config {params.model} --train-config {params.train}"
        " --data {params.data} --out {output} --workdir {params.workdir}"
        " --threads {params.threads} > {log} 2>&1"


# Section 3.4: the same N last tokens scored at every L_ex of Tables 1-4, and Section 5.1: c_m
# and the ERF when predicting the (4 x L_tr)-th token; one job per model.
rule rf_evaluate:
    input:
        model="results/{preset}/models/receptive-field/{corpus}/{variant}/seed{seed}.pt",
        data=lambda wc: data_files(wc.preset, wc.corpus),
    output:
        last="results/{preset}/eval/receptive-field/{corpus}/{variant}/seed{seed}/last_token.json",
        erf="results/{preset}/eval/receptive-field/{corpus}/{variant}/seed{seed}/erf.json",
    log:
        "results/{preset}/logs/eval/receptive-field/{corpus}/{variant}/seed{seed}/evaluate.log",
    wildcard_constraints:
        seed=r"\d+",
    conda:
        ENV
    threads: lambda wc: rule_resources(wc.preset, "evaluate", "threads", 1, RF)
    resources:
        mem_mb=lambda wc: rule_resources(wc.preset, "evaluate", "mem_mb", 2000, RF),
        runtime=lambda wc: rule_resources(wc.preset, "evaluate", "runtime", 30, RF),
        gpu=lambda wc: rule_resources(wc.preset, "evaluate", "gpus", 0, RF),
    params:
        data="results/{preset}/data/{corpus}",
        train_length=lambda wc: paper_preset(wc.preset, RF)["model"]["train_length"],
        multiples=lambda wc: " ".join(
            str(m) for m in rf.last_token_multiples(experiment(RF))
        ),
        span=lambda wc: experiment(RF)["span_multiple"],
        segments=lambda wc: paper_preset(wc.preset, RF)["experiment"]["segments"],
        erf_multiple=rf.ERF_MULTIPLE,
        erf_segments=lambda wc: paper_preset(wc.preset, RF)["experiment"][
            "erf_segments"
        ],
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
        "python -m lenex.receptive_field.evaluate --checkpoint {input.model} --data {params.data}"
        " --train-length {params.train_length} --multiples {params.multiples}"
        " --span-multiple {params.span} --segments {params.segments}"
        " --erf-out {output.erf} --erf-multiple {params.erf_multiple}"
        " --erf-segments {params.erf_segments} --batch-tokens {params.batch_tokens}"
        " --threads {threads} --extra {params.extra} --out {output.last} > {log} 2>&1"


# Appendix B: cache-window inference (w-bar = 4 x L_tr), checked against the sliding mask and
# timed against re-encoding.
rule rf_cache_window:
    input:
        model="results/{preset}/models/receptive-field/{corpus}/{variant}/seed{seed}.pt",
        data=lambda wc: data_files(wc.preset, wc.corpus),
    output:
        "results/{preset}/eval/receptive-field/{corpus}/{variant}/seed{seed}/cache_window.json",
    log:
        "results/{preset}/logs/eval/receptive-field/{corpus}/{variant}/seed{seed}/cache_window.log",
    wildcard_constraints:
        seed=r"\d+",
    conda:
        ENV
    threads: lambda wc: rule_resources(wc.preset, "evaluate", "threads", 1, RF)
    resources:
        mem_mb=lambda wc: rule_resources(wc.preset, "evaluate", "mem_mb", 2000, RF),
        runtime=lambda wc: rule_resources(wc.preset, "evaluate", "runtime", 30, RF),
        gpu=lambda wc: rule_resources(wc.preset, "evaluate", "gpus", 0, RF),
    params:
        data="results/{preset}/data/{corpus}",
        train_length=lambda wc: paper_preset(wc.preset, RF)["model"]["train_length"],
        multiples=lambda wc: " ".join(
            str(m) for m in rf.cache_multiples(experiment(RF))
        ),
        window=rf.CACHE_WINDOW_MULTIPLE,
        span=lambda wc: experiment(RF)["span_multiple"],
        segments=lambda wc: paper_preset(wc.preset, RF)["experiment"]["segments"],
        timing=lambda wc: paper_preset(wc.preset, RF)["experiment"][
            "cache_timing_tokens"
        ],
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
        "python -m lenex.receptive_field.cache_eval --checkpoint {input.model} --data {params.data}"
        " --train-length {params.train_length} --multiples {params.multiples}"
        " --window-multiple {params.window} --span-multiple {params.span}"
        " --segments {params.segments} --timing-tokens {params.timing}"
        " --batch-tokens {params.batch_tokens} --threads {threads} --extra {params.extra}"
        " --out {output} > {log} 2>&1"


rule rf_table:
    input:
        recorded=recorded(
            lambda wc: sum(rf_table_recorded(wc.preset, wc.table).values(), []), RF
        ),
        spec="config/experiments/receptive-field.yaml",
        preset_file=lambda wc: str(CONFIG_DIR / "presets" / f"{wc.preset}.yaml"),
    output:
        md="results/{preset}/tables/receptive-field/table{table}.md",
        tex="results/{preset}/tables/receptive-field/table{table}.tex",
        cells="results/{preset}/tables/receptive-field/table{table}.cells.json",
    log:
        "results/{preset}/logs/tables/receptive-field/table{table}.log",
    conda:
        ENV
    params:
        corpora=lambda wc: quoted_json(config["corpora"]),
        unavailable=lambda wc: quoted_json(
            rf.table_unavailable(table_spec(RF, wc.table), corpus_unavailable)
        ),
        results=lambda wc: rf_table_recorded(wc.preset, wc.table)["results"],
        erf=lambda wc: rf_table_recorded(wc.preset, wc.table)["erf"],
        metas=lambda wc: rf_table_recorded(wc.preset, wc.table)["metas"],
        raw=raw_env(RF),
        schemes=lambda wc: table_schemes(RF, wc.table),
    shell:
        "{params.raw}python -m lenex.receptive_field.table --spec {input.spec} --table-key table{wildcards.table}"
        " --extra-schemes {params.schemes}"
        " --preset-file {input.preset_file} --results {params.results} --erf {params.erf}"
        " --metas {params.metas} --corpora {params.corpora} --unavailable {params.unavailable}"
        " --out-md {output.md} --out-tex {output.tex}"
        " --out-cells {output.cells} > {log} 2>&1"


# Figures 4-7 and 11-13 draw c_m of the figure's models (seed 1); 8-10 are exact, from Eq. (6).
rule rf_figure:
    input:
        erf=recorded(lambda wc: rf_figure_recorded(wc.preset, wc.figure), RF),
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
        erf=lambda wc: rf_figure_recorded(wc.preset, wc.figure),
        raw=raw_env(RF),
    shell:
        "{params.raw}python -m lenex.receptive_field.figures {params.kind} --erf {params.erf}"
        " --title {params.title} --out-png {output.png} --out-pdf {output.pdf} > {log} 2>&1"
