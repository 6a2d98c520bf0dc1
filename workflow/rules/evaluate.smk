# Evaluation stage: perplexity of one model (variant and seed) on one corpus at one length under one mask,
# with the LEX protocol (every length scores the same span of the test split). At a CPU preset
# the LEX tables' cells come from one job per model, measure and corpus (lex.smk); this one-cell
# rule builds them at a GPU preset, any cell no table reads, and the fairseq cross-check's.


rule evaluate:
    input:
        model="results/{preset}/models/{paper}/{variant}/seed{seed}.pt",
        data=lambda wc: pipeline.data_files(wc.preset, wc.corpus),
        code=lambda wc: pipeline.code(
            "lenex.scoring.evaluate", wc.preset, wc.paper, wc.variant
        ),
    output:
        "results/{preset}/eval/{paper}/{variant}/seed{seed}/{corpus}/{mask}/L{length}.json",
    log:
        "results/{preset}/logs/eval/{paper}/{variant}/seed{seed}/{corpus}/{mask}/L{length}.log",
    conda:
        ENV
    threads: pipeline.stage_threads("evaluate")
    resources:
        **pipeline.stage_resources("evaluate"),
    params:
        # the measure: perplexity here; attention resolution (lex.smk) reads the same windows
        module="lenex.scoring.evaluate",
        data="results/{preset}/data/{corpus}",
        span=lambda wc: pipeline.eval_length(
            wc.preset, pipeline.experiment(wc.paper)["span_multiple"], wc.paper
        ),
        max_tokens=lambda wc: pipeline.paper_preset(wc.preset, wc.paper)["eval"][
            "max_tokens"
        ],
        batch_tokens=lambda wc: pipeline.paper_preset(wc.preset, wc.paper)["eval"][
            "batch_tokens"
        ],
        extra=lambda wc: quoted_json(
            {
                "variant": wc.variant,
                "corpus": wc.corpus,
                "seed": int(wc.seed),
                "paper": wc.paper,
                "preset": wc.preset,
            }
        ),
        # what the checkpoint must record (lenex.records.provenance): another model is refused
        expect=lambda wc: pipeline.expect(wc.preset, wc.paper, wc.variant, wc.seed),
    shell:
        "python -m lenex.pipeline.launch {params.module} --checkpoint {input.model} --data {params.data}"
        " --length {wildcards.length} --span {params.span} --mask {wildcards.mask}"
        " --max-tokens {params.max_tokens} --batch-tokens {params.batch_tokens}"
        " --threads {threads} --extra {params.extra} --expect {params.expect} --out {output} > {log} 2>&1"
