# The segmented-sequences paper (Karypis et al. 2023): pretrained models (own stand-ins trained
# at L_t, or the released Hugging Face checkpoints under the `paper` preset), one epoch of
# domain adaptation (the OOTB checkpoint), compute-equivalent continued pretraining on
# segmented sequences (chunk-α, prefix-α, full) and one more epoch of adaptation (Table 5),
# Section 4.5 evaluation, Tables 2-5 and Figures 2-3. The pretrained model is one per preset;
# everything after it is trained per seed (seed{s}/ in its paths; docs/segmented.md). Its
# interface: lenex.segmented.paper; file lists: lenex.segmented.targets.
#   snakemake --cores 2 results/tiny/segmented.md                 # the whole paper
#   snakemake --cores 2 results/tiny/tables/segmented/table3.md   # one table

SEG = pipeline.settings.paper("segmented")


wildcard_constraints:
    model=r"[a-z0-9]+(-[a-z0-9]+)*",
    run=r"ootb|da|(full|chunk-[0-9.]+|prefix-[0-9.]+)-x\d+",
    method=r"full|chunk-[0-9.]+|prefix-[0-9.]+",
    beta=r"\d+",


# Own stand-ins: the train rule at the model's L_t on the paper's training corpus.
use rule train as segmented_pretrain with:
    input:
        lambda wc: pipeline.paths.data_files(
            wc.preset, pipeline.paths.training_corpus(wc.preset, SEG.name)
        )
        + pipeline.settings.scheme_files(SEG.name, wc.model),
        code=lambda wc: pipeline.code.stamp(
            "lenex.training.train", wc.preset, SEG.name, wc.model
        ),
    output:
        "results/{preset}/models/segmented/pretrained/{model}.pt",
    log:
        "results/{preset}/logs/train/segmented/pretrained/{model}.log",
    wildcard_constraints:
        preset=SEG.presets(pipeline.settings, released=False),
    threads: pipeline.resources.stage_threads("train", SEG.name)
    resources:
        **pipeline.resources.stage_resources("train", SEG.name),
    params:
        model=lambda wc: quoted_json(
            pipeline.settings.model_config(wc.preset, SEG.name, wc.model)
        ),
        train=lambda wc: pipeline.checks.checked_train(
            wc.preset,
            SEG.name,
            wc.model,
            pipeline.settings.paper_preset(wc.preset, SEG.name)["train"],
            pipeline.paths.training_data(wc.preset, SEG.name),
        ),
        identity=lambda wc: SEG.identity(
            pipeline.identities, wc.preset, wc.model, "pretrained"
        ),
        data=lambda wc: pipeline.paths.training_data(wc.preset, SEG.name),
        workdir="results/{preset}/train/segmented/pretrained/{model}",
        threads=pipeline.resources.process_threads(SEG.name),
        launcher=pipeline.resources.train_launcher_of("lenex.training.train", SEG.name),


# Paper scale: the released checkpoint itself (needs the hub, or its cache): run where Snakemake
# runs (a cluster's login node), as compute nodes may not reach the hub.
localrules:
    segmented_fetch_hf,


rule segmented_fetch_hf:
    output:
        "results/{preset}/models/segmented/pretrained/{model}.pt",
    log:
        "results/{preset}/logs/train/segmented/pretrained/{model}.log",
    wildcard_constraints:
        preset=SEG.presets(pipeline.settings, released=True),
    conda:
        ENV
    params:
        name=lambda wc: SEG.hf_checkpoint(pipeline.settings, wc.preset, wc.model),
    shell:
        "python -m lenex.pipeline.launch lenex.hf.models --name {params.name} --out {output} > {log} 2>&1"


# Paper scale: Pythia and Bloom read the arXiv text through their own tokenizers.
rule segmented_retokenize:
    input:
        lambda wc: pipeline.paths.data_files(wc.preset, "arxiv"),
    output:
        "results/{preset}/data/segmented/arxiv-{model}/meta.json",
    log:
        "results/{preset}/logs/data/segmented/arxiv-{model}.log",
    conda:
        ENV
    resources:
        **pipeline.resources.data_resources(),
    params:
        name=lambda wc: SEG.hf_checkpoint(pipeline.settings, wc.preset, wc.model),
        out="results/{preset}/data/segmented/arxiv-{model}",
    shell:
        "python -m lenex.pipeline.launch lenex.segmented.retokenize --data results/{wildcards.preset}/data/arxiv"
        " --tokenizer {params.name} --out {params.out} > {log} 2>&1"


# One epoch at L_t on the domain corpus: the OOTB checkpoint (Section 4.3), and (da) one more
# epoch from it, Table 5's further-adaptation baseline; both are `full` with L_e = L_t. Seed s
# samples its epoch with its own seed, from the one pretrained model.
rule segmented_adapt:
    input:
        model=lambda wc: SEG.adapted_from(wc.preset, wc.model, wc.run, wc.seed),
        data=lambda wc: SEG.domain_data(
            pipeline.settings, wc.preset, wc.model, meta=True
        ),
        code=lambda wc: pipeline.code.stamp(
            "lenex.segmented.continued", wc.preset, SEG.name, wc.model
        ),
    output:
        "results/{preset}/models/segmented/{model}/seed{seed}/{run}.pt",
    log:
        "results/{preset}/logs/train/segmented/{model}/seed{seed}/{run}.log",
    wildcard_constraints:
        run="ootb|da",
    conda:
        ENV
    threads: pipeline.resources.stage_threads("train", SEG.name)
    resources:
        **pipeline.resources.stage_resources("train", SEG.name),
    params:
        method="full",
        extend_by=1,
        train=lambda wc: quoted_json(
            SEG.continued_train_config(pipeline.settings, wc.preset, wc.seed)
        ),
        data=lambda wc: SEG.domain_data(pipeline.settings, wc.preset, wc.model),
        epoch_tokens=lambda wc: SEG.epoch_tokens(pipeline.settings, wc.preset),
        workdir="results/{preset}/train/segmented/{model}/seed{seed}/{run}",
        launcher=pipeline.resources.train_launcher_of(
            "lenex.segmented.continued", SEG.name
        ),
        threads=pipeline.resources.process_threads(SEG.name),
        identity=lambda wc: SEG.identity(
            pipeline.identities, wc.preset, wc.model, wc.run
        ),
        expect=lambda wc: SEG.expect(
            pipeline.identities, wc.preset, wc.model, SEG.init_run(wc.run), wc.seed
        ),
    shell:
        "{params.launcher} --init {input.model} --method {params.method}"
        " --extend {params.extend_by} --train-config {params.train} --data {params.data}"
        " --epoch-tokens {params.epoch_tokens} --out {output} --workdir {params.workdir}"
        " --threads {params.threads} --identity {params.identity} --expect {params.expect} > {log} 2>&1"


# Continued pretraining from OOTB to L_e = extend x L_t, compute-equivalent (Section 4.4): seed s
# continues seed s's OOTB model, its pieces and segments drawn with its own seed.
use rule segmented_adapt as segmented_continue with:
    input:
        model="results/{preset}/models/segmented/{model}/seed{seed}/ootb.pt",
        data=lambda wc: SEG.domain_data(
            pipeline.settings, wc.preset, wc.model, meta=True
        ),
        code=rules.segmented_adapt.input.code,
    output:
        "results/{preset}/models/segmented/{model}/seed{seed}/{method}-x{beta}.pt",
    log:
        "results/{preset}/logs/train/segmented/{model}/seed{seed}/{method}-x{beta}.log",
    params:
        method="{method}",
        extend_by="{beta}",
        workdir="results/{preset}/train/segmented/{model}/seed{seed}/{method}-x{beta}",
        identity=lambda wc: SEG.identity(
            pipeline.identities, wc.preset, wc.model, f"{wc.method}-x{wc.beta}"
        ),
        expect=lambda wc: SEG.expect(
            pipeline.identities, wc.preset, wc.model, "ootb", wc.seed
        ),


# Section 4.5 perplexity of one model at one length (APE tables interpolated when shorter);
# `options` is what Figure 3's attention statistic (below) changes.
rule segmented_evaluate:
    input:
        model="results/{preset}/models/segmented/{model}/seed{seed}/{run}.pt",
        data=lambda wc: SEG.domain_data(
            pipeline.settings, wc.preset, wc.model, meta=True
        ),
        code=lambda wc: pipeline.code.stamp(
            "lenex.segmented.evaluate", wc.preset, SEG.name, wc.model
        ),
    output:
        "results/{preset}/eval/segmented/{model}/seed{seed}/{run}/L{length}.json",
    log:
        "results/{preset}/logs/eval/segmented/{model}/seed{seed}/{run}/L{length}.log",
    conda:
        ENV
    threads: pipeline.resources.stage_threads("evaluate", SEG.name)
    resources:
        **pipeline.resources.stage_resources("evaluate", SEG.name),
    params:
        module="lenex.segmented.evaluate",
        data=lambda wc: SEG.domain_data(pipeline.settings, wc.preset, wc.model),
        options=lambda wc: SEG.evaluation_options(pipeline.settings, wc.preset),
        extra=lambda wc: quoted_json(
            SEG.evaluation_extra(
                pipeline.settings, wc.preset, wc.model, wc.run, wc.seed
            )
        ),
        expect=lambda wc: SEG.expect(
            pipeline.identities, wc.preset, wc.model, wc.run, wc.seed
        ),
    shell:
        "python -m lenex.pipeline.launch {params.module} --checkpoint {input.model} --data {params.data}"
        " --length {wildcards.length} {params.options} --threads {threads}"
        " --extra {params.extra} --expect {params.expect} --out {output} > {log} 2>&1"


# Figure 3's statistic: median attention weight of queries past L_t (own models).
use rule segmented_evaluate as segmented_attention with:
    input:
        model=rules.segmented_evaluate.input.model,
        data=rules.segmented_evaluate.input.data,
        code=lambda wc: pipeline.code.stamp(
            "lenex.segmented.attention", wc.preset, SEG.name, wc.model
        ),
    output:
        "results/{preset}/eval/segmented/{model}/seed{seed}/{run}/attention_L{length}.json",
    log:
        "results/{preset}/logs/eval/segmented/{model}/seed{seed}/{run}/attention_L{length}.log",
    params:
        module="lenex.segmented.attention",
        options=lambda wc: SEG.attention_options(pipeline.settings, wc.preset, wc.model),
        extra=lambda wc: quoted_json(
            {"model": wc.model, "run": wc.run, "seed": int(wc.seed)}
        ),


# Figure 2 (perplexity against length) and Figure 3 (attention past L_t, with its cells).
rule segmented_figure2:
    input:
        pipeline.recorded.inputs(
            lambda wc: SEG.figure_recorded(pipeline.paths, wc.preset, "2"), SEG.name
        ),
        code=pipeline.code.stamp("lenex.segmented.figures"),
    output:
        png=report(
            "results/{preset}/figures/segmented/figure2.png",
            **pipeline.report.figure_report("figure2", SEG.name),
        ),
        pdf="results/{preset}/figures/segmented/figure2.pdf",
    log:
        "results/{preset}/logs/figures/segmented/figure2.log",
    conda:
        ENV
    params:
        figure="figure2",
        title=lambda wc: pipeline.settings.figure_title(SEG.name, 2),
        results=lambda wc: SEG.figure_recorded(pipeline.paths, wc.preset, "2"),
        hf=lambda wc: SEG.hf_flag(pipeline.settings, wc.preset),
        raw=pipeline.recorded.raw_env(SEG.name),
        cells_option="",
        expect=lambda wc: pipeline.identities.results_expect(
            wc.preset, SEG.name, workflow.rules
        ),
    shell:
        "{params.raw}python -m lenex.pipeline.launch lenex.segmented.figures {params.figure} --results {params.results}"
        " --title {params.title} --preset {wildcards.preset} {params.hf} --expect {params.expect} --out-png {output.png}"
        " --out-pdf {output.pdf}{params.cells_option} > {log} 2>&1"


use rule segmented_figure2 as segmented_figure3 with:
    input:
        pipeline.recorded.inputs(
            lambda wc: SEG.figure_recorded(pipeline.paths, wc.preset, "3"), SEG.name
        ),
        code=pipeline.code.stamp("lenex.segmented.figures"),
    output:
        png=report(
            "results/{preset}/figures/segmented/figure3.png",
            **pipeline.report.figure_report("figure3", SEG.name),
        ),
        pdf="results/{preset}/figures/segmented/figure3.pdf",
        cells="results/{preset}/figures/segmented/figure3.cells.json",
    log:
        "results/{preset}/logs/figures/segmented/figure3.log",
    params:
        figure="figure3",
        title=lambda wc: pipeline.settings.figure_title(SEG.name, 3),
        results=lambda wc: SEG.figure_recorded(pipeline.paths, wc.preset, "3"),
        cells_option=lambda wc, output: f" --out-cells {output.cells}",
