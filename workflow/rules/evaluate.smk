# Evaluation stage: perplexity of one model (variant and seed) on one corpus at one length under one mask,
# with the LEX protocol (every length scores the same span of the test split). This is the one-cell
# path of a cell (lenex.pipeline.evaluation): it builds the LEX tables' cells at a GPU preset, any
# cell no table reads, and the fairseq cross-check's; at a CPU preset the tables' cells take the
# per-model path (lex.smk), with the same arguments.


rule evaluate:
    input:
        model="results/{preset}/models/{paper}/{variant}/seed{seed}.pt",
        data=lambda wc: pipeline.paths.data_files(wc.preset, wc.corpus),
        code=lambda wc: pipeline.code.stamp(
            "lenex.scoring.evaluate", wc.preset, wc.paper, wc.variant
        ),
    output:
        "results/{preset}/eval/{paper}/{variant}/seed{seed}/{corpus}/{mask}/L{length}.json",
    log:
        "results/{preset}/logs/eval/{paper}/{variant}/seed{seed}/{corpus}/{mask}/L{length}.log",
    conda:
        ENV
    threads: pipeline.resources.stage_threads("evaluate")
    resources:
        **pipeline.resources.stage_resources("evaluate"),
    params:
        # the measure: perplexity here; attention resolution (lex.smk) reads the same windows
        module="lenex.scoring.evaluate",
        data="results/{preset}/data/{corpus}",
        span=lambda wc: pipeline.evaluation.span(wc.preset, wc.paper),
        max_tokens=lambda wc: pipeline.evaluation.setting(
            wc.preset, wc.paper, "max_tokens"
        ),
        batch_tokens=lambda wc: pipeline.evaluation.setting(
            wc.preset, wc.paper, "batch_tokens"
        ),
        extra=lambda wc: pipeline.evaluation.extra(
            wc.preset, wc.paper, wc.variant, wc.corpus, wc.seed
        ),
        # what the checkpoint must record (lenex.records.provenance): another model is refused
        expect=lambda wc: pipeline.identities.expect(
            wc.preset, wc.paper, wc.variant, wc.seed
        ),
    shell:
        "python -m lenex.pipeline.launch {params.module} --checkpoint {input.model} --data {params.data}"
        " --length {wildcards.length} --span {params.span} --mask {wildcards.mask}"
        " --max-tokens {params.max_tokens} --batch-tokens {params.batch_tokens}"
        " --threads {threads} --extra {params.extra} --expect {params.expect} --out {output} > {log} 2>&1"
