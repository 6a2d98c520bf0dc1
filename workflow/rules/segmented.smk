# The segmented-sequences paper (Karypis et al. 2023): pretrained models (own stand-ins trained
# at L_t, or the released Hugging Face checkpoints under the `paper` preset), one epoch of
# domain adaptation (the OOTB checkpoint), compute-equivalent continued pretraining on
# segmented sequences (chunk-α, prefix-α, full) and one more epoch of adaptation (Table 5),
# Section 4.5 evaluation, Tables 2-5 and Figures 2-3. The pretrained model is one per preset;
# everything after it is trained per seed (seed{s}/ in its paths; docs/segmented.md). Its
# interface: lenex.segmented.paper; file lists: lenex.segmented.targets. Its models are the train
# rule's (lenex.segmented.paper.Segmented.model_spec): the own stand-ins pretrained at L_t
# (pretrained/<model>.pt), one epoch of domain adaptation at L_t (the OOTB checkpoint, <model>/
# seed<s>/ootb.pt, and Table 5's one more epoch, da.pt), and continued pretraining from OOTB to
# L_e = beta x L_t, compute-equivalent (Section 4.4: <model>/seed<s>/<method>-x<beta>.pt); seed s
# continues seed s's OOTB model, its pieces and segments drawn with its own seed.
#   snakemake --cores 2 results/tiny/segmented.md                 # the whole paper
#   snakemake --cores 2 results/tiny/tables/segmented/table3.md   # one table

SEG = pipeline.settings.paper("segmented")


wildcard_constraints:
    model=r"[a-z0-9]+(-[a-z0-9]+)*",
    run=r"ootb|da|(full|chunk-[0-9.]+|prefix-[0-9.]+)-x\d+",
    method=r"full|chunk-[0-9.]+|prefix-[0-9.]+",
    beta=r"\d+",


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
