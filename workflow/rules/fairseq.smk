# fairseq as a second training backend, and the cross-check of lenex's trainer against it
# (docs/fairseq.md; what they read: lenex.fairseq_backend.workflow, imported by train.smk as
# `fairseq`). Needs `make setup-fairseq`; the default run never reaches these rules unless a
# preset sets `train: {backend: fairseq}`.


rule binarize_fairseq:
    input:
        lambda wc: pipeline.paths.data_files(wc.preset, wc.corpus),
    output:
        [
            f"results/{{preset}}/data-fairseq/{{corpus}}/{name}"
            for name in fairseq.FAIRSEQ_FILES
        ],
    log:
        "results/{preset}/logs/data-fairseq/{corpus}.log",
    conda:
        ENV
    params:
        data="results/{preset}/data/{corpus}",
        out="results/{preset}/data-fairseq/{corpus}",
    shell:
        "python -m lenex.pipeline.launch lenex.fairseq_backend.binarize --data {params.data}"
        " --out {params.out} > {log} 2>&1"


# One cross-check model: the `train` rule with the backend and seed taken from the path
# (its spec: lenex.fairseq_backend.workflow.crosscheck_model).
use rule train as crosscheck_train with:
    input:
        unpack(lambda wc: pipeline.specs.inputs(fairseq.crosscheck_model(pipeline, wc))),
    output:
        model="results/{preset}/crosscheck/{backend}/s{seed}/models/{paper}/{variant}.pt",
        curve="results/{preset}/crosscheck/{backend}/s{seed}/curves/{paper}/{variant}/curve.json",
    log:
        "results/{preset}/logs/crosscheck/{backend}/s{seed}/train/{paper}/{variant}.log",
    wildcard_constraints:
        preset=r"[A-Za-z0-9_-]+",
    params:
        command=lambda wc, threads: fairseq.crosscheck_model(pipeline, wc).command(
            threads
        ),
        curve=lambda wc: fairseq.crosscheck_model(pipeline, wc).curve_command(),


use rule evaluate as crosscheck_evaluate with:
    input:
        model="results/{preset}/crosscheck/{backend}/s{seed}/models/{paper}/{variant}.pt",
        data=rules.evaluate.input.data,
        code=rules.evaluate.input.code,
    output:
        "results/{preset}/crosscheck/{backend}/s{seed}/eval/{paper}/{variant}/{corpus}/{mask}/L{length}.json",
    log:
        "results/{preset}/logs/crosscheck/{backend}/s{seed}/eval/{paper}/{variant}/{corpus}/{mask}/L{length}.log",
    params:
        expect=lambda wc: fairseq.crosscheck_expect(pipeline, wc),


rule crosscheck_fairseq:
    input:
        evaluations=lambda wc: fairseq.crosscheck_evaluations(pipeline, wc.preset),
        models=lambda wc: fairseq.crosscheck_models(pipeline, wc.preset),
    output:
        md="results/{preset}/crosscheck/fairseq.md",
        json="results/{preset}/crosscheck/fairseq.json",
    log:
        "results/{preset}/logs/crosscheck/fairseq.log",
    conda:
        ENV
    params:
        spec=lambda wc: quoted_json(fairseq.crosscheck_page_spec(pipeline, wc.preset)),
    shell:
        "python -m lenex.pipeline.launch lenex.fairseq_backend.crosscheck --spec {params.spec}"
        " --evaluations {input.evaluations} --models {input.models}"
        " --out-md {output.md} --out-json {output.json} > {log} 2>&1"
