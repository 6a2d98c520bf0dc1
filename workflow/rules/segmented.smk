# The segmented-sequences paper (Karypis et al. 2023): pretrained models (own stand-ins trained
# at L_t, or the released Hugging Face checkpoints under the `paper` preset), one epoch of
# domain adaptation (the OOTB checkpoint), compute-equivalent continued pretraining on
# segmented sequences (chunk-α, prefix-α, full) and one more epoch of adaptation (Table 5),
# Section 4.5 evaluation, Tables 2-5 and Figures 2-3. File lists: lenex.segmented.targets.
#   snakemake --cores 2 results/tiny/segmented.md                 # the whole paper
#   snakemake --cores 2 results/tiny/tables/segmented/table3.md   # one table

# Presets whose `segmented` models are the released HF checkpoints (fetched) or own stand-ins (pretrained).
SEG_PRESETS = sorted(p.stem for p in (CONFIG_DIR / "presets").glob("*.yaml"))
SEG_HF_PRESETS = (
    "|".join(p for p in SEG_PRESETS if seg_targets.uses_hf(paper_preset(p, SEG))) or "-"
)
SEG_OWN_PRESETS = (
    "|".join(p for p in SEG_PRESETS if not seg_targets.uses_hf(paper_preset(p, SEG)))
    or "-"
)


wildcard_constraints:
    model=r"[a-z0-9]+(-[a-z0-9]+)*",
    run=r"ootb|da|(full|chunk-[0-9.]+|prefix-[0-9.]+)-x\d+",
    method=r"full|chunk-[0-9.]+|prefix-[0-9.]+",
    beta=r"\d+",


# Own stand-ins: the train rule at the model's L_t on the paper's training corpus.
use rule train as segmented_pretrain with:
    input:
        lambda wc: data_files(wc.preset, training_corpus(SEG))
        + scheme_files(SEG, wc.model),
    output:
        "results/{preset}/models/segmented/pretrained/{model}.pt",
    log:
        "results/{preset}/logs/train/segmented/pretrained/{model}.log",
    wildcard_constraints:
        preset=SEG_OWN_PRESETS,
    threads: stage_threads("train", SEG)
    resources:
        **stage_resources("train", SEG),
    params:
        model=lambda wc: quoted_json(
            seg_targets.model_config(seg_view(wc), experiment(SEG), wc.model)
        ),
        train=lambda wc: quoted_json(seg_view(wc)["train"]),
        data=lambda wc: f"results/{wc.preset}/data/{training_corpus(SEG)}",
        workdir="results/{preset}/train/segmented/pretrained/{model}",
        threads=process_threads(SEG),
        launcher=train_launcher_of("lenex.train", SEG),


# Paper scale: the released checkpoint itself (needs the hub, or its cache).
rule segmented_fetch_hf:
    output:
        "results/{preset}/models/segmented/pretrained/{model}.pt",
    log:
        "results/{preset}/logs/train/segmented/pretrained/{model}.log",
    wildcard_constraints:
        preset=SEG_HF_PRESETS,
    conda:
        ENV
    params:
        name=lambda wc: seg_targets.hf_checkpoints(paper_preset(wc.preset, SEG))[
            wc.model
        ],
    shell:
        "python -m lenex.pipeline.launch lenex.hf.models --name {params.name} --out {output} > {log} 2>&1"


# Paper scale: Pythia and Bloom read the arXiv text through their own tokenizers.
rule segmented_retokenize:
    input:
        lambda wc: data_files(wc.preset, "arxiv"),
    output:
        "results/{preset}/data/segmented/arxiv-{model}/meta.json",
    log:
        "results/{preset}/logs/data/segmented/arxiv-{model}.log",
    conda:
        ENV
    params:
        name=lambda wc: seg_targets.hf_checkpoints(paper_preset(wc.preset, SEG))[
            wc.model
        ],
        out="results/{preset}/data/segmented/arxiv-{model}",
    shell:
        "python -m lenex.pipeline.launch lenex.segmented.retokenize --data results/{wildcards.preset}/data/arxiv"
        " --tokenizer {params.name} --out {params.out} > {log} 2>&1"


# One epoch at L_t on the domain corpus: the OOTB checkpoint (Section 4.3), and (da) one more
# epoch from it, Table 5's further-adaptation baseline; both are `full` with L_e = L_t.
rule segmented_adapt:
    input:
        model=lambda wc: (
            f"results/{wc.preset}/models/segmented/"
            + ("pretrained/{}.pt" if wc.run == "ootb" else "{}/ootb.pt").format(
                wc.model
            )
        ),
        data=seg_domain_meta,
    output:
        "results/{preset}/models/segmented/{model}/{run}.pt",
    log:
        "results/{preset}/logs/train/segmented/{model}/{run}.log",
    wildcard_constraints:
        run="ootb|da",
    conda:
        ENV
    threads: stage_threads("train", SEG)
    resources:
        **stage_resources("train", SEG),
    params:
        method="full",
        extend_by=1,
        train=lambda wc: quoted_json(seg_targets.continued_train_config(seg_view(wc))),
        data=seg_domain_data,
        epoch_tokens=lambda wc: seg_view(wc)["experiment"].get("epoch_tokens") or 0,
        workdir="results/{preset}/train/segmented/{model}/{run}",
        launcher=train_launcher_of("lenex.segmented.continued", SEG),
        threads=process_threads(SEG),
    shell:
        "{params.launcher} --init {input.model} --method {params.method}"
        " --extend {params.extend_by} --train-config {params.train} --data {params.data}"
        " --epoch-tokens {params.epoch_tokens} --out {output} --workdir {params.workdir}"
        " --threads {params.threads} > {log} 2>&1"


# Continued pretraining from OOTB to L_e = extend x L_t, compute-equivalent (Section 4.4).
use rule segmented_adapt as segmented_continue with:
    input:
        model="results/{preset}/models/segmented/{model}/ootb.pt",
        data=seg_domain_meta,
    output:
        "results/{preset}/models/segmented/{model}/{method}-x{beta}.pt",
    log:
        "results/{preset}/logs/train/segmented/{model}/{method}-x{beta}.log",
    params:
        method="{method}",
        extend_by="{beta}",
        workdir="results/{preset}/train/segmented/{model}/{method}-x{beta}",


# Section 4.5 perplexity of one model at one length (APE tables interpolated when shorter);
# `options` is what Figure 3's attention statistic (below) changes.
rule segmented_evaluate:
    input:
        model="results/{preset}/models/segmented/{model}/{run}.pt",
        data=seg_domain_meta,
    output:
        "results/{preset}/eval/segmented/{model}/{run}/L{length}.json",
    log:
        "results/{preset}/logs/eval/segmented/{model}/{run}/L{length}.log",
    conda:
        ENV
    threads: stage_threads("evaluate", SEG)
    resources:
        **stage_resources("evaluate", SEG),
    params:
        module="lenex.segmented.evaluate",
        data=seg_domain_data,
        options=lambda wc: (
            f"--max-tokens {seg_view(wc)['eval']['max_tokens']}"
            f" --batch-tokens {seg_view(wc)['eval']['batch_tokens']}"
        ),
        extra=lambda wc: quoted_json(
            {
                "model": wc.model,
                "run": wc.run,
                "base_train_length": seg_targets.base_train_length(
                    seg_view(wc), wc.model
                ),
                "paper": SEG,
                "preset": wc.preset,
            }
        ),
    shell:
        "python -m lenex.pipeline.launch {params.module} --checkpoint {input.model} --data {params.data}"
        " --length {wildcards.length} {params.options} --threads {threads}"
        " --extra {params.extra} --out {output} > {log} 2>&1"


# Figure 3's statistic: median attention weight of queries past L_t (own models).
use rule segmented_evaluate as segmented_attention with:
    output:
        "results/{preset}/eval/segmented/{model}/{run}/attention_L{length}.json",
    log:
        "results/{preset}/logs/eval/segmented/{model}/{run}/attention_L{length}.log",
    params:
        module="lenex.segmented.attention",
        options=lambda wc: (
            f"--train-length {seg_targets.base_train_length(seg_view(wc), wc.model)}"
            f" --max-pieces {seg_view(wc)['experiment'].get('attention_pieces', 4)}"
        ),
        extra=lambda wc: quoted_json({"model": wc.model, "run": wc.run}),


# Figure 2 (perplexity against length) and Figure 3 (attention past L_t, with its cells).
rule segmented_figure2:
    input:
        recorded(lambda wc: seg_figure_recorded(wc.preset, "2"), SEG),
    output:
        png=reported_figure("results/{preset}/figures/segmented/figure2.png", SEG),
        pdf="results/{preset}/figures/segmented/figure2.pdf",
    log:
        "results/{preset}/logs/figures/segmented/figure2.log",
    conda:
        ENV
    params:
        figure="figure2",
        title=lambda wc: shlex.quote(experiment(SEG)["figures"]["figure2"]["title"]),
        results=lambda wc: seg_figure_recorded(wc.preset, "2"),
        hf=hf_flag,
        raw=raw_env(SEG),
        cells_option="",
    shell:
        "{params.raw}python -m lenex.pipeline.launch lenex.segmented.figures {params.figure} --results {params.results}"
        " --title {params.title} --preset {wildcards.preset} {params.hf} --out-png {output.png}"
        " --out-pdf {output.pdf}{params.cells_option} > {log} 2>&1"


use rule segmented_figure2 as segmented_figure3 with:
    input:
        recorded(lambda wc: seg_figure_recorded(wc.preset, "3"), SEG),
    output:
        png=reported_figure("results/{preset}/figures/segmented/figure3.png", SEG),
        pdf="results/{preset}/figures/segmented/figure3.pdf",
        cells="results/{preset}/figures/segmented/figure3.cells.json",
    log:
        "results/{preset}/logs/figures/segmented/figure3.log",
    params:
        figure="figure3",
        title=lambda wc: shlex.quote(experiment(SEG)["figures"]["figure3"]["title"]),
        results=lambda wc: seg_figure_recorded(wc.preset, "3"),
        cells_option=lambda wc, output: f" --out-cells {output.cells}",


# Rendered by lenex.segmented.tables: per-model L_t, runs per column.
use rule paper_table as segmented_table with:
    input:
        results=recorded(lambda wc: seg_table_recorded(wc.preset, wc.table), SEG),
        meta=recorded(lambda wc: data_files(wc.preset, "arxiv")[-1], SEG),
        spec="config/experiments/{paper}.yaml",
    wildcard_constraints:
        paper=SEG,
    params:
        renderer="lenex.segmented.tables",
        arguments=segmented_table_arguments,
