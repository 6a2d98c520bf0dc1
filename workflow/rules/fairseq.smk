# fairseq as a second training backend, and the cross-check of lenex's trainer against it
# (docs/fairseq.md; helpers in fairseq_common.smk). Needs `make setup-fairseq`; the default run
# never reaches these rules unless a preset sets `train: {backend: fairseq}`.


rule binarize_fairseq:
    input:
        lambda wc: data_files(wc.preset, wc.corpus),
    output:
        [f"results/{{preset}}/data-fairseq/{{corpus}}/{name}" for name in FAIRSEQ_FILES],
    log:
        "results/{preset}/logs/data-fairseq/{corpus}.log",
    conda:
        ENV
    params:
        data="results/{preset}/data/{corpus}",
        out="results/{preset}/data-fairseq/{corpus}",
    shell:
        "python -m lenex.fairseq_backend.binarize --data {params.data} --out {params.out}"
        " > {log} 2>&1"


# One cross-check model: the `train` rule with the backend and seed taken from the path.
use rule train as crosscheck_train with:
    input:
        lambda wc: data_files(wc.preset, training_corpus(wc.paper))
        + backend_inputs(wc.preset, wc.paper, wc.backend),
    output:
        "results/{preset}/crosscheck/{backend}/s{seed}/models/{paper}/{variant}.pt",
    log:
        "results/{preset}/logs/crosscheck/{backend}/s{seed}/train/{paper}/{variant}.log",
    params:
        model=lambda wc: quoted_json(model_config(wc.preset, wc.paper, wc.variant)),
        train=lambda wc: quoted_json(
            crosscheck_train_config(wc.preset, wc.paper, wc.backend, wc.seed)
        ),
        data=lambda wc: f"results/{wc.preset}/data/{training_corpus(wc.paper)}",
        workdir="results/{preset}/crosscheck/{backend}/s{seed}/train/{paper}/{variant}",
        threads=1,
        launcher=lambda wc: train_launcher(wc.preset, wc.paper, wc.backend),


use rule evaluate as crosscheck_evaluate with:
    input:
        model="results/{preset}/crosscheck/{backend}/s{seed}/models/{paper}/{variant}.pt",
        data=rules.evaluate.input.data,
    output:
        "results/{preset}/crosscheck/{backend}/s{seed}/eval/{paper}/{variant}/{corpus}/{mask}/L{length}.json",
    log:
        "results/{preset}/logs/crosscheck/{backend}/s{seed}/eval/{paper}/{variant}/{corpus}/{mask}/L{length}.log",


rule crosscheck_fairseq:
    input:
        evaluations=lambda wc: crosscheck_evaluations(wc.preset),
        models=lambda wc: [
            f"results/{wc.preset}/crosscheck/{b}/s{s}/models/{CROSSCHECK['paper']}/{v}.pt"
            for b in CROSSCHECK["backends"]
            for s in CROSSCHECK["seeds"]
            for v in CROSSCHECK["variants"]
        ],
    output:
        md="results/{preset}/crosscheck/fairseq.md",
        json="results/{preset}/crosscheck/fairseq.json",
    log:
        "results/{preset}/logs/crosscheck/fairseq.log",
    conda:
        ENV
    params:
        spec=lambda wc: quoted_json(
            {
                **CROSSCHECK,
                "preset": wc.preset,
                "train_length": paper_preset(wc.preset, "lex")["model"][
                    "train_length"
                ],
                "train": crosscheck_budget(wc.preset),
            }
        ),
    shell:
        "python -m lenex.fairseq_backend.crosscheck --spec {params.spec}"
        " --evaluations {input.evaluations} --models {input.models}"
        " --out-md {output.md} --out-json {output.json} > {log} 2>&1"
